/* check_engine.c: the task graph and its replay, on hand-built graphs.
 * Expected times are worked out by hand beside each assertion. */
#include <math.h>
#include <string.h>

#include "engine/engine.h"
#include "core/graph.h"
#include "testutil.h"
#include "base/error.h"

START_TEST(stream_order_and_dependencies)
{
    Graph *g = graph_new(1, 2);
    TaskId a = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "a"});
    TaskId b =
        graph_compute(g, 0, 1, 0.5, 0, 0, (TaskName){.fmt = "b"}); /* other stream, waits for a */
    graph_dep(g, a, b);
    TaskId c =
        graph_compute(g, 0, 0, 2.0, 0, 0, (TaskName){.fmt = "c"}); /* after a on its stream */
    ck_assert(graph_seal(g, NULL));
    Replay *r = test_replay_on_two_ranks(g, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->task[b].start_s, 1.0); /* a ends at 1 */
    ck_assert_double_eq(r->task[b].end_s, 1.5);   /* runs beside c */
    ck_assert_double_eq(r->task[c].end_s, 3.0);   /* 1 + 2 */
    ck_assert_double_eq(r->makespan_s, 3.0);
    ck_assert_int_eq(r->task[c].critical, a);
    ck_assert_uint_eq(r->events, 3); /* one per task */
    engine_replay_free(r);
    graph_free(g);
}
END_TEST

START_TEST(collective_waits_for_every_member)
{
    Graph *g = graph_new(2, 1);
    int members[2] = {0, 1};
    int grp = graph_add_group(g, members, 2);
    graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "short"});
    TaskId slow = graph_compute(g, 1, 0, 3.0, 0, 0, (TaskName){.fmt = "long"});
    TaskId ar0 = graph_collective(g, grp, 0, 0, COLL_ALL_REDUCE, 1e9, 0, (TaskName){.fmt = "ar"});
    TaskId ar1 = graph_collective(g, grp, 1, 0, COLL_ALL_REDUCE, 1e9, 0, (TaskName){.fmt = "ar"});
    ck_assert_int_eq(ar0, ar1); /* one task joined by both */
    TaskId after = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "after"});
    ck_assert(graph_seal(g, NULL));
    Replay *r = test_replay_on_two_ranks(g, NULL);
    ck_assert_ptr_nonnull(r);
    /* starts when the slow member arrives, at 3; ring all-reduce of 1 GB over
     * 2 ranks: 2 (n - 1) / n x S / beta = 1e9 / 100e9 = 0.01 s */
    ck_assert_double_eq(r->task[ar0].start_s, 3.0);
    ck_assert_rel(r->task[ar0].end_s, 3.01, 1e-15);
    ck_assert_int_eq(r->task[ar0].critical, slow);
    ck_assert_rel(r->task[after].end_s, 4.01, 1e-15);
    engine_replay_free(r);
    graph_free(g);
}
END_TEST

START_TEST(memory_ledger_records_the_peak)
{
    Graph *g = graph_new(1, 1);
    TaskId a = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "a"});
    TaskId b = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "b"});
    TaskId c = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "c"});
    graph_mem(g, a, 0, 0, 100, FALSE); /* category 0: 100 from t = 0 */
    graph_mem(g, b, 0, 1, 50, FALSE);  /* category 1: 50 from t = 1 */
    graph_mem(g, b, 0, 1, -50, TRUE);  /* ... until t = 2 */
    graph_mem(g, c, 0, 1, 20, FALSE);  /* 20 from t = 2: 120 < 150 */
    ck_assert(graph_seal(g, NULL));
    Replay *r = test_replay_on_two_ranks(g, NULL);
    ck_assert_double_eq(r->peak_bytes[0], 150); /* 100 + 50 during b */
    ck_assert_double_eq(r->peak_split[0], 100);
    ck_assert_double_eq(r->peak_split[1], 50);
    engine_replay_free(r);
    graph_free(g);
}
END_TEST

START_TEST(missing_member_is_reported)
{
    Graph *g = graph_new(2, 1);
    int members[2] = {0, 1};
    int grp = graph_add_group(g, members, 2);
    graph_collective(g, grp, 0, 0, COLL_ALL_GATHER, 8, 0, (TaskName){.fmt = "lonely gather"});
    GError *error = NULL;
    ck_assert(!graph_seal(g, &error));
    ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_STUCK));
    ck_assert_ptr_nonnull(strstr(error->message, "lonely gather"));
    ck_assert_ptr_nonnull(strstr(error->message, "rank 1 never reaches it"));
    g_error_free(error);
    graph_free(g);
}
END_TEST

START_TEST(cycle_is_reported_not_hung)
{
    Graph *g = graph_new(2, 1);
    TaskId a = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "a"});
    TaskId b = graph_compute(g, 1, 0, 1.0, 0, 0, (TaskName){.fmt = "b"});
    graph_dep(g, a, b);
    graph_dep(g, b, a);
    ck_assert(graph_seal(g, NULL));
    GError *error = NULL;
    ck_assert_ptr_null(test_replay_on_two_ranks(g, &error));
    ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_STUCK));
    ck_assert_ptr_nonnull(strstr(error->message, "2 of 2 tasks never start"));
    ck_assert_ptr_nonnull(strstr(error->message, "\"a\""));
    g_error_free(error);
    graph_free(g);
}
END_TEST

/* Task x on rank 0's second stream waits for a (1 s on rank 0) and b (on
 * rank 1, `b_s` long, added after a: its end pops last on a tie). Which
 * one x waited for last. */
static TaskId waited_for(double b_s, TaskId *a, TaskId *b)
{
    g_autoptr(Graph) g = graph_new(2, 2);
    *a = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "a"});
    *b = graph_compute(g, 1, 0, b_s, 0, 0, (TaskName){.fmt = "b"});
    TaskId x = graph_compute(g, 0, 1, 1.0, 0, 0, (TaskName){.fmt = "x"});
    graph_dep(g, *a, x);
    graph_dep(g, *b, x);
    ck_assert(graph_seal(g, NULL));
    g_autoptr(Replay) r = test_replay_on_two_ranks(g, NULL);
    ck_assert_ptr_nonnull(r);
    return r->task[x].critical;
}

/* Dependencies that end together (within 1e-12 of the time: rounding)
 * leave x waiting for its own rank's, whichever was seen last; one that
 * ends 1e-9 s later is the one x waited for (engine.c, `rather`). */
START_TEST(ends_together_are_a_tie_broken_by_rank)
{
    TaskId a, b;
    ck_assert_int_eq(waited_for(1.0, &a, &b), a);         /* b ends with a, seen last */
    ck_assert_int_eq(waited_for(1.0 + 1e-14, &a, &b), a); /* a hair later: rounding's */
    ck_assert_int_eq(waited_for(1.0 + 1e-9, &a, &b), b);  /* later: it is b */
    ck_assert_int_eq(waited_for(1.0 - 1e-9, &a, &b), a);  /* earlier: a */
}
END_TEST

Suite *suite_engine(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, stream_order_and_dependencies);
    tcase_add_test(tc, collective_waits_for_every_member);
    tcase_add_test(tc, memory_ledger_records_the_peak);
    tcase_add_test(tc, missing_member_is_reported);
    tcase_add_test(tc, cycle_is_reported_not_hung);
    tcase_add_test(tc, ends_together_are_a_tie_broken_by_rank);
    suite_add_tcase(s, tc);
    return s;
}
