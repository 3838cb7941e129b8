/* main.c: the plansim command line.
 *
 * The only place that prints and exits. Commands:
 *   plansim simulate   [inputs] [--format text|json|csv] [-o FILE] [--trace FILE]
 *   plansim sweep      [inputs] [--grid FILE] [-j N] [--shard K/N] [--top K] [--exhaustive]
 *                      [-o FILE]
 *   plansim collective [--op OP] [--ranks N] [--cluster FILE] [sizes] [-o FILE]
 *   plansim calibrate  [--cluster FILE] [--nccl-tests FILE]... [--gemm FILE] -o FILE
 * where inputs are --model, --cluster, --plan, --nodes and the plan flags.
 * Bad input prints one line "plansim: ..." on stderr and exits with 2; a
 * failure to write the output exits with 1; a sweep stopped by SIGINT
 * (Ctrl-C) with 130, by SIGTERM with 143 (128 + the signal's number). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/report.h"
#include "app/calibrate.h"
#include "app/collbench.h"
#include "app/simulate.h"
#include "app/sweep.h"
#include "spec/spec.h"
#include "base/error.h"
#include "base/text.h"

/* The shipped default (docs/inputs.md, "Shipped files"): GPT-3 175B on
 * 512 A100s, 8-way TP inside each node, 8-way PP across nodes, DP 8. */
#define DEFAULT_MODEL   "models/gpt3-175b.json"
#define DEFAULT_CLUSTER "topologies/dgx-a100-80gb.json"
#define DEFAULT_PLAN    "plans/seed-512.json"

/* Set by SIGINT or SIGTERM during a sweep, to the signal's number: the
 * sweep stops and writes nothing. */
static volatile gint interrupted;

static void on_interrupt(int sig)
{
    interrupted = sig;
}

static int fail(GError *error)
{
    /* one line whatever the input held: control characters escaped */
    g_autofree char *line = ps_error_escape(error->message);
    fprintf(stderr, "plansim: %s\n", line);
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

/* A word from a flag, one of `table`'s (its index into `out`), or `out`
 * unchanged when the flag is absent. */
static gboolean parse_choice(const char *flag, const char *text, const char *const *table, int *out,
                             GError **error)
{
    int i = names_find(table, text);
    if (text && i < 0) {
        g_autofree char *choices = names_list(table, FALSE);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected %s, got \"%s\"", flag, choices,
                    text);
        return FALSE;
    }
    *out = text ? i : *out;
    return TRUE;
}

/* ---- the inputs simulate and sweep share -------------------------------- */

typedef struct {
    char *model, *cluster, *plan, *nodes;
    char *flag_text[PLAN_N_FIELDS];       /* the plan flags given, as text */
    const char *flag_name[PLAN_N_FIELDS]; /* the flag that gave each, "--no-x" included */
} Inputs;

/* A plan flag seen: --FLAG VALUE, a bare --BOOL, --BOOL=VALUE or --no-BOOL.
 * The last one given for a field wins. */
static gboolean on_plan_flag(const char *name, const char *value, gpointer data, GError **error)
{
    Inputs *in = data;
    gboolean negated = g_str_has_prefix(name, "--no-");
    if (negated && value) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected no value, got \"%s\"", name,
                    value);
        return FALSE;
    }
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        if (strcmp(name + (negated ? 5 : 2), plan_fields[f].flag) != 0)
            continue;
        g_free(in->flag_text[f]);
        in->flag_text[f] = g_strdup(negated ? "false" : value ? value : "true");
        in->flag_name[f] = negated ? "--no-" : "--";
        return TRUE;
    }
    g_assert_not_reached();
}

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
    /* every plan field's flag, from the table; a boolean's value is
     * optional (--sequence-parallel, --sequence-parallel=false) and it has
     * a --no- form */
    GOptionEntry plan_entries[2 * PLAN_N_FIELDS + 1];
    int n = 0;
    static char no_flags[PLAN_N_FIELDS][64], no_help[PLAN_N_FIELDS][128];
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        const PlanFieldInfo *d = &plan_fields[f];
        gboolean boolean = d->kind == FIELD_BOOL;
        plan_entries[n++] = (GOptionEntry){d->flag,
                                           0,
                                           boolean ? G_OPTION_FLAG_OPTIONAL_ARG : 0,
                                           G_OPTION_ARG_CALLBACK,
                                           (gpointer)on_plan_flag,
                                           d->help,
                                           boolean ? "true|false" : "V"};
        if (boolean) {
            g_snprintf(no_flags[f], sizeof no_flags[f], "no-%s", d->flag);
            g_snprintf(no_help[f], sizeof no_help[f], "--%s=false", d->flag);
            plan_entries[n++] = (GOptionEntry){no_flags[f],
                                               0,
                                               G_OPTION_FLAG_OPTIONAL_ARG, /* to refuse a value */
                                               G_OPTION_ARG_CALLBACK,
                                               (gpointer)on_plan_flag,
                                               no_help[f],
                                               NULL};
        }
    }
    plan_entries[n] = (GOptionEntry){NULL};
    GOptionGroup *group = g_option_group_new(
        "plan", "Plan options (override --plan):", "Show plan options", in, NULL);
    g_option_group_add_entries(group, plan_entries);
    g_option_context_add_group(ctx, group);
}

static void inputs_clear(Inputs *in)
{
    g_free(in->model);
    g_free(in->cluster);
    g_free(in->plan);
    g_free(in->nodes);
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        g_free(in->flag_text[f]);
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
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        if (!in->flag_text[f])
            continue;
        g_autofree char *flag = g_strconcat(in->flag_name[f], plan_fields[f].flag, NULL);
        if (!plan_spec_set(plan, (PlanField)f, in->flag_text[f], flag, error))
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
    return g_error_matches(error, PS_ERROR, PS_ERROR_INTERRUPTED)
               ? (g_error_free(error), 128 + interrupted)
               : fail(error);
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
    if (!parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
        !inputs_load(&a->in, DEFAULT_PLAN, &model, &cluster, plan, error))
        return FALSE;
    static const char *const which[] = {"all", "stages", NULL};
    int stages_only = -1; /* by default every GPU of a small world, one per stage of a big one */
    if (!parse_choice("--trace-ranks", a->trace_ranks, which, &stages_only, error) ||
        !plan_spec_resolve(plan, model, cluster, error))
        return FALSE;
    if (stages_only < 0)
        stages_only = (long long)plan->tp * plan->pp * plan->dp > 64;
    Report rep;
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
    gboolean exhaustive;
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
        !parse_number("--top", a->top, 1, 1000, TRUE, SWEEP_DEFAULT_TOP, &top, error) ||
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
    grid = plan_grid_default(model, cluster);
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
                      &interrupted,
                      (int)top,
                      a->exhaustive};
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    g_autoptr(SweepResult) r = sweep_run(&spec, error);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (!r)
        return FALSE;
    if (r->stopped) {
        fprintf(stderr, "plansim: sweep interrupted: nothing written\n");
        g_set_error(error, PS_ERROR, PS_ERROR_INTERRUPTED, "interrupted");
        return FALSE;
    }
    if (r->skipped == r->combinations && shards == 1) {
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
    fprintf(stderr, "sweep: %" G_GINT64_FORMAT " plans:", r->combinations);
    for (int s = 0; s < REPORT_STATUSES; s++) /* "120 simulated, 3 pruned, ..." */
        fprintf(stderr, "%s %d %s", s ? "," : "", r->count[s], report_status_names[s]);
    fprintf(stderr, "\n");
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
         "print the K best plans that fit as a table (stdout, unless -o); default 10", "K"},
        {"exhaustive", 0, 0, G_OPTION_ARG_NONE, &a.exhaustive,
         "replay every valid plan: no memory pre-check, no pruning", NULL},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the CSV to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    return run_command(argc, argv, "- the best plans of a grid, a CSV row for each plan", entries,
                       &a.in, sweep, &a);
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
    if (!parse_choice("--op", a->op, collective_names, (int *)&op, error) ||
        !parse_choice("--algorithm", a->algorithm, collective_algorithm_choices, (int *)&algorithm,
                      error))
        return FALSE;
    g_autofree char *cluster_path = data_path(a->cluster, DEFAULT_CLUSTER);
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
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
         "auto (default), ring, tree, hierarchical or nvls", "A"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the table to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    return run_command(argc, argv, "- an nccl-tests table from the simulated network", entries,
                       NULL, collective, &a);
}

/* ---- calibrate -------------------------------------------------------------- */

typedef struct {
    char *cluster, *gemm, *output;
    char **nccl;
} CalibrateArgs;

static gboolean calibrate(void *args, GError **error)
{
    CalibrateArgs *a = args;
    if (!a->output || (!a->nccl && !a->gemm)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "calibrate: expected -o FILE and at least one of --nccl-tests FILE and "
                    "--gemm FILE, got %s",
                    a->output ? "no measurements" : "no -o");
        return FALSE;
    }
    g_autofree char *cluster_path = data_path(a->cluster, DEFAULT_CLUSTER);
    g_autoptr(ClusterSpec) base = cluster_spec_load(cluster_path, 0, error);
    g_autoptr(GPtrArray) nccl = g_ptr_array_new_with_free_func((GDestroyNotify)calib_nccl_free);
    g_autoptr(CalibGemm) gemm = NULL;
    if (!base || (a->gemm && !(gemm = calib_gemm_load(a->gemm, error))))
        return FALSE;
    for (char **path = a->nccl; path && *path; path++) {
        CalibNccl *data = calib_nccl_load(*path, error);
        if (!data)
            return FALSE;
        g_ptr_array_add(nccl, data);
    }
    g_autoptr(Calibration) c =
        calib_run(base, (CalibNccl *const *)nccl->pdata, (int)nccl->len, gemm);
    g_autofree char *json = calib_cluster_json(c->cluster);
    if (!text_write_atomic(a->output, json, strlen(json), error))
        return FALSE;
    fputs(c->report, strcmp(a->output, "-") == 0 ? stderr : stdout);
    return TRUE;
}

static int cmd_calibrate(int argc, char **argv)
{
    CalibrateArgs a = {0};
    GOptionEntry entries[] = {
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &a.cluster,
         "the cluster to start from (default: the shipped A100 profile)", "FILE"},
        {"nccl-tests", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a.nccl,
         "nccl-tests output (all_reduce_perf, ...); repeat for more files", "FILE"},
        {"gemm", 0, 0, G_OPTION_ARG_FILENAME, &a.gemm, "GEMM timings, CSV m,n,k,dtype,seconds",
         "FILE"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the fitted cluster to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    int status = run_command(argc, argv, "- fit a cluster's efficiencies and latencies to measurements",
                             entries, NULL, calibrate, &a);
    g_strfreev(a.nccl);
    return status;
}

/* ---- dispatch ----------------------------------------------------------------- */

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"simulate", cmd_simulate, "simulate one step"},
    {"sweep", cmd_sweep, "find the best plans of a grid, a CSV row for each plan"},
    {"collective", cmd_collective, "time one collective at many sizes, like nccl-tests"},
    {"calibrate", cmd_calibrate, "fit a cluster to nccl-tests output and GEMM timings"},
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
