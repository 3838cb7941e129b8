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

gboolean sim_run(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                 Report *out, GError **error)
{
    return sim_run_traced(model, cluster, plan, NULL, FALSE, out, error);
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
 * (NULL: none), refused before it is built when `before` (graph NULL:
 * none; a step built without cells) shows it over the cap: with cells,
 * each of an orbit's cells runs the orbit's program. */
static Graph *build(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                    const Layout *layout, const Symmetry *sym, const EmitSlowdown *slow,
                    const Build *before, gsize max_tasks, GError **error)
{
    double known = 0;
    if (before->graph && !symmetry_has_cells(before->sym))
        known = symmetry_has_cells(sym)
                    ? (double)graph_rank_tasks(before->graph) * symmetry_cells_per_orbit(sym)
                    : emit_tasks_under(before->graph, before->sym, sym);
    return emit_step(model, cluster, plan, layout, sym, slow, max_tasks, known, error);
}

/* The step built with every shift and no what-if, which sizes a replay of
 * fewer shifts, or of every rank, before it is built. */
static Build build_sizing(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                          const Layout *layout, const Topology *topo, gsize max_tasks,
                          GError **error)
{
    Build none = {NULL, NULL}, b = {NULL, symmetry_new(layout, topo, SYMMETRY_ALL)};
    b.graph = build(model, cluster, plan, layout, b.sym, NULL, &none, max_tasks, error);
    return b;
}

/* Replays `graph`, built for `sym`, links slowed by `link_scale` (NULL:
 * none); NULL on error, *broken set when the symmetry did not hold. */
static Replay *replay(const ClusterSpec *cluster, const PlanSpec *plan, const Layout *layout,
                      const Symmetry *sym, const double *link_scale, const Graph *graph,
                      unsigned *broken, GError **error)
{
    EngineNet net = {.cluster = cluster,
                     .gpus = layout_ranks(layout),
                     .symmetry = sym,
                     .algorithm = plan->collective_algorithm,
                     .contention = plan->link_contention,
                     .tags = TAG_KINDS,
                     .interference = cluster->gpu.comm_interference,
                     .link_scale = link_scale,
                     .broken = broken};
    return engine_run(graph, &net, error);
}

/* One simulation, under the what-ifs `w` (NULL: none): slowed GPUs and
 * links replayed in cells around them (symmetry_new_cells), or every rank
 * when the cells do not stand for them (net_broken) or noise is set. */
static gboolean run(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                    const WhatIf *w, const char *trace_path, gboolean stages_only, gsize max_tasks,
                    Report *out, GError **error)
{
    gint64 started = g_get_monotonic_time();
    if (!strategy_check(plan, model, error))
        return FALSE;
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
    EmitSlowdown slow = {gpu_factor, what_if ? w->jitter : 0, what_if ? w->seed : 0};
    /* every shift and rotation of tp, cp and dp that maps the cluster onto itself, unless the
     * plan, a trace of every GPU or noise on every rank asks for all of them; a what-if's cut
     * into cells around what it slows */
    unsigned dims = plan->full_fidelity || noise || (trace_path && !stages_only) ? 0 : SYMMETRY_ALL;
    gboolean cells = what_if && dims != 0;
    const char *replayed = noise ? "none (jitter)" : NULL; /* the report's symmetry, if not sym's */
    Symmetry *sym = NULL;
    Graph *graph = NULL;
    Replay *rep = NULL;
    GError *failure = NULL;
    /* a step replayed with fewer shifts is first built with all of them:
     * that build sizes it, so that a step over the cap is refused before
     * it is built */
    Build before = {NULL, NULL};
    if (dims != SYMMETRY_ALL)
        before = build_sizing(model, cluster, plan, layout, topo, max_tasks, &failure);
    while (!failure) {
        unsigned broken = 0;
        sym = symmetry_new_cells(layout, topo, dims, cells ? gpu_factor : NULL,
                                 cells ? link_scale : NULL);
        graph = build(model, cluster, plan, layout, sym, what_if ? &slow : NULL, &before, max_tasks,
                      &failure);
        rep =
            graph ? replay(cluster, plan, layout, sym, link_scale, graph, &broken, &failure) : NULL;
        if (rep || !g_error_matches(failure, PS_ERROR, PS_ERROR_ASYMMETRIC))
            break;
        g_clear_error(&failure);
        build_clear(&before);
        if (broken & NET_BROKEN_CELLS) { /* the cells stand for no replay: replay every rank */
            cells = FALSE;
            dims = 0;
            replayed = "none (what-if: cells unequal)";
            g_clear_pointer(&graph, graph_free);
            g_clear_pointer(&sym, symmetry_free);
            before = build_sizing(model, cluster, plan, layout, topo, max_tasks, &failure);
            continue;
        }
        /* replay again without the shifts a collective broke */
        for (int i = 0; i < symmetry_generators(sym); i++)
            if (broken & 1u << i)
                dims &= ~symmetry_generator_bit(sym, i);
        before = (Build){g_steal_pointer(&graph), g_steal_pointer(&sym)};
    }
    build_clear(&before);
    topology_free(topo);
    if (failure)
        g_propagate_error(error, failure);
    gboolean ok = rep != NULL;
    if (ok) {
        *out = (Report){
            .model = model->name,
            .cluster = cluster->name,
            .plan = plan,
            .gpus = gpus,
            .parameters = tf_params(model),
            .active_parameters = tf_active_params(model),
            .micro_batches = plan_spec_micro_batches(plan),
        };
        metrics_compute(graph, rep, layout, sym, model, cluster, plan, &out->metrics);
        if (replayed)
            g_strlcpy(out->metrics.symmetry, replayed, sizeof out->metrics.symmetry);
        else if (symmetry_has_cells(sym))
            g_strlcat(out->metrics.symmetry, " around the what-if", sizeof out->metrics.symmetry);
        out->sim_wall_s = (g_get_monotonic_time() - started) / 1e6;
    }
    if (ok && trace_path) {
        g_autofree char *trace = trace_render(graph, rep, layout, stages_only);
        ok = text_write_atomic(trace_path, trace, strlen(trace), error);
        if (!ok)
            report_clear(out);
    }
    replay_free(rep);
    graph_free(graph);
    symmetry_free(sym);
    return ok;
}

gboolean sim_run_traced(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                        const char *trace_path, gboolean stages_only, Report *out, GError **error)
{
    return run(model, cluster, plan, NULL, trace_path, stages_only, EMIT_MAX_TASKS, out, error);
}

gboolean sim_run_whatif(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                        const WhatIf *whatif, const char *trace_path, gboolean stages_only,
                        Report *out, GError **error)
{
    if (!whatif_active(whatif))
        return run(model, cluster, plan, NULL, trace_path, stages_only, EMIT_MAX_TASKS, out, error);
    Report clean;
    if (!run(model, cluster, plan, NULL, NULL, FALSE, EMIT_MAX_TASKS, &clean, error))
        return FALSE;
    gboolean ok =
        run(model, cluster, plan, whatif, trace_path, stages_only, EMIT_MAX_TASKS, out, error);
    if (ok) {
        out->whatif = whatif->text;
        out->clean_step_time_s = clean.metrics.step_time_s;
        out->clean_critical_rank = clean.metrics.critical_rank;
    }
    report_clear(&clean);
    return ok;
}

gboolean sim_run_within(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                        gsize max_tasks, Report *out, GError **error)
{
    return run(model, cluster, plan, NULL, NULL, FALSE, max_tasks, out, error);
}
