/* fuzz_cli.c: a libFuzzer target over the command line of `plansim
 * simulate`, from its arguments to a resolved plan, through the parser
 * the commands use (app/cli.h).
 *
 * The input is the arguments after "simulate", each ended by a NUL byte
 * or by the input's end: NUL is the one byte an argument cannot hold, so
 * every input is a command line and every command line an input, empty
 * arguments and newlines inside one included. argv[0] is "simulate". The
 * options are simulate's: cli_inputs_entries' (the inputs, every plan
 * flag, the what-ifs) and simulate's own, of which those a library
 * function reads are read (--format, -o, --trace, --trace-ranks, --tokens
 * and --gpu-hour-price) and the report's switches (--no-advice,
 * --breakdown, --explain) only parsed.
 * Then, in simulate's order: cli_parse, --format, cli_inputs_load (shipped
 * names through the current folder, the installed one and the source tree,
 * --nodes, --seq-length, the plan flags), --trace-ranks, strategy_resolve,
 * the what-ifs (cli_inputs_whatif, whatif_check on the plan's GPUs), and
 * the training totals' flags. Nothing is simulated and nothing is written:
 * -o and --trace are only checked against the inputs (cli_check_outputs,
 * in cli_inputs_load), as simulate checks them before it runs. GLib's
 * --help options are off, since they print and exit.
 *
 * Everything is freed, so that a leak is a finding, as a crash or a
 * sanitizer report is; so is an error that is not bad input
 * (fuzz_check_error: cli_parse reports GLib's own, a missing value, as
 * bad input too). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#include "app/cli.h"
#include "app/whatif.h"
#include "metrics/training.h"
#include "output/report.h"
#include "strategy/strategy.h"
#include "base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* simulate's own options: those a library function reads, and the
 * report's switches, parsed only */
typedef struct {
    char *format, *output, *trace, *trace_ranks, *tokens, *price;
    gboolean no_advice, breakdown, explain;
} SimulateFlags;

/* The input as argv: "simulate" and the NUL-ended arguments, newly
 * allocated (g_strfreev), their number in *argc. */
static char **split_args(const uint8_t *data, size_t size, int *argc)
{
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, g_strdup("simulate"));
    for (size_t at = 0; at < size;) {
        const uint8_t *nul = memchr(data + at, 0, size - at);
        size_t len = nul ? (size_t)(nul - (data + at)) : size - at;
        g_ptr_array_add(args, g_strndup((const char *)data + at, len));
        at += len + 1;
    }
    *argc = (int)args->len;
    g_ptr_array_add(args, NULL);
    return (char **)g_ptr_array_free(args, FALSE);
}

static GOptionContext *options(CliInputs *in, SimulateFlags *f)
{
    GOptionEntry entries[] = {
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &f->format, "text, json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &f->output, "checked, never written", "FILE"},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &f->trace, "checked, never written", "FILE"},
        {"trace-ranks", 0, 0, G_OPTION_ARG_FILENAME, &f->trace_ranks, "all or stages", "WHICH"},
        {"tokens", 0, 0, G_OPTION_ARG_FILENAME, &f->tokens, "tokens to train on", "N"},
        {"gpu-hour-price", 0, 0, G_OPTION_ARG_FILENAME, &f->price, "price of a GPU-hour", "P"},
        {"no-advice", 0, 0, G_OPTION_ARG_NONE, &f->no_advice, "parsed only", NULL},
        {"breakdown", 0, 0, G_OPTION_ARG_NONE, &f->breakdown, "parsed only", NULL},
        {"explain", 0, 0, G_OPTION_ARG_NONE, &f->explain, "parsed only", NULL},
        {NULL},
    };
    GOptionContext *ctx = g_option_context_new("- the fuzzed command line");
    g_option_context_set_help_enabled(ctx, FALSE);
    cli_inputs_entries(in, ctx);
    g_option_context_add_main_entries(ctx, entries, NULL);
    return ctx;
}

static void simulate_flags_clear(SimulateFlags *f)
{
    g_free(f->format);
    g_free(f->output);
    g_free(f->trace);
    g_free(f->trace_ranks);
    g_free(f->tokens);
    g_free(f->price);
}

/* What simulate does with the parsed flags, up to the replay. */
static gboolean resolve(CliInputs *in, const SimulateFlags *f, GError **error)
{
    static const char *const which[] = {"all", "stages", NULL};
    int format = FORMAT_TEXT, stages_only = -1;
    double tokens = 0, price;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    g_autoptr(WhatIf) whatif = NULL;
    in->outputs[0] = (CliOutput){.flag = "-o", .path = f->output};
    in->outputs[1] = (CliOutput){.flag = "--trace", .path = f->trace};
    return cli_parse_choice("--format", f->format, report_format_names, &format, error) &&
           cli_inputs_load(in, CLI_DEFAULT_PLAN, &model, &cluster, plan, error) &&
           cli_parse_choice("--trace-ranks", f->trace_ranks, which, &stages_only, error) &&
           strategy_resolve(plan, model, cluster, error) &&
           (whatif = cli_inputs_whatif(in, FALSE, error)) &&
           whatif_check(whatif, cluster, (int)plan_spec_gpus(plan), error) &&
           (!f->tokens || training_parse_count("--tokens", f->tokens, &tokens, error)) &&
           cli_parse_number("--gpu-hour-price", f->price, 0, 1e6, FALSE, 0, &price, error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int argc;
    g_auto(GStrv) argv = split_args(data, size, &argc);
    CliInputs in = {0};
    SimulateFlags flags = {0};
    GOptionContext *ctx = options(&in, &flags);
    GError *error = NULL;
    if (cli_parse(ctx, argc, argv, &error))
        resolve(&in, &flags, &error);
    g_option_context_free(ctx);
    simulate_flags_clear(&flags);
    cli_inputs_clear(&in);
    fuzz_check_error(&error, 0);
    return 0;
}
