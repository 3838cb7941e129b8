/* check_trace.c: the Chrome trace of a replay is valid JSON, every slice
 * is on a known GPU's stream, the slices of one stream never overlap, and
 * each traced GPU has a memory counter. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

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
    run.plan->global_batch_size = 8;
    test_resolve(run.plan, run.model, run.cluster);
    char *path = test_write_tmp("");
    GError *error = NULL;
    ck_assert_msg(
        sim_run_traced(run.model, run.cluster, run.plan, path, stages_only, &run.rep, &error), "%s",
        error ? error->message : "");
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

START_TEST(slices_of_a_stream_never_overlap)
{
    int ranks;
    cJSON *json = trace_of(FALSE, &ranks);
    const cJSON *events = cJSON_GetObjectItem(json, "traceEvents");
    ck_assert(cJSON_IsArray(events));
    GHashTable *streams =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
    gboolean *counter = g_new0(gboolean, ranks);
    int slices = 0;
    for (const cJSON *e = events->child; e; e = e->next) {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        ck_assert(pid >= 0 && pid < ranks);
        if (strcmp(ph, "C") == 0)
            counter[pid] = TRUE;
        if (strcmp(ph, "X") != 0)
            continue;
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
        slices++;
    }
    ck_assert_int_gt(slices, 100);
    ck_assert_int_eq(g_hash_table_size(streams), ranks * 3); /* compute, comm, p2p */
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
    for (int r = 0; r < ranks; r++)
        ck_assert_msg(counter[r], "no memory counter for GPU %d", r);
    g_free(counter);
    g_hash_table_destroy(streams);
    cJSON_Delete(json);
}
END_TEST

/* With stages_only, only each stage's first GPU (tp 0, dp 0): GPUs 0 and 4. */
START_TEST(stages_only_traces_one_gpu_per_stage)
{
    int ranks;
    cJSON *json = trace_of(TRUE, &ranks);
    for (const cJSON *e = cJSON_GetObjectItem(json, "traceEvents")->child; e; e = e->next) {
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        ck_assert(pid == 0 || pid == 4);
    }
    cJSON_Delete(json);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("chrome");
    tcase_add_test(tc, slices_of_a_stream_never_overlap);
    tcase_add_test(tc, stages_only_traces_one_gpu_per_stage);
    suite_add_tcase(s, tc);
    return test_run(s);
}
