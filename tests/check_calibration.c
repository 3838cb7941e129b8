/* check_calibration.c: plansim against published Megatron-LM runs.
 *
 * Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
 * Transformer Models" (arXiv 2205.05198), measured GPT models on Selene:
 * DGX A100 80GB nodes, NVSwitch, 8 HDR InfiniBand NICs per node, bf16,
 * sequence 2048, vocabulary 51,200, tensor parallel 8, no data parallelism,
 * the attention scores kept (2022: no FlashAttention). Their Table 3 gives
 * the configurations:
 *
 *   model  heads  hidden  layers  pp  GPUs  global batch  micro-batch
 *   22B     64     6144     48     1     8       4            4
 *   175B    96    12288     96     8    64      64            1
 *   530B   128    20480    105    35   280     280            1
 *   1T     160    25600    128    64   512     512            1
 *
 * 175B and 530B run the interleaved schedule with 3 model chunks per stage;
 * 1T's 128 layers do not split into 3 x 64 chunks, so it runs 1F1B.
 *
 * Every run here uses the shipped A100 profile (topologies/dgx-a100-80gb.json)
 * as it is: no row has a setting of its own. The tolerances are issue 11's. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

typedef struct {
    const char *name;
    int heads, hidden, layers, pp, gpus, batch, micro, chunks;
    double full_s, present_s; /* Table 5: full recompute; SP + selective */
} Row;

static const Row table3[] = {
    {"22B", 64, 6144, 48, 1, 8, 4, 4, 1, 1.42, 1.10},
    {"175B", 96, 12288, 96, 8, 64, 64, 1, 3, 18.13, 13.75},
    {"530B", 128, 20480, 105, 35, 280, 280, 1, 3, 49.05, 37.83},
    {"1T", 160, 25600, 128, 64, 512, 512, 1, 1, 94.42, 71.49},
};

/* A Table 3 configuration with the given recomputation, SP on or off. */
static Run setup(const Row *row, Recompute recompute, gboolean sp)
{
    Run run = run_new(test_gpt(row->layers, row->hidden, row->heads, 51200, 2048),
                      test_shipped_cluster("dgx-a100-80gb.json", row->gpus / 8));
    run.plan->tp = 8;
    run.plan->pp = row->pp;
    run.plan->micro_batch_size = row->micro;
    run.plan->global_batch_size = row->batch;
    if (row->chunks > 1) {
        run.plan->schedule = SCHEDULE_INTERLEAVED;
        run.plan->virtual_stages = row->chunks;
    }
    run.plan->attention = ATTENTION_STANDARD;
    run.plan->recompute = recompute;
    run.plan->sequence_parallel = sp;
    return run;
}

static double step_s(const Row *row, Recompute recompute, gboolean sp)
{
    Run run = setup(row, recompute, sp);
    run_simulate(&run);
    double t = run.rep.metrics.step_time_s;
    run_free(&run);
    return t;
}

/* Table 5, end-to-end iteration time: the mean |error| over the 8 figures
 * at most 4 %, and each at most 8 % (issue 20). */
START_TEST(table5_iteration_times)
{
    double sum = 0, worst = 0;
    int n = 0;
    GString *all = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(table3); i++) {
        const Row *row = &table3[i];
        double full = step_s(row, RECOMPUTE_FULL, FALSE);
        double present = step_s(row, RECOMPUTE_SELECTIVE, TRUE);
        double e_full = full / row->full_s - 1, e_present = present / row->present_s - 1;
        g_string_append_printf(all, " %s full %.3f s (%+.1f %%), present %.3f s (%+.1f %%);",
                               row->name, full, 100 * e_full, present, 100 * e_present);
        sum += fabs(e_full) + fabs(e_present);
        worst = MAX(worst, MAX(fabs(e_full), fabs(e_present)));
        n += 2;
    }
    ck_assert_msg(sum / n <= 0.04 && worst <= 0.08, "mean |error| %.1f %%, max %.1f %%:%s",
                  100 * sum / n, 100 * worst, all->str);
    g_string_free(all, TRUE);
}
END_TEST

/* The earliest start (us) of a rank-0 task of a Chrome trace (output/trace.h:
 * one "X" event per task) whose name contains `needle`, starting in
 * [from, to); INFINITY if none does. */
static double earliest_us(const cJSON *events, const char *needle, double from, double to)
{
    double best = INFINITY;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *name = cJSON_GetObjectItem(e, "name"), *pid = cJSON_GetObjectItem(e, "pid");
        const cJSON *ts = cJSON_GetObjectItem(e, "ts");
        if (cJSON_IsString(name) && strstr(name->valuestring, needle) && cJSON_IsNumber(pid) &&
            pid->valuedouble == 0 && cJSON_IsNumber(ts) && ts->valuedouble >= from &&
            ts->valuedouble < to)
            best = MIN(best, ts->valuedouble);
    }
    return best;
}

/* Table 4: forward and backward time of one transformer layer of the 22B
 * model (ms), each within 10 % (issue 11). A layer's time is read from the
 * replay as the paper measured it: from the start of layer 20 to the start
 * of the next layer in the same direction, its communication included. */
typedef struct {
    const char *experiment;
    Recompute recompute;
    gboolean sp;
    double forward_ms, backward_ms;
} LayerRow;

static const LayerRow table4[] = {
    {"baseline, no recompute", RECOMPUTE_NONE, FALSE, 7.7, 11.9},
    {"sequence parallel", RECOMPUTE_NONE, TRUE, 7.2, 11.8},
    {"baseline with full recompute", RECOMPUTE_FULL, FALSE, 7.7, 19.5},
    {"selective recompute", RECOMPUTE_SELECTIVE, FALSE, 7.7, 13.2},
    {"selective + sequence parallel", RECOMPUTE_SELECTIVE, TRUE, 7.2, 13.1},
};

START_TEST(table4_layer_times)
{
    const LayerRow *row = &table4[_i];
    Run run = setup(&table3[0], row->recompute, row->sp);
    test_resolve(run.plan, run.model, run.cluster);
    g_autofree char *trace = test_write_tmp("");
    GError *error = NULL;
    ck_assert_msg(
        simulate_run_traced(run.model, run.cluster, run.plan, trace, TRUE, &run.rep, &error), "%s",
        error ? error->message : "");
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    cJSON *doc = cJSON_Parse(text);
    ck_assert(doc);
    const cJSON *events = cJSON_GetObjectItem(doc, "traceEvents");
    /* one micro-batch, one stage: every forward task starts before the
     * first backward one (or its recomputation) */
    double turn = MIN(earliest_us(events, "bwd mb0 ", 0, INFINITY),
                      earliest_us(events, "recompute mb0 ", 0, INFINITY));
    double forward = (earliest_us(events, " mb0 L21 ", 0, turn) -
                      earliest_us(events, " mb0 L20 ", 0, turn)) / 1e3;
    double backward = (earliest_us(events, " mb0 L19 ", turn, INFINITY) -
                       earliest_us(events, " mb0 L20 ", turn, INFINITY)) / 1e3;
    ck_assert_msg(isfinite(forward) && isfinite(backward), "layers 19 to 21 not found");
    ck_assert_msg(fabs(forward / row->forward_ms - 1) <= 0.10 &&
                      fabs(backward / row->backward_ms - 1) <= 0.10,
                  "%s: forward %.2f ms (published %.1f), backward %.2f ms (published %.1f)",
                  row->experiment, forward, row->forward_ms, backward, row->backward_ms);
    cJSON_Delete(doc);
    test_remove(g_steal_pointer(&trace));
    run_free(&run);
}
END_TEST

Suite *suite_calibration(void)
{
    Suite *s = suite_create("calibration");
    TCase *tc = tcase_create("Korthikanti et al. 2022");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, table4_layer_times, 0, G_N_ELEMENTS(table4));
    tcase_add_test(tc, table5_iteration_times);
    suite_add_tcase(s, tc);
    return s;
}
