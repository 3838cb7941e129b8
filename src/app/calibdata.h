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
 * A file may hold at most CALIB_MAX_RANKS ranks: each point of a fit is
 * replayed on the file's shape, dozens of times (calibrate.h), and 16,384
 * ranks take minutes on two cores (docs/benchmarks.md).
 *
 * Bad input fails with one PS_ERROR_INPUT line "FILE:LINE: expected WHAT,
 * got VALUE" ("FILE: ..." for what no line holds, such as a file with no
 * rows). */
#ifndef PLANSIM_APP_CALIBDATA_H
#define PLANSIM_APP_CALIBDATA_H

#include <glib.h>

#include "base/names.h"

#define CALIB_MAX_RANKS 16384

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

#endif
