/* cmd_collective.h: plansim collective, an nccl-tests table from the simulated network. */
#ifndef PLANSIM_APP_CMD_COLLECTIVE_H
#define PLANSIM_APP_CMD_COLLECTIVE_H

/* Runs `plansim collective` on argv (argv[0] "collective", then --op,
 * --ranks, --cluster, --nodes, --min-bytes, --max-bytes, --algorithm,
 * --format, -o): one collective timed at sizes doubling from the least to
 * the most (app/collbench.h), the table written to -o or stdout, whole or
 * not at all. Returns the exit status (app/command.h). */
int cmd_collective(int argc, char **argv);

#endif
