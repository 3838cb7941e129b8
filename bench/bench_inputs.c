/* bench_inputs.c: the work plansim does for hostile but valid inputs is
 * bounded (issue 19): what each case takes, in wall seconds and peak RSS.
 *
 *   - fit advice on a plan that cannot fit: Llama 2 7B on one 8-GPU A100
 *     node, tp 8, one micro-batch of 2^20 and of 2^31 - 1 sequences (the
 *     candidates with smaller micro-batches have millions of them); and
 *     GPT-3 175B on 512 A100s with micro-batches of 8, no recomputation
 *     and no ZeRO (tens of candidates of up to 1.8 M events);
 *   - a step over the task cap: Llama 2 7B on 131,072 nodes, tp 8, global
 *     batch 131,072, refused before it is built;
 *   - calibrate on nccl-tests all_reduce output of 1,024, 2,048 and 4,096
 *     ranks (8 per host, 16 sizes from 8 B to 8 GiB) on the H100 profile;
 *   - calibrate on 1,000, 10,000 and 100,000 GEMM rows on the H100 profile.
 * The measurement files are made here, in a temporary folder, from a
 * latency-bandwidth curve and a fixed fraction of the peak. Prints the
 * median of REPEATS runs (default 3; the calibrations of 2,048 ranks and
 * more run once), and of each calibration the fit's warnings. Figures, not
 * pass/fail: `make bench`.
 *
 *   bench/bench_inputs [REPEATS [MOST_RANKS [CASE]]]
 * MOST_RANKS: skip the calibrations of more ranks (default 4,096: none;
 * 1,024, the smallest size, runs every case in a few seconds). CASE: run
 * only the cases whose name contains it ("gemm"). */
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/advice.h"
#include "app/calibrate.h"
#include "app/simulate.h"
#include "bench.h"
#include "cost/roofline.h"

/* What one case does once; FALSE when it failed unexpectedly. */
typedef gboolean (*CaseFn)(const void *arg, char *note, gsize note_size);

/* Llama 2 7B on `nodes` A100 nodes, tp 8, a global batch of `batch` in
 * micro-batches of `micro_batch`, resolved; FALSE when it does not load. */
static gboolean llama2_7b(int nodes, int batch, int micro_batch, ModelSpec **m, ClusterSpec **c,
                          PlanSpec **plan)
{
    g_autofree char *mp = bench_shipped("models", "llama2-7b.json");
    g_autofree char *cp = bench_shipped("topologies", "dgx-a100-80gb.json");
    *m = model_spec_load(mp, NULL);
    *c = cluster_spec_load(cp, nodes, NULL);
    *plan = plan_spec_new();
    (*plan)->tp = 8;
    (*plan)->global_batch_size = batch;
    (*plan)->micro_batch_size = micro_batch;
    return *m && *c && plan_spec_resolve(*plan, *m, *c, NULL);
}

/* The advice on `plan`, which does not fit. */
static gboolean advise_on(const ModelSpec *m, const ClusterSpec *c, const PlanSpec *plan,
                          char *note, gsize note_size)
{
    Report rep;
    if (!simulate_run(m, c, plan, &rep, NULL))
        return FALSE;
    ReportAdvice advice[ADVICE_MAX];
    gboolean partial;
    int n = advice_find(m, c, plan, advice, &partial);
    g_snprintf(note, note_size, "fits: %s, %d changes found, partial: %s",
               rep.metrics.fits ? "yes" : "no", n, partial ? "yes" : "no");
    advice_clear(advice, n);
    report_clear(&rep);
    return TRUE;
}

/* The advice on Llama 2 7B, one node, tp 8, a micro-batch of *arg. */
static gboolean advise(const void *arg, char *note, gsize note_size)
{
    int batch = *(const int *)arg;
    g_autoptr(ModelSpec) m = NULL;
    g_autoptr(ClusterSpec) c = NULL;
    g_autoptr(PlanSpec) plan = NULL;
    return llama2_7b(1, batch, batch, &m, &c, &plan) && advise_on(m, c, plan, note, note_size);
}

/* The advice on the shipped default (GPT-3 175B on 512 A100s, plans/
 * seed-512.json) with micro-batches of 8, no recomputation and no ZeRO:
 * a plan whose candidates the budget does not all cover. */
static gboolean advise_gpt3(const void *arg, char *note, gsize note_size)
{
    (void)arg;
    g_autofree char *mp = bench_shipped("models", "gpt3-175b.json");
    g_autofree char *cp = bench_shipped("topologies", "dgx-a100-80gb.json");
    g_autoptr(ModelSpec) m = model_spec_load(mp, NULL);
    g_autoptr(ClusterSpec) c = cluster_spec_load(cp, 64, NULL);
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = plan->pp = plan->dp = 8;
    plan->micro_batch_size = 8;
    plan->global_batch_size = 512;
    plan->sequence_parallel = TRUE;
    plan->recompute = RECOMPUTE_NONE;
    plan->zero_stage = 0;
    return m && c && plan_spec_resolve(plan, m, c, NULL) && advise_on(m, c, plan, note, note_size);
}

/* Llama 2 7B on 131,072 nodes replayed in full, refused: reduced, it is
 * 5 ranks and runs (a step of NCCL's tree in cells). */
static gboolean over_cap(const void *arg, char *note, gsize note_size)
{
    (void)arg;
    g_autoptr(ModelSpec) m = NULL;
    g_autoptr(ClusterSpec) c = NULL;
    g_autoptr(PlanSpec) plan = NULL;
    Report rep;
    GError *error = NULL;
    if (!llama2_7b(131072, 131072, 1, &m, &c, &plan))
        return FALSE;
    plan->full_fidelity = TRUE;
    if (simulate_run(m, c, plan, &rep, &error)) {
        report_clear(&rep);
        return FALSE;
    }
    g_snprintf(note, note_size, "%.60s...", error->message);
    g_error_free(error);
    return TRUE;
}

/* The H100 profile, the base of the calibrations. */
static ClusterSpec *h100(void)
{
    g_autofree char *cp = bench_shipped("topologies", "dgx-h100.json");
    return cluster_spec_load(cp, 0, NULL);
}

static char *folder; /* the measurement files' */

/* nccl-tests all_reduce_perf output of *arg ranks, 8 a host. */
static gboolean calibrate_nccl(const void *arg, char *note, gsize note_size)
{
    int ranks = *(const int *)arg;
    g_autofree char *name = g_strdup_printf("all_reduce_perf-%d.txt", ranks);
    g_autofree char *path = g_build_filename(folder, name, NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        GString *s = g_string_new("# Collective test starting: all_reduce_perf\n");
        for (int r = 0; r < ranks; r++)
            g_string_append_printf(s,
                                   "#  Rank %4d Group  0 Pid %5d on host%04d device  %d "
                                   "[0x07] NVIDIA H100 80GB HBM3\n",
                                   r, 1000 + r, r / 8, r % 8);
        g_string_append(s, "#       size         count      type   redop    root     time   "
                           "algbw   busbw #wrong     time   algbw   busbw #wrong\n");
        for (double bytes = 8; bytes <= 8589934592.0; bytes *= 4)
            g_string_append_printf(s,
                                   "%12.0f %12.0f     float     sum      -1 %8.1f  0  0  0 "
                                   "%8.1f  0  0  0\n",
                                   bytes, bytes / 4, 30 + bytes / 40e3, 30 + bytes / 40e3);
        gboolean written = g_file_set_contents(path, s->str, (gssize)s->len, NULL);
        g_string_free(s, TRUE);
        if (!written)
            return FALSE;
    }
    g_autoptr(ClusterSpec) base = h100();
    CalibNccl *nccl = calib_nccl_load(path, NULL);
    if (!base || !nccl || !calib_nccl_check(base, nccl, NULL)) {
        calib_nccl_free(nccl);
        return FALSE;
    }
    Calibration *c = calib_run(base, &nccl, 1, NULL);
    g_snprintf(note, note_size, "%d points, %u warnings", nccl->points->len,
               g_strv_length(c->warnings));
    calib_free(c);
    calib_nccl_free(nccl);
    return TRUE;
}

/* *arg GEMM rows timed by the H100 profile's roofline with every GEMM at
 * 60 % of the peak, shapes from 256 to 16,384 a side. */
static gboolean calibrate_gemm(const void *arg, char *note, gsize note_size)
{
    int rows = *(const int *)arg;
    g_autofree char *name = g_strdup_printf("gemm-%d.csv", rows);
    g_autofree char *path = g_build_filename(folder, name, NULL);
    g_autoptr(ClusterSpec) base = h100();
    if (!base)
        return FALSE;
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        GString *s = g_string_new("m,n,k,dtype,seconds\n");
        GpuSpec flat = base->gpu; /* its roofline, every GEMM at 60 % of the peak */
        flat.gemm.n = 1;
        flat.gemm.x[0] = 1;
        flat.gemm.y[0] = 0.6;
        guint32 x = 1;
        for (int i = 0; i < rows; i++) {
            double side[3];
            for (int d = 0; d < 3; d++) {
                x = x * 1664525u + 1013904223u; /* Numerical Recipes' LCG */
                side[d] = 256 << (x >> 24) % 7;
            }
            CalibGemmRow row = {.m = side[0], .n = side[1], .k = side[2]};
            Op op = calib_gemm_op(&row);
            double t = roofline_s(&flat, &op);
            g_string_append_printf(s, "%.0f,%.0f,%.0f,bf16,%.9g\n", side[0], side[1], side[2], t);
        }
        gboolean written = g_file_set_contents(path, s->str, (gssize)s->len, NULL);
        g_string_free(s, TRUE);
        if (!written)
            return FALSE;
    }
    GError *error = NULL;
    CalibGemm *gemm = calib_gemm_load(path, &error);
    if (!gemm || !calib_gemm_check(&base->gpu, gemm, &error)) {
        fprintf(stderr, "bench_inputs: %s\n", error->message);
        calib_gemm_free(gemm);
        return FALSE;
    }
    Calibration *c = calib_run(base, NULL, 0, gemm);
    g_snprintf(note, note_size, "%u rows", gemm->rows->len);
    calib_free(c);
    calib_gemm_free(gemm);
    return TRUE;
}

typedef struct {
    const char *name;
    CaseFn fn;
    int arg;
    int ranks;     /* of a calibration's nccl-tests file; 0: none */
    gboolean once; /* run once, whatever REPEATS says */
} Case;

static const Case cases[] = {
    {.name = "advice, micro-batch 2^20", .fn = advise, .arg = 1 << 20},
    {.name = "advice, micro-batch 2^31-1", .fn = advise, .arg = G_MAXINT},
    {.name = "advice, GPT-3 175B x 512", .fn = advise_gpt3},
    {.name = "cap, 131,072 nodes", .fn = over_cap},
    {.name = "calibrate 1,024 ranks", .fn = calibrate_nccl, .arg = 1024, .ranks = 1024},
    {.name = "calibrate 2,048 ranks",
     .fn = calibrate_nccl,
     .arg = 2048,
     .ranks = 2048,
     .once = TRUE},
    {.name = "calibrate 4,096 ranks",
     .fn = calibrate_nccl,
     .arg = 4096,
     .ranks = 4096,
     .once = TRUE},
    {.name = "calibrate gemm 1,000 rows", .fn = calibrate_gemm, .arg = 1000},
    {.name = "calibrate gemm 10,000 rows", .fn = calibrate_gemm, .arg = 10000},
    {.name = "calibrate gemm 100,000 rows", .fn = calibrate_gemm, .arg = 100000},
};

static void bench(const Case *k, int repeats)
{
    int n = k->once ? 1 : repeats;
    g_autofree double *wall = g_new(double, n);
    char note[160] = "";
    bench_reset_peak_rss();
    for (int i = 0; i < n; i++) {
        gint64 start = g_get_monotonic_time();
        if (!k->fn(&k->arg, note, sizeof note)) {
            fprintf(stderr, "bench_inputs: %s: failed\n", k->name);
            exit(1);
        }
        wall[i] = (g_get_monotonic_time() - start) / 1e6;
    }
    bench_sort(wall, n);
    printf("%-30s median %8.3f s of %d, peak RSS %5.0f MB; %s\n", k->name, wall[n / 2], n,
           bench_peak_rss_mib(), note);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? MAX(1, atoi(argv[1])) : 3;
    int most_ranks = argc > 2 ? atoi(argv[2]) : 4096;
    folder = g_dir_make_tmp("plansim-bench-XXXXXX", NULL);
    if (!folder)
        return 1;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        if (cases[i].ranks <= most_ranks && (argc <= 3 || strstr(cases[i].name, argv[3])))
            bench(&cases[i], repeats);
    g_autoptr(GDir) dir = g_dir_open(folder, 0, NULL);
    const char *name;
    while (dir && (name = g_dir_read_name(dir))) {
        g_autofree char *path = g_build_filename(folder, name, NULL);
        g_unlink(path);
    }
    g_rmdir(folder);
    g_free(folder);
    return 0;
}
