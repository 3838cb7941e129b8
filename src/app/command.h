/* command.h: what the commands of the command line (app/cmd_*.c) share:
 * the runner that parses a command's options and turns its error into the
 * exit status, the interrupt flag a sweep stops on, the flags of the
 * training totals and of a whole run, and the warnings on a plan that ran.
 *
 * Only the commands print and exit. An error prints as one line
 * "plansim: ..." on stderr, whatever the input held (ps_error_escape), and
 * picks the exit status (COMMAND_EXIT_STATUSES, every command's --help): a
 * failure to write the output (PS_ERROR_IO) 1, no plan that fits
 * (PS_ERROR_NO_FIT: a sweep's, a run's) 3, a command stopped by SIGINT or
 * SIGTERM (PS_ERROR_INTERRUPTED) 128 + the signal's number, any other (bad
 * input) 2. */
#ifndef PLANSIM_APP_COMMAND_H
#define PLANSIM_APP_COMMAND_H

#include <glib.h>

#include "app/cli.h"
#include "metrics/runplan.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"

/* Parses a command's options (`in`, if not NULL: the shared inputs,
 * cli_inputs_entries; then `entries`, ended by an entry of no long name)
 * with `summary` after the command's name in --help, then runs `body` on
 * `args`. Frees the strings of `entries`' G_OPTION_ARG_FILENAME options
 * and clears `in`; returns the exit status. */
/* The exit statuses, as every command's --help ends. */
#define COMMAND_EXIT_STATUSES                                                                      \
    "Exit status: 0 done; 1 the output could not be written; 2 bad input; 3 no plan fits its\n"   \
    "GPUs' memory (sweep, run); 130 or 143 stopped by SIGINT or SIGTERM."

int command_main(int argc, char **argv, const char *summary, GOptionEntry *entries, CliInputs *in,
                 gboolean (*body)(void *args, GError **error), void *args);

/* Catches SIGINT and SIGTERM until command_interrupts_release; returns the
 * flag they set to the signal's number (a sweep's stop, SweepSpec.stop).
 * A body that then fails with PS_ERROR_INTERRUPTED exits with 128 + that
 * number. */
volatile gint *command_interrupts_catch(void);

/* SIGINT and SIGTERM end the program again. */
void command_interrupts_release(void);

/* Makes `stop` the calling thread's interrupt flag (NULL: the signals'
 * again): command_interrupts_catch returns it and catches no signal, and
 * the exit status of a command it stopped is 128 + its value. The
 * library's cancellation (plansim.h), one flag per call. */
void command_interrupts_take(volatile gint *stop);

/* --tokens and --gpu-hour-price (simulate, run, sweep) as given: the
 * training run's totals. */
typedef struct {
    char *tokens, *price;
} CommandTraining;

/* CommandTraining `t`'s two option entries, for an entries array. */
/* clang-format off */
#define COMMAND_TRAINING_ENTRIES(t)                                                                \
    {"tokens", 0, 0, G_OPTION_ARG_FILENAME, &(t).tokens,                                           \
     "tokens to train on, for the run's steps, days and GPU-hours (2T = 2e12)", "N"},              \
    {"gpu-hour-price", 0, 0, G_OPTION_ARG_FILENAME, &(t).price,                                    \
     "price of a GPU-hour (default: the cluster's gpu_hour_price), for the run's cost (needs --tokens; sweep: one per --cluster, for a step's cost too)", "P"}
/* clang-format on */

/* The flags' tokens (0 when absent) and price (absent: `cluster`'s
 * gpu_hour_price, if a cluster is given, else 0); fails on a price flag
 * without tokens. */
gboolean command_parse_training(const CommandTraining *t, const ClusterSpec *cluster,
                                double *tokens, double *price, GError **error);

/* A whole run's flags (run, and sweep --rank-by run-time) as given. */
typedef struct {
    char *trials, *every, *failure_rate, *restart, *hot_spares;
    gboolean async;
} CommandRunFlags;

/* CommandRunFlags `r`'s option entries, for an entries array. */
/* clang-format off */
#define COMMAND_RUN_ENTRIES(r)                                                                     \
    {"trials", 0, 0, G_OPTION_ARG_FILENAME, &(r).trials,                                           \
     "runs simulated, for the P10, P50 and P90 (default 100)", "N"},                               \
    {"checkpoint-every", 0, 0, G_OPTION_ARG_FILENAME, &(r).every,                                  \
     "auto (default: the best simulated), steps (500) or a time (30min, 2h)", "WHEN"},             \
    {"async-save", 0, 0, G_OPTION_ARG_NONE, &(r).async,                                            \
     "checkpoint asynchronously: pause for a snapshot to host memory, write behind", NULL},        \
    {"failure-rate", 0, 0, G_OPTION_ARG_FILENAME, &(r).failure_rate,                               \
     "failures per 1,000 node-days, all kinds (default: the cluster's)", "R"},                     \
    {"restart", 0, 0, G_OPTION_ARG_FILENAME, &(r).restart,                                         \
     "seconds from a failure to relaunched, before loading (default: the cluster's)", "S"},        \
    {"hot-spares", 0, 0, G_OPTION_ARG_FILENAME, &(r).hot_spares,                                   \
     "yes or no: a spare node replaces a failed one at once (default: the cluster's)", "YES|NO"}
/* clang-format on */

/* The run's choices from its flags `r` and `in`'s --seed. */
gboolean command_parse_run(const CliInputs *in, const CommandRunFlags *r, RunChoice *c,
                           GError **error);

/* --print STYLE (simulate, run): the resolved plan as Megatron-LM
 * arguments or Megatron-Bridge overrides (spec/megatron.h) instead of
 * the report, written whole to `output` (NULL: standard output); what of
 * the plan they cannot say is a note on stderr. */
#define COMMAND_PRINT_ENTRY(field)                                                                 \
    {                                                                                              \
        "print", 0, 0, G_OPTION_ARG_FILENAME, &(field),                                            \
            "instead of the report, the plan as megatron (Megatron-LM arguments) or "              \
            "megatron-bridge "                                                                     \
            "(Megatron-Bridge recipe overrides)",                                                  \
            "STYLE"                                                                                \
    }

/* The style --print gives into *style (-1 when absent); refuses an
 * unknown one, and --trace beside it (nothing is replayed). */
gboolean command_parse_print(const char *print, const char *trace, int *style, GError **error);

/* Writes `plan` on `model` in `style` to `output` (NULL: stdout). */
gboolean command_print_plan(int style, const PlanSpec *plan, const ModelSpec *model,
                            const char *output, GError **error);

/* Warns on stderr, for a plan that ran (simulate, run), of each plan flag
 * given that changes nothing in it (its value differs from the one the
 * plan runs as, strategy_normalize: --cp-algorithm with cp 1, the experts'
 * flags on a dense model), of GPUs of the cluster it leaves idle, and of a
 * step that is all latency. */
void command_warn_plan(const CliInputs *in, const PlanSpec *plan, const ModelSpec *model,
                       const ClusterSpec *cluster);

#endif
