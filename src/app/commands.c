/* commands.c: the table of commands and the dispatch to one
 * (commands.h). Commands:
 *   plansim simulate   [inputs] [--format text|json|csv] [-o FILE] [--trace FILE]
 *   plansim run        [inputs] --tokens N [--trials N] [--checkpoint-every WHEN] [--seed S]
 *                      [--format text|json|csv] [-o FILE]
 *   plansim sweep      [inputs] [--grid FILE] [-j N] [--shard K/N] [--top K] [--exhaustive]
 *                      [-o FILE] [--format csv|json]
 *   plansim collective [--op OP] [--ranks N] [--cluster FILE] [sizes] [-o FILE]
 *   plansim calibrate  [--cluster FILE] [--nccl-tests FILE]... [--gemm FILE] -o FILE
 * where inputs are --model, --cluster, --plan (files or shipped names), --nodes,
 * --seq-length and the plan flags.
 * Bad input prints one line "plansim: ..." on stderr and exits with 2; a
 * failure to write the output exits with 1; no plan that fits (a sweep's,
 * a run's) with 3; a sweep stopped by SIGINT
 * (Ctrl-C) with 130, by SIGTERM with 143 (128 + the signal's number). An
 * unknown command, or none, is bad input too. */
#include <stdio.h>
#include <string.h>

#include "app/commands.h"
#include "app/cmd_calibrate.h"
#include "app/cmd_collective.h"
#include "app/cmd_run.h"
#include "app/cmd_simulate.h"
#include "app/cmd_sweep.h"
#include "app/command.h"
#include "base/error.h"
#include "base/text.h"

/* Each command: its name, its function (on the arguments from its name
 * on; returns the exit status) and its line in plansim --help. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {.name = "simulate", .run = cmd_simulate, .help = "simulate one step"},
    {.name = "run", .run = cmd_run, .help = "a whole training run with failures and checkpoints"},
    {.name = "sweep",
     .run = cmd_sweep,
     .help = "find the best plans of a grid, ranked (across clusters too)"},
    {.name = "collective",
     .run = cmd_collective,
     .help = "time one collective at many sizes, like nccl-tests"},
    {.name = "calibrate",
     .run = cmd_calibrate,
     .help = "fit a cluster to nccl-tests output and GEMM timings"},
};

static void usage(FILE *to)
{
    fprintf(to, "usage: plansim COMMAND [OPTIONS]\n"
                "\n"
                "Simulates a training step of a transformer on a GPU cluster under a\n"
                "parallelism plan.\n"
                "\n"
                "commands (plansim COMMAND --help for options):\n");
    for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(to, "  %-11s%s\n", commands[i].name, commands[i].help);
    fprintf(to, "  --version  print the version\n");
}

/* Runs the command argv[0] names; -1 if none has that name. */
static int dispatch(int argc, char **argv)
{
    for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(argv[0], commands[i].name) == 0)
            return commands[i].run(argc, argv);
    return -1;
}

/* The unknown command `name`'s error line; returns its exit status. */
static int unknown(const char *name)
{
    g_autofree char *got = ps_error_quote(name);
    g_autofree char *line = ps_error_escape(got);
    text_err("plansim: unknown command %s (try plansim --help)\n", line);
    return 2;
}

int commands_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    int status = dispatch(argc - 1, argv + 1);
    if (status >= 0)
        return status;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("plansim %s\n", PACKAGE_VERSION);
        return 0;
    }
    return unknown(argv[1]);
}

int commands_run_captured(int argc, char **argv, volatile gint *stop, GString *out, GString *err)
{
    text_capture_start(out, err);
    command_interrupts_take(stop);
    int status = argc > 0 ? dispatch(argc, argv) : -1;
    if (status < 0)
        status = unknown(argc > 0 ? argv[0] : "");
    command_interrupts_take(NULL);
    text_capture_stop();
    return status;
}
