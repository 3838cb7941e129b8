/* cmd_sweep.h: plansim sweep, the best plans of a space and its text report. */
#ifndef PLANSIM_APP_CMD_SWEEP_H
#define PLANSIM_APP_CMD_SWEEP_H

/* Runs `plansim sweep` on argv (argv[0] "sweep", then its options: the
 * inputs, --nodes a list of sizes among them; --gpus, --grid, -j, --shard,
 * --top, --tokens, --gpu-hour-price, --rank-by, --exhaustive, --max-plans,
 * -o and the run's flags for --rank-by run-time). Writes a CSV row for each
 * plan to -o, whole or not at all; the --top table (the best plans that
 * fit, each once with its twins, then the command that simulates the best
 * and what each axis bought it) on stdout; then on stderr the space walked,
 * the count of each status and the reasons of the invalid plans, and with
 * -o - the table after them. SIGINT or SIGTERM stops it with nothing
 * written. Returns the exit status (app/command.h). */
int cmd_sweep(int argc, char **argv);

#endif
