/* calibrate.c: fits a cluster profile's collective parameters and GEMM
 * efficiency curve to measurements (calibrate.h), and writes the profile
 * back as a cluster file. */
#include "app/calibrate.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app/collbench.h"
#include "base/error.h"
#include "cost/roofline.h"

/* ---- small dense linear algebra ------------------------------------------- */

gboolean calib_solve(double *a, double *b, int n)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[p * n + c]))
                p = r;
        if (!(fabs(a[p * n + c]) > 0))
            return FALSE;
        for (int k = 0; k < n; k++) {
            double t = a[c * n + k];
            a[c * n + k] = a[p * n + k];
            a[p * n + k] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int r = c + 1; r < n; r++) {
            double f = a[r * n + c] / a[c * n + c];
            for (int k = c; k < n; k++)
                a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        for (int k = c + 1; k < n; k++)
            b[c] -= a[c * n + k] * b[k];
        b[c] /= a[c * n + c];
    }
    return TRUE;
}

typedef struct {
    void (*one)(const void *ctx, int i);
    const void *ctx;
    int n, first, stride;
} Share;

static gpointer share_run(gpointer data)
{
    const Share *s = data;
    for (int i = s->first; i < s->n; i += s->stride)
        s->one(s->ctx, i);
    return NULL;
}

void calib_each(int n, void (*one)(const void *ctx, int i), const void *ctx)
{
    int threads = MAX(1, MIN(MIN((int)g_get_num_processors(), CALIB_MAX_THREADS), n));
    Share shares[CALIB_MAX_THREADS];
    GThread *running[CALIB_MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        shares[t] = (Share){.one = one, .ctx = ctx, .n = n, .first = t, .stride = threads};
        running[t] = t ? g_thread_new("calibrate", share_run, &shares[t]) : NULL;
    }
    share_run(&shares[0]);
    for (int t = 1; t < threads; t++)
        g_thread_join(running[t]);
}

/* ---- the fit's warnings -------------------------------------------------------- */

char *calib_bound_warning(const char *key, double value, double lo, double hi, const char *unit)
{
    /* a bound reached through exp(log(bound)) is off by an ulp or two */
    gboolean low = fabs(value - lo) <= 1e-9 * fabs(lo), high = fabs(value - hi) <= 1e-9 * fabs(hi);
    if (!low && !high)
        return NULL;
    return g_strdup_printf("%s: fitted to %.4g%s, the %s end of its range (%.4g to %.4g%s): the "
                           "measurements would take it further than the model allows",
                           key, value, unit, low ? "lower" : "upper", lo, hi, unit);
}

char *calib_kept_warning(const char *key, const char *what, double sensitivity, double base,
                         double left, const char *unit)
{
    g_autofree char *how = sensitivity == 0 ? g_strdup("sensitivity 0")
                                            : g_strdup_printf("sensitivity %.2g, under %.2g",
                                                              sensitivity, CALIB_MIN_SENSITIVITY);
    if (isnan(left))
        return g_strdup_printf("%s: no %s depends on it (%s): kept at the base's %.4g%s", key, what,
                               how, base, unit);
    return g_strdup_printf("%s: no %s depends on it where the fit took it (%.4g%s, %s): kept at "
                           "the base's %.4g%s, which fits as well",
                           key, what, left, unit, how, base, unit);
}

char *calib_error_warning(const char *path, const double *err, const int *line, int n)
{
    double mean = 0, max = 0;
    int worst = 0;
    for (int i = 0; i < n; i++) {
        mean += fabs(err[i]) / n;
        if (fabs(err[i]) > max) {
            max = fabs(err[i]);
            worst = line[i];
        }
    }
    gboolean off = mean > CALIB_WARN_MEAN_ERROR, far = max > CALIB_WARN_MAX_ERROR;
    if (!off && !far)
        return NULL;
    g_autofree char *over_mean = g_strdup_printf(" (over %.0f %%)", 100 * CALIB_WARN_MEAN_ERROR);
    g_autofree char *over_max = g_strdup_printf(" (over %.0f %%)", 100 * CALIB_WARN_MAX_ERROR);
    return g_strdup_printf("%s: mean |error| %.2f %%%s, largest %.2f %% at line %d%s: the model "
                           "does not reproduce these measurements",
                           path, 100 * mean, off ? over_mean : "", 100 * max, worst,
                           far ? over_max : "");
}

void calib_print_warnings(char *const *warnings)
{
    for (char *const *w = warnings; *w; w++) {
        g_autofree char *line = ps_error_escape(*w); /* a file's name may hold a newline */
        fprintf(stderr, "plansim: warning: %s\n", line);
    }
}

/* Adds `warning` (NULL: none) to `warnings`. */
static void warn(GPtrArray *warnings, char *warning)
{
    if (warning)
        g_ptr_array_add(warnings, warning);
}

/* ---- the collective parameters ---------------------------------------------- */

typedef enum { EFFICIENCY, LATENCY } ParamKind;

/* A link class's parameters: LinkSpec's, the rows CLASS_... */
/* clang-format off */
#define LINK_PARAMS(CLASS, member)                                                                 \
    {.param = CLUSTER_PARAM_##CLASS##_EFFICIENCY,                                                  \
     .offset = offsetof(ClusterSpec, member.efficiency), .kind = EFFICIENCY},                      \
    {.param = CLUSTER_PARAM_##CLASS##_LATENCY,                                                     \
     .offset = offsetof(ClusterSpec, member.latency_s), .kind = LATENCY},                          \
    {.param = CLUSTER_PARAM_##CLASS##_LL_LATENCY,                                                  \
     .offset = offsetof(ClusterSpec, member.ll_latency_s), .kind = LATENCY},                       \
    {.param = CLUSTER_PARAM_##CLASS##_LL128_LATENCY,                                               \
     .offset = offsetof(ClusterSpec, member.ll128_latency_s), .kind = LATENCY}

/* The collective model's parameters (spec/cluster.h, LinkSpec and ClusterSpec):
 * the NCCL rows of cluster_params.def, in their order. */
static const struct {
    ClusterParam param; /* its name and whether the cluster has it */
    gsize offset;       /* of the double in ClusterSpec */
    ParamKind kind;
} params[] = {
    LINK_PARAMS(INTRA, intra),
    {.param = CLUSTER_PARAM_BASE_LATENCY,
     .offset = offsetof(ClusterSpec, base_latency_s), .kind = LATENCY},
    {.param = CLUSTER_PARAM_NVLS_EFFICIENCY,
     .offset = offsetof(ClusterSpec, nvls_efficiency), .kind = EFFICIENCY},
    {.param = CLUSTER_PARAM_NVLS_LATENCY,
     .offset = offsetof(ClusterSpec, nvls_latency_s), .kind = LATENCY},
    LINK_PARAMS(INTER, inter),
    {.param = CLUSTER_PARAM_TREE_EFFICIENCY,
     .offset = offsetof(ClusterSpec, tree_efficiency), .kind = EFFICIENCY},
};
/* clang-format on */

#define N_PARAMS ((int)G_N_ELEMENTS(params))

/* Where the fit keeps a parameter: an efficiency in [1 %, 1], a latency in
 * [1 ns, 10 ms]. A latency the base gives as 0 starts from LATENCY_START. */
static const double lowest[] = {[EFFICIENCY] = 0.01, [LATENCY] = 1e-9};
static const double highest[] = {[EFFICIENCY] = 1, [LATENCY] = 1e-2};
#define LATENCY_START 1e-6

#define LM_STEP           0.01 /* of log p, for the Jacobian */
#define LM_MAX_ITERATIONS 100
#define LM_MIN_GAIN       1e-7 /* relative fall of the cost that goes on */
#define LM_MAX_TRIES      12   /* dampings tried per step */

static double *slot(ClusterSpec *c, int j)
{
    return (double *)((char *)c + params[j].offset);
}

static double value(const ClusterSpec *c, int j)
{
    return *(const double *)((const char *)c + params[j].offset);
}

static const char *key_of(int j)
{
    return cluster_param_names[params[j].param];
}

typedef struct {
    ClusterSpec work; /* the base by value (names borrowed), with the fit's values */
    const ClusterSpec *base;
    CalibNccl *const *files;
    int n_files, n_points;
    int *point_file, *point_index; /* each point's file and index in it */
    int np, idx[N_PARAMS];         /* the parameters this cluster has */
    double theta[N_PARAMS];        /* their logarithms */
    double theta0[N_PARAMS];       /* the base's, where the fit starts */
    gboolean moved[N_PARAMS];      /* set from theta; else the base's value */
    /* a parameter the fit moved where no point depends on it: there
     * (left), and whether it went back to the base's value; else the mean
     * |error| that value gives (worse) against the fit's (now) */
    gboolean went_back[N_PARAMS];
    double left[N_PARAMS], worse[N_PARAMS], now[N_PARAMS];
    double sensitivity[N_PARAMS];
} Fit;

/* The work cluster shaped as file `f` ran: hosts x ranks per host, or two
 * ranks for send/recv; returns the ranks. */
static int shape(ClusterSpec *c, const CalibNccl *f)
{
    int ranks = f->op == COLL_SEND_RECV ? 2 : f->ranks;
    c->nodes = f->op == COLL_SEND_RECV ? MIN(f->hosts, 2) : f->hosts;
    c->gpus_per_node = ranks / c->nodes;
    return ranks;
}

gboolean calib_nccl_check(const ClusterSpec *base, const CalibNccl *f, GError **error)
{
    ClusterSpec shaped = *base;
    int ranks = shape(&shaped, f);
    GError *why = NULL;
    if (collbench_check(&shaped, f->op, ranks, &why))
        return TRUE;
    /* collbench's reason, without the flag `plansim collective` takes */
    const char *reason = why->message;
    if (g_str_has_prefix(reason, "--ranks: "))
        reason += strlen("--ranks: ");
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s over %d ranks: %s", f->path,
                collective_name(f->op), ranks, reason);
    g_error_free(why);
    return FALSE;
}

/* plansim's time for `bytes` of file `f`'s collective on cluster `c`: the
 * collective alone, as collbench_run replays it (collbench.h). */
static double model_s(const ClusterSpec *c, const CalibNccl *f, double bytes,
                      CollAlgorithm *algorithm)
{
    ClusterSpec shaped = *c;
    int ranks = shape(&shaped, f);
    return collbench_alone_s(&shaped, f->op, ranks, bytes, c->algorithm, algorithm);
}

static void apply(Fit *fit, const double *theta)
{
    for (int j = 0; j < fit->np; j++) {
        int p = fit->idx[j];
        *slot(&fit->work, p) = fit->moved[j] ? exp(theta[j]) : value(fit->base, p);
    }
}

/* Point i's residual, log(fitted / measured), into r[i]. */
typedef struct {
    const Fit *fit;
    double *r;
} PointResidual;

static void point_residual(const void *ctx, int i)
{
    const PointResidual *c = ctx;
    const CalibNccl *file = c->fit->files[c->fit->point_file[i]];
    const CalibPoint *p = &g_array_index(file->points, CalibPoint, c->fit->point_index[i]);
    c->r[i] = log(model_s(&c->fit->work, file, p->bytes, NULL) / p->time_s);
}

/* log(fitted / measured) of every point at `theta`; returns the sum of
 * their squares. The points' replays are independent: they run on the
 * machine's cores, each residual into its own slot, so that the sum is
 * the same whatever the threads. */
static double residuals(Fit *fit, const double *theta, double *r)
{
    apply(fit, theta);
    calib_each(fit->n_points, point_residual, &(PointResidual){.fit = fit, .r = r});
    double cost = 0;
    for (int i = 0; i < fit->n_points; i++)
        cost += r[i] * r[i];
    return cost;
}

/* The forward-difference Jacobian of the residuals `r` at `theta` (n x np,
 * row-major), and each parameter's sensitivity, max |d log t / d log p|;
 * an efficiency steps down, so that it stays at most 1. */
static void jacobian(Fit *fit, const double *theta, const double *r, double *J)
{
    int n = fit->n_points, np = fit->np;
    g_autofree double *th = g_memdup2(theta, np * sizeof *th);
    g_autofree double *rj = g_new(double, n);
    for (int j = 0; j < np; j++) {
        double step = params[fit->idx[j]].kind == EFFICIENCY ? -LM_STEP : LM_STEP;
        gboolean moved = fit->moved[j];
        fit->moved[j] = TRUE;
        th[j] = theta[j] + step;
        residuals(fit, th, rj);
        th[j] = theta[j];
        fit->moved[j] = moved;
        fit->sensitivity[j] = 0;
        for (int i = 0; i < n; i++) {
            J[i * np + j] = (rj[i] - r[i]) / step;
            fit->sensitivity[j] = MAX(fit->sensitivity[j], fabs(J[i * np + j]));
        }
    }
}

/* One Levenberg-Marquardt step over the parameters in `free` (nf of them)
 * with damping `lambda`: theta + delta, clamped to the bounds, into `out`.
 * FALSE when the system is singular. */
static gboolean lm_step(const Fit *fit, const double *J, const double *r, const int *free, int nf,
                        double lambda, const double *theta, double *out)
{
    int n = fit->n_points, np = fit->np;
    g_autofree double *a = g_new0(double, nf *nf), *g = g_new0(double, nf);
    for (int i = 0; i < n; i++)
        for (int x = 0; x < nf; x++) {
            double jx = J[i * np + free[x]];
            g[x] -= jx * r[i];
            for (int y = 0; y < nf; y++)
                a[x * nf + y] += jx * J[i * np + free[y]];
        }
    for (int x = 0; x < nf; x++)
        a[x * nf + x] += lambda * MAX(a[x * nf + x], 1e-12);
    if (!calib_solve(a, g, nf))
        return FALSE;
    memcpy(out, theta, np * sizeof *out);
    for (int x = 0; x < nf; x++) {
        int j = free[x];
        ParamKind kind = params[fit->idx[j]].kind;
        out[j] = CLAMP(theta[j] + g[x], log(lowest[kind]), log(highest[kind]));
    }
    return TRUE;
}

/* Levenberg-Marquardt from the base's values; leaves the fitted values in
 * fit->theta, each parameter's sensitivity at them, their residuals in r
 * (n_points); returns their cost. */
static double minimise(Fit *fit, double *r)
{
    int n = fit->n_points, np = fit->np, nf;
    g_autofree double *rt = g_new(double, n);
    g_autofree double *J = g_new(double, (gsize)n *np), *trial = g_new(double, np);
    int free[N_PARAMS];
    double lambda = 1e-3, cost = residuals(fit, fit->theta, r);
    jacobian(fit, fit->theta, r, J);
    for (int it = 0; it < LM_MAX_ITERATIONS && cost > 0; it++) {
        nf = 0;
        for (int j = 0; j < np; j++)
            if (fit->sensitivity[j] >= CALIB_MIN_SENSITIVITY)
                free[nf++] = j;
        /* damp more until a step lowers the cost */
        double trial_cost = INFINITY;
        gboolean was_moved[N_PARAMS];
        memcpy(was_moved, fit->moved, sizeof was_moved);
        for (int x = 0; x < nf; x++)
            fit->moved[free[x]] = TRUE;
        for (int tries = 0; nf && tries < LM_MAX_TRIES && !(trial_cost < cost); tries++) {
            if (lm_step(fit, J, r, free, nf, lambda, fit->theta, trial))
                trial_cost = residuals(fit, trial, rt);
            lambda *= trial_cost < cost ? 1.0 / 3 : 4;
        }
        if (!(trial_cost < cost)) {
            memcpy(fit->moved, was_moved, sizeof was_moved);
            break;
        }
        lambda = MAX(lambda, 1e-9);
        double gain = (cost - trial_cost) / cost;
        cost = trial_cost;
        memcpy(fit->theta, trial, np * sizeof *trial);
        memcpy(r, rt, n * sizeof *r);
        jacobian(fit, fit->theta, r, J);
        if (gain < LM_MIN_GAIN)
            break;
    }
    return cost;
}

/* The mean |fitted / measured - 1| of residuals r. */
static double mean_error(const Fit *fit, const double *r)
{
    double sum = 0;
    for (int i = 0; i < fit->n_points; i++)
        sum += fabs(expm1(r[i]));
    return sum / fit->n_points;
}

/* The fit from the base's values, then each parameter it moved to where
 * no point depends on it (sensitivity under CALIB_MIN_SENSITIVITY: a
 * protocol's latency raised until the protocol is never chosen, say), in
 * turn: back to the base's value when that leaves the cost as it is (to
 * 1e-9), kept there; else it stays where the fit took it, the fit being
 * worse without it. Leaves the values in fit->work. */
static void fit_collectives(Fit *fit)
{
    g_autofree double *r = g_new(double, fit->n_points), *rt = g_new(double, fit->n_points);
    double cost = minimise(fit, r);
    for (int j = 0; j < fit->np; j++) {
        if (!fit->moved[j] || fit->sensitivity[j] >= CALIB_MIN_SENSITIVITY)
            continue;
        fit->left[j] = exp(fit->theta[j]);
        fit->moved[j] = FALSE;
        double back = residuals(fit, fit->theta, rt);
        fit->went_back[j] = back <= cost * (1 + 1e-9);
        if (fit->went_back[j]) {
            cost = back;
            fit->theta[j] = fit->theta0[j];
            memcpy(r, rt, fit->n_points * sizeof *r);
        } else {
            fit->moved[j] = TRUE;
            fit->worse[j] = mean_error(fit, rt);
            fit->now[j] = mean_error(fit, r);
        }
    }
    apply(fit, fit->theta);
}

/* ---- the GEMM curve ------------------------------------------------------------ */

Op calib_gemm_op(const CalibGemmRow *row)
{
    double e = dtype_bytes(row->dtype) + dtype_scale_bytes(row->dtype);
    return (Op){.name = "gemm",
                .flops = 2 * row->m * row->n * row->k,
                .bytes = e * (row->m * row->k + row->k * row->n) + 2 * row->m * row->n,
                .gemm = 1,
                .m = row->m,
                .n = row->n,
                .k = row->k,
                .batch = 1,
                .dtype = row->dtype};
}

/* `gpu` as a microbenchmark runs it, one GEMM at a time: no sustained
 * share (the curve is the microbenchmarks'). */
static GpuSpec microbenchmark(const GpuSpec *gpu)
{
    GpuSpec g = *gpu;
    g.gemm_sustained = 1;
    return g;
}

/* `gpu` as a microbenchmark runs it, with the curve `e` at its points `x`. */
static GpuSpec with_curve(const GpuSpec *gpu, const double *x, const double *e, int points)
{
    GpuSpec g = microbenchmark(gpu);
    g.gemm.n = points;
    memcpy(g.gemm.x, x, points * sizeof *x);
    memcpy(g.gemm.y, e, points * sizeof *e);
    return g;
}

/* The efficiency each row implies, or 0 for a row the memory bound (or
 * the launch, or the epilogues, alone) explains: the waves' math at the
 * peak over the time left of the row's once its launch and epilogues
 * (gemm_epilogue_s, which no efficiency scales) are taken out. */
static double implied(const GpuSpec *gpu, const CalibGemmRow *row)
{
    static const double one = 1;
    Op op = calib_gemm_op(row);
    GpuSpec unit = with_curve(gpu, &one, &one, 1), no_compute = *gpu;
    no_compute.peak_flops = INFINITY;
    double busy = row->time_s - gpu->launch_s, epilogues = gemm_epilogue_s(gpu, &op);
    double memory_s = roofline_s(&no_compute, &op) - gpu->launch_s;
    return busy > memory_s && busy > epilogues
               ? (gemm_compute_s(&unit, &op) - epilogues) / (busy - epilogues)
               : 0;
}

/* The curve's points: the base's, or one per factor of 2 over the rows'
 * intensities (`lo` to `hi`), at most CURVE_POINTS. */
static int knots(const GpuSpec *gpu, double lo, double hi, double *x, double *e0)
{
    if (gpu->gemm.n > 0) {
        memcpy(x, gpu->gemm.x, gpu->gemm.n * sizeof *x);
        memcpy(e0, gpu->gemm.y, gpu->gemm.n * sizeof *e0);
        return gpu->gemm.n;
    }
    int n = (int)CLAMP(floor(log2(hi / lo)) + 1, 1, CURVE_POINTS);
    for (int j = 0; j < n; j++) {
        x[j] = n == 1 ? sqrt(lo * hi) : lo * pow(hi / lo, (double)j / (n - 1));
        e0[j] = gpu->compute_efficiency;
    }
    return n;
}

gboolean calib_gemm_check(const GpuSpec *gpu, const CalibGemm *g, GError **error)
{
    for (guint i = 0; i < g->rows->len; i++) {
        const CalibGemmRow *row = &g_array_index(g->rows, CalibGemmRow, i);
        g_autofree char *where = g_strdup_printf("%s:%d", g->path, row->line);
        const char *dtype = dtype_names[row->dtype];
        const char *key;
        if (gpu_peak(gpu, row->dtype, &key, NULL) <= 0) {
            ps_error_value(error, where, dtype, "a dtype the GPU %s has a peak for (gpu.%s)",
                           gpu->name, key);
            return FALSE;
        }
        /* the fastest time physics allows: the FLOPs at the dtype's peak or
         * the bytes at the memory's bandwidth, whichever takes longer (no
         * tile, wave or launch); the slowest a compute-bound row may take in
         * the model: CALIB_MIN_GEMM_EFFICIENCY of it */
        static const double one = 1;
        GpuSpec unit = with_curve(gpu, &one, &one, 1);
        Op op = calib_gemm_op(row);
        double fastest = MAX(op.flops / roofline_peak(gpu, row->dtype), op.bytes / gpu->memory_Bps);
        double slowest = gemm_compute_s(&unit, &op) / CALIB_MIN_GEMM_EFFICIENCY + gpu->launch_s;
        double e = implied(gpu, row);
        if (row->time_s >= fastest && (e == 0 || e >= CALIB_MIN_GEMM_EFFICIENCY))
            continue;
        g_autofree char *got = g_strdup_printf("%.6g s", row->time_s);
        ps_error_value(error, where, got,
                       "a time in seconds from %.3g to %.3g s for this %s GEMM (from %s's peak "
                       "and bandwidth to %.0f %% of its peak; a time in microseconds is 1e6 "
                       "times too large)",
                       fastest, MAX(slowest, fastest), dtype, gpu->name,
                       100 * CALIB_MIN_GEMM_EFFICIENCY);
        return FALSE;
    }
    return TRUE;
}

/* Fits gpu's curve to the rows (its other values, gemm_sustained with
 * them, kept); appends the curve's points to `out` and its warnings to
 * `warnings`: a point on a bound, or that no row reaches. FALSE when the
 * curve is kept whole (no row compute-bound, or the fit singular). */
static gboolean fit_gemm(GpuSpec *gpu, const CalibGemm *g, GString *out, GPtrArray *warnings)
{
    int rows = (int)g->rows->len, used = 0;
    g_autofree double *e = g_new(double, rows), *xi = g_new(double, rows);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < rows; i++) {
        const CalibGemmRow *row = &g_array_index(g->rows, CalibGemmRow, i);
        Op op = calib_gemm_op(row);
        e[i] = implied(gpu, row);
        xi[i] = op.flops / op.bytes;
        if (e[i] > 0) {
            used++;
            lo = MIN(lo, xi[i]);
            hi = MAX(hi, xi[i]);
        }
    }
    if (!used) {
        g_string_append_printf(out, "# %s: no row is compute-bound: the GEMM curve is kept\n",
                               g->path);
        warn(warnings,
             g_strdup_printf("%s: no row is compute-bound: the GEMM curve is kept", g->path));
        return FALSE;
    }
    double x[CURVE_POINTS], e0[CURVE_POINTS], a[CURVE_POINTS * CURVE_POINTS] = {0};
    double b[CURVE_POINTS], w[CURVE_POINTS];
    int k = knots(gpu, lo, hi, x, e0), support[CURVE_POINTS] = {0};
    for (int j = 0; j < k; j++) {
        a[j * k + j] = CALIB_RIDGE;
        b[j] = CALIB_RIDGE * e0[j];
    }
    for (int i = 0; i < rows; i++) {
        if (e[i] <= 0)
            continue;
        for (int j = 0; j < k; j++) { /* the curve's weight of point j at xi[i] */
            double unit[CURVE_POINTS] = {0};
            unit[j] = 1;
            GpuSpec basis = with_curve(gpu, x, unit, k);
            w[j] = gemm_efficiency_at(&basis, xi[i]);
            support[j] += w[j] > 0;
        }
        double weight = 1 / (e[i] * e[i]);
        for (int j = 0; j < k; j++) {
            b[j] += weight * w[j] * e[i];
            for (int l = 0; l < k; l++)
                a[j * k + l] += weight * w[j] * w[l];
        }
    }
    if (!calib_solve(a, b, k)) { /* the ridge keeps it positive definite, but in exact arithmetic */
        g_string_append_printf(
            out, "# %s: the fit is numerically singular: the GEMM curve is kept\n", g->path);
        warn(warnings, g_strdup_printf(
                           "%s: the fit is numerically singular: the GEMM curve is kept", g->path));
        return FALSE;
    }
    g_string_append_printf(out, "# gpu.gemm_efficiency point   base  fitted  rows  status\n");
    for (int j = 0; j < k; j++) {
        b[j] = CLAMP(b[j], CALIB_MIN_GEMM_EFFICIENCY, 1);
        g_string_append_printf(out, "%-10.4g flop/byte        %6.4f  %6.4f  %4d  %s\n", x[j], e0[j],
                               b[j], support[j], support[j] ? "fitted" : "kept");
        g_autofree char *key = g_strdup_printf("gpu.gemm_efficiency at %.4g flop/byte", x[j]);
        warn(warnings, support[j] ? calib_bound_warning(key, b[j], CALIB_MIN_GEMM_EFFICIENCY, 1, "")
                                  : calib_kept_warning(key, "row", 0, e0[j], NAN, ""));
    }
    gpu->gemm = with_curve(gpu, x, b, k).gemm;
    return TRUE;
}

/* ---- the report -------------------------------------------------------------------- */

static void summary(GString *out, const char *what, const double *err, int n)
{
    double sum = 0, max = 0;
    for (int i = 0; i < n; i++) {
        sum += fabs(err[i]);
        max = MAX(max, fabs(err[i]));
    }
    g_string_append_printf(out, "# %s: %d points, mean |error| %.2f %%, max %.2f %%\n", what, n,
                           n ? 100 * sum / n : 0, 100 * max);
}

/* File f's points under the fitted cluster `c`, and the warning of their
 * errors. */
static void nccl_residuals(GString *out, GPtrArray *warnings, const ClusterSpec *c,
                           const CalibNccl *f)
{
    int n = (int)f->points->len;
    g_autofree double *err = g_new(double, n);
    g_autofree int *line = g_new(int, n);
    GString *rows =
        g_string_new("#        size(B)  measured(us)    fitted(us)  error(%)  algorithm\n");
    for (int i = 0; i < n; i++) {
        const CalibPoint *p = &g_array_index(f->points, CalibPoint, i);
        CollAlgorithm used;
        double t = model_s(c, f, p->bytes, &used);
        err[i] = t / p->time_s - 1;
        line[i] = p->line;
        g_string_append_printf(rows, "%16.0f  %12.2f  %12.2f  %8.2f  %s\n", p->bytes,
                               p->time_s * 1e6, t * 1e6, 100 * err[i],
                               collective_algorithm_name(used));
    }
    g_autofree char *what =
        g_strdup_printf("%s: %s over %d ranks on %d host%s", f->path, collective_name(f->op),
                        f->ranks, f->hosts, f->hosts > 1 ? "s" : "");
    summary(out, what, err, n);
    g_string_append(out, rows->str);
    g_string_free(rows, TRUE);
    warn(warnings, calib_error_warning(f->path, err, line, n));
}

/* The GEMM rows under the fitted GPU, and the warning of their errors. */
static void gemm_residuals(GString *out, GPtrArray *warnings, const GpuSpec *gpu,
                           const CalibGemm *g)
{
    int n = (int)g->rows->len;
    g_autofree double *err = g_new(double, n);
    g_autofree int *line = g_new(int, n);
    GString *rows =
        g_string_new("#      m       n       k  measured(us)    fitted(us)  error(%)\n");
    for (int i = 0; i < n; i++) {
        const CalibGemmRow *row = &g_array_index(g->rows, CalibGemmRow, i);
        Op op = calib_gemm_op(row);
        GpuSpec alone = microbenchmark(gpu);
        double t = roofline_s(&alone, &op);
        err[i] = t / row->time_s - 1;
        line[i] = row->line;
        g_string_append_printf(rows, "%8.0f%8.0f%8.0f  %12.2f  %12.2f  %8.2f%s\n", row->m, row->n,
                               row->k, row->time_s * 1e6, t * 1e6, 100 * err[i],
                               implied(gpu, row) > 0 ? "" : "  memory-bound: not fitted");
    }
    g_autofree char *what = g_strdup_printf("%s: GEMMs", g->path);
    summary(out, what, err, n);
    g_string_append(out, rows->str);
    g_string_free(rows, TRUE);
    warn(warnings, calib_error_warning(g->path, err, line, n));
}

/* ---- the run ------------------------------------------------------------------------ */

/* The warning of parameter j, if any (its value in `unit`, `scale` times
 * the spec's): fitted on a bound; fitted where no point depends on it, the
 * fit worse at the base's value; kept, no point depending on it, or none
 * where the fit had taken it. */
static char *parameter_warning(const Fit *fit, int j, double scale, const char *unit)
{
    int p = fit->idx[j];
    const char *key = key_of(p);
    double base = value(fit->base, p) * scale, fitted = value(&fit->work, p) * scale;
    double sensitivity = fit->sensitivity[j];
    if (!fit->moved[j])
        return calib_kept_warning(key, "point", sensitivity, base,
                                  fit->went_back[j] ? fit->left[j] * scale : NAN, unit);
    if (sensitivity >= CALIB_MIN_SENSITIVITY)
        return calib_bound_warning(key, fitted, lowest[params[p].kind] * scale,
                                   highest[params[p].kind] * scale, unit);
    return g_strdup_printf("%s: no point depends on it where the fit took it (%.4g%s, sensitivity "
                           "%.2g, under %.2g), but at the base's %.4g%s the mean |error| is %.2f "
                           "%%, not %.2f %%: it stays, a bound the data sets rather than a value "
                           "it measures",
                           key, fitted, unit, sensitivity, CALIB_MIN_SENSITIVITY, base, unit,
                           100 * fit->worse[j], 100 * fit->now[j]);
}

/* The collective parameters' table, and their warnings. */
static void report_collectives(GString *out, GPtrArray *warnings, const Fit *fit)
{
    g_string_append(out, "# parameter                           base      fitted  sensitivity  "
                         "status\n");
    for (int j = 0; j < fit->np; j++) {
        int p = fit->idx[j];
        double scale = params[p].kind == LATENCY ? 1e6 : 1;
        g_string_append_printf(out, "%-30s  %10.4f  %10.4f  %11.2f  %s\n", key_of(p),
                               value(fit->base, p) * scale, value(&fit->work, p) * scale,
                               fit->sensitivity[j], fit->moved[j] ? "fitted" : "kept");
        warn(warnings, parameter_warning(fit, j, scale, params[p].kind == LATENCY ? " us" : ""));
    }
}

void calib_record(ClusterSpec *fitted, const ClusterSpec *base, const ParamState *freed)
{
    ClusterCalibration *r = g_new0(ClusterCalibration, 1);
    r->by = g_strdup(CALIB_BY);
    r->base = g_strdup(base->path ? base->path : base->name);
    for (int p = 0; p < CLUSTER_N_PARAMS; p++)
        if (cluster_spec_has_param(fitted, p))
            r->state[p] = freed[p] != PARAM_UNLISTED ? freed[p] : PARAM_GIVEN;
    cluster_calibration_free(fitted->calibration);
    fitted->calibration = r;
}

Calibration *calib_run(const ClusterSpec *base, CalibNccl *const *nccl, int n_nccl,
                       const CalibGemm *gemm)
{
    Fit fit = {.work = *base, .base = base, .files = nccl, .n_files = n_nccl};
    for (int j = 0; j < N_PARAMS; j++) {
        if (!cluster_spec_has_param(base, params[j].param))
            continue;
        double v = value(&fit.work, j);
        if (params[j].kind == EFFICIENCY && v == 0) /* spec/cluster.h: 0 counts as 1 */
            *slot(&fit.work, j) = v = 1;
        fit.theta[fit.np] = fit.theta0[fit.np] = log(v > 0 ? v : LATENCY_START);
        fit.idx[fit.np++] = j;
    }
    ClusterSpec normalised = fit.work;
    fit.base = &normalised;
    for (int f = 0; f < n_nccl; f++)
        fit.n_points += (int)nccl[f]->points->len;
    g_autofree int *point_file = g_new(int, MAX(fit.n_points, 1));
    g_autofree int *point_index = g_new(int, MAX(fit.n_points, 1));
    for (int f = 0, i = 0; f < n_nccl; f++)
        for (guint k = 0; k < nccl[f]->points->len; k++, i++) {
            point_file[i] = f;
            point_index[i] = (int)k;
        }
    fit.point_file = point_file;
    fit.point_index = point_index;
    GString *out = g_string_new(NULL);
    GPtrArray *warnings = g_ptr_array_new();
    ParamState freed[CLUSTER_N_PARAMS] = {PARAM_UNLISTED};
    g_string_append_printf(out, "# plansim calibrate: %s\n", base->name);
    if (fit.n_points > 0) {
        fit_collectives(&fit);
        report_collectives(out, warnings, &fit);
        for (int j = 0; j < fit.np; j++)
            freed[params[fit.idx[j]].param] = fit.moved[j] ? PARAM_FITTED : PARAM_KEPT;
    }
    if (gemm)
        freed[CLUSTER_PARAM_GEMM_EFFICIENCY] =
            fit_gemm(&fit.work.gpu, gemm, out, warnings) ? PARAM_FITTED : PARAM_KEPT;
    for (int f = 0; f < n_nccl; f++)
        nccl_residuals(out, warnings, &fit.work, nccl[f]);
    if (gemm)
        gemm_residuals(out, warnings, &fit.work.gpu, gemm);
    g_ptr_array_add(warnings, NULL);
    Calibration *c = g_new(Calibration, 1);
    c->cluster = cluster_spec_copy(&fit.work);
    calib_record(c->cluster, base, freed);
    c->report = g_string_free(out, FALSE);
    c->warnings = (char **)g_ptr_array_free(warnings, FALSE);
    return c;
}

void calib_free(Calibration *c)
{
    if (!c)
        return;
    cluster_spec_free(c->cluster);
    g_free(c->report);
    g_strfreev(c->warnings);
    g_free(c);
}
