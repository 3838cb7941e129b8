/* check_fold.c: a steady state built short (core/graph.h, engine.h,
 * schedule_fold) against the step replayed whole.
 *
 * - By hand, on a graph of two ranks: each micro-batch a task of 1 s on
 *   rank 0, then one of 1 s on rank 1. Built with its micro-batches 2, 3
 *   and 4 as periods 0, 1, 2, and micro-batch 4 standing for itself and R
 *   more, it stands for the step of 6 + R micro-batches, which ends at
 *   6 + R + 1 s (rank 1's last task starts when rank 0's last ends, at
 *   6 + R); it counts the 2 (6 + R) task ends and 2 markers the step
 *   replayed whole processes, 2 R of them skipped; and that replay says the
 *   same, task by task after the periods (each R s later).
 * - Perturbed, it is caught: a task of a period 1.5 s long where its
 *   counterparts take 1 s (the periods differ as tasks), and rank 0's
 *   tasks 0.5 s long, so that rank 0 runs ahead of rank 1 and its
 *   periods end earlier and earlier against rank 1's (the periods are
 *   alike but their times are not a period apart): the replay fails with
 *   PS_ERROR_NO_PERIOD, which simulate answers by replaying whole.
 * - Random steps of 12 to 40 micro-batches (every schedule, ZeRO stage,
 *   recomputation, precision, offload, mixture of experts, what the
 *   generators of testrandom.h draw): the report of the step built short
 *   is the whole replay's, but for how it was simulated (wall time,
 *   events): its step within 1e-12, its text byte for byte, its JSON
 *   within a unit of its tenth digit (two values 1e-12 apart may round
 *   apart there); most are built short.
 * The combination matrix is replayed both ways too (check_combinations.c). */
#include <math.h>
#include <string.h>

#include "app/simulate.h"
#include "base/error.h"
#include "engine/engine.h"
#include "testrandom.h"

enum { PERIODS = 3, FIRST = 2, BUILT = 6 };

/* The two-rank step above of `n` micro-batches, built short (periods for
 * micro-batches FIRST .. FIRST + PERIODS - 1, the last repeated `repeats`
 * times) unless `repeats` is 0; rank 0's tasks take `head` s, and task
 * `odd` of rank 0 (-1: none) 1.5 s. */
static Graph *two_ranks(int n, int repeats, double head, int odd)
{
    Graph *g = graph_new(2, 1);
    if (repeats > 0)
        graph_fold(g, PERIODS, repeats);
    g_autofree TaskId *sent = g_new(TaskId, n);
    for (int rank = 0; rank < 2; rank++) {
        if (repeats > 0)
            graph_set_period(g, GRAPH_BEFORE);
        graph_marker(g, rank, 0, 0, (TaskName){.fmt = "begin"});
        for (int mb = 0; mb < n; mb++) {
            if (repeats > 0)
                graph_set_period(g, CLAMP(mb - FIRST, GRAPH_BEFORE, PERIODS));
            double s = rank == 1 ? 1.0 : mb == odd ? 1.5 : head;
            TaskId t = graph_compute(g, rank, 0, s, 0, 0, (TaskName){.fmt = "mb %d", .a = mb});
            if (rank == 0)
                sent[mb] = t;
            else
                graph_dep(g, sent[mb], t);
        }
    }
    ck_assert(graph_seal(g, NULL));
    return g;
}

START_TEST(a_short_step_stands_for_the_whole_one)
{
    for (int repeats = 1; repeats <= 50; repeats *= 7) {
        int n = BUILT + repeats;
        g_autoptr(Graph) shorter = two_ranks(BUILT, repeats, 1.0, -1);
        g_autoptr(Graph) whole = two_ranks(n, 0, 1.0, -1);
        GError *error = NULL;
        g_autoptr(Replay) r = test_replay_on_two_ranks(shorter, &error);
        ck_assert_msg(r, "%s", error ? error->message : "");
        g_autoptr(Replay) w = test_replay_on_two_ranks(whole, NULL);
        ck_assert_double_eq(r->makespan_s, n + 1.0); /* by hand, above */
        ck_assert_double_eq(w->makespan_s, n + 1.0);
        ck_assert_uint_eq(r->events, 2 * n + 2);
        ck_assert_uint_eq(r->events_skipped, 2 * repeats); /* a period's two task ends */
        ck_assert_uint_eq(w->events, 2 * n + 2);
        ck_assert_int_eq(r->repeats, repeats);
        ck_assert_double_eq(r->period_s, 1.0);
        /* task by task: the ranks' tasks are added in the same order, and
         * the whole step has `repeats` more of each rank's after period 2 */
        for (TaskId id = 0; id < (TaskId)graph_tasks(shorter); id++) {
            int rank = id / (BUILT + 1), at = id % (BUILT + 1);
            gboolean after = at - 1 >= FIRST + PERIODS;
            TaskId same = (TaskId)(rank * (n + 1) + at + (after ? repeats : 0));
            ck_assert_double_eq(replay_weight(r, id),
                                at - 1 == FIRST + PERIODS - 1 ? 1 + repeats : 1);
            ck_assert_double_eq(r->task[id].end_s + replay_shift_s(r, id), w->task[same].end_s);
        }
    }
}
END_TEST

/* The error a perturbed step built short replays with. */
static void caught(double head, int odd, const char *why)
{
    g_autoptr(Graph) g = two_ranks(BUILT, 4, head, odd);
    GError *error = NULL;
    Replay *r = test_replay_on_two_ranks(g, &error);
    ck_assert_ptr_null(r);
    ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_NO_PERIOD));
    ck_assert_msg(strstr(error->message, why), "%s", error->message);
    g_error_free(error);
}

START_TEST(a_perturbed_period_is_caught)
{
    caught(1.0, FIRST + 1, "is not task");      /* period 1's task on rank 0: 1.5 s */
    caught(0.5, -1, "off a period after task"); /* rank 0 runs ahead of rank 1 */
    g_autoptr(Graph) fine = two_ranks(BUILT, 4, 1.0, FIRST - 1); /* before the periods */
    GError *error = NULL;
    g_autoptr(Replay) r = test_replay_on_two_ranks(fine, &error);
    ck_assert_msg(r, "%s", error ? error->message : "");
}
END_TEST

/* What a report says of how it was simulated. */
typedef struct {
    guint64 events, skipped, apart; /* Metrics' events, events_skipped, flows_apart */
    double step_s;
} How;

/* The report of `plan`, simulated as simulate_run does (or the long way:
 * whole), as text and as parsed JSON, without how it was simulated (its
 * wall time, its events, why it was replayed whole after all), which goes
 * into *how. */
static char *text_of(const RandomStep *s, gboolean whole, cJSON **json, How *how)
{
    Report rep;
    GError *error = NULL;
    gboolean ok = whole ? simulate_run_whole(s->m, s->c, s->plan, &rep, &error)
                        : simulate_run(s->m, s->c, s->plan, &rep, &error);
    ck_assert_msg(ok, "%s", error ? error->message : "");
    *how = (How){.events = rep.metrics.events,
                 .skipped = rep.metrics.events_skipped,
                 .apart = rep.metrics.flows_apart,
                 .step_s = rep.metrics.step_time_s};
    rep.sim_wall_s = 0;
    rep.replayed_whole = NULL;
    rep.metrics.events = rep.metrics.events_skipped = 0;
    g_autofree char *j = report_render(&rep, FORMAT_JSON, FALSE);
    *json = cJSON_Parse(j);
    char *text = report_render(&rep, FORMAT_TEXT, FALSE);
    report_clear(&rep);
    return text;
}

/* Random steps (testrandom.h) simulated as simulate_run does, their
 * steady states skipped and the flows no other meets run apart from the
 * share, and the long way (simulate_run_whole): the same report, the same
 * events where none were skipped; a fifth of them or more skip some, and
 * a tenth or more run flows apart. */
START_TEST(random_steps_skip_their_steady_state_exactly)
{
    enum { STEPS = 150 };
    static const char *const skipped[] = {"sim_wall_s", NULL};
    GRand *rng = g_rand_new_with_seed(20261207);
    int tried = 0, folded = 0, apart = 0;
    for (int i = 0; i < STEPS; i++) {
        RandomStep s = random_step(rng, TRUE, &tried, 20 * STEPS);
        cJSON *a, *b;
        How fast, whole;
        g_autofree char *short_text = text_of(&s, FALSE, &a, &fast);
        g_autofree char *whole_text = text_of(&s, TRUE, &b, &whole);
        ck_assert_rel(fast.step_s, whole.step_s, 1e-12);
        /* JSON prints 10 digits: two values 1e-12 apart may round apart */
        g_autofree char *why = random_difference(a, b, "$", skipped, 1e-9);
        ck_assert_msg(!why, "step %d (schedule %s, tp %d cp %d pp %d dp %d, %d micro-batches): %s",
                      i, schedule_names[s.plan->schedule], s.plan->tp, s.plan->cp, s.plan->pp,
                      s.plan->dp, plan_spec_micro_batches(s.plan), why);
        ck_assert_str_eq(short_text, whole_text);
        if (fast.skipped == 0) /* a period's copies count its events, not the whole's */
            ck_assert_uint_eq(fast.events, whole.events);
        ck_assert_uint_eq(whole.skipped, 0);
        ck_assert_uint_eq(whole.apart, 0);
        folded += fast.skipped > 0;
        apart += fast.apart > 0;
        cJSON_Delete(a);
        cJSON_Delete(b);
        random_step_clear(&s);
    }
    g_print("fold: %d of %d random steps skipped their steady state, %d ran flows apart\n", folded,
            STEPS, apart);
    ck_assert_msg(folded >= STEPS / 5, "only %d of %d steps were built short", folded, STEPS);
    ck_assert_msg(apart >= STEPS / 10, "only %d of %d steps ran flows apart", apart, STEPS);
    g_rand_free(rng);
}
END_TEST

Suite *suite_fold(void)
{
    Suite *s = suite_create("fold");
    TCase *tc = tcase_create("fold");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_short_step_stands_for_the_whole_one);
    tcase_add_test(tc, a_perturbed_period_is_caught);
    tcase_add_test(tc, random_steps_skip_their_steady_state_exactly);
    suite_add_tcase(s, tc);
    return s;
}
