/* plansim.h: libplansim, plansim's commands as a C library (docs/api.md).
 *
 * Each call runs one command of the plansim program (simulate, sweep, run,
 * collective) on a request, and returns what the program would print and
 * the exit status it would end with. The library is the program: the
 * plansim command line is a user of this header like any other
 * (plansim_main), so the two always agree.
 *
 * The request is JSON text: an object whose members are the command's
 * flags, named without their "--" ("model", "tp", "micro-batch-size";
 * "_" may stand for "-": "micro_batch_size"), in the order the command
 * line would give them:
 *   a string or a number   the flag's value, as on the command line
 *                          ("nodes": 4 is --nodes=4, "tokens": "2T");
 *   true                   the flag alone (--sequence-parallel,
 *                          --exhaustive);
 *   false                  --FLAG=false for a plan's boolean field (the
 *                          plan file's value overridden), else nothing;
 *   null                   nothing: the default;
 *   a list                 its values joined by commas ("tp": [2, 4] is
 *                          --tp=2,4: a sweep's axis; "cluster": [...]).
 * NULL or "" is {}: the command's defaults. A flag the command lacks, a
 * value it refuses, a member that is an object, and text that is not a
 * JSON object are bad input. --help is refused (it would print and exit).
 *
 * The output (*output, never NULL on return) is the command's standard
 * output for that request with `--format json` put before the request's
 * flags and `-o -` after them:
 *   simulate, run   the report, as `plansim simulate --format json`
 *                   prints it (a "format" member chooses text or csv);
 *   collective      the table as JSON;
 *   sweep           the ranked plans that fit, as a JSON list of objects,
 *                   one a plan, the best first, the columns of the
 *                   sweep's CSV as keys (`plansim sweep -o - --format
 *                   json`); empty when no plan fits.
 * *log (never NULL on return) is what the program would write to standard
 * error: warnings, notes, a sweep's summary and its table of the best;
 * when the status is not 0 its last line is the error, "plansim: ...", as
 * the program prints it. Free both with plansim_free.
 *
 * The return value is the program's exit status: PLANSIM_OK,
 * PLANSIM_IO (a file the request names could not be written),
 * PLANSIM_BAD_INPUT, PLANSIM_NO_FIT (no plan fits: sweep, run) or
 * PLANSIM_CANCELLED (plansim_cancel).
 *
 * Threads: calls may run at once on any threads; each works on the
 * calling thread (a sweep also on a pool of its own, --threads) and
 * shares no mutable state with another. No call installs a signal
 * handler, writes to the process's standard output or error, or reads
 * the terminal. Files a request names (--html, --trace, a grid) are read
 * and written as the program would. */
#ifndef PLANSIM_H
#define PLANSIM_H

#ifdef __cplusplus
extern "C" {
#endif

/* The exit statuses. */
enum {
    PLANSIM_OK = 0,
    PLANSIM_IO = 1,
    PLANSIM_BAD_INPUT = 2,
    PLANSIM_NO_FIT = 3,
    PLANSIM_CANCELLED = 130, /* as the program stopped by SIGINT */
};

/* The library's version, "0.1.0": the program's (plansim --version). */
const char *plansim_version(void);

/* A cancellation token: one sweep may be cancelled through it from
 * another thread. */
typedef struct plansim_cancel plansim_cancel;

/* A new token, not cancelled; NULL if out of memory. */
plansim_cancel *plansim_cancel_new(void);

/* Cancels the sweep running with `token` (or the next to start with it):
 * it stops soon, writes nothing and returns PLANSIM_CANCELLED. Safe from
 * any thread, a signal handler included. */
void plansim_cancel_request(plansim_cancel *token);

/* Frees `token`; no call may still be using it. NULL is a no-op. */
void plansim_cancel_free(plansim_cancel *token);

/* The commands (see above). *output and *log are set on every return. */
int plansim_simulate(const char *request, char **output, char **log);
int plansim_run(const char *request, char **output, char **log);
int plansim_collective(const char *request, char **output, char **log);
/* `cancel`: NULL, or a token another thread may cancel the sweep with. */
int plansim_sweep(const char *request, plansim_cancel *cancel, char **output, char **log);

/* Frees what a call returned. NULL is a no-op. */
void plansim_free(char *text);

/* The plansim program: argv as main takes it (argv[1] the command),
 * printing to standard output and error, Ctrl-C stopping a sweep; returns
 * the exit status. For the command line, not for a process with threads
 * of its own (it catches SIGINT and SIGTERM while a sweep runs). */
int plansim_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
