/* run.h: a whole training run, not one step: failures, checkpoints and
 * restarts over its wall-clock time, simulated trial by trial
 * (docs/model.md, "A whole run").
 *
 * The run trains `steps` steps of step_s seconds. Every `every` steps,
 * and after the last, it checkpoints: training pauses pause_s (a
 * synchronous save's write, or an asynchronous save's snapshot to host
 * memory), and the checkpoint becomes durable write_s after the pause
 * ends (an asynchronous save's background write; 0 for a synchronous
 * one). An asynchronous save waits, before its snapshot, for the previous
 * write to end. The run ends when its last checkpoint is durable.
 *
 * Failures of each kind arrive as a Poisson process of rate_per_s[k]
 * over the whole wall-clock time; any one stops the job (a step needs
 * every GPU), which then takes restart_s (detection, relaunch, loading
 * the checkpoint, warm-up) to train again from its last durable
 * checkpoint. A failure during a restart begins the restart anew.
 *
 * A trial draws its failures from a random stream of its own, seeded by
 * (seed, trial), so the same seed gives the same trials in any order or
 * thread. Its events are the failures and the restarts' ends; between
 * two, the checkpoints fall where the periodic schedule puts them, found
 * by arithmetic rather than one by one (the schedule is fixed and the
 * failures memoryless), so a trial costs O(failures), whatever its
 * steps. Each trial's wall-clock time splits exactly into the training
 * that lasted (steps x step_s), checkpoint pauses (and waits on writes),
 * work lost to failures (trained after the last durable checkpoint,
 * pauses apart) and restarts. */
#ifndef PLANSIM_METRICS_RUN_H
#define PLANSIM_METRICS_RUN_H

#include <glib.h>

#include "spec/cluster.h"

typedef struct {
    double step_s;                    /* a failure-free step, > 0 */
    double steps;                     /* to train, >= 1 */
    double rate_per_s[FAILURE_KINDS]; /* the job's failures of each kind, all its nodes */
    double restart_s;                 /* from a failure to training again */
    double pause_s;                   /* training stops for each checkpoint */
    double write_s;                   /* after it, until durable: 0 when synchronous */
    int trials;                       /* >= 1 */
    guint64 seed;
} RunModel;

/* One trial's times (seconds) and counts, or their means over trials. */
typedef struct {
    double wall_s;    /* from the first step to the last checkpoint durable */
    double save_s;    /* training paused for checkpoints */
    double lost_s;    /* work done again after failures */
    double restart_s; /* restarting */
    double failures[FAILURE_KINDS];
    double checkpoints; /* made durable */
} RunTrial;

/* The P10, P50 and P90 of a figure over the trials (linear interpolation
 * between order statistics, numpy's default). */
typedef struct {
    double p10, p50, p90;
} RunSpread;

typedef struct {
    double every;     /* steps between checkpoints */
    RunTrial mean;    /* over the trials */
    RunSpread wall_s; /* over the trials */
    RunSpread ettr;   /* the share of wall-clock time that advanced training */
    double ettr_mean; /* the mean of the trials' shares */
    double ettr_sd;   /* their standard deviation */
    double wall_sd;   /* of wall_s */
} RunStats;

/* A trial stops, and the run fails, past this many times its
 * failure-free length (its steps, pauses and waits on writes): the
 * failures outpace the restarts and the run would not end. And a run
 * whose trials see more than RUN_MAX_FAILURES failures in all fails (a
 * bound on the work, about a second, whatever the rates): fewer trials
 * would do. */
#define RUN_MAX_SLOWDOWN 100.0
#define RUN_MAX_FAILURES 1e7

/* The job's failure rate, all kinds. */
double run_rate_per_s(const RunModel *m);

/* Simulates m->trials trials checkpointing every `every` steps (1 ..
 * steps) into *out. Fails (PS_ERROR_INPUT) when a trial passes
 * RUN_MAX_SLOWDOWN or the trials RUN_MAX_FAILURES, naming the failure
 * rate and the restart. */
gboolean run_trials(const RunModel *m, double every, RunStats *out, GError **error);

/* The interval, in steps, of the least mean wall-clock time, searched by
 * golden section on its logarithm around Young's interval, over enough
 * trials to see 2,000 failures (at most 4,000 trials, at least
 * m->trials), drawn alike for every interval so that their means compare
 * without their noise. Fails as run_trials. */
gboolean run_best_interval(const RunModel *m, double *every, GError **error);

/* The closed forms of the optimal interval, in seconds, for a checkpoint
 * of cost c_s, restarts of r_s and a mean time between failures mtbf_s:
 * Young 1974, sqrt(2 c M); Daly 2006's first-order form with the
 * restart, sqrt(2 c (R + M)); Saxena et al. 2024's availability optimum,
 * c + sqrt(2 (M + R) c + c^2). */
double run_young_s(double c_s, double mtbf_s);
double run_daly_s(double c_s, double r_s, double mtbf_s);
double run_saxena_s(double c_s, double r_s, double mtbf_s);

#endif
