/* main.c: the plansim command line.
 *
 * The only place that prints and exits. Commands:
 *   plansim simulate [--model F] [--cluster F] [--plan F] [plan flags]
 *                    [--format text|json|csv] [-o FILE]
 * Bad input prints one line "plansim: ..." on stderr and exits with 2;
 * a failure to write the output exits with 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "sim/collbench.h"
#include "sim/simulate.h"
#include "spec/spec.h"
#include "util/error.h"
#include "util/text.h"

/* The shipped default, the example of the notes in shared/seed/: GPT-3
 * 175B on 512 A100s, 8-way TP inside each node, 8-way PP across nodes, DP 8. */
#define DEFAULT_MODEL   "models/gpt3-175b.json"
#define DEFAULT_CLUSTER "topologies/dgx-a100-80gb.json"
#define DEFAULT_PLAN    "plans/seed-512.json"

typedef struct {
    PlanField field;
    const char *flag;  /* long name, without "--" */
    gboolean bare;     /* a switch that takes no value */
    const char *value; /* for a bare switch: the value it sets */
    const char *help;
} PlanFlag;

static const PlanFlag plan_flags[] = {
    {PLAN_TP, "tp", FALSE, NULL, "tensor-parallel size"},
    {PLAN_PP, "pp", FALSE, NULL, "pipeline-parallel size"},
    {PLAN_DP, "dp", FALSE, NULL, "data-parallel size (default: GPUs / (tp x pp))"},
    {PLAN_MICRO_BATCH_SIZE, "micro-batch-size", FALSE, NULL, "sequences per micro-batch"},
    {PLAN_GLOBAL_BATCH_SIZE, "global-batch-size", FALSE, NULL, "sequences per step"},
    {PLAN_SCHEDULE, "schedule", FALSE, NULL, "naive, gpipe, 1f1b or interleaved"},
    {PLAN_VIRTUAL_STAGES, "virtual-stages", FALSE, NULL, "model chunks per pipeline rank"},
    {PLAN_LAYERS_PER_STAGE, "layers-per-stage", FALSE, NULL,
     "layers of each model chunk, comma-separated (default: an even split)"},
    {PLAN_RANK_ORDER, "rank-order", FALSE, NULL,
     "rank numbering, fastest first: tp-dp-pp (default), dp-tp-pp, ..."},
    {PLAN_ZERO_STAGE, "zero-stage", FALSE, NULL, "ZeRO stage, 0 to 3 (fsdp: 3)"},
    {PLAN_SEQUENCE_PARALLEL, "sequence-parallel", TRUE, "true", "split norms and dropout over tp"},
    {PLAN_SEQUENCE_PARALLEL, "no-sequence-parallel", TRUE, "false", "do not (the default)"},
    {PLAN_RECOMPUTE, "recompute", FALSE, NULL, "none, selective or full"},
    {PLAN_OVERLAP_GRAD_REDUCE, "overlap-grad-reduce", TRUE, "true",
     "reduce gradients during backward (the default)"},
    {PLAN_OVERLAP_GRAD_REDUCE, "no-overlap-grad-reduce", TRUE, "false",
     "reduce gradients after backward, not during it"},
    {PLAN_DDP_BUCKET_SIZE, "ddp-bucket-size", FALSE, NULL, "parameters per gradient bucket"},
    {PLAN_DTYPE, "dtype", FALSE, NULL, "bf16"},
    {PLAN_COLLECTIVE_ALGORITHM, "collective-algorithm", FALSE, NULL,
     "auto (the cluster's), ring, tree or hierarchical"},
    {PLAN_LINK_CONTENTION, "no-link-contention", TRUE, "false",
     "let every transfer run alone, at its formula's time"},
};
#define N_PLAN_FLAGS G_N_ELEMENTS(plan_flags)

static int fail(GError *error)
{
    fprintf(stderr, "plansim: %s\n", error->message);
    /* a failed write is not bad input; everything else is */
    int status = g_error_matches(error, PS_ERROR, PS_ERROR_IO) ? 1 : 2;
    g_error_free(error);
    return status;
}

/* A data file given on the command line, or a shipped default: found from
 * the current folder first, then in the installed data folder. */
static char *data_path(const char *given, const char *fallback)
{
    if (given)
        return g_strdup(given);
    if (g_file_test(fallback, G_FILE_TEST_EXISTS))
        return g_strdup(fallback);
    return g_build_filename(PLANSIM_DATADIR, fallback, NULL);
}

static gboolean parse_nodes(const char *text, int *out, GError **error)
{
    char *end = NULL;
    gint64 v = text ? g_ascii_strtoll(text, &end, 10) : 0;
    if (!text)
        return TRUE;
    if (!text[0] || *end || v < 1 || v > (1 << 20)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--nodes: expected a positive integer, got \"%s\"", text);
        return FALSE;
    }
    *out = (int)v;
    return TRUE;
}

/* What `simulate` was asked, after option parsing. */
typedef struct {
    char *model, *cluster, *plan, *format, *output, *nodes, *trace, *trace_ranks;
    char *flag_text[N_PLAN_FLAGS];   /* valued plan flags */
    gboolean flag_set[N_PLAN_FLAGS]; /* bare plan switches */
} SimulateArgs;

static gboolean simulate(const SimulateArgs *a, GError **error)
{
    ReportFormat format = FORMAT_TEXT;
    int nodes = 0;
    if (a->format && !report_format_parse(a->format, &format)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--format: expected text, json or csv, got \"%s\"", a->format);
        return FALSE;
    }
    gboolean defaults = !a->model && !a->cluster && !a->plan;
    g_autofree char *model_path = data_path(a->model, DEFAULT_MODEL);
    g_autofree char *cluster_path = data_path(a->cluster, DEFAULT_CLUSTER);
    g_autofree char *plan_path = defaults ? data_path(NULL, DEFAULT_PLAN) : g_strdup(a->plan);
    g_autoptr(PlanSpec) plan = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!parse_nodes(a->nodes, &nodes, error) || !(model = model_spec_load(model_path, error)) ||
        !(cluster = cluster_spec_load(cluster_path, nodes, error)) ||
        (plan_path && !plan_spec_load(plan, plan_path, error)))
        return FALSE;
    for (gsize i = 0; i < N_PLAN_FLAGS; i++) {
        const PlanFlag *f = &plan_flags[i];
        const char *value = f->bare ? (a->flag_set[i] ? f->value : NULL) : a->flag_text[i];
        g_autofree char *flag = g_strconcat("--", f->flag, NULL);
        if (value && !plan_spec_set(plan, f->field, value, flag, error))
            return FALSE;
    }
    gboolean stages_only = FALSE;
    if (a->trace_ranks && strcmp(a->trace_ranks, "stages") == 0) {
        stages_only = TRUE;
    } else if (a->trace_ranks && strcmp(a->trace_ranks, "all") != 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--trace-ranks: expected all or stages, got \"%s\"", a->trace_ranks);
        return FALSE;
    }
    Report rep;
    if (!plan_spec_resolve(plan, model, cluster, error))
        return FALSE;
    if (!a->trace_ranks) /* every GPU of a small world, a GPU per stage of a big one */
        stages_only = (long long)plan->tp * plan->pp * plan->dp > 64;
    if (!sim_run_traced(model, cluster, plan, a->trace, stages_only, &rep, error))
        return FALSE;
    g_autofree char *text = report_render(&rep, format, TRUE);
    report_clear(&rep);
    return text_write_atomic(a->output ? a->output : "-", text, strlen(text), error);
}

static int cmd_simulate(int argc, char **argv)
{
    SimulateArgs a = {0};
    GOptionEntry entries[] = {
        {"model", 0, 0, G_OPTION_ARG_FILENAME, &a.model, "model JSON (plansim or Hugging Face)",
         "FILE"},
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &a.cluster, "cluster JSON", "FILE"},
        {"plan", 0, 0, G_OPTION_ARG_FILENAME, &a.plan, "plan JSON (flags override it)", "FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &a.nodes, "override the cluster's node count", "N"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the report to FILE (whole or not at all)", "FILE"},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &a.trace,
         "write the replay as a Chrome trace (Perfetto, chrome://tracing)", "FILE"},
        {"trace-ranks", 0, 0, G_OPTION_ARG_STRING, &a.trace_ranks,
         "all, or stages (each stage's first GPU); default all up to 64 GPUs", "WHICH"},
        {NULL},
    };
    GOptionEntry plan_entries[N_PLAN_FLAGS + 1];
    for (gsize i = 0; i < N_PLAN_FLAGS; i++) {
        const PlanFlag *f = &plan_flags[i];
        plan_entries[i] =
            (GOptionEntry){f->flag,
                           0,
                           0,
                           f->bare ? G_OPTION_ARG_NONE : G_OPTION_ARG_STRING,
                           f->bare ? (gpointer)&a.flag_set[i] : (gpointer)&a.flag_text[i],
                           f->help,
                           f->bare ? NULL : "V"};
    }
    plan_entries[N_PLAN_FLAGS] = (GOptionEntry){NULL};

    GOptionContext *ctx = g_option_context_new("- simulate one training step");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GOptionGroup *group = g_option_group_new(
        "plan", "Plan options (override --plan):", "Show plan options", NULL, NULL);
    g_option_group_add_entries(group, plan_entries);
    g_option_context_add_group(ctx, group);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(ctx, &argc, &argv, &error);
    if (!ok) {
        g_prefix_error(&error, "simulate: ");
    } else if (argc > 1) {
        g_set_error(&error, PS_ERROR, PS_ERROR_INPUT, "simulate: unexpected argument \"%s\"",
                    argv[1]);
        ok = FALSE;
    } else {
        ok = simulate(&a, &error);
    }
    g_option_context_free(ctx);
    g_free(a.model);
    g_free(a.cluster);
    g_free(a.plan);
    g_free(a.format);
    g_free(a.output);
    g_free(a.nodes);
    g_free(a.trace);
    g_free(a.trace_ranks);
    for (gsize i = 0; i < N_PLAN_FLAGS; i++)
        g_free(a.flag_text[i]);
    return ok ? 0 : fail(error);
}

/* What `collective` was asked. */
typedef struct {
    char *op, *ranks, *cluster, *nodes, *min_bytes, *max_bytes, *algorithm, *format, *output;
} CollectiveArgs;

/* A positive number from a flag, or an error naming it. */
static gboolean parse_positive(const char *flag, const char *text, double fallback, double *out,
                               GError **error)
{
    char *end = NULL;
    *out = text ? g_ascii_strtod(text, &end) : fallback;
    if (text && (!text[0] || *end || !(*out > 0) || *out > 1e15)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected a positive number, got \"%s\"",
                    flag, text);
        return FALSE;
    }
    return TRUE;
}

static gboolean collective(const CollectiveArgs *a, GError **error)
{
    CollOp op = COLL_ALL_REDUCE;
    CollAlgorithm algorithm = ALGORITHM_AUTO;
    ReportFormat format = FORMAT_TEXT;
    double ranks, min_bytes, max_bytes;
    int nodes = 0;
    if (a->op && !collective_from_name(a->op, &op)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--op: expected all_reduce, all_gather, reduce_scatter, all_to_all or "
                    "send_recv, got \"%s\"",
                    a->op);
        return FALSE;
    }
    gboolean known = !a->algorithm;
    for (int i = ALGORITHM_AUTO; i <= ALGORITHM_HIERARCHICAL && !known; i++)
        if (strcmp(a->algorithm, collective_algorithm_name((CollAlgorithm)i)) == 0) {
            algorithm = (CollAlgorithm)i;
            known = TRUE;
        }
    if (!known) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--algorithm: expected auto, ring, tree or hierarchical, got \"%s\"",
                    a->algorithm);
        return FALSE;
    }
    if (a->format && !report_format_parse(a->format, &format)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--format: expected text, json or csv, got \"%s\"", a->format);
        return FALSE;
    }
    g_autofree char *cluster_path = data_path(a->cluster, DEFAULT_CLUSTER);
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!parse_nodes(a->nodes, &nodes, error) ||
        !parse_positive("--ranks", a->ranks, 8, &ranks, error) ||
        !parse_positive("--min-bytes", a->min_bytes, 1 << 20, &min_bytes, error) ||
        !parse_positive("--max-bytes", a->max_bytes, 1 << 30, &max_bytes, error) ||
        !(cluster = cluster_spec_load(cluster_path, nodes, error)))
        return FALSE;
    if (ranks != (int)ranks) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "--ranks: expected an integer, got \"%s\"",
                    a->ranks);
        return FALSE;
    }
    GArray *rows = collbench_run(cluster, op, (int)ranks, min_bytes, max_bytes, algorithm, error);
    if (!rows)
        return FALSE;
    g_autofree char *text = report_collective_render(rows, op, (int)ranks, cluster->name, format);
    g_array_free(rows, TRUE);
    return text_write_atomic(a->output ? a->output : "-", text, strlen(text), error);
}

static int cmd_collective(int argc, char **argv)
{
    CollectiveArgs a = {0};
    GOptionEntry entries[] = {
        {"op", 0, 0, G_OPTION_ARG_STRING, &a.op,
         "all_reduce (default), all_gather, reduce_scatter, all_to_all, send_recv", "OP"},
        {"ranks", 0, 0, G_OPTION_ARG_STRING, &a.ranks, "GPUs taking part (default 8)", "N"},
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &a.cluster, "cluster JSON", "FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &a.nodes, "override the cluster's node count", "N"},
        {"min-bytes", 0, 0, G_OPTION_ARG_STRING, &a.min_bytes, "smallest size (default 1 MiB)",
         "B"},
        {"max-bytes", 0, 0, G_OPTION_ARG_STRING, &a.max_bytes, "largest size (default 1 GiB)", "B"},
        {"algorithm", 0, 0, G_OPTION_ARG_STRING, &a.algorithm,
         "auto (default), ring, tree or hierarchical", "A"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the table to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    GOptionContext *ctx = g_option_context_new("- an nccl-tests table from the simulated network");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(ctx, &argc, &argv, &error);
    if (!ok) {
        g_prefix_error(&error, "collective: ");
    } else if (argc > 1) {
        g_set_error(&error, PS_ERROR, PS_ERROR_INPUT, "collective: unexpected argument \"%s\"",
                    argv[1]);
        ok = FALSE;
    } else {
        ok = collective(&a, &error);
    }
    g_option_context_free(ctx);
    char **strings[] = {&a.op,        &a.ranks,     &a.cluster, &a.nodes, &a.min_bytes,
                        &a.max_bytes, &a.algorithm, &a.format,  &a.output};
    for (gsize i = 0; i < G_N_ELEMENTS(strings); i++)
        g_free(*strings[i]);
    return ok ? 0 : fail(error);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: plansim COMMAND [OPTIONS]\n"
                "\n"
                "Simulates a training step of a transformer on a GPU cluster under a\n"
                "parallelism plan.\n"
                "\n"
                "commands:\n"
                "  simulate   simulate one step (plansim simulate --help for options)\n"
                "  collective time one collective at many sizes, like nccl-tests\n"
                "  --version  print the version\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "simulate") == 0)
        return cmd_simulate(argc - 1, argv + 1);
    if (strcmp(argv[1], "collective") == 0)
        return cmd_collective(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("plansim %s\n", PACKAGE_VERSION);
        return 0;
    }
    fprintf(stderr, "plansim: unknown command \"%s\" (try plansim --help)\n", argv[1]);
    return 2;
}
