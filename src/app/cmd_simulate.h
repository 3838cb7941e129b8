/* cmd_simulate.h: plansim simulate, the report of one training step. */
#ifndef PLANSIM_APP_CMD_SIMULATE_H
#define PLANSIM_APP_CMD_SIMULATE_H

/* Runs `plansim simulate` on argv (argv[0] "simulate", then its
 * options: the inputs, cli_inputs_entries; --format, -o, --trace,
 * --trace-ranks, --no-advice, --tokens, --gpu-hour-price, --breakdown,
 * --explain). Writes the report (the breakdown with --breakdown, the
 * diagnosis in prose after it with --explain) to -o or stdout and the
 * trace, each whole or not at all (a trace written goes when the report
 * cannot be), and warns on stderr of flags that change nothing
 * (command_warn_plan). Returns the exit status (app/command.h). */
int cmd_simulate(int argc, char **argv);

#endif
