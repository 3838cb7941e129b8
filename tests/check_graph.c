/* check_graph.c: building and sealing the task graph (core/graph.c), read
 * back through its accessors. Every expected id, row and count is worked
 * out by hand beside the assertion from the order the tasks are added in. */
#include <string.h>

#include "core/graph.h"
#include "base/bigmem.h"
#include "strategy/emit.h"
#include "strategy/strategy.h"
#include "testutil.h"
#include "base/error.h"

/* Whether `row` (n entries) is exactly `expect` (m entries). */
static gboolean row_is(const TaskId *row, int n, const TaskId *expect, int m)
{
    return n == m && (m == 0 || memcmp(row, expect, sizeof(TaskId) * (gsize)m) == 0);
}

/* Two ranks, two streams. Added in this order:
 *   a = 0  compute on rank 0 stream 0 (1 s, 10 FLOPs)
 *   b = 1  compute on rank 0 stream 0: stream edge a -> b
 *   c = 2  compute on rank 1 stream 0
 *   d = 3  all-reduce of 100 bytes on group {0, 1}, stream 1 of both
 *          (first on both streams: no stream edge)
 *   e = 4  marker on rank 1 stream 1: stream edge d -> e
 * then explicit dependencies a -> d, c -> d, d -> b. So
 *   npred: a 0, b 2 (a, d), c 0, d 2 (a, c), e 1 (d);
 *   successors, in the order the edges were added: a [b, d], b [],
 *   c [d], d [e, b], e [];
 *   streams: (0, 0) [a, b], (0, 1) [d], (1, 0) [c], (1, 1) [d, e]. */
START_TEST(tasks_streams_and_dependencies)
{
    Graph *g = graph_new(2, 2);
    int members[] = {0, 1};
    int grp = graph_add_group(g, members, 2);
    ck_assert_int_eq(grp, 0);
    TaskId a = graph_compute(g, 0, 0, 1.0, 10, 3, (TaskName){.fmt = "a"});
    TaskId b = graph_compute(g, 0, 0, 2.0, 20, 3, (TaskName){.fmt = "b"});
    TaskId c = graph_compute(g, 1, 0, 0.5, 0, 4, (TaskName){.fmt = "c"});
    ck_assert_int_eq(graph_last(g, 0, 0), b);
    ck_assert_int_eq(graph_last(g, 0, 1), TASK_NONE);
    TaskId d0 = graph_collective(g, grp, 0, 1, COLL_ALL_REDUCE, 100, 7, (TaskName){.fmt = "d"});
    TaskId d1 = graph_collective(g, grp, 1, 1, COLL_ALL_REDUCE, 100, 7, (TaskName){.fmt = "d"});
    TaskId e = graph_marker(g, 1, 1, 5, (TaskName){.fmt = "e"});
    ck_assert(a == 0 && b == 1 && c == 2 && d0 == 3 && e == 4);
    ck_assert_int_eq(d1, d0); /* one task, joined by both */
    graph_dep(g, a, d0);
    graph_dep(g, c, d0);
    graph_dep(g, d0, b);
    graph_dep(g, TASK_NONE, e); /* no task: no edge */
    ck_assert(graph_seal(g, NULL));

    ck_assert_int_eq(graph_ranks(g), 2);
    ck_assert_int_eq(graph_streams(g), 2);
    ck_assert_uint_eq(graph_tasks(g), 5);
    const Task *t = graph_task(g, a);
    ck_assert_int_eq(t->kind, TASK_COMPUTE);
    ck_assert_double_eq(t->seconds, 1.0);
    ck_assert_double_eq(t->flops, 10);
    ck_assert_int_eq(t->owner, 0);
    ck_assert_int_eq(t->stream, 0);
    ck_assert_int_eq(t->tag, 3);
    t = graph_task(g, c);
    ck_assert_int_eq(t->owner, 1);
    ck_assert_int_eq(t->tag, 4);
    t = graph_task(g, d0);
    ck_assert_int_eq(t->kind, TASK_COLLECTIVE);
    ck_assert_int_eq(t->owner, grp); /* a collective's owner is its group */
    ck_assert_int_eq(t->stream, 1);
    ck_assert_int_eq(t->op, COLL_ALL_REDUCE);
    ck_assert_double_eq(t->bytes, 100);
    ck_assert_int_eq(t->tag, 7);
    t = graph_task(g, e);
    ck_assert_int_eq(t->kind, TASK_MARKER);
    ck_assert_double_eq(t->seconds, 0);
    ck_assert_int_eq(t->owner, 1);

    static const int npred[] = {0, 2, 0, 2, 1}; /* a b c d e */
    for (TaskId id = 0; id < 5; id++)
        ck_assert_msg(graph_arrays(g).npred[id] == npred[id], "task %d: npred %d, expected %d", id,
                      graph_arrays(g).npred[id], npred[id]);
    int n;
    const TaskId *row = graph_succ(g, a, &n);
    ck_assert(row_is(row, n, (TaskId[]){b, d0}, 2));
    row = graph_succ(g, b, &n);
    ck_assert_int_eq(n, 0);
    row = graph_succ(g, c, &n);
    ck_assert(row_is(row, n, (TaskId[]){d0}, 1));
    row = graph_succ(g, d0, &n);
    ck_assert(row_is(row, n, (TaskId[]){e, b}, 2));
    row = graph_succ(g, e, &n);
    ck_assert_int_eq(n, 0);
    /* the successor rows hold every edge once: 2 + 0 + 1 + 2 + 0 = 5 =
     * the sum of npred */
    row = graph_stream(g, 0, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){a, b}, 2));
    row = graph_stream(g, 0, 1, &n);
    ck_assert(row_is(row, n, (TaskId[]){d0}, 1));
    row = graph_stream(g, 1, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){c}, 1));
    row = graph_stream(g, 1, 1, &n);
    ck_assert(row_is(row, n, (TaskId[]){d0, e}, 2));
    const int *gm = graph_group(g, grp, &n);
    ck_assert(n == 2 && gm[0] == 0 && gm[1] == 1);
    graph_free(g);
}
END_TEST

/* A rank's k-th collective on a group is the group's k-th, whichever
 * member joins first. Group {2, 0} of three ranks, one stream:
 *   rank 2 joins x (all-gather 64) -> new task 0
 *   rank 0 joins its first -> x again (task 0)
 *   rank 0 joins y, z (reduce-scatter 32, all-reduce 16) -> new tasks 1, 2
 *   rank 2 joins its second and third -> y (1) and z (2).
 * A second group {0, 1} is separate: rank 0's first collective there is a
 * new task 3 even though rank 0 has joined three on the other. */
START_TEST(collectives_match_in_program_order)
{
    Graph *g = graph_new(3, 1);
    int m1[] = {2, 0};
    int m2[] = {0, 1};
    int g1 = graph_add_group(g, m1, 2);
    int g2 = graph_add_group(g, m2, 2);
    ck_assert(g1 == 0 && g2 == 1);
    TaskName x = {.fmt = "x"}, y = {.fmt = "y"}, z = {.fmt = "z"}, w = {.fmt = "w"};
    ck_assert_int_eq(graph_collective(g, g1, 2, 0, COLL_ALL_GATHER, 64, 0, x), 0);
    ck_assert_int_eq(graph_collective(g, g1, 0, 0, COLL_ALL_GATHER, 64, 0, x), 0);
    ck_assert_int_eq(graph_collective(g, g1, 0, 0, COLL_REDUCE_SCATTER, 32, 0, y), 1);
    ck_assert_int_eq(graph_collective(g, g1, 0, 0, COLL_ALL_REDUCE, 16, 0, z), 2);
    ck_assert_int_eq(graph_collective(g, g2, 0, 0, COLL_ALL_TO_ALL, 8, 0, w), 3);
    ck_assert_int_eq(graph_collective(g, g1, 2, 0, COLL_REDUCE_SCATTER, 32, 0, y), 1);
    ck_assert_int_eq(graph_collective(g, g1, 2, 0, COLL_ALL_REDUCE, 16, 0, z), 2);
    ck_assert_int_eq(graph_collective(g, g2, 1, 0, COLL_ALL_TO_ALL, 8, 0, w), 3);
    ck_assert(graph_seal(g, NULL));
    int n;
    const int *gm = graph_group(g, g1, &n);
    ck_assert(n == 2 && gm[0] == 2 && gm[1] == 0); /* members as given, not sorted */
    /* rank 0's stream: x, y, z on g1 and w on g2, in the order it joined */
    const TaskId *row = graph_stream(g, 0, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){0, 1, 2, 3}, 4));
    row = graph_stream(g, 2, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){0, 1, 2}, 3));
    row = graph_stream(g, 1, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){3}, 1));
    ck_assert_int_eq(graph_task(g, 3)->owner, g2);
    ck_assert_int_eq(graph_task(g, 1)->op, COLL_REDUCE_SCATTER);
    /* stream order: on rank 0, 0 -> 1 -> 2 -> 3; on rank 2, 0 -> 1 -> 2
     * again (each joiner adds its own stream edge); rank 1 adds none. So
     * task 1 has two predecessors (task 0, twice), 3 has one (2). */
    ck_assert_int_eq(graph_arrays(g).npred[0], 0);
    ck_assert_int_eq(graph_arrays(g).npred[1], 2);
    ck_assert_int_eq(graph_arrays(g).npred[2], 2);
    ck_assert_int_eq(graph_arrays(g).npred[3], 1);
    row = graph_succ(g, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){1, 1}, 2));
    graph_free(g);
}
END_TEST

/* A send/recv as the header describes it: the sender runs it on its
 * stream, the receiver joins GRAPH_OFF_STREAM and only waits through a
 * dependency of its own. */
START_TEST(off_stream_member_runs_nothing)
{
    Graph *g = graph_new(2, 1);
    int pair[] = {0, 1};
    int grp = graph_add_group(g, pair, 2);
    TaskId send = graph_collective(g, grp, 0, 0, COLL_SEND_RECV, 4096, 0, (TaskName){.fmt = "s"});
    ck_assert_int_eq(graph_collective(g, grp, 1, GRAPH_OFF_STREAM, COLL_SEND_RECV, 4096, 0,
                                      (TaskName){.fmt = "s"}),
                     send);
    ck_assert_int_eq(graph_last(g, 1, 0), TASK_NONE); /* nothing on rank 1's stream */
    TaskId work = graph_compute(g, 1, 0, 1.0, 0, 0, (TaskName){.fmt = "work"});
    graph_dep(g, send, work);
    ck_assert(graph_seal(g, NULL));
    int n;
    const TaskId *row = graph_stream(g, 1, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){work}, 1));
    row = graph_stream(g, 0, 0, &n);
    ck_assert(row_is(row, n, (TaskId[]){send}, 1));
    ck_assert_int_eq(graph_task(g, send)->stream, 0);
    ck_assert_int_eq(graph_arrays(g).npred[work], 1);
    graph_free(g);
}
END_TEST

/* Names are formatted from the format and up to two ints when asked:
 * equal names read alike, different values do not. */
START_TEST(names_are_formatted_when_asked)
{
    Graph *g = graph_new(1, 1);
    static const char fmt[] = "fwd mb%d L%d attn";
    TaskId a = graph_compute(g, 0, 0, 0, 0, 0, (TaskName){fmt, 3, 17, NULL});
    TaskId b = graph_compute(g, 0, 0, 0, 0, 0, (TaskName){fmt, 3, 17, "norm"});
    TaskId c = graph_compute(g, 0, 0, 0, 0, 0, (TaskName){fmt, 3, 18, NULL});
    TaskId d = graph_marker(g, 0, 0, 0, (TaskName){.fmt = "step end"});
    ck_assert(graph_seal(g, NULL));
    g_autofree char *na = graph_name(g, a), *nb = graph_name(g, b), *nc = graph_name(g, c),
                    *nd = graph_name(g, d);
    ck_assert_str_eq(na, "fwd mb3 L17 attn");
    ck_assert_str_eq(nb, "fwd mb3 L17 attn norm"); /* a part, after a space */
    ck_assert_str_eq(nc, "fwd mb3 L18 attn");
    ck_assert_str_eq(nd, "step end");
    graph_free(g);
}
END_TEST

/* Memory operations attached out of task order come back per task, in the
 * order they were attached. */
START_TEST(memory_operations_per_task)
{
    Graph *g = graph_new(2, 1);
    TaskId a = graph_compute(g, 0, 0, 1, 0, 0, (TaskName){.fmt = "a"});
    TaskId b = graph_compute(g, 1, 0, 1, 0, 0, (TaskName){.fmt = "b"});
    TaskId c = graph_compute(g, 0, 0, 1, 0, 0, (TaskName){.fmt = "c"});
    graph_mem(g, c, 0, 2, 300, FALSE);
    graph_mem(g, a, 0, 1, 100, FALSE);
    graph_mem(g, c, 0, 2, -300, TRUE);
    graph_mem(g, a, 1, 3, 50, TRUE); /* an operation on another rank */
    ck_assert(graph_seal(g, NULL));
    int n;
    const MemOp *ops = graph_mem_ops(g, a, &n);
    ck_assert_int_eq(n, 2);
    ck_assert(ops[0].rank == 0 && ops[0].category == 1 && ops[0].bytes == 100 && !ops[0].at_end);
    ck_assert(ops[1].rank == 1 && ops[1].category == 3 && ops[1].bytes == 50 && ops[1].at_end);
    graph_mem_ops(g, b, &n);
    ck_assert_int_eq(n, 0);
    ops = graph_mem_ops(g, c, &n);
    ck_assert_int_eq(n, 2);
    ck_assert(ops[0].bytes == 300 && !ops[0].at_end);
    ck_assert(ops[1].bytes == -300 && ops[1].at_end);
    graph_free(g);
}
END_TEST

/* Memory operations attached in task order stay in that order, and the
 * flat arrays give each task's rows as the accessors do, up to the
 * sentinel after the last task. */
START_TEST(memory_operations_in_task_order)
{
    Graph *g = graph_new(1, 1);
    TaskId a = graph_compute(g, 0, 0, 1, 0, 0, (TaskName){.fmt = "a"});
    TaskId b = graph_compute(g, 0, 0, 1, 0, 0, (TaskName){.fmt = "b"});
    graph_mem(g, a, 0, 1, 10, FALSE);
    graph_mem(g, a, 0, 1, -10, TRUE);
    graph_mem(g, b, 0, 2, 20, FALSE);
    ck_assert(graph_seal(g, NULL));
    GraphArrays arr = graph_arrays(g);
    int n;
    const MemOp *ops = graph_mem_ops(g, a, &n);
    ck_assert(n == 2 && ops[0].bytes == 10 && ops[1].bytes == -10 && ops[1].at_end);
    ck_assert(ops == arr.mem + arr.task[a].first_mem);
    ck_assert_uint_eq(arr.task[b + 1].first_mem - arr.task[b].first_mem, 1);
    ck_assert_double_eq(arr.mem[arr.task[b].first_mem].bytes, 20);
    const TaskId *succ = graph_succ(g, a, &n);
    ck_assert(n == 1 && succ[0] == b); /* stream order */
    ck_assert(succ == arr.succ + arr.task[a].first_succ);
    ck_assert_uint_eq(arr.task[b + 1].first_succ, arr.task[b].first_succ); /* b has none */
    graph_free(g);
}
END_TEST

/* A collective that a member never joins: graph_seal fails with
 * PS_ERROR_STUCK, naming the collective, the count and the missing rank.
 * Group {0, 1, 2}; ranks 0 and 2 join "grad ar 5" (task 0). */
START_TEST(unjoined_collective_is_an_error)
{
    Graph *g = graph_new(3, 1);
    int members[] = {0, 1, 2};
    int grp = graph_add_group(g, members, 3);
    graph_collective(g, grp, 0, 0, COLL_ALL_REDUCE, 8, 0, (TaskName){.fmt = "grad ar %d", .a = 5});
    graph_collective(g, grp, 2, 0, COLL_ALL_REDUCE, 8, 0, (TaskName){.fmt = "grad ar %d", .a = 5});
    GError *error = NULL;
    ck_assert(!graph_seal(g, &error));
    ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_STUCK));
    ck_assert_msg(strstr(error->message, "\"grad ar 5\" (task 0)"), "%s", error->message);
    ck_assert_msg(strstr(error->message, "joined by 2 of 3 members"), "%s", error->message);
    ck_assert_msg(strstr(error->message, "rank 1 never reaches it"), "%s", error->message);
    g_error_free(error);
    graph_free(g);
}
END_TEST

/* A larger graph built at random, against the edges kept on the side:
 * every edge appears once in its source's successor row, in the order
 * added, and each task's npred is its in-degree. */
START_TEST(compressed_rows_hold_every_edge)
{
    enum { RANKS = 4, STREAMS = 3, TASKS = 400, EDGES = 1000 };
    Graph *g = graph_new(RANKS, STREAMS);
    GArray *from = g_array_new(FALSE, FALSE, sizeof(TaskId));
    GArray *to = g_array_new(FALSE, FALSE, sizeof(TaskId));
    TaskId last[RANKS * STREAMS];
    int per_stream[RANKS * STREAMS] = {0};
    for (int i = 0; i < RANKS * STREAMS; i++)
        last[i] = TASK_NONE;
    GRand *rng = g_rand_new_with_seed(7);
    for (int i = 0; i < TASKS; i++) {
        int rank = g_rand_int_range(rng, 0, RANKS), stream = g_rand_int_range(rng, 0, STREAMS);
        TaskId id = graph_compute(g, rank, stream, 1, 0, 0, (TaskName){.fmt = "t%d", .a = i});
        ck_assert_int_eq(id, i);
        int row = rank * STREAMS + stream;
        if (last[row] != TASK_NONE) {
            g_array_append_val(from, last[row]);
            g_array_append_val(to, id);
        }
        last[row] = id;
        per_stream[row]++;
    }
    for (int i = 0; i < EDGES; i++) {
        TaskId x = g_rand_int_range(rng, 0, TASKS), y = g_rand_int_range(rng, 0, TASKS);
        graph_dep(g, MIN(x, y), MAX(x, y));
        TaskId lo = MIN(x, y), hi = MAX(x, y);
        g_array_append_val(from, lo);
        g_array_append_val(to, hi);
    }
    ck_assert(graph_seal(g, NULL));
    ck_assert_uint_eq(graph_tasks(g), TASKS);
    int total = 0;
    for (TaskId t = 0; t < TASKS; t++) {
        int n;
        const TaskId *row = graph_succ(g, t, &n);
        /* the expected row: the side list's edges out of t, in order */
        int k = 0, indeg = 0;
        for (guint e = 0; e < from->len; e++) {
            if (g_array_index(to, TaskId, e) == t)
                indeg++;
            if (g_array_index(from, TaskId, e) != t)
                continue;
            ck_assert_int_lt(k, n);
            ck_assert_int_eq(row[k], g_array_index(to, TaskId, e));
            k++;
        }
        ck_assert_int_eq(k, n);
        ck_assert_int_eq(graph_arrays(g).npred[t], indeg);
        total += n;
    }
    ck_assert_int_eq(total, (int)from->len);
    int tasks_on_streams = 0;
    for (int r = 0; r < RANKS; r++)
        for (int s = 0; s < STREAMS; s++) {
            int n;
            const TaskId *row = graph_stream(g, r, s, &n);
            ck_assert_int_eq(n, per_stream[r * STREAMS + s]);
            for (int i = 0; i < n; i++) {
                ck_assert_int_eq(graph_task(g, row[i])->owner, r);
                ck_assert_int_eq(graph_task(g, row[i])->stream, s);
                if (i > 0)
                    ck_assert_int_lt(row[i - 1], row[i]); /* program order */
            }
            tasks_on_streams += n;
        }
    ck_assert_int_eq(tasks_on_streams, TASKS);
    g_rand_free(rng);
    g_array_free(from, TRUE);
    g_array_free(to, TRUE);
    graph_free(g);
}
END_TEST

/* The graph's arrays come from base/bigmem.h, whose check asks the system
 * before a big request is made: 2^62 bytes (4 EiB, past any machine's
 * address space) are refused as bad input, naming the bytes, and 1 MiB is
 * granted. */
START_TEST(memory_the_system_refuses_is_an_error)
{
    GError *error = NULL;
    ck_assert(!bigmem_check((gsize)1 << 62, &error));
    ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_INPUT));
    ck_assert_msg(g_str_has_prefix(error->message, "mapping 4611686018427387904 bytes failed ("),
                  "%s", error->message);
    g_clear_error(&error);
    ck_assert(bigmem_check((gsize)1 << 20, &error));
    ck_assert_ptr_null(error);
}
END_TEST

/* A request the system refuses after all (bigmem_check passed, then the
 * memory went) ends the process with exit status 1 and one line, never an
 * abort: 2^62 bytes are past any machine's address space. An exit test,
 * so run in a child of its own (CK_FORK, the default). */
START_TEST(memory_refused_after_the_check_exits_1)
{
    bigmem_free(bigmem_alloc((gsize)1 << 62));
}
END_TEST

/* A random plan of every strategy on 16 GPUs (2 nodes of 8) of a small
 * mixture of experts (4 layers, every one or every other one of 4
 * experts), into `p`: tp, pp, cp (ring or Ulysses), ep, every schedule,
 * interleaving, ZeRO 0 to 3, offload, sequence parallelism, tp overlap,
 * recomputation, FP8, overlapped gathers and reductions, the experts'
 * dispatcher, 1 to 8 micro-batches; FALSE when it does not resolve. */
static gboolean random_plan(GRand *rng, Run *run)
{
    PlanSpec *p = run->plan;
    static const int sizes[] = {1, 2, 4}, batches[] = {1, 2, 3, 4, 8};
    p->tp = sizes[g_rand_int_range(rng, 0, 3)];
    p->pp = sizes[g_rand_int_range(rng, 0, 3)];
    p->cp = sizes[g_rand_int_range(rng, 0, 2)];
    p->cp_algorithm = g_rand_boolean(rng) ? CP_ALL_TO_ALL : CP_RING;
    p->ep = sizes[g_rand_int_range(rng, 0, 3)];
    p->schedule = (Schedule)g_rand_int_range(rng, 0, SCHEDULES);
    p->virtual_stages =
        p->schedule == SCHEDULE_INTERLEAVED || p->schedule == SCHEDULE_DUALPIPEV ? 2 : 1;
    p->zero_stage = g_rand_int_range(rng, 0, 4);
    p->offload = (Offload)g_rand_int_range(rng, 0, 3);
    p->sequence_parallel = p->tp > 1 && g_rand_boolean(rng);
    p->tp_comm_overlap = p->sequence_parallel && g_rand_boolean(rng);
    p->recompute = (Recompute)g_rand_int_range(rng, 0, 3);
    p->dtype = g_rand_boolean(rng) ? DTYPE_FP8 : DTYPE_BF16;
    p->overlap_param_gather = g_rand_boolean(rng);
    p->overlap_grad_reduce = g_rand_boolean(rng);
    p->moe_dispatcher = (MoeDispatcher)g_rand_int_range(rng, 0, MOE_DISPATCHER_FLEX + 1);
    p->overlap_moe_expert_parallel_comm = g_rand_int_range(rng, 0, 4) == 0; /* pairs, where valid */
    p->micro_batch_size = sizes[g_rand_int_range(rng, 0, 2)];
    run->model->moe_layer_frequency = g_rand_int_range(rng, 1, 3);
    int dp = 16 / (p->tp * p->cp * p->pp);
    p->global_batch_size = batches[g_rand_int_range(rng, 0, 5)] * p->micro_batch_size * MAX(dp, 1);
    GError *error = NULL;
    gboolean ok = strategy_resolve(p, run->model, run->cluster, &error);
    g_clear_error(&error);
    return ok;
}

/* The dry walk (emit_count_tasks) against the graphs emit_step builds, on
 * random plans (random_plan; the combined 1F1B overlap's pairs among
 * them), under every shift and rotation of the symmetry and under none:
 * the count is the graph's, to the task; the lower bound passes at that
 * count (emit_check_size); and under a cap one task short the step is
 * refused before it is built (PS_ERROR_INPUT: the estimate put it past
 * the cap, and the count refused it), as the dry walk says, but built
 * under the count itself. */
START_TEST(counted_tasks_are_the_graphs)
{
    enum { PLANS = 2000 };
    GRand *rng = g_rand_new_with_seed(33);
    int compared = 0, paired = 0;
    for (int i = 0; i < PLANS; i++) {
        Run run = run_new(test_moe(4, 128, 8, 512, 64, 4, 2, 256), test_cluster(2, 8, 300e9, 25e9));
        run.cluster->gpu.peak_fp8_flops = 2 * run.cluster->gpu.peak_flops;
        run.cluster->gpu.pcie_Bps = 50e9;
        run.cluster->host_memory_bytes = 1e12;
        run.cluster->cpu_adam_params_s = 4e9;
        run.model->tied_embeddings = g_rand_boolean(rng);
        if (!random_plan(rng, &run)) {
            run_free(&run);
            continue;
        }
        paired += run.plan->overlap_moe_expert_parallel_comm && run.plan->ep > 1;
        g_autoptr(Layout) layout = layout_new(run.plan, run.cluster);
        Topology *topo = topology_new(run.cluster, 2);
        for (int all = 0; all < 2; all++) {
            g_autoptr(Symmetry) sym = symmetry_new(layout, topo, all ? SYMMETRY_ALL : 0);
            int simulated;
            symmetry_simulated(sym, &simulated);
            Step step = step_of(run.model, run.cluster, run.plan);
            gsize counted = emit_count_tasks(&step, layout, sym, NULL, EMIT_MAX_TASKS);
            GError *error = NULL;
            Graph *g = emit_step(&step, layout, sym, NULL, NULL, counted, 0, &error);
            ck_assert_msg(g != NULL, "%s", error ? error->message : "");
            ck_assert_uint_eq(graph_tasks(g), counted);
            graph_free(g);
            ck_assert(emit_check_size(run.model, run.plan, simulated, 0, counted, NULL));
            ck_assert_uint_eq(emit_count_tasks(&step, layout, sym, NULL, counted - 1),
                              counted); /* it passes the cap at the last task */
            ck_assert_ptr_null(emit_step(&step, layout, sym, NULL, NULL, counted - 1, 0, &error));
            ck_assert_msg(g_error_matches(error, PS_ERROR, PS_ERROR_INPUT), "%s", error->message);
            g_clear_error(&error);
            compared++;
        }
        topology_free(topo);
        run_free(&run);
    }
    g_rand_free(rng);
    ck_assert_int_gt(compared, PLANS / 4); /* a good share resolves */
    ck_assert_int_gt(paired, 0);           /* the combined 1F1B overlap's pairs among them */
}
END_TEST

Suite *suite_graph(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("build");
    tcase_add_test(tc, tasks_streams_and_dependencies);
    tcase_add_test(tc, collectives_match_in_program_order);
    tcase_add_test(tc, off_stream_member_runs_nothing);
    tcase_add_test(tc, names_are_formatted_when_asked);
    tcase_add_test(tc, memory_operations_per_task);
    tcase_add_test(tc, memory_operations_in_task_order);
    tcase_add_test(tc, unjoined_collective_is_an_error);
    tcase_add_test(tc, compressed_rows_hold_every_edge);
    tcase_add_test(tc, memory_the_system_refuses_is_an_error);
    tcase_add_exit_test(tc, memory_refused_after_the_check_exits_1, 1);
    suite_add_tcase(s, tc);
    tc = tcase_create("emit");
    tcase_add_test(tc, counted_tasks_are_the_graphs);
    suite_add_tcase(s, tc);
    return s;
}
