/* schedule.c: the table of pipeline schedules, and what they share. */
#include "strategy/schedule.h"

#include <string.h>

#include "core/graph.h"
#include "layout/chunks.h"

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

int schedule_period_one(const StageWork *w)
{
    (void)w;
    return 1;
}

/* Whether unit `b` is unit `a`, `shift` micro-batches on. */
static gboolean shifted(const Unit *a, const Unit *b, int shift)
{
    return b->micro_batch == a->micro_batch + shift && b->forward == a->forward &&
           b->chunk == a->chunk && b->part == a->part && b->paired == a->paired;
}

/* The index in `units` of its forward number `f` (from 0), or -1. */
static int forward_at(const GArray *units, int f)
{
    for (guint i = 0; i < units->len; i++)
        if (g_array_index(units, Unit, i).forward && f-- == 0)
            return (int)i;
    return -1;
}

/* Cuts the order `u` of a stage's step of m micro-batches before its
 * unit `cut`, `more` being the order of m + P (`shift`): the order of
 * m + P must be u's up to the cut, then the block of units before the cut
 * P micro-batches on, then u's rest P micro-batches on; and `periods`
 * blocks before the cut, and one more before them, must each be the one
 * before P micro-batches on, none of the periods' units of the first
 * micro-batch or the last. Sets where the periods start and their units. */
static gboolean cut_stage(const GArray *u, const GArray *more, int cut, int shift, int periods,
                          int m, int *first, int *length)
{
    int size = (int)more->len - (int)u->len, start = cut - periods * size;
    if (size <= 0 || start - size < 0)
        return FALSE;
    const Unit *a = (const Unit *)(void *)u->data, *b = (const Unit *)(void *)more->data;
    for (int i = start - size; i < (int)u->len; i++) {
        gboolean ok = i >= cut || i < start || (a[i].micro_batch != 0 && a[i].micro_batch != m - 1);
        ok = ok && (i < start || i >= cut || shifted(&a[i - size], &a[i], shift));
        ok = ok && (i >= cut || shifted(&a[i], &b[i], 0));
        ok = ok && (i < cut || shifted(&a[i], &b[i + size], shift));
        ok = ok && (i < cut || i >= cut + size || shifted(&a[i - size], &b[i], shift));
        if (!ok)
            return FALSE;
    }
    for (int i = 0; i < start - size; i++) /* the prefix, before the blocks checked */
        if (!shifted(&a[i], &b[i], 0))
            return FALSE;
    *first = start;
    *length = size;
    return TRUE;
}

/* The stages' orders of a step, and where each unit that passes a
 * micro-batch between model chunks stands in its stage's: a forward, or a
 * backward that makes input gradients, by micro-batch and model chunk. */
typedef struct {
    const PlanSpec *plan;
    int m, chunks;  /* micro-batches, model chunks */
    GArray **units; /* per stage */
    int *at;        /* per (forward or not, micro-batch, model chunk): its index in its
                     * stage's order */
} Orders;

static int *at_of(const Orders *o, gboolean forward, int mb, int g)
{
    return &o->at[((gsize)forward * o->m + mb) * o->chunks + g];
}

static void orders_fill(Orders *o, const PlanSpec *plan, int m)
{
    *o = (Orders){.plan = plan, .m = m, .chunks = chunks_count(plan)};
    o->units = g_new(GArray *, plan->pp);
    o->at = g_new(int, 2 * (gsize)m * o->chunks);
    for (int s = 0; s < plan->pp; s++) {
        StageWork w = schedule_stage_work(plan, m, s);
        o->units[s] = g_array_copy((GArray *)schedule_units(plan->schedule, &w));
        for (guint i = 0; i < o->units[s]->len; i++) {
            const Unit *u = &g_array_index(o->units[s], Unit, i);
            if (u->forward || unit_passes_gradients(u))
                *at_of(o, u->forward, u->micro_batch, chunks_of_stage(plan, s, u->chunk)) = (int)i;
        }
    }
}

static void orders_clear(Orders *o)
{
    for (int s = 0; s < o->plan->pp; s++)
        g_array_unref(o->units[s]);
    g_free(o->units);
    g_free(o->at);
}

/* Moves each stage's cut (`cut`, an index in its order) back until no
 * unit before a cut waits for one after a cut: a forward for the model
 * chunk before's, input gradients for the one after's; and off the
 * middle of a pair (Unit.paired). */
static void settle_cuts(const Orders *o, int *cut)
{
    for (gboolean moved = TRUE; moved;) {
        moved = FALSE;
        for (int s = 0; s < o->plan->pp; s++) {
            for (int i = 0; i < cut[s]; i++) {
                const Unit *u = &g_array_index(o->units[s], Unit, i);
                int g = chunks_of_stage(o->plan, s, u->chunk), from = u->forward ? g - 1 : g + 1;
                gboolean waits =
                    (u->forward || unit_passes_gradients(u)) && from >= 0 && from < o->chunks &&
                    *at_of(o, u->forward, u->micro_batch, from) >= cut[chunks_stage(o->plan, from)];
                if (waits) {
                    cut[s] = i;
                    moved = TRUE;
                }
            }
            while (cut[s] > 0 && g_array_index(o->units[s], Unit, cut[s] - 1).paired) {
                cut[s]--;
                moved = TRUE;
            }
        }
    }
}

/* Whether `plan`'s schedule takes a step of `m` micro-batches. */
static gboolean takes(const PlanSpec *plan, int m)
{
    g_autoptr(PlanSpec) copy = plan_spec_copy(plan);
    copy->global_batch_size = (gint64)m * plan->micro_batch_size * plan->dp;
    return pipeline_schedules[plan->schedule]->check(copy, NULL);
}

/* How many periods of forwards a cut may leave after it, at most: the
 * steady state of a schedule whose chunks run apart (DualPipeV's) ends
 * before its last forwards. */
#define CUT_LATEST 3

/* Cuts every stage of `plan`'s step of m micro-batches into fold's first
 * and units: each before the same forward, one to CUT_LATEST periods of
 * forwards before their end, then back as settle_cuts says; FALSE when
 * one does not cut. */
static gboolean cut_step(const PlanSpec *plan, int m, int shift, int periods, StepFold *fold)
{
    if (!takes(plan, m) || !takes(plan, m + shift))
        return FALSE;
    Orders o;
    orders_fill(&o, plan, m);
    g_autofree int *cut = g_new(int, plan->pp);
    gboolean ok = FALSE;
    for (int after = 1; after <= CUT_LATEST && !ok; after++) {
        ok = TRUE;
        for (int s = 0; s < plan->pp && ok; s++)
            ok = (cut[s] = forward_at(o.units[s], (m - after * shift) * plan->virtual_stages)) >= 0;
        if (ok)
            settle_cuts(&o, cut);
        for (int s = 0; s < plan->pp && ok; s++) {
            StageWork wider = schedule_stage_work(plan, m + shift, s);
            const GArray *more = schedule_units(plan->schedule, &wider);
            ok = cut_stage(o.units[s], more, cut[s], shift, periods, m, &fold->first[s],
                           &fold->units[s]);
        }
    }
    orders_clear(&o);
    return ok;
}

gboolean schedule_fold(const PlanSpec *plan, int micro_batches, int periods, int least, int most,
                       StepFold *fold)
{
    const PipeSchedule *row = pipeline_schedules[plan->schedule];
    StageWork w = schedule_stage_work(plan, micro_batches, 0);
    int shift = row->period ? row->period(&w) : 0;
    if (shift <= 0)
        return FALSE;
    StepFold f = {.periods = periods, .first = g_new(int, plan->pp), .units = g_new(int, plan->pp)};
    int m = micro_batches % shift + shift * (periods + 2);
    if (m < least)
        m += (least - m + shift - 1) / shift * shift;
    for (; m <= most && m + shift <= micro_batches; m += shift) {
        if (cut_step(plan, m, shift, periods, &f)) {
            f.micro_batches = m;
            f.repeats = (micro_batches - m) / shift;
            *fold = f;
            return TRUE;
        }
    }
    schedule_fold_clear(&f);
    return FALSE;
}

void schedule_fold_clear(StepFold *fold)
{
    g_clear_pointer(&fold->first, g_free);
    g_clear_pointer(&fold->units, g_free);
}

int schedule_fold_period(const StepFold *fold, int stage, int unit)
{
    int at = unit - fold->first[stage];
    return at < 0 ? GRAPH_BEFORE : MIN(at / fold->units[stage], fold->periods);
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
