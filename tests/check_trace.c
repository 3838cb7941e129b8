/* check_trace.c: the Chrome trace of a replay is valid JSON, every slice
 * is on a known GPU's stream, each traced GPU shows the tasks its step
 * must run on every stream (so an empty or partial trace fails), the
 * slices of one stream never overlap, and each traced GPU has a memory
 * counter. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "strategy/emit.h"
#include "testutil.h"

typedef struct {
    double start, end;
} Slice;

static int cmp_slice(const void *a, const void *b)
{
    const Slice *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Traces a tp 2 x pp 2 x dp 2 step with ZeRO-3 and recomputation (every
 * stream busy) and returns the parsed trace. */
static cJSON *trace_of(gboolean stages_only, int *ranks)
{
    Run run = run_new(test_gpt(4, 256, 8, 1024, 128), test_cluster(1, 8, 300e9, 25e9));
    run.plan->tp = 2;
    run.plan->pp = 2;
    run.plan->zero_stage = 3;
    run.plan->recompute = RECOMPUTE_FULL;
    run.plan->attention = ATTENTION_STANDARD; /* the tasks counted by hand below */
    run.plan->global_batch_size = 8;
    test_resolve(run.plan, run.model, run.cluster);
    char *path = test_write_tmp("");
    GError *error = NULL;
    ck_assert_msg(
        simulate_run_traced(run.model, run.cluster, run.plan, path, stages_only, &run.rep, &error),
        "%s", error ? error->message : "");
    *ranks = run.rep.gpus;
    char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    cJSON *json = cJSON_Parse(text);
    ck_assert_msg(json != NULL, "the trace is not valid JSON");
    g_free(text);
    test_remove(path);
    run_free(&run);
    return json;
}

/* What a trace holds, per GPU (pid) and stream (tid: compute, comm,
 * p2p, tp): complete events ("X") by kind of task, and memory counters. */
enum { MAX_RANKS = 8, STREAMS = STREAM_LOADER }; /* no data loader: its stream is absent */
typedef struct {
    int compute[MAX_RANKS][STREAMS];
    int collective[MAX_RANKS][STREAMS];
    int counters[MAX_RANKS];
    int slices; /* all "X" events */
    int named_threads;
} Tally;

static void tally(const cJSON *json, int ranks, Tally *t)
{
    memset(t, 0, sizeof *t);
    ck_assert_int_le(ranks, MAX_RANKS);
    const cJSON *events = cJSON_GetObjectItem(json, "traceEvents");
    ck_assert(cJSON_IsArray(events));
    for (const cJSON *e = events->child; e; e = e->next) {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        ck_assert(pid >= 0 && pid < ranks);
        if (strcmp(ph, "C") == 0)
            t->counters[pid]++;
        if (strcmp(ph, "M") == 0 &&
            strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "thread_name") == 0)
            t->named_threads++;
        if (strcmp(ph, "X") != 0)
            continue;
        int tid = cJSON_GetObjectItem(e, "tid")->valueint;
        ck_assert(tid >= 0 && tid < STREAMS);
        const char *kind = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "kind")->valuestring;
        if (strcmp(kind, "compute") == 0)
            t->compute[pid][tid]++;
        else if (strcmp(kind, "collective") == 0)
            t->collective[pid][tid]++;
        else
            ck_abort_msg("slice of kind \"%s\"", kind);
        t->slices++;
    }
}

/* The tasks a traced GPU must show, by hand for the step of trace_of:
 * m = B / (b dp) = 8 / (1 x 2) = 4 micro-batches; a stage holds 2 of the
 * 4 layers, each two blocks (attention, MLP), plus the embedding (stage
 * 0) or the head (stage 1). Tensor parallelism (tp 2, no sequence
 * parallelism) cuts each piece's compute at its all-reduces (docs/model.md,
 * "Strategies"): a block's forward, and its replay under full
 * recomputation, in 2 parts around the sum of its output; its backward in
 * 3: up to the QKV or MLP-up input gradient, the weight gradient beside
 * that gradient's sum, the norm; the embedding's forward in 2, its
 * backward 1; the head's forward 1, its backward 3. Compute stream per
 * micro-batch, stage 0: 4 x 2 + 2 forward, 4 x 2 replayed, 4 x 3 + 1
 * backward, 31; stage 1: 4 x 2 + 1, 8, 4 x 3 + 3, 32; times 4, plus the
 * optimizer step: 125 and 129 compute tasks. TP stream: an all-reduce per
 * block in each of forward, backward and replay (6 per layer with full
 * recomputation), and 1 for the embedding or head: 2 x 6 + 1 = 13 per
 * micro-batch, 52 in all. Comm stream: only collectives, ZeRO-3's over dp
 * 2, at least the reduction of each of the 2 layers' gradients. P2P
 * stream: one send per micro-batch, activations (stage 0) or gradients
 * (stage 1): 4. An empty or partial trace fails here. GPUs 0 to 3 are
 * stage 0 (rank order tp-dp-pp). */
static void assert_gpu_traced(const Tally *t, int pid)
{
    int compute = pid < 4 ? 125 : 129;
    ck_assert_msg(t->compute[pid][STREAM_COMPUTE] == compute,
                  "GPU %d: %d compute slices, expected %d", pid, t->compute[pid][STREAM_COMPUTE],
                  compute);
    ck_assert_int_eq(t->collective[pid][STREAM_COMPUTE], 0);
    ck_assert_msg(t->collective[pid][STREAM_TP] == 52, "GPU %d: %d TP collectives, expected 52",
                  pid, t->collective[pid][STREAM_TP]);
    ck_assert_int_eq(t->compute[pid][STREAM_TP], 0);
    ck_assert_msg(t->collective[pid][STREAM_COMM] >= 2, "GPU %d: %d ZeRO collectives", pid,
                  t->collective[pid][STREAM_COMM]);
    ck_assert_int_eq(t->compute[pid][STREAM_COMM], 0);
    ck_assert_msg(t->collective[pid][STREAM_P2P] == 4, "GPU %d: %d pipeline sends, expected 4", pid,
                  t->collective[pid][STREAM_P2P]);
    ck_assert_int_eq(t->compute[pid][STREAM_P2P], 0);
    ck_assert_msg(t->counters[pid] >= 2, "GPU %d: %d memory counter events", pid, t->counters[pid]);
}

static void assert_gpu_absent(const Tally *t, int pid)
{
    for (int s = 0; s < STREAMS; s++)
        ck_assert_int_eq(t->compute[pid][s] + t->collective[pid][s], 0);
    ck_assert_int_eq(t->counters[pid], 0);
}

START_TEST(slices_of_a_stream_never_overlap)
{
    int ranks;
    cJSON *json = trace_of(FALSE, &ranks);
    ck_assert_int_eq(ranks, 8); /* tp 2 x pp 2 x dp 2 */
    Tally t;
    tally(json, ranks, &t);
    for (int r = 0; r < ranks; r++)
        assert_gpu_traced(&t, r);
    ck_assert_int_eq(t.named_threads, ranks * STREAMS);
    ck_assert_int_ge(t.slices, ranks * (57 + 52 + 2 + 4));

    const cJSON *events = cJSON_GetObjectItem(json, "traceEvents");
    GHashTable *streams =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
    for (const cJSON *e = events->child; e; e = e->next) {
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X") != 0)
            continue;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        int tid = cJSON_GetObjectItem(e, "tid")->valueint;
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        double dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        ck_assert(dur >= 0 && cJSON_IsString(cJSON_GetObjectItem(e, "name")));
        gpointer key = GINT_TO_POINTER(pid * 16 + tid);
        GArray *list = g_hash_table_lookup(streams, key);
        if (!list) {
            list = g_array_new(FALSE, FALSE, sizeof(Slice));
            g_hash_table_insert(streams, key, list);
        }
        Slice s = {ts, ts + dur};
        g_array_append_val(list, s);
    }
    ck_assert_int_eq(g_hash_table_size(streams), ranks * STREAMS); /* compute, comm, p2p, tp */
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, streams);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        GArray *list = value;
        g_array_sort(list, cmp_slice);
        for (guint i = 1; i < list->len; i++) /* 1e-6 us: printing's decimal rounding */
            ck_assert(g_array_index(list, Slice, i).start >=
                      g_array_index(list, Slice, i - 1).end - 1e-6);
    }
    g_hash_table_destroy(streams);
    cJSON_Delete(json);
}
END_TEST

/* With stages_only, only each stage's first GPU (tp 0, dp 0): GPUs 0 and
 * 4 (rank = tp + 2 (dp + 2 pp)), each traced in full, the others not at
 * all. */
START_TEST(stages_only_traces_one_gpu_per_stage)
{
    int ranks;
    cJSON *json = trace_of(TRUE, &ranks);
    Tally t;
    tally(json, ranks, &t);
    assert_gpu_traced(&t, 0);
    assert_gpu_traced(&t, 4);
    for (int r = 0; r < ranks; r++)
        if (r != 0 && r != 4)
            assert_gpu_absent(&t, r);
    ck_assert_int_eq(t.named_threads, 2 * STREAMS);
    cJSON_Delete(json);
}
END_TEST

/* The parts of a layer's compute are named apart (tensor parallelism cuts
 * it at its collectives; tensor_parallel.c's part names): no two compute
 * slices of one GPU's compute stream share a name. And the flow arrows:
 * each starts ("s") once and ends ("f") once; a pipeline transfer's ends
 * on another GPU than it starts, one per send: 2 stages x 4 GPUs x 4
 * micro-batches = 32 (activations forward from stage 0, gradients back
 * from stage 1); a collective's joins its members, here pairs (tp 2,
 * ZeRO's dp 2), on one stream. */
START_TEST(parts_named_apart_and_flows_paired)
{
    int ranks;
    cJSON *json = trace_of(FALSE, &ranks);
    g_autoptr(GHashTable) names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) starts = g_hash_table_new(g_direct_hash, g_direct_equal);
    int sends = 0, ends = 0;
    const cJSON *events = cJSON_GetObjectItem(json, "traceEvents");
    for (const cJSON *e = events->child; e; e = e->next) {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        if (strcmp(ph, "X") == 0 && cJSON_GetObjectItem(e, "tid")->valueint == STREAM_COMPUTE) {
            char *key = g_strdup_printf("%d %s", pid, cJSON_GetObjectItem(e, "name")->valuestring);
            ck_assert_msg(!g_hash_table_contains(names, key), "two slices named \"%s\"", key);
            g_hash_table_add(names, key);
        }
        if (strcmp(ph, "s") != 0 && strcmp(ph, "f") != 0)
            continue;
        gpointer id = GINT_TO_POINTER(cJSON_GetObjectItem(e, "id")->valueint + 1);
        if (ph[0] == 's') {
            ck_assert(!g_hash_table_contains(starts, id));
            g_hash_table_insert(starts, id, GINT_TO_POINTER(pid + 1));
            continue;
        }
        ck_assert(g_hash_table_contains(starts, id));
        ends++;
        sends += GPOINTER_TO_INT(g_hash_table_lookup(starts, id)) != pid + 1 &&
                 cJSON_GetObjectItem(e, "tid")->valueint == STREAM_COMPUTE;
    }
    ck_assert_int_eq(ends, (int)g_hash_table_size(starts));
    ck_assert_int_eq(sends, 32);
    cJSON_Delete(json);
}
END_TEST

Suite *suite_trace(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("chrome");
    tcase_add_test(tc, slices_of_a_stream_never_overlap);
    tcase_add_test(tc, stages_only_traces_one_gpu_per_stage);
    tcase_add_test(tc, parts_named_apart_and_flows_paired);
    suite_add_tcase(s, tc);
    return s;
}
