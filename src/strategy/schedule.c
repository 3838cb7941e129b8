/* schedule.c: the table of pipeline schedules, and what they share. */
#include "strategy/schedule.h"

#include <string.h>

const PipeSchedule *const pipeline_schedules[SCHEDULES] = {
#define SCHEDULE(ID, name, row) [SCHEDULE_##ID] = &row,
#include "base/schedules.def"
#undef SCHEDULE
};

/* Each schedule's own plan field (SCHEDULE_KNOB), or -1. */
static const int own_field[SCHEDULES] = {
#define SCHEDULE(ID, name, row) [SCHEDULE_##ID] = -1,
#define SCHEDULE_KNOB(ID, name, row, KNOB, ...) [SCHEDULE_##ID] = PLAN_##KNOB,
#include "base/schedules.def"
#undef SCHEDULE_KNOB
#undef SCHEDULE
};

StageWork schedule_stage_work(const PlanSpec *plan, int micro_batches, int stage)
{
    int field = own_field[plan->schedule];
    return (StageWork){
        .micro_batches = micro_batches,
        .stages = plan->pp,
        .chunks = plan->virtual_stages,
        .stage = stage,
        .knob = field < 0 ? 0 : plan_field_get(plan, (PlanField)field),
        .paired = plan->overlap_moe_expert_parallel_comm && plan->ep > 1,
    };
}

void schedule_pair_last(const StageWork *w, GArray *units)
{
    g_assert(units->len >= 2);
    Unit *f = &g_array_index(units, Unit, units->len - 2), *b = f + 1;
    g_assert(f->forward && !b->forward && b->part == BACKWARD_WHOLE);
    f->paired = w->paired && (f->micro_batch != b->micro_batch || f->chunk != b->chunk);
}

/* schedule_units' cache: per thread, the units by (schedule, m, p, v, s, knob)
 * and their peaks once asked for (paired or not), emptied when it holds more than
 * ORDER_CACHE_UNITS units. */
#define ORDER_CACHE_UNITS (1 << 22)
typedef struct {
    int schedule, micro_batches, stages, chunks, stage, knob, paired;
} OrderKey;
typedef struct {
    GArray *units; /* Unit */
    GArray *peaks; /* int, `chunks` + 1 a peak (schedule.h); NULL until schedule_peaks */
} Order;
typedef struct {
    GHashTable *orders; /* OrderKey -> Order */
    gsize units;
} OrderCache;

static guint order_hash(gconstpointer k)
{
    const OrderKey *o = k;
    return (guint)o->schedule * 16777619u ^ (guint)o->micro_batches * 2654435761u ^
           (guint)o->stages * 40503u ^ (guint)o->chunks * 97u ^ (guint)o->stage ^
           (guint)o->knob * 2246822519u ^ (guint)o->paired;
}

static gboolean order_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(OrderKey)) == 0;
}

static void order_free(gpointer data)
{
    Order *o = data;
    g_array_unref(o->units);
    if (o->peaks)
        g_array_unref(o->peaks);
    g_free(o);
}

static void cache_free(gpointer data)
{
    OrderCache *c = data;
    g_hash_table_destroy(c->orders);
    g_free(c);
}

static GPrivate order_cache = G_PRIVATE_INIT(cache_free);

static Order *order_of(Schedule schedule, const StageWork *w)
{
    OrderCache *c = g_private_get(&order_cache);
    if (!c) {
        c = g_new0(OrderCache, 1);
        c->orders = g_hash_table_new_full(order_hash, order_equal, g_free, order_free);
        g_private_set(&order_cache, c);
    }
    OrderKey key = {.schedule = schedule,
                    .micro_batches = w->micro_batches,
                    .stages = w->stages,
                    .chunks = w->chunks,
                    .stage = w->stage,
                    .knob = w->knob,
                    .paired = w->paired};
    Order *o = g_hash_table_lookup(c->orders, &key);
    if (o)
        return o;
    if (c->units > ORDER_CACHE_UNITS) {
        g_hash_table_remove_all(c->orders);
        c->units = 0;
    }
    o = g_new0(Order, 1);
    o->units = g_array_new(FALSE, FALSE, sizeof(Unit));
    pipeline_schedules[schedule]->order(w, o->units);
    c->units += o->units->len;
    g_hash_table_insert(c->orders, g_memdup2(&key, sizeof key), o);
    return o;
}

const GArray *schedule_units(Schedule schedule, const StageWork *w)
{
    return order_of(schedule, w)->units;
}

/* Whether count vector a (n counts) is at least b in every chunk. */
static gboolean covers(const int *a, const int *b, int n)
{
    for (int k = 0; k < n; k++)
        if (a[k] < b[k])
            return FALSE;
    return TRUE;
}

/* Peaks by their totals, the largest first. */
static int by_total(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    int x = *(const int *)a, y = *(const int *)b;
    return (y > x) - (y < x);
}

/* The peaks of `units`: the counts after each forward unit (where a sum
 * of non-negative amounts per count can peak; a pair's after its
 * backward too), less those another one covers, first come first
 * kept; then each with its total first, the largest totals first
 * (schedule.h). */
static GArray *peaks_of(const GArray *units, int chunks)
{
    GArray *peaks = g_array_new(FALSE, FALSE, sizeof(int));
    g_autofree int *now = g_new0(int, chunks);
    for (guint i = 0; i < units->len; i++) {
        const Unit *u = &g_array_index(units, Unit, i);
        if (u->paired) { /* a forward, then a whole backward */
            now[u[1].chunk]--;
            i++;
        } else if (!u->forward) {
            now[u->chunk] -= unit_ends_backward(u);
            continue;
        }
        now[u->chunk]++;
        guint n = peaks->len / (guint)chunks, kept = 0;
        int *p = (int *)peaks->data;
        gboolean covered = FALSE;
        for (guint j = 0; j < n && !covered; j++)
            covered = covers(p + j * chunks, now, chunks);
        if (covered)
            continue;
        for (guint j = 0; j < n; j++) /* drop the peaks `now` covers */
            if (!covers(now, p + j * chunks, chunks))
                memmove(p + kept++ * chunks, p + j * chunks, sizeof(int) * (gsize)chunks);
        g_array_set_size(peaks, kept * (guint)chunks);
        g_array_append_vals(peaks, now, (guint)chunks);
    }
    guint n = peaks->len / (guint)chunks;
    GArray *totalled = g_array_sized_new(FALSE, FALSE, sizeof(int), n * (guint)(chunks + 1));
    for (guint j = 0; j < n; j++) {
        const int *c = &g_array_index(peaks, int, j *(guint)chunks);
        int total = 0;
        for (int k = 0; k < chunks; k++)
            total += c[k];
        g_array_append_val(totalled, total);
        g_array_append_vals(totalled, c, (guint)chunks);
    }
    g_array_unref(peaks);
    g_qsort_with_data(totalled->data, (gint)n, sizeof(int) * (gsize)(chunks + 1), by_total, NULL);
    return totalled;
}

const GArray *schedule_peaks(Schedule schedule, const StageWork *w)
{
    Order *o = order_of(schedule, w);
    if (!o->peaks)
        o->peaks = peaks_of(o->units, w->chunks);
    return o->peaks;
}

double schedule_stage_held(const PlanSpec *plan, int s, const double *per_chunk)
{
    StageWork w = schedule_stage_work(plan, plan_spec_micro_batches(plan), s);
    const GArray *peaks = schedule_peaks(plan->schedule, &w);
    double most = 0, largest = 0;
    for (int k = 0; k < w.chunks; k++)
        largest = MAX(largest, per_chunk[k]);
    const int *peak = (const int *)peaks->data, *end = peak + peaks->len;
    for (; peak < end && peak[0] * largest > most; peak += w.chunks + 1) {
        double held = 0;
        for (int k = 0; k < w.chunks; k++)
            held += peak[1 + k] * MAX(per_chunk[k], 0);
        most = MAX(most, held);
    }
    return most;
}

void schedule_add(GArray *units, int micro_batch, gboolean forward, int chunk)
{
    Unit u = {
        .micro_batch = micro_batch, .forward = forward, .chunk = chunk, .part = BACKWARD_WHOLE};
    g_array_append_val(units, u);
}

void schedule_add_part(GArray *units, int micro_batch, BackwardPart part, int chunk)
{
    Unit u = {.micro_batch = micro_batch, .forward = FALSE, .chunk = chunk, .part = part};
    g_array_append_val(units, u);
}

BackwardSplit schedule_splits_backward(const PlanSpec *plan)
{
    return pipeline_schedules[plan->schedule]->split;
}

gboolean schedule_check_one_chunk(const PlanSpec *plan, GError **error)
{
    if (plan->virtual_stages > 1)
        return plan_field_fail(error, plan, PLAN_VIRTUAL_STAGES,
                               "1 unless schedule is \"interleaved\"");
    return TRUE;
}

gboolean schedule_check_zero_bubble(const PlanSpec *plan, int least, GError **error)
{
    const char *name = schedule_names[plan->schedule];
    if (plan->pp < 2)
        return plan_field_fail(error, plan, PLAN_SCHEDULE,
                               "a schedule other than \"%s\" when pp = %d (it fills the "
                               "pipeline's bubble)",
                               name, plan->pp);
    if (!schedule_check_one_chunk(plan, error))
        return FALSE;
    int m = plan_spec_micro_batches(plan);
    if (m < least)
        return plan_field_fail(error, plan, PLAN_GLOBAL_BATCH_SIZE,
                               "micro-batches per step, global_batch_size / (micro_batch_size x "
                               "dp) = %d, at least %d for the \"%s\" schedule with pp = %d",
                               m, least, name, plan->pp);
    return TRUE;
}
