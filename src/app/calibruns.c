/* calibruns.c: a GPU profile's few free parameters fitted to measured
 * runs, with each run's leave-one-out error (calibruns.h). */
#include "app/calibruns.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "app/calibrate.h"
#include "app/simulate.h"
#include "base/error.h"
#include "base/names.h"
#include "base/units.h"
#include "cost/transformer.h"
#include "strategy/strategy.h"

/* The parameters: the RUNS rows of spec/cluster_params.def, by their keys
 * in a cluster file's "gpu" (calib_run_params) and their ClusterParam
 * (run_param). */
#define RUNS_ROW(...) __VA_ARGS__
#define NCCL_ROW(...)
#define GEMM_ROW(...)
const char *const calib_run_params[] = {
#define CLUSTER_PARAM(ID, object, key, fit, needs) fit##_ROW(#key, )
#include "spec/cluster_params.def"
#undef CLUSTER_PARAM
    NULL};
static const ClusterParam run_param[] = {
#define CLUSTER_PARAM(ID, object, key, fit, needs) fit##_ROW(CLUSTER_PARAM_##ID, )
#include "spec/cluster_params.def"
#undef CLUSTER_PARAM
};
G_STATIC_ASSERT(G_N_ELEMENTS(run_param) + 1 == G_N_ELEMENTS(calib_run_params));

/* Each one's place in GpuSpec, its range, the Jacobian's step (down for
 * an efficiency, so that it stays at most 1), the unit of the file (1e-6:
 * the file's microseconds for GpuSpec's seconds) and the value a
 * GpuSpec's 0 stands for (spec/gpu.h; 0: none, 0 is the value). */
typedef struct {
    gsize offset;
    double lo, hi, step, unit, zero_means;
} ParamInfo;

/* clang-format off */
static const ParamInfo param_info[CLUSTER_N_PARAMS] = {
    [CLUSTER_PARAM_GEMM_SUSTAINED] =
        {.offset = offsetof(GpuSpec, gemm_sustained),
         .lo = 0.2, .hi = 1, .step = -0.01, .unit = 1, .zero_means = 1},
    [CLUSTER_PARAM_ATTENTION_FORWARD_EFFICIENCY] =
        {.offset = offsetof(GpuSpec, attention_forward_efficiency),
         .lo = 0.05, .hi = 1, .step = -0.01, .unit = 1,
         .zero_means = GPU_ATTENTION_FORWARD_EFFICIENCY},
    [CLUSTER_PARAM_ATTENTION_BACKWARD_EFFICIENCY] =
        {.offset = offsetof(GpuSpec, attention_backward_efficiency),
         .lo = 0.05, .hi = 1, .step = -0.01, .unit = 1,
         .zero_means = GPU_ATTENTION_BACKWARD_EFFICIENCY},
    [CLUSTER_PARAM_COMM_INTERFERENCE] =
        {.offset = offsetof(GpuSpec, comm_interference),
         .lo = 0, .hi = 0.95, .step = 0.01, .unit = 1, .zero_means = 0},
    [CLUSTER_PARAM_LAUNCH] =
        {.offset = offsetof(GpuSpec, launch_s),
         .lo = 0, .hi = 1e-4, .step = 5e-7, .unit = 1e-6, .zero_means = 0},
    [CLUSTER_PARAM_MEMORY_EFFICIENCY] =
        {.offset = offsetof(GpuSpec, memory_efficiency),
         .lo = 0.2, .hi = 1, .step = -0.01, .unit = 1, .zero_means = 0},
};
/* clang-format on */

/* Parameter p's (an index of calib_run_params). */
static const ParamInfo *info_of(int p)
{
    const ParamInfo *i = &param_info[run_param[p]];
    g_assert(i->hi > i->lo); /* every RUNS row has its ParamInfo */
    return i;
}

#define RUNS_MAX_ITERATIONS 20
#define RUNS_MIN_GAIN       1e-4 /* relative fall of the cost that goes on */
#define RUNS_MAX_TRIES      6    /* dampings tried per step */

static double *slot(GpuSpec *gpu, int p)
{
    return (double *)((char *)gpu + info_of(p)->offset);
}

gboolean calib_runs_params_parse(const char *list, const char *origin, int *params, int *n,
                                 GError **error)
{
    g_auto(GStrv) names = g_strsplit(list, ",", -1);
    *n = 0;
    for (char **name = names; *name; name++) {
        int p = names_find(calib_run_params, g_strstrip(*name));
        gboolean twice = FALSE;
        for (int i = 0; i < *n; i++)
            twice |= params[i] == p;
        if (p < 0 || twice || *n == CALIB_RUNS_MAX_PARAMS) {
            g_autofree char *known = names_list(calib_run_params, FALSE);
            ps_error_value(error, origin, *name, "at most %d of %s, comma-separated, each once",
                           CALIB_RUNS_MAX_PARAMS, known);
            return FALSE;
        }
        params[(*n)++] = p;
    }
    return TRUE;
}

/* The base cut to the run's GPUs (names borrowed): part of each node when
 * the row says so (cluster_spec_use_gpus_per_node, checked by resolved). */
static ClusterSpec shaped(const ClusterSpec *base, const CalibRun *run)
{
    ClusterSpec c = *base;
    if (run->gpus_per_node > 0) {
        cluster_spec_use_gpus_per_node(&c, run->gpus_per_node, "gpus_per_node", NULL);
        c.nodes = run->gpus / c.gpus_per_node;
    } else if (run->gpus < base->gpus_per_node) {
        c.nodes = 1;
        c.gpus_per_node = run->gpus;
    } else {
        c.nodes = run->gpus / base->gpus_per_node;
    }
    return c;
}

/* The run's plan resolved on its cluster, or NULL with `error` naming it. */
static PlanSpec *resolved(const ClusterSpec *base, const CalibRuns *runs, const CalibRun *run,
                          GError **error)
{
    g_autofree char *where = g_strdup_printf("%s:%d", runs->path, run->line);
    if (run->gpus_per_node > 0) {
        ClusterSpec c = *base;
        g_autofree char *origin = g_strdup_printf("%s, column gpus_per_node", where);
        if (!cluster_spec_use_gpus_per_node(&c, run->gpus_per_node, origin, error))
            return NULL;
        if (run->gpus % run->gpus_per_node) {
            g_autofree char *got = g_strdup_printf("%d GPUs", run->gpus);
            ps_error_value(error, where, got, "a multiple of its gpus_per_node, %d",
                           run->gpus_per_node);
            return NULL;
        }
    } else if (run->gpus >= base->gpus_per_node && run->gpus % base->gpus_per_node) {
        g_autofree char *got = g_strdup_printf("%d GPUs", run->gpus);
        ps_error_value(error, where, got, "fewer GPUs than a node's %d, or a multiple of it",
                       base->gpus_per_node);
        return NULL;
    }
    ClusterSpec c = shaped(base, run);
    g_autoptr(PlanSpec) plan = plan_spec_copy(run->plan);
    if (!strategy_resolve(plan, run->model, &c, error)) {
        g_prefix_error(error, "%s: ", where);
        return NULL;
    }
    return g_steal_pointer(&plan);
}

gboolean calib_runs_check(const ClusterSpec *base, const CalibRuns *runs, int n_params,
                          GError **error)
{
    int n = (int)runs->runs->len;
    if (n < n_params) {
        g_autofree char *got = g_strdup_printf("%d run%s", n, n == 1 ? "" : "s");
        ps_error_value(error, runs->path, got,
                       "at least as many runs as parameters to fit (%d; --fit names fewer)",
                       n_params);
        return FALSE;
    }
    for (int i = 0; i < n; i++) {
        g_autoptr(PlanSpec) plan =
            resolved(base, runs, &g_array_index(runs->runs, CalibRun, i), error);
        if (!plan)
            return FALSE;
    }
    return TRUE;
}

typedef struct {
    const ClusterSpec *base;
    const CalibRun *runs;
    PlanSpec **plans; /* resolved */
    int n;
    const int *params;
    int np;
    double measured[CALIB_MAX_RUNS]; /* log of each run's measured throughput */
} Fit;

/* The base's value of parameter p, its default for 0 where 0 means one. */
static double base_value(const GpuSpec *gpu, int p)
{
    double v = *(const double *)((const char *)gpu + info_of(p)->offset);
    return v == 0 && info_of(p)->zero_means > 0 ? info_of(p)->zero_means : v;
}

/* log of the throughput plansim predicts for run i under `theta`; its
 * memory peak and verdict into *peak_bytes and *fits when not NULL. */
static double predict(const Fit *fit, int i, const double *theta, double *peak_bytes,
                      gboolean *fits)
{
    const CalibRun *run = &fit->runs[i];
    ClusterSpec c = shaped(fit->base, run);
    for (int j = 0; j < fit->np; j++)
        *slot(&c.gpu, fit->params[j]) = theta[j];
    Report rep;
    g_autoptr(GError) error = NULL;
    gboolean ok = simulate_run(run->model, &c, fit->plans[i], &rep, &error);
    g_assert(ok); /* checked: calib_runs_check */
    const Metrics *m = &rep.metrics;
    if (peak_bytes) {
        *peak_bytes = m->peak_bytes;
        *fits = m->fits;
    }
    double step = m->step_time_s, rate;
    switch (run->measure) {
    case RUN_STEP_S:
        rate = 1 / step;
        break;
    case RUN_TOKENS_PER_S_PER_GPU:
        rate = m->tokens_per_s / rep.gpus;
        break;
    default:
        rate = m->model_flops / step / rep.gpus / 1e12;
        break;
    }
    report_clear(&rep);
    return log(rate);
}

/* Run i's predicted log throughput under `theta` into out[i], and its
 * memory into peak_bytes[i] and fits[i] when they are not NULL. */
typedef struct {
    const Fit *fit;
    const double *theta;
    double *out, *peak_bytes;
    gboolean *fits;
} RunPrediction;

static void run_prediction(const void *ctx, int i)
{
    const RunPrediction *c = ctx;
    c->out[i] = predict(c->fit, i, c->theta, c->peak_bytes ? &c->peak_bytes[i] : NULL,
                        c->fits ? &c->fits[i] : NULL);
}

/* residuals, and each run's memory peak and verdict into peak_bytes and
 * fits when they are not NULL. */
static double residuals_with_memory(const Fit *fit, const double *theta, const double *weight,
                                    double *r, double *peak_bytes, gboolean *fits)
{
    calib_each(fit->n, run_prediction,
               &(RunPrediction){
                   .fit = fit, .theta = theta, .out = r, .peak_bytes = peak_bytes, .fits = fits});
    double cost = 0;
    for (int i = 0; i < fit->n; i++) {
        r[i] -= fit->measured[i];
        cost += weight[i] * r[i] * r[i];
    }
    return cost;
}

/* log(predicted / measured) of every run at `theta` into r; returns the
 * sum of their squares over the runs `weight` counts (0 or 1 each). Runs
 * replay on the machine's cores, each into its own slot, so the sum is
 * the same whatever the threads. */
static double residuals(const Fit *fit, const double *theta, const double *weight, double *r)
{
    return residuals_with_memory(fit, theta, weight, r, NULL, NULL);
}

/* The weighted sum of squares of residuals `r`. */
static double cost_of(const Fit *fit, const double *weight, const double *r)
{
    double cost = 0;
    for (int i = 0; i < fit->n; i++)
        cost += weight[i] * r[i] * r[i];
    return cost;
}

/* Levenberg-Marquardt from `theta` (updated) over the runs `weight`
 * counts, `r` holding the residuals of every run at `theta` (and at the
 * result on return). `J` (n x np) is the Jacobian: computed at every
 * iteration and left as the last one, or, with `chord`, given and kept
 * (a refit from a nearby optimum, as leave-one-out's). */
static void minimise(const Fit *fit, double *theta, const double *weight, double *r, double *J,
                     gboolean chord)
{
    int n = fit->n, np = fit->np;
    g_autofree double *rj = g_new(double, n), *rt = g_new(double, n);
    double trial[CALIB_RUNS_MAX_PARAMS], lambda = 1e-3;
    double cost = cost_of(fit, weight, r);
    for (int it = 0; it < RUNS_MAX_ITERATIONS && cost > 0; it++) {
        for (int j = 0; !chord && j < np; j++) { /* the Jacobian, stepping inside the range */
            const ParamInfo *info = info_of(fit->params[j]);
            double step = theta[j] + info->step >= info->lo && theta[j] + info->step <= info->hi
                              ? info->step
                              : -info->step;
            memcpy(trial, theta, np * sizeof *trial);
            trial[j] += step;
            residuals(fit, trial, weight, rj);
            for (int i = 0; i < n; i++)
                J[i * np + j] = (rj[i] - r[i]) / step;
        }
        double trial_cost = INFINITY;
        for (int tries = 0; tries < RUNS_MAX_TRIES && !(trial_cost < cost); tries++) {
            double a[CALIB_RUNS_MAX_PARAMS * CALIB_RUNS_MAX_PARAMS] = {0};
            double g[CALIB_RUNS_MAX_PARAMS] = {0};
            for (int i = 0; i < n; i++)
                for (int x = 0; x < np; x++) {
                    g[x] -= weight[i] * J[i * np + x] * r[i];
                    for (int y = 0; y < np; y++)
                        a[x * np + y] += weight[i] * J[i * np + x] * J[i * np + y];
                }
            for (int x = 0; x < np; x++)
                a[x * np + x] += lambda * MAX(a[x * np + x], 1e-12);
            if (calib_solve(a, g, np)) {
                for (int x = 0; x < np; x++) {
                    const ParamInfo *info = info_of(fit->params[x]);
                    trial[x] = CLAMP(theta[x] + g[x], info->lo, info->hi);
                }
                trial_cost = residuals(fit, trial, weight, rt);
            }
            lambda *= trial_cost < cost ? 1.0 / 3 : 4;
        }
        if (!(trial_cost < cost))
            break;
        lambda = MAX(lambda, 1e-9);
        double gain = (cost - trial_cost) / cost;
        cost = trial_cost;
        memcpy(theta, trial, np * sizeof *theta);
        memcpy(r, rt, n * sizeof *r);
        if (gain < RUNS_MIN_GAIN)
            break;
    }
}

static double measured_rate(const CalibRun *run)
{
    return run->measure == RUN_STEP_S ? 1 / run->value : run->value;
}

static void summarise(const double *err, int n, double *mean, double *max)
{
    *mean = *max = 0;
    for (int i = 0; i < n; i++) {
        *mean += fabs(err[i]) / n;
        *max = MAX(*max, fabs(err[i]));
    }
}

/* After the fit: a parameter no run depends on (its Jacobian's column all
 * 0) goes back to its base value, kept; the others are fitted, and warned
 * of when on a bound of their range. Sets fitted[] and appends the
 * warnings. */
static void keep_unused(const Fit *fit, const double *J, const double *base_theta, double *theta,
                        gboolean *fitted, GPtrArray *warnings)
{
    for (int j = 0; j < fit->np; j++) {
        const ParamInfo *info = info_of(fit->params[j]);
        const char *key = calib_run_params[fit->params[j]];
        const char *unit = info->unit == 1 ? "" : " us";
        fitted[j] = FALSE;
        for (int i = 0; i < fit->n; i++)
            fitted[j] |= J[i * fit->np + j] != 0;
        char *warning;
        if (fitted[j]) {
            warning = calib_bound_warning(key, theta[j] / info->unit, info->lo / info->unit,
                                          info->hi / info->unit, unit);
        } else {
            warning =
                calib_kept_warning(key, "run", 0, base_theta[j] / info->unit,
                                   theta[j] != base_theta[j] ? theta[j] / info->unit : NAN, unit);
            theta[j] = base_theta[j];
        }
        if (warning)
            g_ptr_array_add(warnings, warning);
    }
}

/* One line naming the runs whose peak does not fit their GPUs (at most
 * three, then how many more), or NULL when all fit. */
static char *unfit_warning(const char *path, const CalibRun *runs, const double *peak_bytes,
                           const gboolean *fits, int n)
{
    int count = 0;
    GString *w = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        if (!fits[i] && count++ < 3)
            g_string_append_printf(w, "%s line %d (%s, %.1f GiB)", count > 1 ? "," : "",
                                   runs[i].line, runs[i].name, peak_bytes[i] / UNITS_GIB);
    if (count == 0)
        return g_string_free(w, TRUE);
    if (count > 3)
        g_string_append_printf(w, " and %d more", count - 3);
    char *line = g_strdup_printf("%s: %d run%s do%s not fit in the memory of their GPUs under "
                                 "the model, where they ran:%s",
                                 path, count, count == 1 ? "" : "s", count == 1 ? "es" : "", w->str);
    g_string_free(w, TRUE);
    return line;
}

RunsFit *calib_runs_fit(const ClusterSpec *base, const CalibRuns *runs, const int *params,
                        int n_params, gboolean leave_one_out)
{
    int n = (int)runs->runs->len;
    g_assert(n >= n_params && n_params <= CALIB_RUNS_MAX_PARAMS);
    Fit *fit = g_new0(Fit, 1);
    *fit = (Fit){.base = base,
                 .runs = (const CalibRun *)runs->runs->data,
                 .n = n,
                 .params = params,
                 .np = n_params};
    fit->plans = g_new(PlanSpec *, n);
    for (int i = 0; i < n; i++) {
        fit->plans[i] = resolved(base, runs, &fit->runs[i], NULL);
        g_assert(fit->plans[i]); /* checked: calib_runs_check */
        fit->measured[i] = log(measured_rate(&fit->runs[i]));
    }

    double theta[CALIB_RUNS_MAX_PARAMS], base_theta[CALIB_RUNS_MAX_PARAMS];
    for (int j = 0; j < n_params; j++)
        theta[j] = base_theta[j] = base_value(&base->gpu, params[j]);
    g_autofree double *weight = g_new(double, n), *r = g_new(double, n);
    for (int i = 0; i < n; i++)
        weight[i] = 1;
    g_autofree double *J = g_new(double, (gsize)n *MAX(n_params, 1));
    for (int i = 0; i < n * MAX(n_params, 1); i++)
        J[i] = NAN; /* none computed: a fit that starts exact */
    GPtrArray *warnings = g_ptr_array_new();
    gboolean is_fitted[CALIB_RUNS_MAX_PARAMS];
    if (n_params > 0) {
        residuals(fit, theta, weight, r);
        minimise(fit, theta, weight, r, J, FALSE);
        keep_unused(fit, J, base_theta, theta, is_fitted, warnings);
    }

    RunsFit *out = g_new0(RunsFit, 1);
    out->peak_bytes = g_new(double, n);
    out->fits = g_new(gboolean, n);
    /* the residuals at the fit (a parameter kept changes them), with each
     * run's memory */
    residuals_with_memory(fit, theta, weight, r, out->peak_bytes, out->fits);
    out->n = n;
    out->error = g_new(double, n);
    for (int i = 0; i < n; i++)
        out->error[i] = expm1(r[i]);
    summarise(out->error, n, &out->mean_error, &out->max_error);
    if (leave_one_out && n_params > 0) {
        out->loo = g_new(double, n);
        g_autofree double *rl = g_new(double, n);
        for (int i = 0; i < n; i++) {
            double t[CALIB_RUNS_MAX_PARAMS];
            memcpy(t, theta, sizeof t);
            memcpy(rl, r, n * sizeof *rl);
            weight[i] = 0;
            minimise(fit, t, weight, rl, J, TRUE);
            weight[i] = 1;
            out->loo[i] = expm1(rl[i]);
        }
        summarise(out->loo, n, &out->loo_mean, &out->loo_max);
    }

    ClusterSpec fitted = *base;
    ParamState freed[CLUSTER_N_PARAMS] = {PARAM_UNLISTED};
    for (int j = 0; j < n_params; j++) {
        *slot(&fitted.gpu, params[j]) = theta[j];
        freed[run_param[params[j]]] = is_fitted[j] ? PARAM_FITTED : PARAM_KEPT;
    }
    out->cluster = cluster_spec_copy(&fitted);
    calib_record(out->cluster, base, freed);

    GString *rep = g_string_new(NULL);
    g_string_append_printf(rep, "# plansim calibrate --runs %s: %d runs, base %s\n", runs->path, n,
                           base->name);
    g_string_append(rep, "# parameter                          base      fitted  status\n");
    for (int j = 0; j < n_params; j++) {
        double unit = info_of(params[j])->unit;
        g_string_append_printf(rep, "%-30s  %10.4f  %10.4f  %s\n", calib_run_params[params[j]],
                               base_theta[j] / unit, theta[j] / unit,
                               is_fitted[j] ? "fitted" : "kept");
    }
    g_string_append_printf(rep, "# runs: mean |error| %.2f %%, max %.2f %%", 100 * out->mean_error,
                           100 * out->max_error);
    if (out->loo)
        g_string_append_printf(rep, "; leave-one-out: mean %.2f %%, max %.2f %%",
                               100 * out->loo_mean, 100 * out->loo_max);
    g_string_append(rep, " (+: plansim too fast)\n");
    g_string_append_printf(rep, "# %-28s %-20s %12s %12s %9s%s %9s\n", "run", "measure",
                           "measured", "predicted", "error(%)", out->loo ? "   loo(%)" : "",
                           "peak(GiB)");
    for (int i = 0; i < n; i++) {
        const CalibRun *run = &fit->runs[i];
        double predicted = measured_rate(run) * (1 + out->error[i]);
        if (run->measure == RUN_STEP_S)
            predicted = 1 / predicted;
        g_string_append_printf(rep, "%-30s %-20s %12.5g %12.5g %+9.2f", run->name,
                               run_measure_names[run->measure], run->value, predicted,
                               100 * out->error[i]);
        if (out->loo)
            g_string_append_printf(rep, " %+8.2f", 100 * out->loo[i]);
        g_string_append_printf(rep, " %9.1f%s\n", out->peak_bytes[i] / UNITS_GIB,
                               out->fits[i] ? "" : " does not fit");
    }
    out->report = g_string_free(rep, FALSE);
    char *unfit = unfit_warning(runs->path, fit->runs, out->peak_bytes, out->fits, n);
    if (unfit)
        g_ptr_array_add(warnings, unfit);
    g_autofree int *line = g_new(int, n);
    for (int i = 0; i < n; i++)
        line[i] = fit->runs[i].line;
    char *off = calib_error_warning(runs->path, out->error, line, n);
    if (off)
        g_ptr_array_add(warnings, off);
    g_ptr_array_add(warnings, NULL);
    out->warnings = (char **)g_ptr_array_free(warnings, FALSE);
    for (int i = 0; i < n; i++)
        plan_spec_free(fit->plans[i]);
    g_free(fit->plans);
    g_free(fit);
    return out;
}

void calib_runs_fit_free(RunsFit *fit)
{
    if (!fit)
        return;
    cluster_spec_free(fit->cluster);
    g_free(fit->report);
    g_strfreev(fit->warnings);
    g_free(fit->error);
    g_free(fit->loo);
    g_free(fit->peak_bytes);
    g_free(fit->fits);
    g_free(fit);
}
