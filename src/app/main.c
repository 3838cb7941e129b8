/* main.c: the plansim command line.
 *
 * The only place that prints and exits. Commands:
 *   plansim simulate   [inputs] [--format text|json|csv] [-o FILE] [--trace FILE]
 *   plansim run        [inputs] --tokens N [--trials N] [--checkpoint-every WHEN] [--seed S]
 *                      [--format text|json|csv] [-o FILE]
 *   plansim sweep      [inputs] [--grid FILE] [-j N] [--shard K/N] [--top K] [--exhaustive]
 *                      [-o FILE]
 *   plansim collective [--op OP] [--ranks N] [--cluster FILE] [sizes] [-o FILE]
 *   plansim calibrate  [--cluster FILE] [--nccl-tests FILE]... [--gemm FILE] -o FILE
 * where inputs are --model, --cluster, --plan (files or shipped names), --nodes,
 * --seq-length and the plan flags.
 * Bad input prints one line "plansim: ..." on stderr and exits with 2; a
 * failure to write the output exits with 1; a sweep stopped by SIGINT
 * (Ctrl-C) with 130, by SIGTERM with 143 (128 + the signal's number). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "output/report.h"
#include "output/run_report.h"
#include "app/advice.h"
#include "app/calibrate.h"
#include "app/calibruns.h"
#include "app/cli.h"
#include "app/progress.h"
#include "app/collbench.h"
#include "app/simulate.h"
#include "app/sweep.h"
#include "metrics/training.h"
#include "spec/spec.h"
#include "strategy/strategy.h"
#include "base/error.h"
#include "base/text.h"

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

/* Parses a command's options into `entries` (and `in`, if any), then runs
 * `body`. */
static int run_command(int argc, char **argv, const char *summary, GOptionEntry *entries,
                       CliInputs *in, gboolean (*body)(void *args, GError **error), void *args)
{
    GOptionContext *ctx = g_option_context_new(summary);
    if (in)
        cli_inputs_entries(in, ctx);
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *error = NULL;
    gboolean ok = cli_parse(ctx, argc, argv, &error) && body(args, &error);
    g_option_context_free(ctx);
    for (GOptionEntry *e = entries; e->long_name; e++)
        if (e->arg == G_OPTION_ARG_FILENAME)
            g_free(*(char **)e->arg_data);
    if (in)
        cli_inputs_clear(in);
    if (ok)
        return 0;
    return g_error_matches(error, PS_ERROR, PS_ERROR_INTERRUPTED)
               ? (g_error_free(error), 128 + interrupted)
               : fail(error);
}

/* ---- training totals (simulate and sweep) ----------------------------------- */

typedef struct {
    char *tokens, *price;
} TrainingArgs;

#define TRAINING_ENTRIES(t)                                                                        \
    {"tokens",    0,                                                                               \
     0,           G_OPTION_ARG_FILENAME,                                                             \
     &(t).tokens, "tokens to train on, for the run's steps, days and GPU-hours (2T = 2e12)",       \
     "N"},                                                                                         \
    {                                                                                              \
        "gpu-hour-price", 0, 0, G_OPTION_ARG_FILENAME, &(t).price,                                   \
            "price of one GPU-hour, for the run's cost (needs --tokens)", "P"                      \
    }

/* The flags' tokens and price, 0 when absent. */
static gboolean parse_training(const TrainingArgs *t, double *tokens, double *price, GError **error)
{
    *tokens = 0;
    if (t->price && !t->tokens) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--gpu-hour-price: expected --tokens too (the cost is of a run), got none");
        return FALSE;
    }
    return (!t->tokens || training_parse_count("--tokens", t->tokens, tokens, error)) &&
           cli_parse_number("--gpu-hour-price", t->price, 0, 1e6, FALSE, 0, price, error);
}

/* ---- a whole run's choices (run and sweep --rank-by run-time) ------------- */

typedef struct {
    char *trials, *every, *failure_rate, *restart, *hot_spares;
    gboolean async;
} RunArgs;

#define RUN_ENTRIES(r)                                                                             \
    {"trials",    0,                                                                               \
     0,           G_OPTION_ARG_FILENAME,                                                             \
     &(r).trials, "runs simulated, for the P10, P50 and P90 (default 100)",                        \
     "N"},                                                                                         \
        {"checkpoint-every",                                                                       \
         0,                                                                                        \
         0,                                                                                        \
         G_OPTION_ARG_FILENAME,                                                                      \
         &(r).every,                                                                               \
         "auto (default: the best simulated), steps (500) or a time (30min, 2h)",                  \
         "WHEN"},                                                                                  \
        {"async-save",                                                                             \
         0,                                                                                        \
         0,                                                                                        \
         G_OPTION_ARG_NONE,                                                                        \
         &(r).async,                                                                               \
         "checkpoint asynchronously: pause for a snapshot to host memory, write behind",           \
         NULL},                                                                                    \
        {"failure-rate",                                                                           \
         0,                                                                                        \
         0,                                                                                        \
         G_OPTION_ARG_FILENAME,                                                                      \
         &(r).failure_rate,                                                                        \
         "failures per 1,000 node-days, all kinds (default: the cluster's)",                       \
         "R"},                                                                                     \
        {"restart",                                                                                \
         0,                                                                                        \
         0,                                                                                        \
         G_OPTION_ARG_FILENAME,                                                                      \
         &(r).restart,                                                                             \
         "seconds from a failure to relaunched, before loading (default: the cluster's)",          \
         "S"},                                                                                     \
    {                                                                                              \
        "hot-spares", 0, 0, G_OPTION_ARG_FILENAME, &(r).hot_spares,                                  \
            "yes or no: a spare node replaces a failed one at once (default: the cluster's)",      \
            "YES|NO"                                                                               \
    }

/* The run's choices from its flags and --seed. */
static gboolean parse_run(const CliInputs *in, const RunArgs *r, RunChoice *c, GError **error)
{
    runplan_choice_init(c);
    double trials;
    static const char *const yes_no[] = {"no", "yes", NULL};
    if (!cli_parse_number("--trials", r->trials, 1, 100000, TRUE, RUNPLAN_TRIALS, &trials, error) ||
        (r->every && !runplan_parse_every(r->every, c, error)) ||
        !cli_parse_number("--failure-rate", r->failure_rate, 0, 1e9, FALSE, -1,
                      &c->failures_per_1000_node_days, error) ||
        !cli_parse_number("--restart", r->restart, 0, 1e9, FALSE, -1, &c->restart_s, error) ||
        (r->hot_spares &&
         !cli_parse_choice("--hot-spares", r->hot_spares, yes_no, &c->hot_spares, error)))
        return FALSE;
    if (in->seed && !g_ascii_string_to_unsigned(in->seed, 10, 0, G_MAXUINT64, &c->seed, NULL)) {
        g_autofree char *got = g_strdup_printf("\"%s\"", in->seed);
        ps_error_value(error, "--seed", got, "an integer from 0 to 18446744073709551615");
        return FALSE;
    }
    c->trials = (int)trials;
    c->async = r->async;
    return TRUE;
}

/* ---- simulate ------------------------------------------------------------- */

typedef struct {
    CliInputs in;
    char *format, *output, *trace, *trace_ranks;
    gboolean no_advice;
    TrainingArgs training;
    gboolean explain, breakdown;
} SimulateArgs;

/* The shortest sequence a step is more than latency at: under it the
 * GEMMs are a few rows tall, and launches and the collectives' alpha make
 * the step (pretraining runs 2,048 to 8,192 tokens). */
#define LATENCY_MIN_SEQ_LENGTH 128

/* Warns of a step that is all latency: sequences under
 * LATENCY_MIN_SEQ_LENGTH tokens, or micro-batches of under one token per
 * GPU of the tensor- and context-parallel group that splits them. */
static void warn_latency(const PlanSpec *plan, const ModelSpec *model)
{
    double tokens_per_gpu =
        (double)plan->micro_batch_size * model->seq_length / ((double)plan->tp * plan->cp);
    if (model->seq_length < LATENCY_MIN_SEQ_LENGTH)
        fprintf(stderr,
                "plansim: warning: sequences of %d token%s, under %d: the step is mostly launch "
                "and communication latency, and its MFU says little of a real run "
                "(--seq-length sets it)\n",
                model->seq_length, model->seq_length == 1 ? "" : "s", LATENCY_MIN_SEQ_LENGTH);
    else if (tokens_per_gpu < 1)
        fprintf(stderr,
                "plansim: warning: a micro-batch of %d x %d tokens over tp x cp = %d GPUs is "
                "under one token per GPU: the step is all latency (--micro-batch-size sets it)\n",
                plan->micro_batch_size, model->seq_length, plan->tp * plan->cp);
}

/* Warns, for a plan that ran, of each plan flag given that changes
 * nothing in it (its value differs from the one the plan runs as,
 * strategy_normalize: --cp-algorithm with cp 1, the experts' flags on a
 * dense model), of GPUs of the cluster it leaves idle, and of a step that
 * is all latency. */
static void warn_plan(const CliInputs *in, const PlanSpec *plan, const ModelSpec *model,
                      const ClusterSpec *cluster)
{
    warn_latency(plan, model);
    long long used = plan_spec_gpus(plan), gpus = cluster_spec_gpus(cluster);
    if (used < gpus) {
        g_autofree char *shape = plan_spec_shape(plan, TRUE);
        fprintf(stderr,
                "plansim: warning: the plan runs on %lld of the cluster's %lld GPUs (%s); "
                "--dp or --nodes sets them\n",
                used, gpus, shape);
    }
    g_autoptr(PlanSpec) normal = plan_spec_copy(plan);
    strategy_normalize(normal, model);
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        if (!in->flag_text[f])
            continue;
        g_autofree char *given = plan_field_text(plan, (PlanField)f);
        g_autofree char *runs = plan_field_text(normal, (PlanField)f);
        if (strcmp(given, runs) != 0)
            fprintf(stderr,
                    "plansim: warning: %s%s %s changes nothing in this plan, which runs as "
                    "%s\n",
                    in->flag_name[f], plan_fields[f].flag, given, runs);
    }
}

static gboolean simulate(void *args, GError **error)
{
    SimulateArgs *a = args;
    ReportFormat format = FORMAT_TEXT;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    a->in.outputs[0] = (CliOutput){"-o", a->output};
    a->in.outputs[1] = (CliOutput){"--trace", a->trace};
    if (!cli_parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
        !cli_inputs_load(&a->in, CLI_DEFAULT_PLAN, &model, &cluster, plan, error))
        return FALSE;
    static const char *const which[] = {"all", "stages", NULL};
    int stages_only = -1; /* by default every GPU of a small world, one per stage of a big one */
    if (!cli_parse_choice("--trace-ranks", a->trace_ranks, which, &stages_only, error) ||
        !strategy_resolve(plan, model, cluster, error))
        return FALSE;
    if (stages_only < 0)
        stages_only = plan_spec_gpus(plan) > 64;
    g_autoptr(WhatIf) whatif = cli_inputs_whatif(&a->in, FALSE, error);
    Report rep;
    double tokens, price;
    if (!parse_training(&a->training, &tokens, &price, error))
        return FALSE;
    if (a->explain && a->breakdown) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--explain: expected the report, got --breakdown (which replaces it)");
        return FALSE;
    }
    if (a->explain && format != FORMAT_TEXT) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--explain: expected --format text (JSON has the \"diagnosis\"), got %s",
                    report_format_names[format]);
        return FALSE;
    }
    Progress *progress = progress_start("simulate: replaying the step");
    if (!whatif ||
        !sim_run_whatif(model, cluster, plan, whatif, a->trace, stages_only, &rep, error)) {
        progress_stop(progress);
        return FALSE;
    }
    training_of_step(&rep.training, tokens, price, model, plan, rep.metrics.step_time_s);
    diagnosis_compute(&rep.diagnosis, &rep.metrics, model, cluster, plan);
    ReportAdvice advice[ADVICE_MAX];
    rep.advised = !rep.metrics.fits && !a->no_advice;
    rep.n_advice = rep.advised ? advice_find(model, cluster, plan, advice, &rep.advice_partial) : 0;
    rep.advice = advice;
    progress_stop(progress);
    warn_plan(&a->in, plan, model, cluster);
    Breakdown b;
    GpuSpec gpu = gpu_for_plan(&cluster->gpu, plan);
    if (a->breakdown)
        breakdown_compute(model, &gpu, plan, rep.metrics.critical_stage, &b);
    g_autofree char *report = a->breakdown ? report_breakdown_render(&rep, &b, format)
                                           : report_render(&rep, format, TRUE);
    g_autofree char *prose = a->explain ? report_explain(&rep) : NULL;
    g_autofree char *text = g_strjoin("\n", report, prose, NULL);
    advice_clear(advice, rep.n_advice);
    report_clear(&rep);
    if (text_write_atomic(a->output ? a->output : "-", text, strlen(text), error))
        return TRUE;
    if (cli_replaceable(a->trace)) /* all or nothing: the trace the run wrote goes too */
        g_unlink(a->trace);
    return FALSE;
}

static int cmd_simulate(int argc, char **argv)
{
    SimulateArgs a = {0};
    GOptionEntry entries[] = {
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the report to FILE (whole or not at all)", "FILE"},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &a.trace,
         "write the replay as a Chrome trace (Perfetto, chrome://tracing)", "FILE"},
        {"trace-ranks", 0, 0, G_OPTION_ARG_FILENAME, &a.trace_ranks,
         "all, or stages (each stage's first GPU); default all up to 64 GPUs", "WHICH"},
        {"no-advice", 0, 0, G_OPTION_ARG_NONE, &a.no_advice,
         "a plan that does not fit: skip looking for the changes that make it fit", NULL},
        TRAINING_ENTRIES(a.training),
        {"breakdown", 0, 0, G_OPTION_ARG_NONE, &a.breakdown,
         "instead of the report, where the critical rank's step goes by kernel class "
         "(GEMM, attention, memory-bound, optimizer, exposed communication per group)",
         NULL},
        {"explain", 0, 0, G_OPTION_ARG_NONE, &a.explain,
         "after the report, walk the diagnosis checklist in prose", NULL},
        {NULL},
    };
    return run_command(argc, argv, "- simulate one training step", entries, &a.in, simulate, &a);
}

/* ---- run -------------------------------------------------------------------- */

typedef struct {
    CliInputs in;
    char *format, *output;
    TrainingArgs training;
    RunArgs run;
} RunCommandArgs;

static gboolean run(void *args, GError **error)
{
    RunCommandArgs *a = args;
    ReportFormat format = FORMAT_TEXT;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    g_autoptr(WhatIf) whatif = NULL;
    a->in.outputs[0] = (CliOutput){"-o", a->output};
    double tokens, price;
    RunChoice choice;
    if (!cli_parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
        !cli_inputs_load(&a->in, CLI_DEFAULT_PLAN, &model, &cluster, plan, error) ||
        !strategy_resolve(plan, model, cluster, error) ||
        !(whatif = cli_inputs_whatif(&a->in, TRUE, error)) ||
        !parse_training(&a->training, &tokens, &price, error) ||
        !parse_run(&a->in, &a->run, &choice, error))
        return FALSE;
    if (tokens <= 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--tokens: expected the tokens the run trains on (2T), got none");
        return FALSE;
    }
    Report rep;
    Progress *progress = progress_start("run: replaying the step");
    gboolean replayed = sim_run_whatif(model, cluster, plan, whatif, NULL, FALSE, &rep, error);
    progress_stop(progress);
    if (!replayed)
        return FALSE;
    warn_plan(&a->in, plan, model, cluster);
    if (!rep.metrics.fits)
        fprintf(stderr,
                "plansim: warning: the plan does not fit: %.4g GiB at its peak, over the GPU's "
                "%.4g (plansim simulate says what would make it fit)\n",
                rep.metrics.peak_bytes / 1073741824.0, cluster->gpu.memory_bytes / 1073741824.0);
    RunPlan rp;
    progress = progress_start("run: simulating the trials");
    gboolean ok = runplan_compute(model, cluster, plan, rep.metrics.step_time_s, tokens, &choice,
                                  TRUE, &rp, error);
    progress_stop(progress);
    RunReport rr = {
        .model = model->name,
        .cluster = cluster->name,
        .plan = plan,
        .run = &rp,
        .gpu_hour_price = price,
        .async = choice.async,
    };
    g_autofree char *text = ok ? run_report_render(&rr, format) : NULL;
    report_clear(&rep);
    return ok && text_write_atomic(a->output ? a->output : "-", text, strlen(text), error);
}

static int cmd_run(int argc, char **argv)
{
    RunCommandArgs a = {0};
    GOptionEntry entries[] = {
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the report to FILE (whole or not at all)", "FILE"},
        TRAINING_ENTRIES(a.training),
        RUN_ENTRIES(a.run),
        {NULL},
    };
    return run_command(argc, argv,
                       "- a whole training run: failures, checkpoints, restarts and goodput",
                       entries, &a.in, run, &a);
}

/* ---- sweep ------------------------------------------------------------------ */

typedef struct {
    CliInputs in;
    char *gpus, *grid, *threads, *shard, *top, *output, *rank_by, *max_plans;
    gboolean exhaustive;
    TrainingArgs training;
    RunArgs run;
} SweepArgs;

/* "K/N" into k and n. */
static gboolean parse_shard(const char *text, int *k, int *n, GError **error)
{
    *k = *n = 1;
    if (!text)
        return TRUE;
    const char *slash = strchr(text, '/');
    g_autofree char *first = slash ? g_strndup(text, (gsize)(slash - text)) : NULL;
    guint64 a = 0, b = 0;
    if (!slash || !g_ascii_string_to_unsigned(first, 10, 1, 1000000, &a, NULL) ||
        !g_ascii_string_to_unsigned(slash + 1, 10, 1, 1000000, &b, NULL) || b < a) {
        g_autofree char *got = g_strdup_printf("\"%s\"", text);
        ps_error_value(error, "--shard", got, "K/N with 1 <= K <= N");
        return FALSE;
    }
    *k = (int)a;
    *n = (int)b;
    return TRUE;
}

/* `word` as one word of a shell command: quoted only when it must be. */
static char *shell_word(const char *word)
{
    static const char plain[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-";
    return word[0] && strspn(word, plain) == strlen(word) ? g_strdup(word) : g_shell_quote(word);
}

/* The simulate command that runs `plan` on the inputs `in` named, on
 * `nodes` (NULL: in's): the plan's flags those the user gave and those
 * away from their defaults (plan_spec_flags), not every axis swept. */
static char *simulate_command(const CliInputs *in, const char *nodes, const PlanSpec *plan,
                              const PlanSpec *base, const char *tail)
{
    const char *flags[] = {"--model", "--cluster", "--nodes", "--seq-length"};
    const char *values[] = {in->model, in->cluster, nodes ? nodes : in->nodes, in->seq_length};
    GString *command = g_string_new(tail ? "plansim run" : "plansim simulate");
    for (gsize i = 0; i < G_N_ELEMENTS(flags); i++) {
        g_autofree char *word = values[i] ? shell_word(values[i]) : NULL;
        if (word)
            g_string_append_printf(command, " %s %s", flags[i], word);
    }
    g_autoptr(PlanSpec) shown = plan_spec_copy(plan);
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        if (!base->origin[f])
            shown->origin[f] = NULL;
    g_autofree char *plan_flags = plan_spec_flags(shown);
    g_string_append_printf(command, " %s%s", plan_flags, tail ? tail : "");
    return g_string_free(command, FALSE);
}

/* The flags of a run as given (--tokens, the run's flags, --seed), for a
 * sweep ranked by run-time to name its best plan's `plansim run`. */
static char *run_tail(const CliInputs *in, const TrainingArgs *t, const RunArgs *r)
{
    const char *flags[] = {
        "--tokens",       "--gpu-hour-price", "--trials",     "--checkpoint-every",
        "--failure-rate", "--restart",        "--hot-spares", "--seed"};
    const char *values[] = {t->tokens,       t->price,   r->trials,     r->every,
                            r->failure_rate, r->restart, r->hot_spares, in->seed};
    GString *tail = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(flags); i++) {
        g_autofree char *word = values[i] ? shell_word(values[i]) : NULL;
        if (word)
            g_string_append_printf(tail, " %s %s", flags[i], word);
    }
    if (r->async)
        g_string_append(tail, " --async-save");
    return g_string_free(tail, FALSE);
}

/* The plans that replay as the row `best` of the table (its twins,
 * sweep.h), `twins` of them (rows), each as the flags it differs from it
 * by: " (also --recompute selective; ...)", at most TWINS_SHOWN of them,
 * then how many more; "" when it has none. */
#define TWINS_SHOWN 3
static char *twins_text(const SweepSpec *spec, const SweepResult *r, guint best,
                        const GArray *twins)
{
    if (twins->len == 0)
        return g_strdup("");
    g_autoptr(PlanSpec) first = sweep_plan(spec, &g_array_index(r->rows, SweepRow, best));
    GString *text = g_string_new(" (also ");
    for (guint i = 0; i < MIN(twins->len, TWINS_SHOWN); i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, g_array_index(twins, guint, i));
        g_autoptr(PlanSpec) twin = sweep_plan(spec, row);
        g_autofree char *flags = plan_spec_change_flags(first, twin);
        g_string_append_printf(text, "%s%s", i ? "; " : "", flags);
    }
    if (twins->len > TWINS_SHOWN)
        g_string_append_printf(text, "; %u more", twins->len - TWINS_SHOWN);
    g_string_append(text, ")");
    return g_string_free(text, FALSE);
}

/* What each axis bought the winner `plan` (row `winner`): the best plan
 * with the axis at its default (sweep_axis_gains) and the winner's gain
 * over it, a line each. */
static void print_gains(FILE *to, const SweepSpec *spec, const SweepResult *r, guint winner,
                        const PlanSpec *plan)
{
    g_autofree SweepAxisGain *gains = g_new(SweepAxisGain, MAX(spec->grid->axes->len, 1));
    int n = sweep_axis_gains(spec, r, winner, gains);
    if (n > 0)
        fprintf(to, "what the winner's choices bought (against the best plan at each default):\n");
    double mine = g_array_index(r->rows, SweepRow, winner).score;
    for (int i = 0; i < n; i++) {
        g_autoptr(PlanSpec) at = plan_spec_copy(plan);
        plan_field_put(at, gains[i].field, gains[i].value, NULL);
        g_autofree char *flag = plan_spec_change_flags(plan, at);
        if (gains[i].row < 0) {
            fprintf(to, "  %-32s %s\n", flag,
                    gains[i].exact ? "no plan fits" : "none that fits among the few replayed");
            continue;
        }
        const SweepRow *row = &g_array_index(r->rows, SweepRow, gains[i].row);
        g_autofree char *summary = sweep_summary(spec, row);
        g_autofree char *gain = g_strdup_printf(
            "%s%+.1f %%", gains[i].exact ? "" : "<= ", 100 * (mine / gains[i].score - 1));
        fprintf(to, "  %-32s %s  (its best%s: %s)\n", flag, gain, gains[i].exact ? "" : " replayed",
                summary);
    }
}

/* The --top table: a header, a line per plan, the best first, each plan
 * once with the plans that replay as it named (twins_text; their rows
 * found in one pass), then the command that simulates the best. */
static void print_best(FILE *to, const CliInputs *in, const SweepSpec *spec, const SweepResult *r,
                       const guint *best, int n, const char *tail)
{
    g_autoptr(GHashTable) place = g_hash_table_new(g_direct_hash, g_direct_equal);
    GArray **twins = g_new(GArray *, n);
    for (int i = 0; i < n; i++) {
        twins[i] = g_array_new(FALSE, FALSE, sizeof(guint));
        g_hash_table_insert(place, GUINT_TO_POINTER(best[i] + 1), GINT_TO_POINTER(i + 1));
    }
    for (guint k = 0; k < r->rows->len; k++) {
        gint64 head = g_array_index(r->rows, SweepRow, k).twin_of;
        int i =
            head < 0 ? 0 : GPOINTER_TO_INT(g_hash_table_lookup(place, GUINT_TO_POINTER(head + 1)));
        if (i > 0)
            g_array_append_val(twins[i - 1], k);
    }
    double peak_flops = spec->cluster->gpu.peak_flops;
    gboolean run = spec->rank_by == SWEEP_RANK_RUN_TIME; /* a column of the run's mean days */
    fprintf(to, "%4s %10s %9s %6s %11s %9s %s %s\n", "rank", "tokens/s", "step(s)", "MFU(%)",
            "TFLOP/s/GPU", "peak(GiB)", run ? " run(days)" : "", "plan");
    for (int i = 0; i < n; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, best[i]);
        g_autofree char *also = twins_text(spec, r, best[i], twins[i]);
        g_autofree char *summary = sweep_summary(spec, row);
        g_autofree char *days = !run             ? g_strdup("")
                                : row->score > 0 ? g_strdup_printf(" %9.4g", 1 / row->score / 86400)
                                                 : g_strdup_printf(" %9s", "never");
        fprintf(to, "%4d %10.4g %9.4g %6.1f %11.1f %9.2f %s %s%s\n", i + 1, row->tokens_per_s,
                row->step_time_s, 100 * row->mfu, row->mfu * peak_flops / 1e12,
                row->peak_bytes / 1073741824.0, days, summary, also);
        g_array_free(twins[i], TRUE);
    }
    g_free(twins);
    const SweepRow *winner = &g_array_index(r->rows, SweepRow, best[0]);
    g_autoptr(PlanSpec) plan = sweep_plan(spec, winner);
    g_autofree char *nodes =
        spec->n_clusters > 1 ? g_strdup_printf("%d", sweep_cluster(spec, winner)->nodes) : NULL;
    g_autofree char *command = simulate_command(in, nodes, plan, spec->base, tail);
    fprintf(to, "best: %s\n", command);
    print_gains(to, spec, r, best[0], plan);
}

/* An axis's values as its flag takes them, comma-separated, a run of
 * three or more consecutive integers as its ends: "2,4,8", "1..126". */
static char *axis_text(const GridAxis *axis, const PlanSpec *base)
{
    g_autoptr(PlanSpec) shown = plan_spec_copy(base);
    GString *values = g_string_new(NULL);
    const int *v = (const int *)axis->values->data;
    gboolean numbers = plan_fields[axis->field].kind == FIELD_INT;
    for (guint i = 0, end; i < axis->values->len; i = end + 1) {
        for (end = i; numbers && end + 1 < axis->values->len && v[end + 1] == v[end] + 1; end++)
            ;
        if (end < i + 2)
            end = i;
        plan_field_put(shown, axis->field, v[i], NULL);
        g_autofree char *text = plan_field_text(shown, axis->field);
        g_string_append_printf(values, "%s%s", i ? "," : "", text);
        if (end > i)
            g_string_append_printf(values, "..%d", v[end]);
    }
    return g_string_free(values, FALSE);
}

/* The space a sweep walks, as its axes: "nodes 64,128 x tp 1,2,4 x pp 1,2
 * x ..."; "one plan" with no axis. */
static char *space_text(const PlanGrid *grid, const PlanSpec *base, const GPtrArray *clusters)
{
    GString *text = g_string_new(grid->axes->len || clusters->len > 1 ? "" : "one plan");
    for (guint i = 0; clusters->len > 1 && i < clusters->len; i++)
        g_string_append_printf(text, "%s%d%s", i ? "," : "nodes ",
                               ((const ClusterSpec *)g_ptr_array_index(clusters, i))->nodes,
                               i + 1 == clusters->len && grid->axes->len ? " x " : "");
    for (guint i = 0; i < grid->axes->len; i++) {
        const GridAxis *axis = &g_array_index(grid->axes, GridAxis, i);
        g_autofree char *values = axis_text(axis, base);
        g_string_append_printf(text, "%s%s %s", i ? " x " : "", plan_fields[axis->field].name,
                               values);
    }
    return g_string_free(text, FALSE);
}

/* A field the plan file or a flag sets is pinned: the grid's axis for it
 * goes, the default grid's silently, a grid file's (`grid_file`) with a
 * note on stderr. */
static void pin_fields(PlanGrid *grid, const PlanSpec *base, const char *grid_file)
{
    for (guint i = grid->axes->len; i-- > 0;) {
        const GridAxis *axis = &g_array_index(grid->axes, GridAxis, i);
        PlanField f = axis->field;
        if (!base->origin[f])
            continue;
        if (grid_file) {
            g_autofree char *values = axis_text(axis, base);
            g_autofree char *value = plan_field_text(base, f);
            fprintf(stderr, "plansim: note: %s pins %s to %s: %s's values %s are not swept\n",
                    plan_field_origin(base, f), plan_fields[f].name, value, grid_file, values);
        }
        plan_grid_remove(grid, f);
    }
}

/* The clusters of a --nodes list (`sizes`, NULL or one: `cluster` alone),
 * copies of `cluster` (loaded at the first size); fails on a size not a
 * node count or one given twice. */
static GPtrArray *cluster_sizes(const ClusterSpec *cluster, char **sizes, GError **error)
{
    GPtrArray *clusters = g_ptr_array_new_with_free_func((GDestroyNotify)cluster_spec_free);
    g_ptr_array_add(clusters, cluster_spec_copy(cluster));
    for (guint i = 1; sizes && sizes[0] && sizes[i]; i++) {
        double nodes;
        if (!cli_parse_number("--nodes", sizes[i], 1, CLUSTER_MAX_GPUS / cluster->gpus_per_node, TRUE,
                          0, &nodes, error)) {
            g_ptr_array_free(clusters, TRUE);
            return NULL;
        }
        for (guint k = 0; k < clusters->len; k++) {
            if (((const ClusterSpec *)g_ptr_array_index(clusters, k))->nodes == (int)nodes) {
                g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                            "--nodes: expected distinct node counts, got %s twice", sizes[i]);
                g_ptr_array_free(clusters, TRUE);
                return NULL;
            }
        }
        ClusterSpec *more = cluster_spec_copy(cluster);
        more->nodes = (int)nodes;
        g_ptr_array_add(clusters, more);
    }
    return clusters;
}

/* The most reasons of invalid plans a sweep lists. */
#define REASONS_SHOWN 12

static gint by_count(gconstpointer a, gconstpointer b, gpointer reasons)
{
    gint64 x = *(gint64 *)g_hash_table_lookup(reasons, a),
           y = *(gint64 *)g_hash_table_lookup(reasons, b);
    return x != y ? (x < y ? 1 : -1) : strcmp(a, b);
}

/* The reasons plans were invalid, the commonest first (ties: by text, the
 * same order every run), REASONS_SHOWN of them, then how many more. */
static void print_reasons(GHashTable *reasons)
{
    GList *all = g_list_sort_with_data(g_hash_table_get_keys(reasons), by_count, reasons);
    gint64 more = 0, rest = 0;
    int shown = 0;
    for (GList *l = all; l; l = l->next) {
        gint64 n = *(gint64 *)g_hash_table_lookup(reasons, l->data);
        if (shown++ < REASONS_SHOWN) {
            fprintf(stderr, "  %6" G_GINT64_FORMAT "  %s\n", n, (char *)l->data);
        } else {
            more++;
            rest += n;
        }
    }
    if (more)
        fprintf(stderr, "  %6" G_GINT64_FORMAT "  for %" G_GINT64_FORMAT " other reasons\n", rest,
                more);
    g_list_free(all);
}

static gboolean sweep(void *args, GError **error)
{
    SweepArgs *a = args;
    g_autoptr(PlanSpec) base = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    g_autoptr(PlanGrid) grid = NULL;
    g_autoptr(WhatIf) whatif = NULL;
    double gpus, threads, top, max_plans;
    int shard, shards;
    a->in.outputs[0] = (CliOutput){"-o", a->output};
    a->in.grid = a->grid;
    /* --nodes 64,128,256: the inputs at the first size, then a cluster per
     * size, the sweep's outermost axis */
    g_auto(GStrv) sizes = a->in.nodes ? g_strsplit(a->in.nodes, ",", -1) : NULL;
    if (sizes && g_strv_length(sizes) > 1) {
        g_free(a->in.nodes);
        a->in.nodes = g_strdup(sizes[0]);
    }
    g_autoptr(GPtrArray) clusters = NULL;
    if (!cli_inputs_load(&a->in, NULL, &model, &cluster, base, error) ||
        !(clusters = cluster_sizes(cluster, sizes, error)) ||
        !(whatif = cli_inputs_whatif(&a->in, TRUE, error)) ||
        !cli_parse_number("--gpus", a->gpus, 1, CLUSTER_MAX_GPUS, TRUE, 0, &gpus, error) ||
        !cli_parse_number("--threads", a->threads, 1, 1024, TRUE, g_get_num_processors(), &threads,
                      error) ||
        !cli_parse_number("--top", a->top, 1, 1000, TRUE, SWEEP_DEFAULT_TOP, &top, error) ||
        !cli_parse_number("--max-plans", a->max_plans, 1, SWEEP_MAX_PLANS, TRUE,
                          SWEEP_EXHAUSTIVE_PLANS, &max_plans, error) ||
        !parse_shard(a->shard, &shard, &shards, error))
        return FALSE;
    if (a->max_plans && !a->exhaustive && whatif->jitter == 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--max-plans: expected --exhaustive (or --jitter) with it, got \"%s\" alone",
                    a->max_plans);
        return FALSE;
    }
    if (gpus && clusters->len > 1) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--gpus: expected none with several --nodes (each size's plans use all of its "
                    "GPUs), got %s",
                    a->gpus);
        return FALSE;
    }
    if (gpus > cluster_spec_gpus(cluster)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--gpus: expected at most the cluster's %d, "
                    "got %s",
                    cluster_spec_gpus(cluster), a->gpus);
        return FALSE;
    }
    for (guint i = 0; i < clusters->len; i++) {
        const ClusterSpec *c = g_ptr_array_index(clusters, i);
        if (!whatif_check(whatif, c, gpus ? (int)gpus : cluster_spec_gpus(c), error))
            return FALSE;
    }
    grid = plan_grid_default(model, cluster);
    pin_fields(grid, base, NULL);
    if (a->grid && !plan_grid_load(grid, a->grid, error))
        return FALSE;
    pin_fields(grid, base, a->grid);
    double tokens, price;
    int rank_by = SWEEP_RANK_TOKENS_PER_S;
    if (!parse_training(&a->training, &tokens, &price, error) ||
        !cli_parse_choice("--rank-by", a->rank_by, sweep_rank_names, &rank_by, error))
        return FALSE;
    if (rank_by != SWEEP_RANK_TOKENS_PER_S && tokens <= 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--rank-by: expected --tokens too for \"%s\" (of a run), got none", a->rank_by);
        return FALSE;
    }
    RunChoice run;
    if (!parse_run(&a->in, &a->run, &run, error))
        return FALSE;
    if (a->in.seed && !a->in.jitter && rank_by != SWEEP_RANK_RUN_TIME) {
        g_autofree char *got = ps_error_quote(a->in.seed);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--seed: expected --jitter or --rank-by run-time with it, got %s alone", got);
        return FALSE;
    }
    const char *run_flag = a->run.trials         ? "--trials"
                           : a->run.every        ? "--checkpoint-every"
                           : a->run.async        ? "--async-save"
                           : a->run.failure_rate ? "--failure-rate"
                           : a->run.restart      ? "--restart"
                           : a->run.hot_spares   ? "--hot-spares"
                                                 : NULL;
    if (run_flag && rank_by != SWEEP_RANK_RUN_TIME) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected --rank-by run-time with it (a run's flag), got --rank-by %s",
                    run_flag, sweep_rank_names[rank_by]);
        return FALSE;
    }
    if (rank_by == SWEEP_RANK_RUN_TIME && !runplan_check(cluster, &run, error))
        return FALSE;
    SweepSpec spec = {.model = model,
                      .cluster = cluster,
                      .clusters = (const ClusterSpec *const *)clusters->pdata,
                      .n_clusters = (int)clusters->len,
                      .base = base,
                      .grid = grid,
                      .gpus = (int)gpus,
                      .threads = (int)threads,
                      .shard = shard,
                      .shards = shards,
                      .progress = isatty(2) && !g_getenv("CI"),
                      .stop = &interrupted,
                      .top = (int)top,
                      /* noise can make a step beat its bound: no pruning */
                      .exhaustive = a->exhaustive || whatif->jitter > 0,
                      .max_plans = (gint64)max_plans,
                      .tokens = tokens,
                      .gpu_hour_price = price,
                      .rank_by = (SweepRank)rank_by,
                      .run = &run,
                      .whatif = whatif,
                      .csv = a->output != NULL};
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
    if (r->count[REPORT_INVALID] == r->combinations && shards == 1) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected a grid with at least one valid plan, got %" G_GINT64_FORMAT
                    " combinations, all invalid",
                    a->grid ? a->grid : "the default grid", r->combinations);
        return FALSE;
    }
    /* the CSV only when asked (-o FILE, or -o - for stdout); the table on
     * stdout unless the CSV is there */
    if (a->output) {
        GString *csv = g_string_new(r->header);
        for (guint i = 0; i < r->rows->len; i++)
            g_string_append(csv, g_array_index(r->rows, SweepRow, i).csv);
        gboolean ok = text_write_atomic(a->output, csv->str, csv->len, error);
        g_string_free(csv, TRUE);
        if (!ok)
            return FALSE;
    }
    gboolean table_out = !a->output || strcmp(a->output, "-") != 0;
    g_autofree char *tail =
        rank_by == SWEEP_RANK_RUN_TIME ? run_tail(&a->in, &a->training, &a->run) : NULL;
    g_autofree guint *best = g_new(guint, (gsize)top);
    int n = sweep_best(r, (int)top, best);
    if (table_out && n > 0)
        print_best(stdout, &a->in, &spec, r, best, n, tail);
    g_autofree char *space = space_text(grid, base, clusters);
    fprintf(stderr, "sweep: %s\n", space);
    fprintf(stderr, "sweep: %" G_GINT64_FORMAT " combinations, %" G_GINT64_FORMAT " valid:",
            r->combinations, r->combinations - r->count[REPORT_INVALID]);
    for (int s = 0; s < REPORT_STATUSES; s++) { /* "120 simulated (90 replayed), 3 pruned, ..." */
        fprintf(stderr, "%s %" G_GINT64_FORMAT " %s", s ? "," : "", r->count[s],
                report_status_names[s]);
        if (s == REPORT_SIMULATED)
            fprintf(stderr, " (%" G_GINT64_FORMAT " replayed)", r->replayed);
        if (s == REPORT_INVALID && r->refused > 0)
            fprintf(stderr, " (%" G_GINT64_FORMAT " refused by the space's rules, unvisited)",
                    r->refused);
    }
    fprintf(stderr, "\n");
    print_reasons(r->reasons);
    if (n == 0)
        fprintf(stderr, "sweep: no plan fits in memory\n");
    else if (!table_out)
        print_best(stderr, &a->in, &spec, r, best, n, tail);
    return TRUE;
}

static int cmd_sweep(int argc, char **argv)
{
    SweepArgs a = {0};
    GOptionEntry entries[] = {
        {"gpus", 0, 0, G_OPTION_ARG_FILENAME, &a.gpus, "GPUs each plan uses (default: all)", "N"},
        {"grid", 0, 0, G_OPTION_ARG_FILENAME, &a.grid,
         "values to try per plan field (JSON), over the default space", "FILE"},
        {"threads", 'j', 0, G_OPTION_ARG_FILENAME, &a.threads, "threads (default: every core)", "N"},
        {"shard", 0, 0, G_OPTION_ARG_FILENAME, &a.shard, "run only the K-th of N slices", "K/N"},
        {"top", 0, 0, G_OPTION_ARG_FILENAME, &a.top,
         "the K best plans that fit, each once, as a table on stdout (stderr with -o -); default "
         "10",
         "K"},
        TRAINING_ENTRIES(a.training),
        {"rank-by", 0, 0, G_OPTION_ARG_FILENAME, &a.rank_by,
         "tokens_per_s (default), or for --tokens the run's time, cost (GPU-hours) or run-time "
         "(its mean wall-clock time with failures and checkpoints)",
         "WHAT"},
        {"exhaustive", 0, 0, G_OPTION_ARG_NONE, &a.exhaustive,
         "replay every valid plan: no memory pre-check, no pruning", NULL},
        {"max-plans", 0, 0, G_OPTION_ARG_FILENAME, &a.max_plans,
         "with --exhaustive, the most plans it replays (default 1000)", "N"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write a CSV row for each plan to FILE (whole or not at all; - for stdout)", "FILE"},
        RUN_ENTRIES(a.run),
        {NULL},
    };
    return run_command(argc, argv, "- the best plans of a grid (-o: a CSV row for each plan)",
                       entries, &a.in, sweep, &a);
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
    if (!cli_parse_choice("--op", a->op, collective_names, (int *)&op, error) ||
        !cli_parse_choice("--algorithm", a->algorithm, collective_algorithm_choices, (int *)&algorithm,
                      error))
        return FALSE;
    g_autofree char *cluster_path =
        cli_input_path(&cli_clusters, a->cluster, CLI_DEFAULT_CLUSTER, error);
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!cluster_path ||
        !cli_parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
        !cli_parse_number("--nodes", a->nodes, 1, CLUSTER_MAX_GPUS, TRUE, 0, &nodes, error) ||
        !cli_parse_number("--ranks", a->ranks, 2, CLUSTER_MAX_GPUS, TRUE, 8, &ranks, error) ||
        !cli_parse_bytes("--min-bytes", a->min_bytes, 1, 1e15, 1 << 20, &min_bytes, error) ||
        !cli_parse_bytes("--max-bytes", a->max_bytes, 1, 1e15, 1 << 30, &max_bytes, error) ||
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
        {"op", 0, 0, G_OPTION_ARG_FILENAME, &a.op,
         "all_reduce (default), all_gather, reduce_scatter, all_to_all, send_recv", "OP"},
        {"ranks", 0, 0, G_OPTION_ARG_FILENAME, &a.ranks, "GPUs taking part (default 8)", "N"},
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &a.cluster,
         "cluster JSON, or a shipped cluster's name", "FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_FILENAME, &a.nodes, "override the cluster's node count", "N"},
        {"min-bytes", 0, 0, G_OPTION_ARG_FILENAME, &a.min_bytes,
         "smallest size, bytes or K, M, G (default 1M)", "B"},
        {"max-bytes", 0, 0, G_OPTION_ARG_FILENAME, &a.max_bytes,
         "largest size, bytes or K, M, G (default 1G)", "B"},
        {"algorithm", 0, 0, G_OPTION_ARG_FILENAME, &a.algorithm,
         "auto (default), ring, tree, hierarchical or nvls", "A"},
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the table to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    return run_command(argc, argv, "- an nccl-tests table from the simulated network", entries,
                       NULL, collective, &a);
}

/* ---- calibrate -------------------------------------------------------------- */

typedef struct {
    char *cluster, *gemm, *output, *runs, *fit;
    char **nccl;
} CalibrateArgs;

/* A run's model cell that is no file next to the runs: a shipped model. */
static char *run_model_path(const char *cell, GError **error)
{
    return cli_input_path(&cli_models, cell, NULL, error);
}

/* calibrate --runs: the GPU's parameters fitted to measured runs. */
static gboolean calibrate_runs(CalibrateArgs *a, const char *cluster_path, GError **error)
{
    int params[CALIB_RUNS_MAX_PARAMS], n_params;
    if (!calib_runs_params_parse(a->fit ? a->fit : CALIB_RUNS_DEFAULT_FIT, "--fit", params,
                                 &n_params, error))
        return FALSE;
    g_autoptr(ClusterSpec) base = cluster_spec_load(cluster_path, 0, error);
    g_autoptr(CalibRuns) runs = base ? calib_runs_load(a->runs, run_model_path, error) : NULL;
    if (!runs || !calib_runs_check(base, runs, n_params, error))
        return FALSE;
    g_autoptr(RunsFit) fit = calib_runs_fit(base, runs, params, n_params, TRUE);
    g_autofree char *json = cluster_spec_json(fit->cluster);
    if (!text_write_atomic(a->output, json, strlen(json), error))
        return FALSE;
    fputs(fit->report, strcmp(a->output, "-") == 0 ? stderr : stdout);
    calib_print_warnings(fit->warnings);
    return TRUE;
}

static gboolean calibrate(void *args, GError **error)
{
    CalibrateArgs *a = args;
    if (!a->output || (!a->nccl && !a->gemm && !a->runs)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "calibrate: expected -o FILE and at least one of --nccl-tests FILE, "
                    "--gemm FILE and --runs FILE, got %s",
                    a->output ? "no measurements" : "no -o");
        return FALSE;
    }
    if (a->runs && (a->nccl || a->gemm)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "calibrate: expected --runs alone or --nccl-tests and --gemm, got both "
                    "(fit the microbenchmarks first, then --runs with their cluster)");
        return FALSE;
    }
    if (a->fit && !a->runs) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "calibrate: expected --fit with --runs");
        return FALSE;
    }
    g_autofree char *cluster_path =
        cli_input_path(&cli_clusters, a->cluster, CLI_DEFAULT_CLUSTER, error);
    if (!cluster_path)
        return FALSE;
    g_autoptr(GPtrArray) inputs = g_ptr_array_new();
    g_ptr_array_add(inputs, cluster_path);
    g_ptr_array_add(inputs, a->gemm ? a->gemm : a->runs);
    for (char **path = a->nccl; path && *path; path++)
        g_ptr_array_add(inputs, *path);
    CliOutput out = {"-o", a->output};
    if (!cli_check_outputs(&out, 1, (const char *const *)inputs->pdata, (int)inputs->len, error))
        return FALSE;
    if (a->runs)
        return calibrate_runs(a, cluster_path, error);
    g_autoptr(ClusterSpec) base = cluster_spec_load(cluster_path, 0, error);
    g_autoptr(GPtrArray) nccl = g_ptr_array_new_with_free_func((GDestroyNotify)calib_nccl_free);
    g_autoptr(CalibGemm) gemm = NULL;
    if (!base || (a->gemm && (!(gemm = calib_gemm_load(a->gemm, error)) ||
                              !calib_gemm_check(&base->gpu, gemm, error))))
        return FALSE;
    for (char **path = a->nccl; path && *path; path++) {
        CalibNccl *data = calib_nccl_load(*path, error);
        if (!data)
            return FALSE;
        g_ptr_array_add(nccl, data);
        if (!calib_nccl_check(base, data, error))
            return FALSE;
    }
    g_autoptr(Calibration) c =
        calib_run(base, (CalibNccl *const *)nccl->pdata, (int)nccl->len, gemm);
    g_autofree char *json = cluster_spec_json(c->cluster);
    if (!text_write_atomic(a->output, json, strlen(json), error))
        return FALSE;
    fputs(c->report, strcmp(a->output, "-") == 0 ? stderr : stdout);
    calib_print_warnings(c->warnings);
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
        {"runs", 0, 0, G_OPTION_ARG_FILENAME, &a.runs,
         "measured runs, CSV: model, gpus, plan fields, and step_s, tokens_per_s_per_gpu or "
         "tflops_per_gpu",
         "FILE"},
        {"fit", 0, 0, G_OPTION_ARG_FILENAME, &a.fit,
         "with --runs, the GPU parameters to fit (default: " CALIB_RUNS_DEFAULT_FIT ")", "LIST"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the fitted cluster to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    int status =
        run_command(argc, argv, "- fit a cluster's efficiencies and latencies to measurements",
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
    {"run", cmd_run, "a whole training run with failures and checkpoints"},
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
    g_autofree char *got = ps_error_quote(argv[1]);
    g_autofree char *line = ps_error_escape(got);
    fprintf(stderr, "plansim: unknown command %s (try plansim --help)\n", line);
    return 2;
}
