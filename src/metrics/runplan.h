/* runplan.h: a plan's whole training run (metrics/run.h) from its
 * replayed step, its checkpoint (metrics/checkpoint.h) and its cluster's
 * reliability, for `plansim run` and sweeps ranked by run time.
 *
 * The job holds ceil(GPUs / gpus_per_node) nodes, each failing at the
 * cluster's rates; a restart takes detect_s + restart_s (+ replace_s
 * without hot spares) + the checkpoint's load + warmup_steps steps. A
 * synchronous save pauses training for its write; an asynchronous one
 * for its snapshot, then writes in the background. */
#ifndef PLANSIM_METRICS_RUNPLAN_H
#define PLANSIM_METRICS_RUNPLAN_H

#include "metrics/checkpoint.h"
#include "metrics/run.h"
#include "strategy/step.h"

/* Trials when not told: P10 and P90 from 100 runs. */
#define RUNPLAN_TRIALS 100

/* What the user chose: the trials, the seed, the checkpoint interval (in
 * steps, or in seconds rounded to whole steps; neither: the best one
 * simulated), synchronous or asynchronous saves, and the reliability's
 * overrides (< 0: the cluster's). */
typedef struct {
    int trials;
    guint64 seed;
    double every_steps, every_s;
    gboolean async;
    double failures_per_1000_node_days; /* all kinds, in the cluster's shares */
    double restart_s;                   /* detection and relaunch, replacing both */
    int hot_spares;                     /* 0 or 1 */
} RunChoice;

/* A RunChoice of the defaults: RUNPLAN_TRIALS, seed 1, the best interval,
 * synchronous, the cluster's reliability. */
void runplan_choice_init(RunChoice *c);

/* Parses --checkpoint-every: "auto", a whole number of steps ("500"), or
 * a time with a unit s, min or h ("30min"). */
gboolean runplan_parse_every(const char *text, RunChoice *c, GError **error);

/* Whether the choice can run on the cluster: an asynchronous save needs
 * the GPU's pcie_GBps. Fails (PS_ERROR_INPUT) naming the key. */
gboolean runplan_check(const ClusterSpec *cluster, const RunChoice *choice, GError **error);

typedef struct {
    int gpus, nodes;
    double tokens, step_s;
    Checkpoint checkpoint;
    RunModel model;
    RunStats stats;                   /* at the chosen interval */
    double best_every;                /* the simulated optimum, steps */
    double best_wall_s;               /* its mean wall-clock time */
    double mtbf_s;                    /* the job's mean time between failures */
    double young_s, daly_s, saxena_s; /* closed-form intervals (run.h) */
    double expected_failures;         /* the rate times the mean wall-clock time */
} RunPlan;

/* The run of `tokens` tokens of `step` taking step_s a step. `best`: also search the best interval
 * (always when the choice gives none). Fails (PS_ERROR_INPUT) on an asynchronous save without the
 * GPU's pcie_GBps, or a run that would not end. */
gboolean runplan_compute(const Step *step, double step_s, double tokens, const RunChoice *choice,
                         gboolean best, RunPlan *out, GError **error);

#endif
