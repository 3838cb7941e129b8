/* cmd_run.h: plansim run, a whole training run with failures and checkpoints. */
#ifndef PLANSIM_APP_CMD_RUN_H
#define PLANSIM_APP_CMD_RUN_H

/* Runs `plansim run` on argv (argv[0] "run", then its options: the
 * inputs, --format, -o, --tokens, which it needs, --gpu-hour-price and
 * the run's flags, COMMAND_RUN_ENTRIES). Replays one step, then simulates
 * the run's trials from it (metrics/runplan.h) and writes the run's report
 * to -o or stdout, whole or not at all; warns on stderr of a plan that does
 * not fit, which it still runs. Returns the exit status (app/command.h). */
int cmd_run(int argc, char **argv);

#endif
