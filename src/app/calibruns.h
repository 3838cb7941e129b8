/* calibruns.h: a GPU profile fitted to measured end-to-end runs (plansim
 * calibrate --runs; docs/cli.md, "plansim calibrate").
 *
 * Each run (calibdata.h) is simulated as `plansim simulate` would: the base
 * cluster cut to the run's GPUs (gpus / gpus_per_node nodes, or one node of
 * `gpus` when fewer), the run's plan resolved on it. At most
 * CALIB_RUNS_MAX_PARAMS of the GPU's parameters (calib_run_params, by their
 * cluster-file keys) are fitted by Levenberg-Marquardt, each within its
 * range, minimising the sum over runs of log(predicted / measured)^2, the
 * measures taken as throughputs (a step time as its inverse), with a
 * forward-difference Jacobian. Errors are predicted / measured - 1 of the
 * throughput: + means plansim is too fast. The leave-one-out error of a
 * run is its error under the parameters fitted without it (each such fit
 * starts from the fit over all runs and keeps its Jacobian). */
#ifndef PLANSIM_APP_CALIBRUNS_H
#define PLANSIM_APP_CALIBRUNS_H

#include <glib.h>

#include "app/calibdata.h"
#include "spec/cluster.h"

#define CALIB_RUNS_MAX_PARAMS 5

/* The GPU parameters a fit may free, NULL-terminated, and those it frees
 * by default (comma-separated): the one the published H100 runs constrain
 * (docs/cli.md: freeing more raised their leave-one-out error). */
extern const char *const calib_run_params[];
#define CALIB_RUNS_DEFAULT_FIT "gemm_sustained"

/* Parses a comma-separated list of calib_run_params into indices (at most
 * CALIB_RUNS_MAX_PARAMS, none twice; "" is none: the runs' errors under
 * the base alone); `origin` names the flag. */
gboolean calib_runs_params_parse(const char *list, const char *origin, int *params, int *n,
                                 GError **error);

/* Checks the runs before a fit: at least as many as parameters, and every
 * run's plan valid on the base cluster cut to its GPUs (the error names
 * the run's line). */
gboolean calib_runs_check(const ClusterSpec *base, const CalibRuns *runs, int n_params,
                          GError **error);

/* A parameter no run depends on (its column of the last Jacobian all 0)
 * keeps its base value; the warnings (calibrate.h's, one line each): a
 * fitted parameter on a bound of its range, a kept one, and errors whose
 * mean |error| passes CALIB_WARN_MEAN_ERROR or whose largest passes
 * CALIB_WARN_MAX_ERROR, and the runs whose memory peak under the fit does
 * not fit their GPUs (a published run did fit: a setting of the row, or
 * the model, is wrong). */
typedef struct {
    ClusterSpec *cluster; /* the base with the fitted values, and the record of the fit
                           * (calib_record: each parameter --fit names fitted or kept,
                           * the others given) */
    char *report;         /* the parameters (fitted or kept), then each run's measure,
                           * prediction, errors */
    char **warnings;      /* NULL-terminated */
    int n;
    double *error; /* per run, predicted / measured - 1 under the fit */
    double *loo;   /* per run, leave-one-out; NULL unless asked */
    double *peak_bytes; /* per run, its memory peak under the fit */
    gboolean *fits;     /* per run, within its GPUs' memory (Metrics.fits) */
    double mean_error, max_error, loo_mean, loo_max; /* of |error| */
} RunsFit;

/* Fits parameters `params` (n_params indices of calib_run_params) to the
 * checked runs; with `leave_one_out` and some parameters, also refits
 * without each run. */
RunsFit *calib_runs_fit(const ClusterSpec *base, const CalibRuns *runs, const int *params,
                        int n_params, gboolean leave_one_out);
void calib_runs_fit_free(RunsFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RunsFit, calib_runs_fit_free)

#endif
