/* schedule_dualpipev.c: DualPipeV, the V-shaped half of DualPipe
 * (DeepSeek-V3 technical report, section 3.2.1; Sea AI Lab's "cut-in-half";
 * the DualPipe repository's dualpipe/dualpipev.py, whose step() this
 * follows). Each of the p stages runs two model chunks placed in a V
 * (layout/chunks.h): chunk 0 is model chunk s, chunk 1 model chunk
 * 2p - 1 - s, so a micro-batch goes down the stages through the first half
 * of the model and back up through the second, and the first stage holds
 * both the embedding and the loss. Each chunk's forwards, and its
 * backwards, take the micro-batches in order; stage s of m >= 2p runs:
 *   1. 2(p - s - 1) forwards of chunk 0;
 *   2. s + 1 times a forward of chunk 0, then of chunk 1;
 *   3. p - s - 1 times chunk 1's B, a W, a forward of chunk 1;
 *   4. m - 2p + s + 1 times a forward of chunk 0 with a backward of
 *      chunk 1, then a forward of chunk 1 with a backward of chunk 0 (on
 *      the last stage the first of these two apart, not a pair);
 *   5. p - s - 1 times a backward of chunk 1, then a forward of chunk 1
 *      with a backward of chunk 0;
 *   6. s + 1 times a backward of chunk 1, then of chunk 0, the later half
 *      of them split, their W's deferred (from the (s + 1)/2-th round on,
 *      its chunk 1's backward included when s is odd);
 *   7. p - s - 1 times a W, then chunk 0's B;
 *   8. s + 1 W's.
 * The W's run in the order of their B's. A forward "with" a backward is a
 * pair (schedule_pair_last): DualPipe overlaps the two, one's expert
 * all-to-alls beside the other's compute, which plansim models where the
 * plan says so (overlap_moe_expert_parallel_comm); else they run one after
 * the other. Every stage holds at most 2p + 1 chunk-micro-batches (the
 * repository's table: PP + 1 for PP = 2p model chunks). With its model
 * chunks alike, a forward T_F, a B T_B and a W T_W (T_B + T_W = 2 T_F,
 * T_W <= T_F), stage s idles (p - 1) T_F + (p - 1 - s)(T_B - T_W) of the
 * step (tests/check_pipeline.c works it by hand). DualPipe itself (two copies of the parameters, micro-
 * batches fed from both ends) is not modelled: DualPipeV has its bubble
 * with one copy. */
#include "strategy/schedule.h"

/* The chunks' next micro-batches and the B's whose W's are still to run. */
typedef struct {
    const StageWork *w;
    GArray *units;
    int forwards[2], backwards[2];
    GArray *deferred; /* Unit: the B's, in order */
    guint next_w;     /* deferred's first not yet run */
} Counts;

static void forward(Counts *o, int chunk)
{
    schedule_add(o->units, o->forwards[chunk]++, TRUE, chunk);
}

/* A backward of `chunk`, whole or its B (its W deferred). */
static void backward(Counts *o, int chunk, gboolean split)
{
    int mb = o->backwards[chunk]++;
    if (!split) {
        schedule_add(o->units, mb, FALSE, chunk);
        return;
    }
    schedule_add_part(o->units, mb, BACKWARD_INPUT, chunk);
    g_array_append_val(o->deferred, g_array_index(o->units, Unit, o->units->len - 1));
}

static void weight(Counts *o)
{
    g_assert(o->next_w < o->deferred->len);
    const Unit *b = &g_array_index(o->deferred, Unit, o->next_w++);
    schedule_add_part(o->units, b->micro_batch, BACKWARD_WEIGHT, b->chunk);
}

/* A forward of chunk f with a whole backward of chunk b: a pair. */
static void pair(Counts *o, int f, int b)
{
    forward(o, f);
    backward(o, b, FALSE);
    schedule_pair_last(o->w, o->units);
}

static void order(const StageWork *w, GArray *units)
{
    int m = w->micro_batches, p = w->stages, s = w->stage;
    gboolean last = s == p - 1;
    Counts o = {.w = w, .units = units, .deferred = g_array_new(FALSE, FALSE, sizeof(Unit))};
    for (int i = 0; i < 2 * (p - s - 1); i++) /* 1 */
        forward(&o, 0);
    for (int i = 0; i < s + 1; i++) { /* 2 */
        forward(&o, 0);
        forward(&o, 1);
    }
    for (int i = 0; i < p - s - 1; i++) { /* 3 */
        backward(&o, 1, TRUE);
        weight(&o);
        forward(&o, 1);
    }
    for (int i = 0; i < m - 2 * p + s + 1; i++) { /* 4 */
        if (i == 0 && last) {
            forward(&o, 0);
            backward(&o, 1, FALSE);
        } else {
            pair(&o, 0, 1);
        }
        pair(&o, 1, 0);
    }
    for (int i = 0; i < p - s - 1; i++) { /* 5 */
        backward(&o, 1, FALSE);
        pair(&o, 1, 0);
    }
    gboolean split = FALSE; /* 6 */
    for (int i = 0; i < s + 1; i++) {
        split |= i == (s + 1) / 2 && s % 2 == 1;
        backward(&o, 1, split);
        split |= i == (s + 1) / 2 && s % 2 == 0;
        backward(&o, 0, split);
    }
    for (int i = 0; i < p - s - 1; i++) { /* 7 */
        weight(&o);
        backward(&o, 0, TRUE);
    }
    for (int i = 0; i < s + 1; i++) /* 8 */
        weight(&o);
    g_assert(o.next_w == o.deferred->len);
    g_array_unref(o.deferred);
}

static gboolean check(const PlanSpec *plan, GError **error)
{
    if (plan->pp < 2)
        return plan_field_fail(error, plan, PLAN_SCHEDULE,
                               "a schedule other than \"dualpipev\" when pp = %d (it folds the "
                               "model over the pipeline stages)",
                               plan->pp);
    if (plan->virtual_stages != 2)
        return plan_field_fail(error, plan, PLAN_VIRTUAL_STAGES,
                               "2 model chunks per stage with the \"dualpipev\" schedule (a V)");
    if (plan->decoder_first_pipeline_num_layers || plan->decoder_last_pipeline_num_layers)
        return plan_field_fail(error, plan,
                               plan->decoder_first_pipeline_num_layers ? PLAN_FIRST_STAGE_LAYERS
                                                                       : PLAN_LAST_STAGE_LAYERS,
                               "not set with the \"dualpipev\" schedule, whose first stage holds "
                               "the first and the last model chunk (give layers_per_stage or a "
                               "layout)");
    int m = plan_spec_micro_batches(plan);
    if (m < 2 * plan->pp)
        return plan_field_fail(error, plan, PLAN_GLOBAL_BATCH_SIZE,
                               "micro-batches per step, global_batch_size / (micro_batch_size x "
                               "dp) = %d, at least 2 pp = %d for the \"dualpipev\" schedule",
                               m, 2 * plan->pp);
    return TRUE;
}

const PipeSchedule schedule_dualpipev = {
    .name = "dualpipev",
    .order = order,
    .check = check,
    .split = SPLIT_SOME,
    .pairs = TRUE,
    .period = schedule_period_one,
};
