/* sweep.c: enumerating, checking and simulating a grid of plans.
 *
 * Workers take combination numbers from a GLib thread pool and write their
 * row into that combination's slot; the slots are read in order at the
 * end, so rows never depend on which thread ran what. The main thread
 * waits on a condition variable and, when asked, redraws a progress line. */
#include "app/sweep.h"

#include <stdio.h>
#include <string.h>

#include "app/simulate.h"
#include "strategy/strategy.h"
#include "base/error.h"

typedef struct {
    gboolean valid;
    SweepRow row;
    char *reason; /* when skipped */
} Slot;

typedef struct {
    const SweepSpec *spec;
    Slot *slots;
    gint64 *combos; /* combination number of each slot */
    GMutex lock;
    GCond finished;
    gint64 done;
} Job;

/* A one-line description of a plan, for the best-plan lines. */
static char *summary(const PlanSpec *p)
{
    return g_strdup_printf("tp %d pp %d dp %d, batch %d of %d, ZeRO %d, recompute %s, SP %s, "
                           "%s%s",
                           p->tp, p->pp, p->dp, p->global_batch_size, p->micro_batch_size,
                           p->zero_stage, recompute_names[p->recompute],
                           p->sequence_parallel ? "on" : "off", schedule_names[p->schedule],
                           p->virtual_stages > 1 ? " x2" : "");
}

/* Fills slot `i`: the plan of combination `combo`, skipped or simulated. */
static void run_combination(Job *job, Slot *slot, gint64 combo)
{
    const SweepSpec *spec = job->spec;
    g_autoptr(PlanSpec) plan = plan_spec_copy(spec->base);
    GError *error = NULL;
    plan_grid_apply(spec->grid, combo, plan);
    if (!error && plan->dp == 0) {
        long long tp_pp = (long long)plan->tp * plan->pp;
        g_autofree char *got = g_strdup_printf("%lld", tp_pp);
        if (spec->gpus % tp_pp != 0)
            ps_error_value(&error, "tp x pp", got, "a divisor of the %d GPUs", spec->gpus);
        else
            plan->dp = (int)(spec->gpus / tp_pp);
    }
    Report rep;
    if (!error && plan_spec_resolve(plan, spec->model, spec->cluster, &error) &&
        sim_run(spec->model, spec->cluster, plan, &rep, &error)) {
        slot->valid = TRUE;
        slot->row = (SweepRow){.csv = report_render(&rep, FORMAT_CSV, FALSE),
                               .summary = summary(plan),
                               .tokens_per_s = rep.metrics.tokens_per_s,
                               .step_time_s = rep.metrics.step_time_s,
                               .peak_bytes = rep.metrics.peak_bytes,
                               .fits = rep.metrics.fits};
        report_clear(&rep);
    } else {
        slot->reason = g_strdup(ps_error_reason(error));
        g_error_free(error);
    }
}

static void worker(gpointer data, gpointer user)
{
    Job *job = user;
    gint64 i = GPOINTER_TO_SIZE(data) - 1;
    Slot *slot = &job->slots[i];
    if (!g_atomic_int_get(job->spec->stop))
        run_combination(job, slot, job->combos[i]);
    g_mutex_lock(&job->lock);
    job->done++;
    g_cond_signal(&job->finished);
    g_mutex_unlock(&job->lock);
}

int sweep_shard_of(gint64 combination, int shards)
{
    /* a multiplicative hash spreads neighbouring combinations, which differ
     * in the fastest axes, over the shards */
    return (int)((guint32)((guint64)combination * 2654435761u) % (guint32)shards) + 1;
}

static void show_progress(gint64 done, gint64 total, gint64 started_us)
{
    double elapsed = (g_get_monotonic_time() - started_us) / 1e6;
    double rate = elapsed > 0 ? done / elapsed : 0;
    double left = rate > 0 ? (total - done) / rate : 0;
    fprintf(stderr,
            "\r  %" G_GINT64_FORMAT " / %" G_GINT64_FORMAT " plans, %.1f plans/s, "
            "%d:%02d left   ",
            done, total, rate, (int)(left / 60), (int)left % 60);
    fflush(stderr);
}

SweepResult *sweep_run(const SweepSpec *spec, GError **error)
{
    gint64 size = plan_grid_size(spec->grid);
    if (size < 0 || size > 10000000) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--grid: expected at most 10,000,000 combinations, got more");
        return NULL;
    }
    if (spec->shards < 1 || spec->shard < 1 || spec->shard > spec->shards) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--shard: expected K/N with 1 <= K <= N, got %d/%d", spec->shard, spec->shards);
        return NULL;
    }
    Job job = {.spec = spec};
    gint64 n = 0;
    job.combos = g_new(gint64, MAX(size, 1));
    for (gint64 c = 0; c < size; c++)
        if (sweep_shard_of(c, spec->shards) == spec->shard)
            job.combos[n++] = c;
    job.slots = g_new0(Slot, MAX(n, 1));
    g_mutex_init(&job.lock);
    g_cond_init(&job.finished);

    gint64 started = g_get_monotonic_time();
    GThreadPool *pool = g_thread_pool_new(worker, &job, MAX(1, spec->threads), TRUE, NULL);
    for (gint64 i = 0; i < n; i++)
        g_thread_pool_push(pool, GSIZE_TO_POINTER(i + 1), NULL);
    g_mutex_lock(&job.lock);
    while (job.done < n) {
        gint64 until = g_get_monotonic_time() + G_TIME_SPAN_SECOND / 4;
        g_cond_wait_until(&job.finished, &job.lock, until);
        if (spec->progress)
            show_progress(job.done, n, started);
    }
    g_mutex_unlock(&job.lock);
    g_thread_pool_free(pool, FALSE, TRUE);
    if (spec->progress)
        fprintf(stderr, "\n");

    SweepResult *r = g_new0(SweepResult, 1);
    r->rows = g_array_new(FALSE, FALSE, sizeof(SweepRow));
    r->reasons = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->combinations = n;
    r->stopped = g_atomic_int_get(spec->stop) != 0;
    for (gint64 i = 0; i < n; i++) {
        Slot *slot = &job.slots[i];
        if (slot->valid) {
            g_array_append_val(r->rows, slot->row);
        } else if (slot->reason) {
            r->skipped++;
            gpointer count = g_hash_table_lookup(r->reasons, slot->reason);
            g_hash_table_replace(r->reasons, slot->reason,
                                 GINT_TO_POINTER(GPOINTER_TO_INT(count) + 1));
        }
    }
    r->header = report_csv_header();
    g_free(job.slots);
    g_free(job.combos);
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
        g_free(row->summary);
    }
    g_array_free(r->rows, TRUE);
    g_hash_table_destroy(r->reasons);
    g_free(r->header);
    g_free(r);
}

int sweep_best(const SweepResult *r, int k, guint *best)
{
    int n = 0;
    for (guint i = 0; i < r->rows->len; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, i);
        if (!row->fits)
            continue;
        int at = n < k ? n : k; /* insertion sort into the best k, descending */
        while (at > 0 &&
               g_array_index(r->rows, SweepRow, best[at - 1]).tokens_per_s < row->tokens_per_s)
            at--;
        if (at >= k)
            continue;
        int last = MIN(n, k - 1);
        memmove(best + at + 1, best + at, sizeof(guint) * (gsize)(last - at));
        best[at] = i;
        n = MIN(n + 1, k);
    }
    return n;
}
