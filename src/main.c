/* main.c: the plansim command line.
 *
 * The only place that prints and exits. Commands:
 *   plansim simulate   [inputs] [--format text|json|csv] [-o FILE] [--trace FILE]
 *   plansim sweep      [inputs] [--grid FILE] [-j N] [--shard K/N] [--top K] [-o FILE]
 *   plansim collective [--op OP] [--ranks N] [--cluster FILE] [sizes] [-o FILE]
 * where inputs are --model, --cluster, --plan, --nodes and the plan flags.
 * Bad input prints one line "plansim: ..." on stderr and exits with 2; a
 * failure to write the output exits with 1; an interrupted sweep with 130. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "sim/collbench.h"
#include "sim/simulate.h"
#include "sim/sweep.h"
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
    {PLAN_LINK_CONTENTION, "link-contention", TRUE, "true",
     "let transfers share links max-min fairly (the default)"},
    {PLAN_LINK_CONTENTION, "no-link-contention", TRUE, "false",
     "let every transfer run alone, at its formula's time"},
};
#define N_PLAN_FLAGS G_N_ELEMENTS(plan_flags)

/* Set by SIGINT during a sweep: the sweep stops and writes nothing. */
static volatile gint interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

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

/* A number from a flag in [lo, hi] (an integer when `integral`), or
 * `fallback` when the flag is absent. */
static gboolean parse_number(const char *flag, const char *text, double lo, double hi,
                             gboolean integral, double fallback, double *out, GError **error)
{
    char *end = NULL;
    *out = text ? g_ascii_strtod(text, &end) : fallback;
    if (text && (!text[0] || *end || !(*out >= lo && *out <= hi) ||
                 (integral && *out != (double)(long long)*out))) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected %s from %g to %g, got \"%s\"",
                    flag, integral ? "an integer" : "a number", lo, hi, text);
        return FALSE;
    }
    return TRUE;
}

/* ---- the inputs simulate and sweep share -------------------------------- */

typedef struct {
    char *model, *cluster, *plan, *nodes;
    char *flag_text[N_PLAN_FLAGS];   /* valued plan flags */
    gboolean flag_set[N_PLAN_FLAGS]; /* bare plan switches */
} Inputs;

static void inputs_entries(Inputs *in, GOptionContext *ctx)
{
    GOptionEntry entries[] = {
        {"model", 0, 0, G_OPTION_ARG_FILENAME, &in->model, "model JSON (plansim or Hugging Face)",
         "FILE"},
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &in->cluster, "cluster JSON", "FILE"},
        {"plan", 0, 0, G_OPTION_ARG_FILENAME, &in->plan, "plan JSON (flags override it)", "FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &in->nodes, "override the cluster's node count", "N"},
        {NULL},
    };
    g_option_context_add_main_entries(ctx, entries, NULL);
    GOptionEntry plan_entries[N_PLAN_FLAGS + 1];
    for (gsize i = 0; i < N_PLAN_FLAGS; i++) {
        const PlanFlag *f = &plan_flags[i];
        plan_entries[i] =
            (GOptionEntry){f->flag,
                           0,
                           0,
                           f->bare ? G_OPTION_ARG_NONE : G_OPTION_ARG_STRING,
                           f->bare ? (gpointer)&in->flag_set[i] : (gpointer)&in->flag_text[i],
                           f->help,
                           f->bare ? NULL : "V"};
    }
    plan_entries[N_PLAN_FLAGS] = (GOptionEntry){NULL};
    GOptionGroup *group = g_option_group_new(
        "plan", "Plan options (override --plan):", "Show plan options", NULL, NULL);
    g_option_group_add_entries(group, plan_entries);
    g_option_context_add_group(ctx, group);
}

static void inputs_clear(Inputs *in)
{
    g_free(in->model);
    g_free(in->cluster);
    g_free(in->plan);
    g_free(in->nodes);
    for (gsize i = 0; i < N_PLAN_FLAGS; i++)
        g_free(in->flag_text[i]);
}

/* Loads the model, the cluster and the plan (file, then flags). With none
 * of the three files named, `default_plan` (if any) is the plan file. */
static gboolean inputs_load(const Inputs *in, const char *default_plan, ModelSpec **model,
                            ClusterSpec **cluster, PlanSpec *plan, GError **error)
{
    double nodes;
    gboolean defaults = !in->model && !in->cluster && !in->plan;
    g_autofree char *model_path = data_path(in->model, DEFAULT_MODEL);
    g_autofree char *cluster_path = data_path(in->cluster, DEFAULT_CLUSTER);
    g_autofree char *plan_path =
        defaults && default_plan ? data_path(NULL, default_plan) : g_strdup(in->plan);
    if (!parse_number("--nodes", in->nodes, 1, 1 << 20, TRUE, 0, &nodes, error) ||
        !(*model = model_spec_load(model_path, error)) ||
        !(*cluster = cluster_spec_load(cluster_path, (int)nodes, error)) ||
        (plan_path && !plan_spec_load(plan, plan_path, error)))
        return FALSE;
    for (gsize i = 0; i < N_PLAN_FLAGS; i++) {
        const PlanFlag *f = &plan_flags[i];
        const char *value = f->bare ? (in->flag_set[i] ? f->value : NULL) : in->flag_text[i];
        g_autofree char *flag = g_strconcat("--", f->flag, NULL);
        if (value && !plan_spec_set(plan, f->field, value, flag, error))
            return FALSE;
    }
    return TRUE;
}

/* Parses a command's options into `entries` (and `in`, if any), then runs
 * `body`. */
static int run_command(int argc, char **argv, const char *summary, GOptionEntry *entries,
                       Inputs *in, gboolean (*body)(void *args, GError **error), void *args)
{
    GOptionContext *ctx = g_option_context_new(summary);
    if (in)
        inputs_entries(in, ctx);
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(ctx, &argc, &argv, &error);
    if (!ok) {
        g_prefix_error(&error, "%s: ", argv[0]);
    } else if (argc > 1) {
        g_set_error(&error, PS_ERROR, PS_ERROR_INPUT, "%s: unexpected argument \"%s\"", argv[0],
                    argv[1]);
        ok = FALSE;
    } else {
        ok = body(args, &error);
    }
    g_option_context_free(ctx);
    for (GOptionEntry *e = entries; e->long_name; e++)
        if (e->arg == G_OPTION_ARG_STRING || e->arg == G_OPTION_ARG_FILENAME)
            g_free(*(char **)e->arg_data);
    if (in)
        inputs_clear(in);
    if (ok)
        return 0;
    return g_error_matches(error, PS_ERROR, PS_ERROR_INTERRUPTED) ? (g_error_free(error), 130)
                                                                  : fail(error);
}

static gboolean parse_format(const char *name, ReportFormat *format, GError **error)
{
    if (!name || report_format_parse(name, format))
        return TRUE;
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "--format: expected text, json or csv, got \"%s\"",
                name);
    return FALSE;
}

/* ---- simulate ------------------------------------------------------------- */

typedef struct {
    Inputs in;
    char *format, *output, *trace, *trace_ranks;
} SimulateArgs;

static gboolean simulate(void *args, GError **error)
{
    SimulateArgs *a = args;
    ReportFormat format = FORMAT_TEXT;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!parse_format(a->format, &format, error) ||
        !inputs_load(&a->in, DEFAULT_PLAN, &model, &cluster, plan, error))
        return FALSE;
    gboolean stages_only;
    if (a->trace_ranks && strcmp(a->trace_ranks, "stages") != 0 &&
        strcmp(a->trace_ranks, "all") != 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--trace-ranks: expected all or stages, got \"%s\"", a->trace_ranks);
        return FALSE;
    }
    Report rep;
    if (!plan_spec_resolve(plan, model, cluster, error))
        return FALSE;
    if (a->trace_ranks) /* by default every GPU of a small world, one per stage of a big one */
        stages_only = strcmp(a->trace_ranks, "stages") == 0;
    else
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
        {"format", 0, 0, G_OPTION_ARG_STRING, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the report to FILE (whole or not at all)", "FILE"},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &a.trace,
         "write the replay as a Chrome trace (Perfetto, chrome://tracing)", "FILE"},
        {"trace-ranks", 0, 0, G_OPTION_ARG_STRING, &a.trace_ranks,
         "all, or stages (each stage's first GPU); default all up to 64 GPUs", "WHICH"},
        {NULL},
    };
    return run_command(argc, argv, "- simulate one training step", entries, &a.in, simulate, &a);
}

/* ---- sweep ------------------------------------------------------------------ */

typedef struct {
    Inputs in;
    char *gpus, *grid, *threads, *shard, *top, *output;
} SweepArgs;

/* "K/N" into k and n. */
static gboolean parse_shard(const char *text, int *k, int *n, GError **error)
{
    *k = *n = 1;
    if (!text)
        return TRUE;
    char *slash = strchr(text, '/'), *end1 = NULL, *end2 = NULL;
    long a = slash ? strtol(text, &end1, 10) : 0, b = slash ? strtol(slash + 1, &end2, 10) : 0;
    if (!slash || end1 != slash || !slash[1] || *end2 || a < 1 || b < a || b > 1000000) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--shard: expected K/N with 1 <= K <= N, "
                    "got \"%s\"",
                    text);
        return FALSE;
    }
    *k = (int)a;
    *n = (int)b;
    return TRUE;
}

static void print_best(FILE *to, const SweepResult *r, const guint *best, int n)
{
    for (int i = 0; i < n; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, best[i]);
        fprintf(to, "%s%-2d %10.4g tokens/s  step %8.4g s  peak %6.2f GiB  %s\n",
                i ? "  " : "best ", i + 1, row->tokens_per_s, row->step_time_s,
                row->peak_bytes / 1073741824.0, row->summary);
    }
}

static gboolean sweep(void *args, GError **error)
{
    SweepArgs *a = args;
    g_autoptr(PlanSpec) base = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    g_autoptr(PlanGrid) grid = NULL;
    double gpus, threads, top;
    int shard, shards;
    if (!inputs_load(&a->in, NULL, &model, &cluster, base, error) ||
        !parse_number("--gpus", a->gpus, 1, 1 << 20, TRUE, 0, &gpus, error) ||
        !parse_number("--threads", a->threads, 1, 1024, TRUE, g_get_num_processors(), &threads,
                      error) ||
        !parse_number("--top", a->top, 1, 1000, TRUE, 5, &top, error) ||
        !parse_shard(a->shard, &shard, &shards, error))
        return FALSE;
    if (gpus > cluster_spec_gpus(cluster)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--gpus: expected at most the cluster's %d, "
                    "got %s",
                    cluster_spec_gpus(cluster), a->gpus);
        return FALSE;
    }
    if (!base->global_batch_size)
        base->global_batch_size = 1024; /* comparable plans need one batch */
    grid = sweep_default_grid(model, cluster);
    for (int f = 0; f < PLAN_N_FIELDS; f++) /* a field the plan or a flag sets is fixed */
        if (base->origin[f])
            plan_grid_remove(grid, (PlanField)f);
    if (a->grid && !plan_grid_load(grid, a->grid, error))
        return FALSE;
    SweepSpec spec = {model,
                      cluster,
                      base,
                      grid,
                      gpus ? (int)gpus : cluster_spec_gpus(cluster),
                      (int)threads,
                      shard,
                      shards,
                      isatty(2) && !g_getenv("CI"),
                      &interrupted};
    signal(SIGINT, on_interrupt);
    g_autoptr(SweepResult) r = sweep_run(&spec, error);
    signal(SIGINT, SIG_DFL);
    if (!r)
        return FALSE;
    if (r->stopped) {
        fprintf(stderr, "plansim: sweep interrupted: nothing written\n");
        g_set_error(error, PS_ERROR, PS_ERROR_INTERRUPTED, "interrupted");
        return FALSE;
    }
    if (r->rows->len == 0 && shards == 1) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected a grid with at least one valid plan, got %" G_GINT64_FORMAT
                    " combinations, all invalid",
                    a->grid ? a->grid : "the default grid", r->combinations);
        return FALSE;
    }
    GString *csv = g_string_new(r->header);
    for (guint i = 0; i < r->rows->len; i++)
        g_string_append(csv, g_array_index(r->rows, SweepRow, i).csv);
    gboolean table_only = a->top && !a->output;
    gboolean ok =
        table_only || text_write_atomic(a->output ? a->output : "-", csv->str, csv->len, error);
    g_string_free(csv, TRUE);
    if (!ok)
        return FALSE;
    g_autofree guint *best = g_new(guint, (gsize)top);
    int n = sweep_best(r, (int)top, best);
    if (table_only)
        print_best(stdout, r, best, n);
    fprintf(stderr, "sweep: %u plans simulated, %d skipped as invalid\n", r->rows->len, r->skipped);
    GList *reasons = g_list_sort(g_hash_table_get_keys(r->reasons), (GCompareFunc)strcmp);
    for (GList *l = reasons; l; l = l->next) /* sorted: the same order every run */
        fprintf(stderr, "  %6d  %s\n", GPOINTER_TO_INT(g_hash_table_lookup(r->reasons, l->data)),
                (char *)l->data);
    g_list_free(reasons);
    if (n == 0)
        fprintf(stderr, "sweep: no plan fits in memory\n");
    else if (!table_only)
        print_best(stderr, r, best, n);
    return TRUE;
}

static int cmd_sweep(int argc, char **argv)
{
    SweepArgs a = {0};
    GOptionEntry entries[] = {
        {"gpus", 0, 0, G_OPTION_ARG_STRING, &a.gpus, "GPUs each plan uses (default: all)", "N"},
        {"grid", 0, 0, G_OPTION_ARG_FILENAME, &a.grid,
         "values to try per plan field (JSON), over the default space", "FILE"},
        {"threads", 'j', 0, G_OPTION_ARG_STRING, &a.threads, "threads (default: every core)", "N"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &a.shard, "run only the K-th of N slices", "K/N"},
        {"top", 0, 0, G_OPTION_ARG_STRING, &a.top,
         "print the K best plans that fit as a table (stdout, unless -o)", "K"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the CSV to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    return run_command(argc, argv, "- simulate every plan of a grid, to CSV", entries, &a.in, sweep,
                       &a);
}

/* ---- collective ------------------------------------------------------------- */

typedef struct {
    char *op, *ranks, *cluster, *nodes, *min_bytes, *max_bytes, *algorithm, *format, *output;
} CollectiveArgs;

static gboolean collective(void *args, GError **error)
{
    CollectiveArgs *a = args;
    CollOp op = COLL_ALL_REDUCE;
    CollAlgorithm algorithm = ALGORITHM_AUTO;
    ReportFormat format = FORMAT_TEXT;
    double ranks, min_bytes, max_bytes, nodes;
    if (a->op && !collective_from_name(a->op, &op)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--op: expected all_reduce, all_gather, reduce_scatter, all_to_all or "
                    "send_recv, got \"%s\"",
                    a->op);
        return FALSE;
    }
    gboolean known = !a->algorithm;
    for (int i = ALGORITHM_AUTO; i <= ALGORITHM_HIERARCHICAL && !known; i++) {
        if (strcmp(a->algorithm, collective_algorithm_name((CollAlgorithm)i)) == 0) {
            algorithm = (CollAlgorithm)i;
            known = TRUE;
        }
    }
    if (!known) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--algorithm: expected auto, ring, tree or hierarchical, got \"%s\"",
                    a->algorithm);
        return FALSE;
    }
    g_autofree char *cluster_path = data_path(a->cluster, DEFAULT_CLUSTER);
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!parse_format(a->format, &format, error) ||
        !parse_number("--nodes", a->nodes, 1, 1 << 20, TRUE, 0, &nodes, error) ||
        !parse_number("--ranks", a->ranks, 2, 1 << 20, TRUE, 8, &ranks, error) ||
        !parse_number("--min-bytes", a->min_bytes, 1, 1e15, FALSE, 1 << 20, &min_bytes, error) ||
        !parse_number("--max-bytes", a->max_bytes, 1, 1e15, FALSE, 1 << 30, &max_bytes, error) ||
        !(cluster = cluster_spec_load(cluster_path, (int)nodes, error)))
        return FALSE;
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
    return run_command(argc, argv, "- an nccl-tests table from the simulated network", entries,
                       NULL, collective, &a);
}

/* ---- dispatch ----------------------------------------------------------------- */

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"simulate", cmd_simulate, "simulate one step"},
    {"sweep", cmd_sweep, "simulate every plan of a grid, to CSV, and name the best"},
    {"collective", cmd_collective, "time one collective at many sizes, like nccl-tests"},
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
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
