/* run.c: the whole run's trials (run.h). */
#include "metrics/run.h"

#include <math.h>
#include <string.h>

#include "base/error.h"

/* ---- a trial's random stream ------------------------------------------ */

/* SplitMix64 (Steele, Lea and Flood 2014): a 64-bit state stepped by the
 * golden ratio and mixed; the stream of trial i starts from the mix of
 * (seed, i), so that trials are independent of the order they run in. */
static guint64 mix(guint64 z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct {
    guint64 state;
} Stream;

/* A uniform draw in [0, 1), 53 bits. */
static double uniform(Stream *s)
{
    s->state += 0x9e3779b97f4a7c15ull;
    return (double)(mix(s->state) >> 11) * 0x1.0p-53;
}

/* Time to the next failure at rate `rate`: exponential, infinite at 0. */
static double next_failure(Stream *s, double rate)
{
    double u = uniform(s);
    return rate > 0 ? -log1p(-u) / rate : INFINITY;
}

/* The kind of a failure: kind k with probability rate_k / total. */
static int failure_kind(Stream *s, const RunModel *m, double total)
{
    double u = uniform(s) * total;
    for (int k = 0; k < FAILURE_KINDS - 1; k++) {
        if (u < m->rate_per_s[k])
            return k;
        u -= m->rate_per_s[k];
    }
    return FAILURE_KINDS - 1;
}

double run_rate_per_s(const RunModel *m)
{
    double total = 0;
    for (int k = 0; k < FAILURE_KINDS; k++)
        total += m->rate_per_s[k];
    return total;
}

/* ---- a stretch: training from a durable checkpoint to a failure ------- */

/* The checkpoint schedule from a durable checkpoint with `rem` steps to
 * go, as cycles of training and a pause (run.h), times from the stretch's
 * start: n cycles, the first of `every` steps pausing pause_s, the middle
 * ones of `every` steps also waiting for the previous write, the last of
 * the steps left (n = 1: the first is the last). s_j, the end of cycle j,
 * and the pauses through it are linear in j but at the two ends. */
typedef struct {
    double n;
    double first, mid;             /* cycle lengths */
    double first_stall, mid_stall; /* their pauses (and waits) */
    double last_stall;             /* the last cycle's */
    double end;                    /* s_n */
    double stall_total;            /* pauses through cycle n */
    double write_s;
} Stretch;

static Stretch stretch_of(const RunModel *m, double every, double rem)
{
    Stretch s = {.n = ceil(rem / every), .write_s = m->write_s};
    double train = every * m->step_s, last = (rem - (s.n - 1) * every) * m->step_s;
    s.first_stall = m->pause_s;
    s.first = train + s.first_stall;
    s.mid_stall = MAX(0, m->write_s - train) + m->pause_s;
    s.mid = train + s.mid_stall;
    if (s.n == 1) {
        s.last_stall = m->pause_s;
        s.end = last + s.last_stall;
        s.stall_total = s.last_stall;
    } else {
        s.last_stall = MAX(0, m->write_s - last) + m->pause_s;
        s.end = s.first + (s.n - 2) * s.mid + last + s.last_stall;
        s.stall_total = s.first_stall + (s.n - 2) * s.mid_stall + s.last_stall;
    }
    return s;
}

/* s_j, the end of cycle j (0 .. n). */
static double cycle_end(const Stretch *s, double j)
{
    return j <= 0 ? 0 : j >= s->n ? s->end : s->first + (j - 1) * s->mid;
}

/* The pause of cycle j (1 .. n), and the pauses of cycles 1 .. j. */
static double stall_of(const Stretch *s, double j)
{
    return j >= s->n ? s->last_stall : j <= 1 ? s->first_stall : s->mid_stall;
}

static double stalls_through(const Stretch *s, double j)
{
    return j <= 0 ? 0 : j >= s->n ? s->stall_total : s->first_stall + (j - 1) * s->mid_stall;
}

/* The last j in 0 .. top with s_j + lag <= t: from the linear middle,
 * then mended by a step either way for rounding and for the ends. */
static double last_before(const Stretch *s, double t, double lag, double top)
{
    double j = t < s->first + lag ? 0 : 1 + floor((t - lag - s->first) / s->mid);
    j = CLAMP(j, 0, top);
    while (j > 0 && cycle_end(s, j) + lag > t)
        j--;
    while (j < top && cycle_end(s, j + 1) + lag <= t)
        j++;
    return j;
}

/* ---- a trial ---------------------------------------------------------- */

/* One trial into *t; FALSE when it passes `limit_s`, or when the
 * failures of all trials so far, *events, pass RUN_MAX_FAILURES. */
static gboolean trial(const RunModel *m, double every, int index, double limit_s, double *events,
                      RunTrial *t)
{
    Stream st = {mix(mix(m->seed) ^ (guint64)index)};
    double rate = run_rate_per_s(m), done = 0;
    memset(t, 0, sizeof *t);
    while (done < m->steps) {
        Stretch s = stretch_of(m, every, m->steps - done);
        double f = next_failure(&st, rate), end = s.end + s.write_s;
        if (f >= end) { /* the run ends */
            t->wall_s += end;
            t->save_s += s.stall_total + s.write_s;
            t->checkpoints += s.n;
            return TRUE;
        }
        double durable = last_before(&s, f, s.write_s, s.n - 1);
        double ended = last_before(&s, f, 0, s.n);
        double stalls = stalls_through(&s, ended);
        stalls += ended < s.n ? MAX(0, f - (cycle_end(&s, ended + 1) - stall_of(&s, ended + 1)))
                              : f - s.end;
        double kept = MIN(durable * every, m->steps - done);
        t->checkpoints += durable;
        t->save_s += stalls;
        t->lost_s += f - kept * m->step_s - stalls;
        t->wall_s += f;
        done += kept;
        double g;
        do { /* the failure, then the restart, begun anew by each failure during it */
            t->failures[failure_kind(&st, m, rate)]++;
            if (t->wall_s > limit_s || ++*events > RUN_MAX_FAILURES)
                return FALSE;
            g = next_failure(&st, rate); /* MIN would draw it twice */
            g = MIN(g, m->restart_s);
            t->restart_s += g;
            t->wall_s += g;
        } while (g < m->restart_s);
    }
    return TRUE;
}

/* ---- the trials' statistics --------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The P10, P50 and P90 of n values, sorting them. */
static RunSpread spread(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    double p[3], q[] = {0.1, 0.5, 0.9};
    for (int i = 0; i < 3; i++) {
        double at = q[i] * (n - 1);
        int lo = (int)floor(at), hi = MIN(lo + 1, n - 1);
        p[i] = v[lo] + (at - lo) * (v[hi] - v[lo]);
    }
    return (RunSpread){.p10 = p[0], .p50 = p[1], .p90 = p[2]};
}

/* The mean and standard deviation of n values. */
static void moments(const double *v, int n, double *mean, double *sd)
{
    double sum = 0, squares = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    *mean = sum / n;
    for (int i = 0; i < n; i++)
        squares += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(squares / (n - 1)) : 0;
}

gboolean run_trials(const RunModel *m, double every, RunStats *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->every = every;
    double clean = stretch_of(m, every, m->steps).end + m->write_s; /* without failures */
    /* a trial's failures, about: a run too long for one trial is the
     * tokens' fault, too many trials of a fine one the trials' */
    double expected = run_rate_per_s(m) * clean;
    if (expected > RUN_MAX_FAILURES) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--tokens: expected a run that sees at most %g failures, got %.4g steps "
                    "(%.4g days without failures) that see about %.4g",
                    RUN_MAX_FAILURES, m->steps, clean / 86400, expected);
        return FALSE;
    }
    g_autofree double *wall = g_new(double, m->trials);
    g_autofree double *ettr = g_new(double, m->trials);
    RunTrial *mean = &out->mean;
    double events = 0;
    for (int i = 0; i < m->trials; i++) {
        RunTrial t;
        if (!trial(m, every, i, RUN_MAX_SLOWDOWN * clean, &events, &t)) {
            if (events > RUN_MAX_FAILURES)
                g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                            "--trials: expected trials that see at most %g failures in all, got "
                            "%d trials of about %.4g failures each (fewer trials)",
                            RUN_MAX_FAILURES, m->trials, events / (i + 1));
            else
                g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                            "run: expected failures rare enough for the run to end, got one "
                            "every %.4g s against restarts of %.4g s and %.4g s between "
                            "checkpoints: a run passes %g times its failure-free time",
                            1 / run_rate_per_s(m), m->restart_s, every * m->step_s,
                            RUN_MAX_SLOWDOWN);
            return FALSE;
        }
        wall[i] = t.wall_s;
        ettr[i] = m->steps * m->step_s / t.wall_s;
        mean->wall_s += t.wall_s / m->trials;
        mean->save_s += t.save_s / m->trials;
        mean->lost_s += t.lost_s / m->trials;
        mean->restart_s += t.restart_s / m->trials;
        mean->checkpoints += t.checkpoints / m->trials;
        for (int k = 0; k < FAILURE_KINDS; k++)
            mean->failures[k] += t.failures[k] / m->trials;
    }
    double unused;
    moments(wall, m->trials, &unused, &out->wall_sd);
    moments(ettr, m->trials, &out->ettr_mean, &out->ettr_sd);
    out->wall_s = spread(wall, m->trials);
    out->ettr = spread(ettr, m->trials);
    return TRUE;
}

/* ---- the best interval -------------------------------------------------- */

/* The mean wall-clock time of checkpoints every round(e^x) steps, kept in
 * *best when it is the least so far (the fewer steps on a tie). */
typedef struct {
    const RunModel *m;
    double best_every, best_wall;
    GError **error;
    gboolean failed;
} Search;

static double wall_at(Search *s, double x)
{
    double every = CLAMP(round(exp(x)), 1, s->m->steps);
    RunStats stats;
    if (s->failed || !run_trials(s->m, every, &stats, s->error)) {
        s->failed = TRUE;
        return INFINITY;
    }
    double w = stats.mean.wall_s;
    if (w < s->best_wall || (w == s->best_wall && every < s->best_every)) {
        s->best_wall = w;
        s->best_every = every;
    }
    return w;
}

/* The search's span around Young's interval, each way, and its end: the
 * bracket's width in log steps. Its trials see SEARCH_FAILURES failures
 * in all, with at most SEARCH_MAX_TRIALS trials (and at least the
 * model's): the means it compares are of the work lost to failures, whose
 * noise shrinks with their number, not the trials'; a run that fails less
 * than once in 2 trials is searched on fewer failures, and costs the
 * sweeps that rank by it a few milliseconds a plan. */
#define SEARCH_SPAN       64.0
#define SEARCH_WIDTH      0.01
#define SEARCH_FAILURES   2000.0
#define SEARCH_MAX_TRIALS 4000.0

gboolean run_best_interval(const RunModel *given, double *every, GError **error)
{
    RunModel searched = *given, *m = &searched;
    double rate = run_rate_per_s(m), per_trial = rate * m->steps * m->step_s;
    if (per_trial > 0)
        m->trials = (int)MAX(MIN(ceil(SEARCH_FAILURES / per_trial), SEARCH_MAX_TRIALS), m->trials);
    double young = rate > 0 ? run_young_s(m->pause_s, 1 / rate) / m->step_s : m->steps;
    young = CLAMP(young, 1, m->steps);
    double lo = log(MAX(1, young / SEARCH_SPAN)), hi = log(MIN(m->steps, young * SEARCH_SPAN));
    Search s = {.m = m, .best_every = young, .best_wall = INFINITY, .error = error};
    const double phi = (sqrt(5) - 1) / 2;
    double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
    double wa = wall_at(&s, a), wb = wall_at(&s, b);
    while (hi - lo > SEARCH_WIDTH && !s.failed) {
        if (wa <= wb) {
            hi = b, b = a, wb = wa;
            a = hi - phi * (hi - lo);
            wa = wall_at(&s, a);
        } else {
            lo = a, a = b, wa = wb;
            b = lo + phi * (hi - lo);
            wb = wall_at(&s, b);
        }
    }
    wall_at(&s, log(young));
    *every = s.best_every;
    return !s.failed;
}

/* ---- closed forms ------------------------------------------------------- */

double run_young_s(double c_s, double mtbf_s)
{
    return sqrt(2 * c_s * mtbf_s);
}

double run_daly_s(double c_s, double r_s, double mtbf_s)
{
    return sqrt(2 * c_s * (r_s + mtbf_s));
}

double run_saxena_s(double c_s, double r_s, double mtbf_s)
{
    return c_s + sqrt(2 * (mtbf_s + r_s) * c_s + c_s * c_s);
}
