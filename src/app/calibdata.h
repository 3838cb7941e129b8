/* calibdata.h: the measurements `plansim calibrate` reads.
 *
 * nccl-tests text output (all_reduce_perf, all_gather_perf,
 * reduce_scatter_perf, alltoall_perf, sendrecv_perf): the collective from
 * the line "# Collective test starting: all_reduce_perf", or else from the
 * file's name; the ranks and their hosts from the lines
 * "#  Rank  0 Group  0 Pid 123 on HOST device  0 [...] NAME"; the columns
 * from the header line "#  size  count  type  redop  root  time  algbw
 * busbw  #wrong  time ..."; then one row per size, whose `size` (bytes, S
 * as net/collective.h defines it) and first `time` (microseconds, the
 * out-of-place run) are kept. Other lines (blank ones, other comments,
 * NCCL's log lines) are skipped; a row of size 0 is skipped too.
 *
 * GEMM timings: CSV rows "m,n,k,dtype,seconds", an (m x k) by (k x n)
 * product of one dtype of dtype_names, after an optional header line
 * "m,n,k,dtype,seconds".
 *
 * Measured runs (calibrate --runs): CSV, after '#' comment lines and blank
 * ones a header line naming the columns, then one row per run. Columns:
 * `model` (a model file, relative to the CSV's folder, or a shipped
 * model's name), `gpus`, optionally `name` and `seq_length`, any plan
 * field by its JSON key (`tp`, `micro_batch_size`, `schedule`, ...; a cell
 * left empty keeps the field's default), and the measurement: each row
 * fills exactly one of `step_s` (seconds per step), `tokens_per_s_per_gpu`
 * and `tflops_per_gpu` (model TFLOP/s per GPU, as plansim's MFU counts
 * model FLOPs). At most CALIB_MAX_RUNS rows.
 *
 * A file may hold at most CALIB_MAX_RANKS ranks: each point of a fit is
 * timed on the file's shape, hundreds of times (calibrate.h), each time
 * over every rank, and 16,384 ranks take about 30 s of CPU
 * (docs/benchmarks.md).
 *
 * Bad input fails with one PS_ERROR_INPUT line "FILE:LINE: expected WHAT,
 * got VALUE" ("FILE: ..." for what no line holds, such as a file with no
 * rows). */
#ifndef PLANSIM_APP_CALIBDATA_H
#define PLANSIM_APP_CALIBDATA_H

#include <glib.h>

#include "base/names.h"
#include "spec/model.h"
#include "spec/plan.h"

#define CALIB_MAX_RANKS 16384
#define CALIB_MAX_RUNS  1000

/* One measured size of a collective. */
typedef struct {
    double bytes;  /* S */
    double time_s; /* out of place */
    int line;
} CalibPoint;

typedef struct {
    char *path;
    CollOp op;
    int ranks;      /* the "# Rank" lines */
    int hosts;      /* distinct hosts among them, each holding ranks / hosts */
    GArray *points; /* CalibPoint, in file order */
} CalibNccl;

CalibNccl *calib_nccl_load(const char *path, GError **error);
void calib_nccl_free(CalibNccl *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CalibNccl, calib_nccl_free)

/* One timed matrix multiply. */
typedef struct {
    double m, n, k;
    double time_s;
    int line;
    Dtype dtype; /* of its inputs */
} CalibGemmRow;

typedef struct {
    char *path;
    GArray *rows; /* CalibGemmRow, in file order */
} CalibGemm;

CalibGemm *calib_gemm_load(const char *path, GError **error);
void calib_gemm_free(CalibGemm *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CalibGemm, calib_gemm_free)

/* ---- measured runs ---- */

/* What a run's measurement is, by its column. */
typedef enum { RUN_STEP_S, RUN_TOKENS_PER_S_PER_GPU, RUN_TFLOPS_PER_GPU, RUN_MEASURES } RunMeasure;
extern const char *const run_measure_names[]; /* the columns: "step_s", ... */

typedef struct {
    int line;
    char *name;       /* the `name` cell, else "FILE:LINE" */
    ModelSpec *model; /* with the row's seq_length */
    PlanSpec *plan;   /* the row's fields over the defaults, unresolved */
    int gpus;
    int gpus_per_node; /* the GPUs of each node it used, fewer than a node's; 0: whole nodes */
    RunMeasure measure;
    double value; /* > 0, in the measure's unit */
} CalibRun;

typedef struct {
    char *path;
    GArray *runs;          /* CalibRun, in file order */
    GStringChunk *origins; /* the cells' origins the runs' plans name */
} CalibRuns;

/* The path of a row's model cell: a file relative to the CSV's folder when
 * one is there, else what `resolve` (a shipped model's name) makes of it;
 * NULL with `error` set when neither has it. */
typedef char *(*CalibModelPath)(const char *cell, GError **error);

CalibRuns *calib_runs_load(const char *path, CalibModelPath resolve, GError **error);
void calib_runs_free(CalibRuns *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CalibRuns, calib_runs_free)

#endif
