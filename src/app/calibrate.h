/* calibrate.h: a cluster profile fitted to measurements (plansim
 * calibrate; docs/cli.md, "plansim calibrate").
 *
 * Collectives: the link classes' efficiencies and per-message latencies
 * (Simple, LL, LL128 where the cluster models them), the base latency,
 * the tree's and NVLS's efficiency and NVLS's latency are fitted so that
 * plansim's own collective model (collbench.h: the collective alone on the
 * first ranks of the cluster, the algorithm and protocol chosen as
 * `simulate` chooses them) reproduces the measured times: Levenberg-
 * Marquardt on the logarithms of the parameters, minimising the sum of the
 * squared logarithms of fitted over measured time, with a forward-
 * difference Jacobian. A parameter moves only while some point's time
 * depends on it, d log t / d log p >= CALIB_MIN_SENSITIVITY; one the data
 * does not constrain keeps the base cluster's value; one the fit took to
 * where no point depends on it (sensitivity under the same: a protocol's
 * latency raised until the protocol runs no point) goes back to the base's
 * value when that leaves the fit's cost as it is, and otherwise stays,
 * with a warning. Each point is the collective alone
 * (collbench_alone_s), which is its replay's time. Each file is timed on
 * its own shape: as many nodes as it has hosts, as many GPUs per node as
 * ranks per host (send/recv: two ranks, on two nodes when the file spans
 * several hosts).
 *
 * GEMMs: the efficiencies of the gemm_efficiency curve at its points (the
 * base's intensities, or when it has none, points spread evenly in
 * log(intensity) over the data, one per factor of 2, at most
 * CURVE_POINTS), by linear least squares on the efficiency each row
 * implies (its compute time at efficiency 1 over its measured time less
 * the kernel launch), each row weighted by the inverse square of that
 * efficiency (relative errors), with a ridge of CALIB_RIDGE towards the
 * base's value so that a point no row reaches keeps it. A row that the
 * memory bound explains (measured time less launch within the time to
 * move its bytes) implies no efficiency and is not used. */
#ifndef PLANSIM_APP_CALIBRATE_H
#define PLANSIM_APP_CALIBRATE_H

#include <glib.h>

#include "app/calibdata.h"
#include "cost/roofline.h"
#include "spec/gpu.h"
#include "spec/cluster.h"

#define CALIB_MIN_SENSITIVITY     0.05
#define CALIB_RIDGE               1e-6
#define CALIB_MIN_GEMM_EFFICIENCY 0.01 /* the curve's lowest point */
#define CALIB_MAX_THREADS         64   /* replaying points at once, at most the cores */
#define CALIB_WARN_MEAN_ERROR     0.05 /* a fit's mean |error| over which it warns */
#define CALIB_WARN_MAX_ERROR      0.15 /* and a point's */

/* The base cluster with the fitted values (names copied) and the record
 * of the fit (calib_record), and the fit's report: each parameter's base
 * and fitted value, its sensitivity and whether it was fitted or kept at
 * the base's value, each GEMM curve point's, then each file's residuals
 * per point (measured, fitted, relative error) with its mean and largest
 * |error|. Either list of inputs
 * may be empty. The warnings, one line each (for "plansim: warning: "):
 * a fitted parameter or curve point on a bound of its range; each kept
 * parameter, which no point depends on (sensitivity under
 * CALIB_MIN_SENSITIVITY), or none did where the fit had taken it, from
 * where it went back to the base's value at no cost; one fitted where no
 * point depends on it that stays because the base's value would fit worse
 * (the mean |error| either way); a curve point no row reaches; a
 * file whose mean |error| passes CALIB_WARN_MEAN_ERROR or some point's
 * CALIB_WARN_MAX_ERROR. A GEMM fit changes the curve alone: the GPU's
 * gemm_sustained and the rest stay the base's. */
typedef struct {
    ClusterSpec *cluster;
    char *report;
    char **warnings; /* NULL-terminated */
} Calibration;

/* What a calibrated profile's record says wrote it. */
#define CALIB_BY "plansim calibrate"

/* Gives `fitted`, a profile fitted from `base`, the record of that fit in
 * place of any it had (the base's, copied with it): by CALIB_BY, from
 * base's file (its name if built in code); each parameter `fitted` has
 * (cluster_spec_has_param) as `freed` says, by ClusterParam: PARAM_FITTED
 * or PARAM_KEPT for one the fit freed, PARAM_UNLISTED for one it did not,
 * which the record lists as PARAM_GIVEN. */
void calib_record(ClusterSpec *fitted, const ClusterSpec *base, const ParamState *freed);

/* The warnings of a fit (calibrate's and calibrate --runs'), newly
 * allocated, NULL when there is none to give:
 *   - parameter `key` fitted to `value`, on `lo` or `hi`, the ends of its
 *     range (in `unit`, "" or " us");
 *   - parameter `key` kept at `base` since no `what` ("point", "run",
 *     "row") depends on it (its `sensitivity`, 0 or under
 *     CALIB_MIN_SENSITIVITY), where the fit had taken it to `left` (NAN:
 *     it never moved);
 *   - the errors `err` (fitted / measured - 1) of the n rows of `path` at
 *     lines `line`, when their mean |error| passes CALIB_WARN_MEAN_ERROR or
 *     the largest CALIB_WARN_MAX_ERROR. */
char *calib_bound_warning(const char *key, double value, double lo, double hi, const char *unit);
char *calib_kept_warning(const char *key, const char *what, double sensitivity, double base,
                         double left, const char *unit);
char *calib_error_warning(const char *path, const double *err, const int *line, int n);

/* Prints each of the NULL-terminated `warnings` on stderr as the program's
 * other warnings are, "plansim: warning: WARNING", one line each (control
 * characters escaped, ps_error_escape). */
void calib_print_warnings(char *const *warnings);

/* Checks the GEMM rows against the base GPU before calib_run: each row's
 * dtype has a peak on it, no row is faster than physics allows (its FLOPs
 * at that peak or its bytes at the memory bandwidth, whichever is longer:
 * the roofline at efficiency 1, with no tile, wave or launch), and each
 * compute-bound row implies an efficiency of at least
 * CALIB_MIN_GEMM_EFFICIENCY (a time in microseconds does not). A row
 * faster than the model's own floor (its waves of tiles at the peak, and
 * the launch) passes: the fit says how far off it is. Fails
 * (PS_ERROR_INPUT) naming the row and the times it may take. */
gboolean calib_gemm_check(const GpuSpec *gpu, const CalibGemm *g, GError **error);

/* Checks an nccl-tests file against the base cluster before calib_run:
 * its collective, on the file's shape, is one plansim can replay
 * (collbench_check: an all-to-all over more ranks than its plan may hold
 * is not). Fails (PS_ERROR_INPUT) naming the file. */
gboolean calib_nccl_check(const ClusterSpec *base, const CalibNccl *f, GError **error);

Calibration *calib_run(const ClusterSpec *base, CalibNccl *const *nccl, int n_nccl,
                       const CalibGemm *gemm);
void calib_free(Calibration *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Calibration, calib_free)

/* Calls one(ctx, i) for i = 0 .. n - 1 on the machine's cores (at most
 * CALIB_MAX_THREADS threads, each every threads-th i), returning when all
 * are done: a fit's independent replays, each writing its own slot, so
 * that what they write is the same whatever the threads. */
void calib_each(int n, void (*one)(const void *ctx, int i), const void *ctx);

/* Solves the n x n system a x = b (a row-major, both overwritten; x in b)
 * by Gaussian elimination with partial pivoting. FALSE when singular. */
gboolean calib_solve(double *a, double *b, int n);

/* A row's operation: an (m x k) by (k x n) product of its dtype into a
 * bf16 output, its FLOPs and bytes as cost/transformer.c counts a GEMM's. */
Op calib_gemm_op(const CalibGemmRow *row);

#endif
