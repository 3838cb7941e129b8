/* schedule_zbh2.c: ZB-H2, the zero-bubble schedule (Qi et al., "Zero
 * Bubble Pipeline Parallelism", ICLR 2024, section 2.2): backward split
 * into B (input gradients) and W (weight gradients), and up to 2p - 1
 * micro-batches in flight (forward done, W not) on every stage, against
 * 1F1B's p on the first. The order is the paper's greedy rule run on all
 * p stages in time slots of one pass each (T_F = T_B = T_W, the setting of
 * their handcrafted schedules): in each slot a stage runs a B if one is
 * ready, else a forward if one is ready and fewer than 2p - 1 micro-batches
 * are in flight, else its oldest pending W. Stage s then runs 2(p - s) - 1
 * forwards before its first B, which arrives exactly then, and with
 * m >= 2p - 1 no stage idles between its first forward and its last W:
 * stage s works from s T_F to s T_F + m (T_F + T_B + T_W). The optimizer
 * steps need no synchronisation across stages in plansim (each stage's
 * waits for its own gradients only), which is what the paper's
 * post-validation buys. */
#include "strategy/schedule.h"

/* What a stage has run so far. */
typedef struct {
    int forwards, inputs, weights; /* done: F's, B's, W's, each in micro-batch order */
} StageCount;

/* Whether the pass of micro-batch mb that ended at slot end[mb] (0: not
 * run) is done before slot t. */
static gboolean done_by(const int *end, int mb, int t)
{
    return end[mb] > 0 && end[mb] <= t;
}

static void order(const StageWork *w, GArray *units)
{
    int p = w->stages, m = w->micro_batches, limit = 2 * p - 1;
    g_autofree StageCount *c = g_new0(StageCount, p);
    /* per stage and micro-batch: the slot after its forward and its B ended */
    g_autofree int *f_end = g_new0(int, (gsize)p * m);
    g_autofree int *b_end = g_new0(int, (gsize)p * m);
    for (int t = 0; c[w->stage].weights < m; t++) {
        for (int s = 0; s < p; s++) {
            StageCount *k = &c[s];
            int *f = f_end + (gsize)s * m, *b = b_end + (gsize)s * m;
            if (k->inputs < m && done_by(f, k->inputs, t) &&
                (s == p - 1 || done_by(b + m, k->inputs, t))) {
                b[k->inputs] = t + 1;
                if (s == w->stage)
                    schedule_add_part(units, k->inputs, BACKWARD_INPUT, 0);
                k->inputs++;
            } else if (k->forwards < m && k->forwards - k->weights < limit &&
                       (s == 0 || done_by(f - m, k->forwards, t))) {
                f[k->forwards] = t + 1;
                if (s == w->stage)
                    schedule_add(units, k->forwards, TRUE, 0);
                k->forwards++;
            } else if (k->weights < k->inputs) {
                if (s == w->stage)
                    schedule_add_part(units, k->weights, BACKWARD_WEIGHT, 0);
                k->weights++;
            }
        }
    }
}

static gboolean check(const PlanSpec *plan, GError **error)
{
    return schedule_check_zero_bubble(plan, 2 * plan->pp - 1, error);
}

const PipeSchedule schedule_zbh2 = {
    .name = "zb-h2",
    .order = order,
    .check = check,
    .split = SPLIT_ALL,
    .period = schedule_period_one,
};
