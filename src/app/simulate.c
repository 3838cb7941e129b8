/* simulate.c: spec -> layout -> strategies -> task graph -> engine -> metrics,
 * clean or under what-ifs. */
#include "app/simulate.h"

#include <string.h>

#include "engine/engine.h"
#include "layout/layout.h"
#include "net/net.h"
#include "net/symmetry.h"
#include "output/trace.h"
#include "base/error.h"
#include "base/text.h"
#include "strategy/emit.h"
#include "strategy/strategy.h"

gboolean simulate_run(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                      Report *out, GError **error)
{
    return simulate_run_traced(model, cluster, plan, NULL, FALSE, out, error);
}

/* The previous build of a step, which sizes the next one (emit_tasks_under). */
typedef struct {
    Graph *graph;
    Symmetry *sym;
} Build;

static void build_clear(Build *b)
{
    g_clear_pointer(&b->graph, graph_free);
    g_clear_pointer(&b->sym, symmetry_free);
}

/* Emits the step with the ranks `sym` simulates, compute slowed by `slow`
 * (NULL: none), built short as `fold` says (NULL: whole), refused before
 * it is built when `before` (graph NULL: none; a step built without
 * cells) shows it over the cap: with cells, each of an orbit's cells runs
 * the orbit's program. */
static Graph *build(const Step *step, const Layout *layout, const Symmetry *sym,
                    const EmitSlowdown *slow, const StepFold *fold, const Build *before,
                    gsize max_tasks, GError **error)
{
    double known = 0;
    if (before->graph && !symmetry_has_cells(before->sym))
        known = symmetry_has_cells(sym)
                    ? (double)graph_rank_tasks(before->graph) * symmetry_cells_per_orbit(sym)
                    : emit_tasks_under(before->graph, before->sym, sym);
    return emit_step(step, layout, sym, slow, fold, max_tasks, known, error);
}

/* The step built with every shift and no what-if, which sizes a replay of
 * fewer shifts, or of every rank, before it is built. */
static Build build_sizing(const Step *step, const Layout *layout, const Topology *topo,
                          gsize max_tasks, GError **error)
{
    Build none = {0}, b = {.sym = symmetry_new(layout, topo, SYMMETRY_ALL)};
    b.graph = build(step, layout, b.sym, NULL, NULL, &none, max_tasks, error);
    return b;
}

/* Replays `graph`, built for `sym`, links slowed by `link_scale` (NULL:
 * none); NULL on error, *broken set when the symmetry did not hold. */
static Replay *replay(const Step *step, const Layout *layout, const Symmetry *sym,
                      const double *link_scale, gboolean apart, const Graph *graph,
                      unsigned *broken, GArray *marks, GError **error)
{
    const PlanSpec *plan = step->plan;
    EngineNet net = {.cluster = step->cluster,
                     .gpus = layout_ranks(layout),
                     .symmetry = sym,
                     .algorithm = plan->collective_algorithm,
                     .contention = plan->link_contention,
                     .apart = apart,
                     .tags = TAG_KINDS,
                     .interference = step->cluster->gpu.comm_interference,
                     .link_scale = link_scale,
                     .broken = broken,
                     .marks = marks};
    return engine_run(graph, &net, error);
}

/* How a step is replayed: the shifts of its symmetry, whether in cells
 * around a what-if, the ranks collectives single out that have cells of
 * their own (SymmetryMark: net_marks), and the report's word for it when
 * not the symmetry's own (NULL). */
typedef struct {
    unsigned dims;
    gboolean cells;
    GArray *roles;
    const char *replayed;
} Fidelity;

/* What one simulation replays over: the plan's ranks and network, the
 * what-if's factors (NULL: none), and its steady state built short (NULL:
 * whole; schedule_fold, refold); `whole` says why a step that could have
 * been built short was not. */
typedef struct {
    const Layout *layout;
    const Topology *topo;
    const double *gpu_factor, *link_scale;
    const EmitSlowdown *slow;
    gsize max_tasks;
    StepFold *fold;
    const char *whole;
    gboolean apart; /* EngineNet's */
} Stage;

/* The periods of a steady state built short (schedule_fold): the engine
 * compares each with the one before, the third's critical paths with the
 * second's, and the last stands for the copies. */
#define FOLD_PERIODS 3

/* A step is built short when that is at most 1 / FOLD_SHARE of it; after
 * the replay of `st`'s step built short did not repeat its periods (a
 * transient longer than its warm-up, or none that repeats), it is built
 * short again FOLD_LONGER times as long, so that its periods come later,
 * while that holds; else whole. The short replays that do not repeat and
 * the whole one after them cost at most 1 + 1/2 + 1/8 times the whole. */
#define FOLD_LONGER 4
#define FOLD_SHARE  2

static void refold(Stage *st, const Step *step)
{
    int least = st->fold->micro_batches * FOLD_LONGER;
    schedule_fold_clear(st->fold);
    if (schedule_fold(step->plan, step->micro_batches, FOLD_PERIODS, least,
                      step->micro_batches / FOLD_SHARE, st->fold))
        return;
    st->fold = NULL;
    st->whole = "its steady state did not repeat";
}

/* The symmetry of fidelity `f` over `st`, its roles and `more` (NULL:
 * none) in cells of their own. */
static Symmetry *symmetry_at(const Stage *st, const Fidelity *f, const GArray *more)
{
    g_autoptr(GArray) roles = g_array_copy(f->roles);
    if (more)
        g_array_append_vals(roles, more->data, more->len);
    SymmetryMarks marks = {.gpu_factor = f->cells ? st->gpu_factor : NULL,
                           .link_scale = f->cells ? st->link_scale : NULL,
                           .roles = (const SymmetryMark *)(void *)roles->data,
                           .n_roles = (int)roles->len};
    return symmetry_new_cells(st->layout, st->topo, f->dims, &marks);
}

/* The ranks symmetry_at would simulate. */
static int simulated_at(const Stage *st, const Fidelity *f, const GArray *more)
{
    g_autoptr(Symmetry) sym = symmetry_at(st, f, more);
    int n;
    symmetry_simulated(sym, &n);
    return n;
}

/* After a replay at `*f` whose collectives broke the generators `broken`
 * of `sym`, singling out the members `found`: the next fidelity. A
 * generator broken with no member singled out is dropped; the others
 * keep their shifts, in cells around the members found, when those cells
 * replay fewer ranks than dropping them would. */
static void settle_broken(const Stage *st, Fidelity *f, const Symmetry *sym, unsigned broken,
                          const GArray *found)
{
    unsigned explained = 0, dropped = 0;
    for (guint k = 0; k < found->len; k++)
        explained |= g_array_index(found, SymmetryMark, k).dims;
    for (int i = 0; i < symmetry_generators(sym); i++)
        if (broken & 1u << i)
            dropped |= symmetry_generator_bit(sym, i) & ~explained;
    f->dims &= ~dropped;
    if (!(explained & f->dims))
        return;
    Fidelity without = *f;
    without.dims &= ~explained;
    if (simulated_at(st, f, found) < simulated_at(st, &without, NULL))
        g_array_append_vals(f->roles, found->data, found->len);
    else
        f->dims = without.dims;
}

/* Replays `step` over `st` at fidelity `*f`, with fewer shifts each time
 * a collective breaks them (or cells around the members it singles out),
 * or every rank when the what-if's cells stand for no replay, until one
 * holds; `*f` then says how it was replayed, and *graph and *sym what it
 * was. `before` (graph NULL: none) sizes the first build, and is cleared.
 * NULL on error. */
static Replay *replay_settled(Stage *st, const Step *step, Fidelity *f, Build *before,
                              Graph **graph, Symmetry **sym, GError **error)
{
    Replay *rep = NULL;
    GError *failure = NULL;
    g_autoptr(GArray) found = g_array_new(FALSE, FALSE, sizeof(SymmetryMark));
    while (!failure) {
        unsigned broken = 0;
        g_array_set_size(found, 0);
        *sym = symmetry_at(st, f, NULL);
        *graph = build(step, st->layout, *sym, st->slow, st->fold, before, st->max_tasks, &failure);
        rep = *graph ? replay(step, st->layout, *sym, st->link_scale, st->apart, *graph, &broken,
                              found, &failure)
                     : NULL;
        if (g_error_matches(failure, PS_ERROR, PS_ERROR_NO_PERIOD)) { /* longer, or whole */
            g_clear_error(&failure);
            refold(st, step);
            g_clear_pointer(graph, graph_free);
            g_clear_pointer(sym, symmetry_free);
            continue;
        }
        if (rep || !g_error_matches(failure, PS_ERROR, PS_ERROR_ASYMMETRIC))
            break;
        g_clear_error(&failure);
        build_clear(before);
        if (broken & NET_BROKEN_CELLS) { /* the cells stand for no replay */
            if (f->cells) {              /* a what-if's: replay every rank */
                *f = (Fidelity){
                    .dims = 0, .roles = f->roles, .replayed = "none (what-if: cells unequal)"};
            } else { /* the collectives': without the shifts their members cut */
                for (guint k = 0; k < f->roles->len; k++)
                    f->dims &= ~g_array_index(f->roles, SymmetryMark, k).dims;
            }
            g_array_set_size(f->roles, 0);
            g_clear_pointer(graph, graph_free);
            g_clear_pointer(sym, symmetry_free);
            *before = build_sizing(step, st->layout, st->topo, st->max_tasks, &failure);
            continue;
        }
        settle_broken(st, f, *sym, broken, found);
        *before = (Build){.graph = g_steal_pointer(graph), .sym = g_steal_pointer(sym)};
    }
    build_clear(before);
    if (failure)
        g_propagate_error(error, failure);
    return rep;
}

/* A probe finds the shifts a step breaks before the step is built when
 * the step has at least PROBE_RATIO times the probe's micro-batches (so
 * the probe costs at most 1/PROBE_RATIO of the build it may save), and
 * when, at every shift, the step already has a PROBE_SHARE-th of the cap
 * (emit_tasks_at_least): with fewer shifts it may pass the cap. */
#define PROBE_RATIO 8
#define PROBE_SHARE 50

/* The fidelity at which `step` replays, found on a probe: the same plan
 * with 2 pp micro-batches (as few as every schedule takes). A shift breaks when
 * a collective's transfers differ on its images, which the number of
 * micro-batches does not change: every group, size and algorithm is the
 * probe's. So a big step whose symmetry breaks is built once, at the
 * fidelity that holds, instead of first at every shift, and a step over
 * the cap at that fidelity is refused in O(1) (emit_check_size), before
 * anything big is built. Exact whatever the probe finds: the step's own
 * replay still checks its shifts. `*f` unchanged when no probe is worth
 * making; FALSE on the probe's error. */
static gboolean probe_fidelity(Stage *st, const Step *step, Fidelity *f, GError **error)
{
    const PlanSpec *plan = step->plan;
    int m = step->micro_batches, simulated;
    g_autoptr(Symmetry) every = symmetry_new(st->layout, st->topo, f->dims);
    symmetry_simulated(every, &simulated);
    if (f->dims == 0 || symmetry_orbit(every) == 1 || m < PROBE_RATIO * 2 * plan->pp ||
        emit_tasks_at_least(step->model, plan, simulated) * PROBE_SHARE < st->max_tasks)
        return TRUE;
    g_autoptr(PlanSpec) probe = plan_spec_copy(plan);
    probe->global_batch_size = (gint64)plan->micro_batch_size * plan->dp * 2 * plan->pp;
    if (!strategy_check(probe, step->model, NULL))
        return TRUE; /* a schedule that takes no such probe: the step finds its own breaks */
    Step probe_step = step_of(step->model, step->cluster, probe);
    Build none = {0};
    Graph *graph = NULL;
    Symmetry *sym = NULL;
    Replay *rep = replay_settled(st, &probe_step, f, &none, &graph, &sym, error);
    engine_replay_free(rep);
    graph_free(graph);
    symmetry_free(sym);
    return rep != NULL;
}

/* One simulation, under the what-ifs `w` (NULL: none): slowed GPUs and
 * links replayed in cells around them (symmetry_new_cells), or every rank
 * when the cells do not stand for them (net_broken) or noise is set; its
 * steady state built short when `skip` and nothing needs every task. */
static gboolean run(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                    const WhatIf *w, const char *trace_path, gboolean stages_only,
                    Timeline *timeline, gsize max_tasks, gboolean skip, Report *out, GError **error)
{
    gint64 started = g_get_monotonic_time();
    if (!strategy_check(plan, model, error))
        return FALSE;
    Step step = step_of(model, cluster, plan);
    g_autoptr(Layout) layout = layout_new(plan, cluster);
    int gpus = layout_ranks(layout);
    Topology *topo =
        topology_new(cluster, (gpus + cluster->gpus_per_node - 1) / cluster->gpus_per_node);
    g_autofree double *gpu_factor = NULL, *link_scale = NULL;
    if (!whatif_gpu_factors(w, gpus, &gpu_factor, error) ||
        !whatif_link_scales(w, topo, &link_scale, error)) {
        topology_free(topo);
        return FALSE;
    }
    gboolean what_if = whatif_active(w), noise = what_if && w->jitter > 0;
    EmitSlowdown slow = {.gpu_factor = gpu_factor,
                         .jitter_sigma = what_if ? w->jitter : 0,
                         .seed = what_if ? w->seed : 0};
    StepFold fold = {0};
    gboolean folds = skip && schedule_fold(plan, step.micro_batches, FOLD_PERIODS, 0,
                                           step.micro_batches / FOLD_SHARE, &fold);
    Stage st = {.layout = layout,
                .topo = topo,
                .gpu_factor = gpu_factor,
                .link_scale = link_scale,
                .slow = what_if ? &slow : NULL,
                .max_tasks = max_tasks,
                .apart = skip,
                .whole = !folds       ? NULL
                         : noise      ? "noise breaks its steady state's period"
                         : timeline   ? "the timeline shows every task"
                         : trace_path ? "the trace shows every task"
                                      : NULL};
    st.fold = folds && !st.whole ? &fold : NULL;
    /* every shift and rotation of tp, cp and dp that maps the cluster onto itself, unless the
     * plan, a trace of every GPU or noise on every rank asks for all of them; a what-if's cut
     * into cells around what it slows */
    unsigned dims = plan->full_fidelity || noise || (trace_path && !stages_only) ? 0 : SYMMETRY_ALL;
    g_autoptr(GArray) roles = g_array_new(FALSE, FALSE, sizeof(SymmetryMark));
    Fidelity f = {.dims = dims,
                  .cells = what_if && dims != 0,
                  .roles = roles,
                  .replayed = noise ? "none (jitter)" : NULL};
    Symmetry *sym = NULL;
    Graph *graph = NULL;
    Replay *rep = NULL;
    GError *failure = NULL;
    /* a step replayed with fewer shifts than a probe found is first built
     * with all of them: that build sizes it, so that a step over the cap is
     * refused before it is built */
    Build before = {0};
    if (!st.fold) { /* built short, a step is small and sizes itself */
        if (dims != SYMMETRY_ALL)
            before = build_sizing(&step, layout, topo, max_tasks, &failure);
        else /* at the probe's fidelity, the step's own checks size it (emit_step) */
            probe_fidelity(&st, &step, &f, &failure);
    }
    if (!failure)
        rep = replay_settled(&st, &step, &f, &before, &graph, &sym, &failure);
    const char *replayed = f.replayed;
    build_clear(&before);
    topology_free(topo);
    schedule_fold_clear(&fold);
    if (failure)
        g_propagate_error(error, failure);
    gboolean ok = rep != NULL;
    if (ok) {
        *out = (Report){
            .model = model->name,
            .cluster = cluster->name,
            .plan = plan,
            .gpus = gpus,
            .node_gpus = cluster->node_gpus,
            .gpus_per_node = cluster->gpus_per_node,
            .parameters = transformer_params(model),
            .active_parameters = transformer_active_params(model),
            .micro_batches = step.micro_batches,
            .replayed_whole = st.whole,
        };
        metrics_compute(graph, rep, layout, sym, &step, &out->metrics);
        if (replayed)
            g_strlcpy(out->metrics.symmetry, replayed, sizeof out->metrics.symmetry);
        else if (symmetry_has_cells(sym))
            g_strlcat(out->metrics.symmetry, f.cells ? " around the what-if" : " around the trees",
                      sizeof out->metrics.symmetry);
        out->sim_wall_s = (g_get_monotonic_time() - started) / 1e6;
    }
    if (ok && timeline)
        timeline_compute(graph, rep, layout, out->metrics.critical_rank, out->metrics.step_time_s,
                         timeline);
    if (ok && trace_path) {
        g_autofree char *trace = trace_render(graph, rep, layout, stages_only);
        ok = text_write_atomic(trace_path, trace, strlen(trace), error);
        if (!ok) {
            report_clear(out);
            if (timeline)
                timeline_clear(timeline);
        }
    }
    engine_replay_free(rep);
    graph_free(graph);
    symmetry_free(sym);
    return ok;
}

gboolean simulate_run_traced(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan, const char *trace_path, gboolean stages_only,
                             Report *out, GError **error)
{
    return run(model, cluster, plan, NULL, trace_path, stages_only, NULL, EMIT_MAX_TASKS, TRUE, out,
               error);
}

gboolean simulate_run_whole(const ModelSpec *model, const ClusterSpec *cluster,
                            const PlanSpec *plan, Report *out, GError **error)
{
    return run(model, cluster, plan, NULL, NULL, FALSE, NULL, EMIT_MAX_TASKS, FALSE, out, error);
}

gboolean simulate_run_whatif(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan, const WhatIf *whatif, const char *trace_path,
                             gboolean stages_only, Report *out, GError **error)
{
    return simulate_run_timeline(model, cluster, plan, whatif, trace_path, stages_only, NULL, out,
                                 error);
}

gboolean simulate_run_timeline(const ModelSpec *model, const ClusterSpec *cluster,
                               const PlanSpec *plan, const WhatIf *whatif, const char *trace_path,
                               gboolean stages_only, Timeline *timeline, Report *out,
                               GError **error)
{
    if (!whatif_active(whatif))
        return run(model, cluster, plan, NULL, trace_path, stages_only, timeline, EMIT_MAX_TASKS,
                   TRUE, out, error);
    Report clean;
    if (!run(model, cluster, plan, NULL, NULL, FALSE, NULL, EMIT_MAX_TASKS, TRUE, &clean, error))
        return FALSE;
    gboolean ok = run(model, cluster, plan, whatif, trace_path, stages_only, timeline,
                      EMIT_MAX_TASKS, TRUE, out, error);
    if (ok) {
        out->whatif = whatif->text;
        out->clean_step_time_s = clean.metrics.step_time_s;
        out->clean_critical_rank = clean.metrics.critical_rank;
    }
    report_clear(&clean);
    return ok;
}

gboolean simulate_run_within(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan, gsize max_tasks, Report *out, GError **error)
{
    return run(model, cluster, plan, NULL, NULL, FALSE, NULL, max_tasks, TRUE, out, error);
}
