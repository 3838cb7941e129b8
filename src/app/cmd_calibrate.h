/* cmd_calibrate.h: plansim calibrate, a cluster fitted to measurements. */
#ifndef PLANSIM_APP_CMD_CALIBRATE_H
#define PLANSIM_APP_CMD_CALIBRATE_H

/* Runs `plansim calibrate` on argv (argv[0] "calibrate", then --cluster,
 * --nccl-tests (repeatable), --gemm, --runs, --fit, -o, which it needs):
 * the cluster fitted to nccl-tests output and GEMM timings
 * (app/calibrate.h), or its GPU's parameters to measured runs
 * (app/calibruns.h; --runs alone), written to -o whole or not at all; the
 * fit's report on stdout (stderr with -o -) and its warnings on stderr.
 * Returns the exit status (app/command.h). */
int cmd_calibrate(int argc, char **argv);

#endif
