/* sweep.c: enumerating, bounding, pruning and simulating a grid of plans.
 *
 * Three phases over the shard's combinations, each on one GLib thread pool
 * (the main thread waits on a condition variable and, when asked, redraws
 * a progress line):
 *   1. prepare: each combination's plan is made and checked, its bounds
 *      computed (strategy/estimate.h) and, unless exhaustive, its memory
 *      bound held against the GPU's memory;
 *   2. the plans left, sorted by step-time bound then combination number,
 *      keep the first of each normal form (strategy_normalize; the others,
 *      its twins, take their rows from its replay, or with `exhaustive`
 *      replay alike, and stand aside in the top K: it counts distinct
 *      plans), are cut into waves of
 *      a fixed size, each replayed on the pool; before a wave, every plan
 *      left whose score bound cannot beat the K-th best so far is pruned,
 *      twins with it (sweep.h), and in the wave, a plan whose tighter
 *      chain bound (estimate_step_chain_bound_s) cannot beat the K-th best
 *      as the wave began is pruned instead of replayed;
 *   3. the rows of the plans not replayed are rendered.
 * Workers write only their own slot, and every choice between waves reads
 * finished slots in a fixed order, so the rows never depend on which thread
 * ran what, nor on how many threads there are. */
#include "app/sweep.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "app/simulate.h"
#include "app/space.h"
#include "metrics/metrics.h"
#include "metrics/training.h"
#include "strategy/estimate.h"
#include "strategy/strategy.h"
#include "base/error.h"

/* Combinations per task of the cheap phases. */
#define BLOCK 64

typedef struct {
    SweepRow row;
    char *message;      /* invalid: the error, one line */
    char *reason;       /* invalid: its reason, grouped on stderr */
    double score_bound; /* the score's upper bound: the score at the step-time bound */
    char *normal;       /* a candidate: its cluster's index and its plan's normal form
                         * (strategy_normalize) */
    guint normal_hash;  /* its g_str_hash, made while preparing (on the pool) */
    GArray *twins;      /* a replayed candidate: the slots (gint64) of the later
                         * candidates of the same normal form, whose rows its
                         * replay gives; NULL if none */
} Slot;

typedef enum { SWEEP_PREPARE, SWEEP_REPLAY, SWEEP_RENDER } SweepPhase;

typedef struct {
    const SweepSpec *spec;
    Slot *slots;
    gint64 n;         /* slots */
    SweepPhase phase; /* of the tasks in flight */
    const gint64 *at; /* the phase's slots */
    gint64 count;     /* how many */
    gint64 block;     /* slots per task */
    GMutex lock;
    GCond finished;
    gint64 done; /* tasks of the phase done */
    /* a replay wave's bar: the top's K-th score and combination as the wave
     * began, once the top is full (barred); a candidate whose chain bound
     * cannot beat it is pruned instead of replayed */
    gboolean barred;
    double bar_score;
    gint64 bar_combination;
    /* progress: plans settled, replayed, pruned */
    gint64 settled, replayed, pruned;
    gint64 started_us;
} Job;

/* A one-line description of a plan, for the best-plan lines: its shape,
 * batch, ZeRO stage, recomputation, sequence parallelism and schedule,
 * then whichever of the number format, the tp overlap, the context
 * algorithm, the experts' dispatcher and overlaps and offload are not at
 * their defaults. */
static char *summary_of(const PlanSpec *p)
{
    g_autofree char *chunks =
        p->virtual_stages > 1 ? g_strdup_printf(" x%d", p->virtual_stages) : g_strdup("");
    g_autofree char *shape = plan_spec_shape(p, TRUE);
    GString *text = g_string_new(NULL);
    g_string_printf(text, "%s, batch %d of %d, ZeRO %d, recompute %s, SP %s, %s%s", shape,
                    p->global_batch_size, p->micro_batch_size, p->zero_stage,
                    recompute_names[p->recompute], p->sequence_parallel ? "on" : "off",
                    schedule_names[p->schedule], chunks);
    if (p->dtype != DTYPE_BF16)
        g_string_append_printf(text, ", %s", dtype_names[p->dtype]);
    if (p->tp_comm_overlap)
        g_string_append(text, ", tp overlap");
    if (p->cp > 1)
        g_string_append_printf(text, ", cp %s", cp_algorithm_names[p->cp_algorithm]);
    if (p->moe_dispatcher != MOE_DISPATCHER_ALL_TO_ALL)
        g_string_append_printf(text, ", %s dispatcher", moe_dispatcher_names[p->moe_dispatcher]);
    if (p->moe_shared_expert_overlap)
        g_string_append(text, ", shared expert overlap");
    if (p->overlap_moe_expert_parallel_comm)
        g_string_append(text, ", combined 1F1B overlap");
    if (p->offload != OFFLOAD_NONE)
        g_string_append_printf(text, ", offload %s", offload_names[p->offload]);
    return g_string_free(text, FALSE);
}

/* The sweep's space (app/space.h). */
static Space space_of(const SweepSpec *spec)
{
    return (Space){.model = spec->model,
                   .clusters = spec->clusters ? spec->clusters : &spec->cluster,
                   .n_clusters = spec->clusters ? spec->n_clusters : 1,
                   .gpus = spec->gpus,
                   .base = spec->base,
                   .grid = spec->grid};
}

/* The plan of combination `combo`, resolved and checked; on an invalid one
 * FALSE, with the plan as far as it resolved. */
static gboolean make_plan(const SweepSpec *spec, gint64 combo, PlanSpec **out, GError **error)
{
    Space space = space_of(spec);
    return space_plan(&space, combo, out, error);
}

/* The cluster of combination `combo`. */
/* The number of combination `combo`'s cluster, in SweepSpec.clusters: the
 * space's outermost axis. */
static int cluster_number(const SweepSpec *spec, gint64 combo)
{
    return (int)(combo / plan_grid_size(spec->grid));
}

static const ClusterSpec *cluster_of(const SweepSpec *spec, gint64 combo)
{
    Space space = space_of(spec);
    int gpus;
    return space_cluster(&space, combo, &gpus);
}

const char *const sweep_rank_names[] = {"tokens_per_s", "time", "cost", "run-time", NULL};

/* What the sweep ranks by (sweep.h), larger better, for `step` taking
 * step_s a step: tokens/s as metrics computes it, or the
 * inverse of the run's wall time or GPU-hours (training.h), or of its
 * mean wall-clock time with failures (runplan.h; 0, ranking last, for a
 * run that would not end: the table says "never"). */
static double score(const SweepSpec *spec, const Step *step, double step_s)
{
    Training t;
    RunPlan run;
    training_of_step(&t, spec->tokens, step->cluster->gpu_hour_price, spec->model, step->plan,
                     step_s);
    switch (spec->rank_by) {
    case SWEEP_RANK_TIME:
        return 1 / t.time_s;
    case SWEEP_RANK_COST: /* at one price (or none), GPU-hours rank as the cost */
        return 1 / (t.gpu_hour_price > 0 ? t.cost : t.gpu_hours);
    case SWEEP_RANK_RUN_TIME:
        return runplan_compute(step, step_s, spec->tokens, spec->run, FALSE, &run, NULL)
                   ? 1 / run.stats.mean.wall_s
                   : 0;
    case SWEEP_RANK_TOKENS_PER_S:
        break;
    }
    return training_tokens_per_s(spec->model, step->plan, step_s);
}

/* An upper bound of the score of a plan whose step takes at least
 * bound_s: the score itself, which only falls as the step grows, but for
 * run-time, whose failures only add to the run: the failure-free run's. */
static double score_bound(const SweepSpec *spec, const Step *step, double bound_s)
{
    if (spec->rank_by != SWEEP_RANK_RUN_TIME)
        return score(spec, step, bound_s);
    Training t;
    training_of_step(&t, spec->tokens, step->cluster->gpu_hour_price, spec->model, step->plan,
                     bound_s);
    return 1 / t.time_s;
}

/* Marks the slot invalid, for `error`, which it frees. */
static void set_invalid(Slot *slot, GError *error)
{
    slot->row.status = REPORT_INVALID;
    slot->message = ps_error_escape(error->message);
    slot->reason = g_strdup(ps_error_reason(error));
    g_error_free(error);
}

/* Phase 1: the plan's validity, bounds and the memory pre-check. */
static void prepare(Job *job, Slot *slot)
{
    const SweepSpec *spec = job->spec;
    g_autoptr(PlanSpec) plan = NULL;
    GError *error = NULL;
    if (!make_plan(spec, slot->row.combination, &plan, &error)) {
        set_invalid(slot, error);
        return;
    }
    const ClusterSpec *cluster = cluster_of(spec, slot->row.combination);
    Step step = step_of(spec->model, cluster, plan);
    /* a CSV row gives the whole memory bound; else that the states pass
     * the GPU's memory is enough */
    double memory = estimate_peak_lower_bound_bytes_past(
        &step, spec->csv ? INFINITY : cluster->gpu.memory_bytes);
    gboolean fits = spec->exhaustive || metrics_fits(cluster, memory, 0);
    /* a plan that does not fit needs its step bound for its CSV row only */
    double bound = fits || spec->csv ? estimate_step_lower_bound_s(&step) : 0;
    slot->row.bound_s = bound;
    slot->score_bound = bound > 0 ? score_bound(spec, &step, bound) : G_MAXDOUBLE;
    if (!fits) {
        slot->row.status = REPORT_DOES_NOT_FIT;
        slot->row.peak_bytes = memory;
        return;
    }
    /* twins run on one cluster: its index, then the plan's normal form */
    g_autofree char *normal = strategy_normal_form(plan, spec->model);
    slot->normal =
        g_strdup_printf("%d %s", cluster_number(spec, slot->row.combination), normal);
    slot->normal_hash = g_str_hash(slot->normal);
}

/* The slot's row from the report of its plan's replay (`rep`, whose plan
 * is `plan`). */
static void simulated(const SweepSpec *spec, Slot *slot, const PlanSpec *plan, Report *rep)
{
    Step step = step_of(spec->model, cluster_of(spec, slot->row.combination), plan);
    training_of_step(&rep->training, spec->tokens, step.cluster->gpu_hour_price, spec->model, plan,
                     rep->metrics.step_time_s);
    slot->row.status = REPORT_SIMULATED;
    slot->row.csv = report_render(rep, FORMAT_CSV, FALSE);
    slot->row.tokens_per_s = rep->metrics.tokens_per_s;
    slot->row.mfu = rep->metrics.mfu;
    slot->row.tflops = metrics_model_tflops_per_gpu(&rep->metrics, rep->gpus);
    slot->row.score = score(spec, &step, rep->metrics.step_time_s);
    slot->row.step_time_s = rep->metrics.step_time_s;
    slot->row.peak_bytes = rep->metrics.peak_bytes;
    slot->row.fits = rep->metrics.fits;
}

/* The order of sweep_best and of pruning: a higher score first, then the
 * earlier combination. */
static gboolean beats(double tokens_a, gint64 combo_a, double tokens_b, gint64 combo_b)
{
    return tokens_a > tokens_b || (tokens_a == tokens_b && combo_a < combo_b);
}

/* Settles a slot whose score bound cannot enter the top. */
static void prune(Job *job, Slot *slot)
{
    slot->row.status = REPORT_PRUNED;
    slot->row.step_time_s = slot->row.bound_s;
    g_mutex_lock(&job->lock);
    job->settled++;
    job->pruned++;
    g_mutex_unlock(&job->lock);
}

/* Prunes candidate `slot` and its twins (which have none), each with its
 * own bound, or with `bound_s` when positive (a tighter one for them all). */
static void prune_with_twins(Job *job, Slot *slot, double bound_s)
{
    if (bound_s > 0)
        slot->row.bound_s = bound_s;
    prune(job, slot);
    for (guint i = 0; slot->twins && i < slot->twins->len; i++)
        prune_with_twins(job, &job->slots[g_array_index(slot->twins, gint64, i)], bound_s);
}

/* Whether the wave's bar prunes the candidate `slot` of `plan` by its
 * chain bound (estimate_step_chain_bound_s), which its row and its
 * twins' then carry. */
static gboolean chain_prunes(Job *job, Slot *slot, const PlanSpec *plan)
{
    const SweepSpec *spec = job->spec;
    if (!job->barred)
        return FALSE;
    Step step = step_of(spec->model, cluster_of(spec, slot->row.combination), plan);
    double chain = estimate_step_chain_bound_s(&step);
    if (beats(score_bound(spec, &step, chain), slot->row.combination, job->bar_score,
              job->bar_combination))
        return FALSE;
    prune_with_twins(job, slot, chain);
    return TRUE;
}

/* Phase 2: replays the plan, unless barred; its twins (Slot) get their
 * rows from it, with their own plan fields. Whether it replayed. */
static gboolean replay(Job *job, Slot *slot)
{
    const SweepSpec *spec = job->spec;
    g_autoptr(PlanSpec) plan = NULL;
    GError *error = NULL;
    Report rep;
    gboolean made = make_plan(spec, slot->row.combination, &plan, &error);
    if (made && chain_prunes(job, slot, plan))
        return FALSE;
    gboolean ran = made && simulate_run_whatif(spec->model, cluster_of(spec, slot->row.combination),
                                               plan, spec->whatif, NULL, FALSE, &rep, &error);
    if (ran)
        simulated(spec, slot, plan, &rep);
    for (guint i = 0; slot->twins && i < slot->twins->len; i++) {
        Slot *twin = &job->slots[g_array_index(slot->twins, gint64, i)];
        g_autoptr(PlanSpec) same = NULL;
        make_plan(spec, twin->row.combination, &same, NULL); /* valid: it was prepared */
        if (ran) {
            rep.plan = same;
            simulated(spec, twin, same, &rep);
        } else {
            set_invalid(twin, g_error_copy(error));
        }
    }
    if (ran)
        report_clear(&rep);
    else /* a step too big to build, say */
        set_invalid(slot, error);
    return TRUE;
}

/* Phase 3: the row of a plan not replayed. */
static void render(Job *job, Slot *slot)
{
    const SweepSpec *spec = job->spec;
    g_autoptr(PlanSpec) plan = NULL;
    gboolean valid = make_plan(spec, slot->row.combination, &plan, NULL);
    const ClusterSpec *cluster = cluster_of(spec, slot->row.combination);
    Report rep = {.model = spec->model->name,
                  .cluster = cluster->name,
                  .plan = plan,
                  .parameters = transformer_params(spec->model),
                  .active_parameters = transformer_active_params(spec->model),
                  .status = slot->row.status,
                  .bound_s = slot->row.bound_s,
                  .reason = slot->message};
    long long gpus = plan_spec_gpus(plan); /* 0: dp did not resolve */
    rep.gpus = gpus <= G_MAXINT ? (int)gpus : 0;
    if (valid)
        rep.micro_batches = plan_spec_micro_batches(plan);
    if (slot->row.status == REPORT_DOES_NOT_FIT) {
        rep.metrics.peak_bytes = slot->row.peak_bytes;
        rep.metrics.capacity_bytes = cluster->gpu.memory_bytes;
        rep.metrics.fits = FALSE;
    }
    slot->row.csv = report_render(&rep, FORMAT_CSV, FALSE);
}

static void worker(gpointer data, gpointer user)
{
    Job *job = user;
    gint64 b = GPOINTER_TO_SIZE(data) - 1, twins = 0, replays = 0;
    for (gint64 i = b * job->block; i < MIN(job->count, (b + 1) * job->block); i++) {
        if (g_atomic_int_get(job->spec->stop))
            break;
        Slot *slot = &job->slots[job->at[i]];
        switch (job->phase) {
        case SWEEP_PREPARE:
            prepare(job, slot);
            break;
        case SWEEP_REPLAY:
            if (replay(job, slot)) {
                replays++;
                twins += slot->twins ? slot->twins->len : 0;
            }
            break;
        case SWEEP_RENDER:
            render(job, slot);
            break;
        }
    }
    g_mutex_lock(&job->lock);
    job->done++;
    if (job->phase == SWEEP_REPLAY) {
        job->settled += replays + twins;
        job->replayed += replays;
    }
    g_cond_signal(&job->finished);
    g_mutex_unlock(&job->lock);
}

int sweep_shard_of(gint64 combination, int shards)
{
    /* a multiplicative hash spreads neighbouring combinations, which differ
     * in the fastest axes, over the shards */
    return (int)((guint32)((guint64)combination * 2654435761u) % (guint32)shards) + 1;
}

static void show_progress(const Job *job)
{
    double elapsed = (g_get_monotonic_time() - job->started_us) / 1e6;
    double rate = elapsed > 0 ? job->settled / elapsed : 0;
    fprintf(stderr,
            "\r  %" G_GINT64_FORMAT " / %" G_GINT64_FORMAT " plans, %" G_GINT64_FORMAT
            " replayed, %" G_GINT64_FORMAT " pruned, %.1f plans/s   ",
            job->settled, job->n, job->replayed, job->pruned, rate);
    fflush(stderr);
}

/* Runs `phase` over the `count` slots `at` on the pool, `block` a task,
 * and waits for it. */
static void run_phase(Job *job, GThreadPool *pool, SweepPhase phase, const gint64 *at, gint64 count,
                      gint64 block)
{
    job->phase = phase;
    job->at = at;
    job->count = count;
    job->block = block;
    job->done = 0;
    gint64 tasks = (count + block - 1) / block;
    for (gint64 b = 0; b < tasks; b++)
        g_thread_pool_push(pool, GSIZE_TO_POINTER(b + 1), NULL);
    g_mutex_lock(&job->lock);
    while (job->done < tasks) {
        gint64 until = g_get_monotonic_time() + G_TIME_SPAN_SECOND / 4;
        g_cond_wait_until(&job->finished, &job->lock, until);
        if (job->spec->progress && phase == SWEEP_REPLAY)
            show_progress(job);
    }
    g_mutex_unlock(&job->lock);
}

/* The order plans are replayed in: by step-time bound, then combination. */
static int bound_order(double bound_x, gint64 combo_x, double bound_y, gint64 combo_y)
{
    if (bound_x != bound_y)
        return bound_x < bound_y ? -1 : 1;
    return combo_x < combo_y ? -1 : combo_x > combo_y;
}

/* A slot's place in the replay order: bound_order's keys, side by side
 * (the slots lie far apart). */
typedef struct {
    double bound_s;
    gint64 combination, slot;
} BoundKey;

static int by_bound_key(const void *a, const void *b)
{
    const BoundKey *x = a, *y = b;
    return bound_order(x->bound_s, x->combination, y->bound_s, y->combination);
}

/* Sorts the slots `at` (n of them) in bound_order. */
static void sort_by_bound(const Slot *slots, gint64 *at, gint64 n)
{
    BoundKey *keys = g_new(BoundKey, MAX(n, 1));
    for (gint64 i = 0; i < n; i++)
        keys[i] = (BoundKey){.bound_s = slots[at[i]].row.bound_s,
                             .combination = slots[at[i]].row.combination,
                             .slot = at[i]};
    qsort(keys, (gsize)n, sizeof(BoundKey), by_bound_key);
    for (gint64 i = 0; i < n; i++)
        at[i] = keys[i].slot;
    g_free(keys);
}

/* The best `k` (fewer at first) simulated rows that fit, best first, as
 * indices of `rows`, whose entries are `stride` bytes apart. */
typedef struct {
    guint *at;
    int n, k;
    const char *rows;
    gsize stride;
} Top;

static const SweepRow *top_row(const Top *top, guint i)
{
    return (const SweepRow *)(top->rows + top->stride * i);
}

/* Whether a row is ranked: simulated, fitting, not a twin (which stands
 * aside for its first). */
static gboolean ranked(const SweepRow *row)
{
    return row->status == REPORT_SIMULATED && row->fits && row->twin_of < 0;
}

/* Offers row i to the top, if ranked. */
static void top_offer(Top *top, guint i)
{
    const SweepRow *row = top_row(top, i);
    if (!ranked(row))
        return;
    int at = top->n;
    while (at > 0 && beats(row->score, row->combination, top_row(top, top->at[at - 1])->score,
                           top_row(top, top->at[at - 1])->combination))
        at--;
    if (at >= top->k)
        return;
    int last = MIN(top->n, top->k - 1);
    memmove(top->at + at + 1, top->at + at, sizeof(guint) * (gsize)(last - at));
    top->at[at] = i;
    top->n = MIN(top->n + 1, top->k);
}

/* Whether slot i, at best its score bound, cannot enter the top. */
static gboolean prunable(const Top *top, const Slot *slots, guint i)
{
    if (top->n < top->k)
        return FALSE;
    const SweepRow *kth = top_row(top, top->at[top->k - 1]);
    return !beats(slots[i].score_bound, slots[i].row.combination, kth->score, kth->combination);
}

/* Slots by their normal form. */
static guint normal_hash(gconstpointer slot)
{
    return ((const Slot *)slot)->normal_hash;
}

static gboolean normal_equal(gconstpointer a, gconstpointer b)
{
    return strcmp(((const Slot *)a)->normal, ((const Slot *)b)->normal) == 0;
}

/* Keeps, of the candidates `order` (n of them, sorted), the first of each
 * normal form, and makes the others its twins (row.twin_of); returns how
 * many are kept. A twin would replay exactly the tasks its first does
 * (strategy.h, strategy_normalize), so its score equals the first's, and
 * it is pruned with it. `exhaustive`: every candidate is kept, to replay,
 * the twins only marked. */
static gint64 keep_firsts(Job *job, gint64 *order, gint64 n, gboolean exhaustive)
{
    g_autoptr(GHashTable) first = g_hash_table_new(normal_hash, normal_equal); /* Slot * */
    gint64 kept = 0;
    for (gint64 i = 0; i < n; i++) {
        Slot *slot = &job->slots[order[i]];
        Slot *head = g_hash_table_lookup(first, slot);
        if (!head)
            g_hash_table_insert(first, slot, slot);
        else
            slot->row.twin_of = head - job->slots;
        if (!head || exhaustive) {
            order[kept++] = order[i];
            continue;
        }
        if (!head->twins)
            head->twins = g_array_new(FALSE, FALSE, sizeof(gint64));
        g_array_append_val(head->twins, order[i]);
    }
    return kept;
}

/* Phase 2: replays the candidates, sorted, in waves, pruning between. */
static void branch_and_bound(Job *job, GThreadPool *pool, gint64 *order, gint64 n)
{
    const SweepSpec *spec = job->spec;
    int k = spec->top > 0 ? spec->top : SWEEP_DEFAULT_TOP;
    gint64 wave_size = spec->exhaustive ? MAX(n, 1) : MAX(2 * (gint64)k, 16);
    Top top = {.at = g_new(guint, k),
               .n = 0,
               .k = k,
               .rows = (const char *)&job->slots[0].row,
               .stride = sizeof(Slot)};
    g_autofree gint64 *wave = g_new(gint64, wave_size);
    gint64 next = 0;
    while (next < n && !g_atomic_int_get(spec->stop)) {
        gint64 size = 0;
        for (; next < n && size < wave_size; next++) {
            Slot *slot = &job->slots[order[next]];
            if (!spec->exhaustive && prunable(&top, job->slots, (guint)order[next]))
                prune_with_twins(job, slot, 0);
            else
                wave[size++] = order[next];
        }
        job->barred = !spec->exhaustive && top.n == top.k;
        if (job->barred) {
            const SweepRow *kth = top_row(&top, top.at[top.k - 1]);
            job->bar_score = kth->score;
            job->bar_combination = kth->combination;
        }
        run_phase(job, pool, SWEEP_REPLAY, wave, size, 1);
        for (gint64 i = 0; i < size; i++)
            top_offer(&top, (guint)wave[i]);
    }
    g_free(top.at);
}

/* What the walk gives the sweep: the shard's combinations, and the
 * refused ones' count per reason (shard 1 only). */
typedef struct {
    const SweepSpec *spec;
    GArray *leaves; /* gint64 */
    GHashTable *reasons;
    gint64 refused;
} Walked;

/* Keeps the shard's combinations, stopping the walk past SWEEP_MAX_PLANS. */
static gboolean on_leaf(gint64 combo, gpointer user)
{
    Walked *w = user;
    if (sweep_shard_of(combo, w->spec->shards) == w->spec->shard)
        g_array_append_val(w->leaves, combo);
    return w->leaves->len <= SWEEP_MAX_PLANS;
}

static void count_reason(GHashTable *reasons, const char *reason, gint64 count)
{
    gint64 *n = g_hash_table_lookup(reasons, reason);
    if (!n) {
        n = g_new0(gint64, 1);
        g_hash_table_insert(reasons, g_strdup(reason), n);
    }
    *n += count;
}

static void on_refused(const char *reason, gint64 count, gpointer user)
{
    Walked *w = user;
    if (w->spec->shard != 1)
        return;
    count_reason(w->reasons, reason, count);
    w->refused += count;
}

/* Fails on more plans than a sweep runs, or an exhaustive one replays. */
static gboolean plans_allowed(const SweepSpec *spec, gint64 plans, GError **error)
{
    gint64 most = spec->max_plans > 0 ? spec->max_plans : SWEEP_EXHAUSTIVE_PLANS;
    gboolean noise = spec->whatif && spec->whatif->jitter > 0;
    if (plans > SWEEP_MAX_PLANS)
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--grid: expected at most %d plans that pass the space's rules, got more",
                    SWEEP_MAX_PLANS);
    else if (spec->exhaustive && plans > most)
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected a space of at most %" G_GINT64_FORMAT " plans to replay every "
                    "one%s (raise it with --max-plans), got %" G_GINT64_FORMAT
                    " that pass the space's rules",
                    noise ? "--jitter" : "--exhaustive", most,
                    noise ? ", as a sweep under noise does" : "", plans);
    else
        return TRUE;
    return FALSE;
}

SweepResult *sweep_run(const SweepSpec *spec, GError **error)
{
    Space space = space_of(spec);
    if (space_size(&space) < 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--grid: expected at most 2^62 combinations, got more");
        return NULL;
    }
    if (spec->shards < 1 || spec->shard < 1 || spec->shard > spec->shards) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--shard: expected K/N with 1 <= K <= N, got %d/%d", spec->shard, spec->shards);
        return NULL;
    }
    Walked walked = {.spec = spec,
                     .leaves = g_array_new(FALSE, FALSE, sizeof(gint64)),
                     .reasons = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                     .refused = 0};
    GError *walk_error = NULL;
    if (!space_walk(&space, on_leaf, on_refused, &walked, &walk_error) &&
        walked.leaves->len > SWEEP_MAX_PLANS)
        g_clear_error(&walk_error); /* on_leaf stopped it: plans_allowed says why */
    if (walk_error || !plans_allowed(spec, walked.leaves->len, &walk_error)) {
        g_propagate_error(error, walk_error);
        g_array_free(walked.leaves, TRUE);
        g_hash_table_destroy(walked.reasons);
        return NULL;
    }
    Job job = {.spec = spec, .started_us = g_get_monotonic_time(), .n = walked.leaves->len};
    job.slots = g_new0(Slot, MAX(job.n, 1));
    for (gint64 i = 0; i < job.n; i++)
        job.slots[i].row =
            (SweepRow){.combination = g_array_index(walked.leaves, gint64, i), .twin_of = -1};
    g_array_free(walked.leaves, TRUE);
    gint64 *at = g_new(gint64, MAX(job.n, 1)); /* slots of a phase */
    g_mutex_init(&job.lock);
    g_cond_init(&job.finished);
    GThreadPool *pool = g_thread_pool_new(worker, &job, MAX(1, spec->threads), TRUE, NULL);

    for (gint64 i = 0; i < job.n; i++)
        at[i] = i;
    run_phase(&job, pool, SWEEP_PREPARE, at, job.n, BLOCK);
    gint64 candidates = 0;
    for (gint64 i = 0; i < job.n; i++) {
        if (job.slots[i].row.status == REPORT_SIMULATED) /* not settled yet */
            at[candidates++] = i;
        else
            job.settled++;
    }
    sort_by_bound(job.slots, at, candidates);
    if (!g_atomic_int_get(spec->stop)) { /* else some candidates are not prepared */
        candidates = keep_firsts(&job, at, candidates, spec->exhaustive);
        branch_and_bound(&job, pool, at, candidates);
    }
    gint64 rest = 0;
    for (gint64 i = 0; i < job.n; i++)
        if (job.slots[i].row.status != REPORT_SIMULATED)
            at[rest++] = i;
    if (spec->csv && !g_atomic_int_get(spec->stop))
        run_phase(&job, pool, SWEEP_RENDER, at, rest, BLOCK);
    g_thread_pool_free(pool, FALSE, TRUE);
    if (spec->progress)
        fprintf(stderr, "\n");

    SweepResult *r = g_new0(SweepResult, 1);
    r->rows = g_array_sized_new(FALSE, FALSE, sizeof(SweepRow), (guint)job.n);
    r->reasons = walked.reasons;
    r->combinations = job.n + walked.refused;
    r->refused = walked.refused;
    r->count[REPORT_INVALID] = walked.refused;
    r->replayed = job.replayed;
    r->stopped = g_atomic_int_get(spec->stop) != 0;
    for (gint64 i = 0; i < job.n; i++) {
        Slot *slot = &job.slots[i];
        g_array_append_val(r->rows, slot->row);
        r->count[slot->row.status]++;
        if (slot->row.status == REPORT_INVALID)
            count_reason(r->reasons, slot->reason, 1);
        g_free(slot->message);
        g_free(slot->reason);
        g_free(slot->normal);
        if (slot->twins)
            g_array_free(slot->twins, TRUE);
    }
    r->header = report_csv_header();
    g_free(at);
    g_free(job.slots);
    g_mutex_clear(&job.lock);
    g_cond_clear(&job.finished);
    return r;
}

void sweep_result_free(SweepResult *r)
{
    if (!r)
        return;
    for (guint i = 0; i < r->rows->len; i++) {
        SweepRow *row = &g_array_index(r->rows, SweepRow, i);
        g_free(row->csv);
    }
    g_array_free(r->rows, TRUE);
    g_hash_table_destroy(r->reasons);
    g_free(r->header);
    g_free(r);
}

int sweep_best(const SweepResult *r, int k, guint *best)
{
    Top top = {.at = best, .n = 0, .k = k, .rows = r->rows->data, .stride = sizeof(SweepRow)};
    for (guint i = 0; i < r->rows->len; i++)
        top_offer(&top, i);
    return top.n;
}

/* Orders rows (their indices) best first, as sweep_best ranks them. */
static int by_score(const void *x, const void *y, void *rows)
{
    const SweepRow *a = &g_array_index((GArray *)rows, SweepRow, *(const guint *)x);
    const SweepRow *b = &g_array_index((GArray *)rows, SweepRow, *(const guint *)y);
    return beats(a->score, a->combination, b->score, b->combination)   ? -1
           : beats(b->score, b->combination, a->score, a->combination) ? 1
                                                                       : 0;
}

/* Every ranked row (ranked()) into `order` (room for every row), best
 * first, as sweep_best ranks them; returns how many. */
static int ranked_rows(const SweepResult *r, guint *order)
{
    int n = 0;
    for (guint i = 0; i < r->rows->len; i++)
        if (ranked(&g_array_index(r->rows, SweepRow, i)))
            order[n++] = i;
    g_qsort_with_data(order, n, sizeof *order, by_score, r->rows);
    return n;
}

/* The key of row i's plan but for its virtual stages (interleaved is
 * 1F1B with chunks), micro-batch size (and the layer split they make),
 * activations' offload and the experts' dispatcher (which move the same
 * bytes when each token goes to as many experts as the group has ranks):
 * equal keys, near-twins but for the throughput. */
static char *near_key(const SweepSpec *spec, const SweepResult *r, guint i)
{
    g_autoptr(PlanSpec) plan = sweep_plan(spec, &g_array_index(r->rows, SweepRow, i));
    if (plan->schedule == SCHEDULE_INTERLEAVED) /* Megatron's 1F1B with chunks */
        plan_field_put(plan, PLAN_SCHEDULE, SCHEDULE_1F1B, NULL);
    plan_field_put(plan, PLAN_VIRTUAL_STAGES, 1, NULL);
    plan_field_put(plan, PLAN_MICRO_BATCH_SIZE, 1, NULL);
    if (plan->offload == OFFLOAD_ACTIVATIONS) {
        plan_field_put(plan, PLAN_OFFLOAD, OFFLOAD_NONE, NULL);
        plan_field_put(plan, PLAN_OFFLOAD_LAYERS, 0, NULL);
    }
    plan_field_put(plan, PLAN_MOE_DISPATCHER, MOE_DISPATCHER_ALL_TO_ALL, NULL);
    g_clear_pointer(&plan->layers_per_stage.v, g_free);
    plan->layers_per_stage.n = 0;
    return plan_spec_key(plan);
}

/* Whether row x's plan is simpler than row y's: no activations' offload
 * (no copies to the host to trust), then the default dispatcher, then
 * fewer chunks, then a larger micro-batch. */
static gboolean simpler(const SweepSpec *spec, const SweepRow *x, const SweepRow *y)
{
    g_autoptr(PlanSpec) a = sweep_plan(spec, x);
    g_autoptr(PlanSpec) b = sweep_plan(spec, y);
    if (a->offload != b->offload)
        return a->offload != OFFLOAD_ACTIVATIONS;
    if (a->moe_dispatcher != b->moe_dispatcher)
        return a->moe_dispatcher == MOE_DISPATCHER_ALL_TO_ALL;
    if (a->virtual_stages != b->virtual_stages)
        return a->virtual_stages < b->virtual_stages;
    return a->micro_batch_size > b->micro_batch_size;
}

int sweep_best_distinct(const SweepSpec *spec, const SweepResult *r, int k, guint *best,
                        GArray **near)
{
    if (k <= 0)
        return 0;
    g_autofree guint *order = g_new(guint, MAX(r->rows->len, 1));
    int n = ranked_rows(r, order);
    /* the groups, in the order of their best rows: their key, their first
     * (best) row and every row, best first */
    g_autoptr(GHashTable) group_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GArray **members = g_new0(GArray *, (gsize)k);
    g_autofree double *last = g_new(double, (gsize)k); /* each group's last row's score */
    int groups = 0;
    for (int j = 0; j < n; j++) {
        guint i = order[j];
        double score = g_array_index(r->rows, SweepRow, i).score;
        if (groups == k) {
            /* rows come best first: past every group's reach, none joins */
            double reach = last[0];
            for (int g = 1; g < k; g++)
                reach = MIN(reach, last[g]);
            if (score < reach * (1 - SWEEP_NEAR))
                break;
        }
        g_autofree char *key = near_key(spec, r, i);
        gpointer found = g_hash_table_lookup(group_of, key);
        int g = found ? GPOINTER_TO_INT(found) - 1 : -1;
        if (g >= 0 && score >= last[g] * (1 - SWEEP_NEAR)) {
            g_array_append_val(members[g], i);
            last[g] = score;
            continue;
        }
        if (groups == k)
            continue; /* no room for a new group; later rows may still join one */
        members[groups] = g_array_new(FALSE, FALSE, sizeof(guint));
        g_array_append_val(members[groups], i);
        last[groups] = score;
        g_hash_table_replace(group_of, g_steal_pointer(&key), GINT_TO_POINTER(groups + 1));
        groups++;
    }
    for (int g = 0; g < groups; g++) {
        /* the simplest of the rows within SWEEP_NEAR of the group's best */
        GArray *m = members[g];
        double first = g_array_index(r->rows, SweepRow, g_array_index(m, guint, 0)).score;
        guint lead = 0;
        for (guint x = 1; x < m->len; x++) {
            const SweepRow *row = &g_array_index(r->rows, SweepRow, g_array_index(m, guint, x));
            if (row->score >= first * (1 - SWEEP_NEAR) &&
                simpler(spec, row, &g_array_index(r->rows, SweepRow, g_array_index(m, guint, lead))))
                lead = x;
        }
        best[g] = g_array_index(m, guint, lead);
        g_array_remove_index(m, lead);
        near[g] = m;
    }
    g_free(members);
    return groups;
}

/* Orders a CSV's rows: by rank (0, unranked, last), a first before its
 * twins, then by combination. */
typedef struct {
    guint row;
    guint rank;
    gboolean twin;
    gint64 combination;
} CsvLine;

static int by_rank(const void *x, const void *y)
{
    const CsvLine *a = x, *b = y;
    guint ra = a->rank ? a->rank : G_MAXUINT, rb = b->rank ? b->rank : G_MAXUINT;
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (a->twin != b->twin)
        return a->twin ? 1 : -1;
    return (a->combination > b->combination) - (a->combination < b->combination);
}

char *sweep_csv(const SweepResult *r, gboolean all_rows)
{
    guint rows = r->rows->len;
    g_autofree guint *order = g_new(guint, MAX(rows, 1));
    g_autofree guint *rank = g_new0(guint, MAX(rows, 1));
    int n = ranked_rows(r, order);
    for (int j = 0; j < n; j++)
        rank[order[j]] = (guint)j + 1;
    g_autofree CsvLine *lines = g_new(CsvLine, MAX(rows, 1));
    guint kept = 0;
    for (guint i = 0; i < rows; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, i);
        /* a twin that fits has its first's figures, and so its rank */
        gboolean twin = row->twin_of >= 0 && row->status == REPORT_SIMULATED && row->fits;
        guint place = twin ? rank[row->twin_of] : rank[i];
        if (row->csv && (place > 0 || all_rows))
            lines[kept++] = (CsvLine){
                .row = i, .rank = place, .twin = twin, .combination = row->combination};
    }
    qsort(lines, kept, sizeof *lines, by_rank);
    GString *csv = g_string_new("rank,");
    g_string_append(csv, r->header);
    for (guint j = 0; j < kept; j++) {
        if (lines[j].rank)
            g_string_append_printf(csv, "%u", lines[j].rank);
        g_string_append_c(csv, ',');
        g_string_append(csv, g_array_index(r->rows, SweepRow, lines[j].row).csv);
    }
    return g_string_free(csv, FALSE);
}

PlanSpec *sweep_plan(const SweepSpec *spec, const SweepRow *row)
{
    PlanSpec *plan = NULL;
    gboolean valid = make_plan(spec, row->combination, &plan, NULL);
    g_assert(valid);
    return plan;
}

const ClusterSpec *sweep_cluster(const SweepSpec *spec, const SweepRow *row)
{
    return cluster_of(spec, row->combination);
}

int sweep_cluster_index(const SweepSpec *spec, const SweepRow *row)
{
    return cluster_number(spec, row->combination);
}

char *sweep_summary(const SweepSpec *spec, const SweepRow *row)
{
    g_autoptr(PlanSpec) plan = sweep_plan(spec, row);
    return summary_of(plan);
}

/* The row of combination `combo`, or -1 (refused: no row). */
static gint64 row_of(const SweepResult *r, gint64 combo)
{
    gint64 lo = 0, hi = r->rows->len;
    while (lo < hi) {
        gint64 mid = (lo + hi) / 2;
        if (g_array_index(r->rows, SweepRow, mid).combination < combo)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->rows->len && g_array_index(r->rows, SweepRow, lo).combination == combo ? lo : -1;
}

static int by_row_bound(gconstpointer a, gconstpointer b, gpointer user)
{
    const SweepResult *r = user;
    const SweepRow *x = &g_array_index(r->rows, SweepRow, *(const guint *)a),
                   *y = &g_array_index(r->rows, SweepRow, *(const guint *)b);
    return bound_order(x->bound_s, x->combination, y->bound_s, y->combination);
}

/* The cluster axis (sweep_cluster_bests): a row's cluster, the space's
 * outermost axis. */
#define AXIS_CLUSTER G_MAXUINT

/* The index of combination `combo`'s value on axis `a` (AXIS_CLUSTER: its
 * cluster's), and the combination with that index set to v instead. */
static guint axis_index(const SweepSpec *spec, gint64 combo, guint a)
{
    return a == AXIS_CLUSTER ? (guint)cluster_number(spec, combo)
                             : plan_grid_index(spec->grid, combo, a);
}

static gint64 axis_with(const SweepSpec *spec, gint64 combo, guint a, guint v)
{
    gint64 size = plan_grid_size(spec->grid);
    return a == AXIS_CLUSTER ? v * size + combo % size : plan_grid_with(spec->grid, combo, a, v);
}

/* The best plan that fits with axis `a` (AXIS_CLUSTER: the cluster) at
 * its value index v (SweepAxisGain). */
static void gain_of(const SweepSpec *spec, const SweepResult *r, guint winner, guint a, guint v,
                    SweepAxisGain *g)
{
    g_autoptr(GArray) pruned = g_array_new(FALSE, FALSE, sizeof(guint));
    *g = (SweepAxisGain){
        .field = a == AXIS_CLUSTER ? PLAN_N_FIELDS
                                   : g_array_index(spec->grid->axes, GridAxis, a).field,
        .value = a == AXIS_CLUSTER ? (int)v
                                   : g_array_index(g_array_index(spec->grid->axes, GridAxis, a).values,
                                                   int, v),
        .row = -1,
        .score = 0,
        .exact = TRUE};
    for (guint i = 0; i < r->rows->len; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, i);
        if (!((row->status == REPORT_SIMULATED && row->fits) || row->status == REPORT_PRUNED) ||
            axis_index(spec, row->combination, a) != v)
            continue;
        if (row->status == REPORT_PRUNED)
            g_array_append_val(pruned, i);
        else if (g->row < 0 || beats(row->score, row->combination, g->score,
                                     g_array_index(r->rows, SweepRow, g->row).combination)) {
            g->row = i;
            g->score = row->score;
        }
    }
    g_array_sort_with_data(pruned, by_row_bound, (gpointer)r);
    /* the winner's own plan at the default (its combination with axis a's
     * value v) first, if it was pruned */
    gint64 own = row_of(r, axis_with(spec, g_array_index(r->rows, SweepRow, winner).combination, a, v));
    for (guint k = 0; own >= 0 && k < pruned->len; k++) {
        if (g_array_index(pruned, guint, k) == own) {
            g_array_remove_index(pruned, k);
            g_array_prepend_val(pruned, own);
            break;
        }
    }
    Space space = space_of(spec);
    int replays = 0;
    for (guint k = 0; k < pruned->len; k++) {
        guint i = g_array_index(pruned, guint, k);
        const SweepRow *row = &g_array_index(r->rows, SweepRow, i);
        g_autoptr(PlanSpec) plan = sweep_plan(spec, row);
        int gpus;
        const ClusterSpec *cluster = space_cluster(&space, row->combination, &gpus);
        Step step = step_of(spec->model, cluster, plan);
        if (g->row >= 0 && score_bound(spec, &step, row->bound_s) <= g->score)
            continue; /* even its bound cannot beat the best */
        if (replays++ == (a == AXIS_CLUSTER ? SWEEP_CLUSTER_REPLAYS : SWEEP_GAIN_REPLAYS)) {
            g->exact = FALSE;
            return;
        }
        Report rep;
        if (!simulate_run_whatif(spec->model, cluster, plan, spec->whatif, NULL, FALSE, &rep, NULL))
            continue;
        double s = score(spec, &step, rep.metrics.step_time_s);
        if (rep.metrics.fits && (g->row < 0 || s > g->score)) {
            g->row = i;
            g->score = s;
        }
        report_clear(&rep);
    }
}

int sweep_axis_gains(const SweepSpec *spec, const SweepResult *r, guint winner, SweepAxisGain *out)
{
    gint64 combo = g_array_index(r->rows, SweepRow, winner).combination;
    int n = 0;
    for (guint a = 0; a < spec->grid->axes->len; a++) {
        const GridAxis *axis = &g_array_index(spec->grid->axes, GridAxis, a);
        int fallback = plan_fields[axis->field].fallback;
        for (guint v = 0; v < axis->values->len; v++)
            if (axis->values->len > 1 && g_array_index(axis->values, int, v) == fallback &&
                plan_grid_index(spec->grid, combo, a) != v)
                gain_of(spec, r, winner, a, v, &out[n++]);
    }
    return n;
}

int sweep_cluster_bests(const SweepSpec *spec, const SweepResult *r, guint winner,
                        SweepAxisGain *out)
{
    guint mine = axis_index(spec, g_array_index(r->rows, SweepRow, winner).combination, AXIS_CLUSTER);
    int n = 0;
    for (int c = 0; spec->clusters && c < spec->n_clusters; c++)
        if ((guint)c != mine)
            gain_of(spec, r, winner, AXIS_CLUSTER, (guint)c, &out[n++]);
    return n;
}
