/* cli.c: the command line's inputs (cli.h): the files the input flags
 * name (a shipped name through base/shipped.h), the flags' numbers, sizes
 * and words, the outputs checked against the inputs, the inputs simulate,
 * run and sweep share, and the parse of a command's arguments. */
#include "app/cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "base/error.h"
#include "base/names.h"
#include "base/shipped.h"
#include "base/text.h"
#include "spec/megatron.h"
#include "strategy/strategy.h"

/* Sequences per step when neither a plan file nor a flag gives them, in
 * simulate and sweep alike: Llama 2's batch, 4M tokens of 4,096 (Touvron
 * et al. 2023, section 2.2). */
#define DEFAULT_GLOBAL_BATCH 1024
/* The sequence length a Hugging Face config runs at without --seq-length:
 * it gives the longest context the model takes (max_position_embeddings,
 * 1M tokens for some), not the length it trains on; 4,096 is Llama 2's
 * and Megatron-LM's common pretraining length, and a config allowing less
 * keeps its own. */
#define HF_DEFAULT_SEQ_LENGTH 4096

const CliShipped cli_models = {.flag = "--model", .files = &shipped_models};
const CliShipped cli_clusters = {.flag = "--cluster", .files = &shipped_clusters};
const CliShipped cli_plans = {.flag = "--plan", .files = &shipped_plans};

char *cli_input_path(const CliShipped *kind, const char *given, const char *fallback,
                     GError **error)
{
    if (!given) {
        char *path = shipped_find(fallback);
        if (!path) {
            g_autoptr(GPtrArray) folders = g_ptr_array_new_with_free_func(g_free);
            g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
            shipped_names(kind->files, folders, names);
            g_autofree char *held = shipped_held(kind->files, names);
            g_ptr_array_add(folders, NULL);
            g_autofree char *where = g_strjoinv(", ", (char **)folders->pdata);
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "%s: expected a file, as the shipped default %s is in none of %s; %s",
                        kind->flag, fallback, where, held);
        }
        return path;
    }
    if (g_file_test(given, G_FILE_TEST_EXISTS) || strchr(given, G_DIR_SEPARATOR))
        return g_strdup(given);
    char *path = shipped_named(kind->files, given);
    if (!path)
        shipped_refuse(error, kind->files, kind->flag, given);
    return path;
}

/* Whether two paths name the same file. */
gboolean cli_same_file(const char *a, const char *b)
{
    GStatBuf x, y;
    return g_stat(a, &x) == 0 && g_stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* A number from a flag in [lo, hi], or `fallback` when the flag is
 * absent: an integer when `integral`, a count with a suffix K, M, G or T
 * as every count is written (text_parse_count). */
gboolean cli_parse_number(const char *flag, const char *text, double lo, double hi,
                             gboolean integral, double fallback, double *out, GError **error)
{
    *out = fallback;
    TextSuffixes suffixes = integral ? TEXT_BINARY : TEXT_PLAIN;
    if (text && (!text_parse_count(text, suffixes, integral, out) || !(*out >= lo && *out <= hi))) {
        g_autofree char *got = g_strdup_printf("\"%s\"", text);
        ps_error_value(error, flag, got, "%s from %.15g to %.15g%s",
                       integral ? "an integer" : "a number", lo, hi, text_suffixes_help(suffixes));
        return FALSE;
    }
    return TRUE;
}

/* nccl-tests reads its -b and -e so (parsesize in its src/common.cu): a
 * whole number of bytes, 1.5 bytes being none. */
gboolean cli_parse_bytes(const char *flag, const char *text, double lo, double hi,
                         double fallback, double *out, GError **error)
{
    *out = fallback;
    if (text && (!text_parse_count(text, TEXT_BINARY, FALSE, out) || !(*out >= lo && *out <= hi) ||
                 *out != floor(*out))) {
        g_autofree char *got = g_strdup_printf("\"%s\"", text);
        ps_error_value(error, flag, got, "a whole number of bytes from %.15g to %.15g%s", lo, hi,
                       text_suffixes_help(TEXT_BINARY));
        return FALSE;
    }
    return TRUE;
}

/* A word from a flag, one of `table`'s (its index into `out`), or `out`
 * unchanged when the flag is absent. */
gboolean cli_parse_choice(const char *flag, const char *text, const char *const *table, int *out,
                             GError **error)
{
    int i = names_find(table, text);
    if (text && i < 0) {
        g_autofree char *choices = names_list(table, FALSE);
        g_autofree char *got = g_strdup_printf("\"%s\"", text);
        ps_error_value(error, flag, got, "%s", choices);
        return FALSE;
    }
    *out = text ? i : *out;
    return TRUE;
}

/* Whether `path` names a file plansim replaces when it writes it: not
 * standard output ("-") nor an existing device or pipe (/dev/null). */
gboolean cli_replaceable(const char *path)
{
    GStatBuf st;
    return path && strcmp(path, "-") != 0 && (g_stat(path, &st) != 0 || S_ISREG(st.st_mode));
}

/* Whether two paths name one file: the same file if both exist, else the
 * same path once made absolute. */
static gboolean same_target(const char *a, const char *b)
{
    if (g_file_test(a, G_FILE_TEST_EXISTS) || g_file_test(b, G_FILE_TEST_EXISTS))
        return cli_same_file(a, b);
    g_autofree char *ca = g_canonicalize_filename(a, NULL), *cb = g_canonicalize_filename(b, NULL);
    return strcmp(ca, cb) == 0;
}

/* Refuses outputs (n of them) that would overwrite one of the `inputs`
 * (`n_inputs` of them, NULLs skipped) or each other: the
 * input would be lost, or one output silently replace another. */
gboolean cli_check_outputs(const CliOutput *outs, int n, const char *const *inputs, int n_inputs,
                              GError **error)
{
    for (int i = 0; i < n; i++) {
        if (outs[i].path && !*outs[i].path) {
            ps_error_value(error, outs[i].flag, "\"\"", "a file name (\"-\": standard output)");
            return FALSE;
        }
        if (!cli_replaceable(outs[i].path))
            continue;
        if (!text_check_target(outs[i].path, error))
            return FALSE;
        for (int j = 0; j < n_inputs; j++)
            if (inputs[j] && same_target(outs[i].path, inputs[j])) {
                g_autofree char *out = ps_error_quote(outs[i].path);
                g_autofree char *in = ps_error_quote(inputs[j]);
                g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                            "%s: expected a file that is not an input, got %s, which is %s read "
                            "as input",
                            outs[i].flag, out, in);
                return FALSE;
            }
        for (int j = 0; j < i; j++)
            if (cli_replaceable(outs[j].path) && same_target(outs[i].path, outs[j].path)) {
                g_autofree char *got = ps_error_quote(outs[i].path);
                g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                            "%s: expected a file other than %s's, got %s", outs[i].flag,
                            outs[j].flag, got);
                return FALSE;
            }
    }
    return TRUE;
}

/* A plan flag seen: --FLAG VALUE, a bare --BOOL, --BOOL=VALUE or --no-BOOL.
 * The last one given for a field wins. */
static gboolean on_plan_flag(const char *name, const char *value, gpointer data, GError **error)
{
    CliInputs *in = data;
    gboolean negated = g_str_has_prefix(name, "--no-");
    if (negated && value) {
        g_autofree char *got = g_strdup_printf("\"%s\"", value);
        ps_error_value(error, name, got, "no value");
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

/* Every value is taken as its bytes (G_OPTION_ARG_FILENAME,
 * G_OPTION_FLAG_FILENAME), never converted from the locale's charset,
 * which plansim never sets (so "C": "--tp=é" would fail naming no flag):
 * cli_parse has checked they are UTF-8. */
void cli_inputs_entries(CliInputs *in, GOptionContext *ctx)
{
    GOptionEntry entries[] = {
        {"model", 0, 0, G_OPTION_ARG_FILENAME, &in->model,
         "model JSON (plansim or Hugging Face), or a shipped model's name", "FILE"},
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &in->cluster,
         "cluster JSON, or a shipped cluster's name", "FILE"},
        {"plan", 0, 0, G_OPTION_ARG_FILENAME, &in->plan,
         "plan JSON, or a shipped plan's name (flags override it)", "FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_FILENAME, &in->nodes, "override the cluster's node count",
         "N"},
        {"gpus-per-node", 0, 0, G_OPTION_ARG_FILENAME, &in->gpus_per_node,
         "the GPUs of each node the job uses, fewer than the node's (64 of a 72-GPU NVL72 rack)",
         "N"},
        {"seq-length", 0, 0, G_OPTION_ARG_FILENAME, &in->seq_length,
         "tokens per sequence, over the model's", "S"},
        {"megatron-args", 0, 0, G_OPTION_ARG_FILENAME, &in->megatron_args,
         "the plan (and, without --model, the model) of a Megatron-LM launch line (@FILE: a "
         "file's); plan flags override it",
         "ARGS"},
        {NULL},
    };
    g_option_context_add_main_entries(ctx, entries, NULL);
    /* every plan field's flag, from the table; a boolean's value is
     * optional (--sequence-parallel, --sequence-parallel=false) and it has
     * a --no- form */
    GOptionEntry plan_entries[2 * PLAN_N_FIELDS + 1];
    int n = 0;
    char(*no_flags)[64] = in->no_flags, (*no_help)[128] = in->no_help;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        const PlanFieldInfo *d = &plan_fields[f];
        gboolean boolean = d->kind == FIELD_BOOL;
        plan_entries[n++] = (GOptionEntry){d->flag,
                                           0,
                                           G_OPTION_FLAG_FILENAME |
                                               (boolean ? G_OPTION_FLAG_OPTIONAL_ARG : 0),
                                           G_OPTION_ARG_CALLBACK,
                                           (gpointer)on_plan_flag,
                                           d->help,
                                           boolean ? "true|false" : "V"};
        if (boolean) {
            g_snprintf(no_flags[f], sizeof no_flags[f], "no-%s", d->flag);
            g_snprintf(no_help[f], sizeof no_help[f], "--%s=false", d->flag);
            plan_entries[n++] = (GOptionEntry){no_flags[f],
                                               0,
                                               G_OPTION_FLAG_FILENAME |
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
    GOptionEntry whatif_entries[] = {
        {"slow-gpu", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &in->slow_gpu,
         "GPU RANK computes FACTOR (1 to 1000, \"2\" or \"2x\") times slower; repeatable",
         "RANK:FACTOR"},
        {"slow-link", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &in->slow_link,
         "LINK, named as the report names links (\"node 0 nic 2 out\"; no direction: both), runs "
         "FACTOR (1 to 1e6, \"2\" or \"2x\") times slower; repeatable",
         "LINK:FACTOR"},
        {"jitter", 0, 0, G_OPTION_ARG_FILENAME, &in->jitter,
         "log-normal noise of mean 1 on every compute task, sigma SIGMA", "SIGMA"},
        {"seed", 0, 0, G_OPTION_ARG_FILENAME, &in->seed,
         "the seed of the jitter and of a run's failures (default 1)", "S"},
        {NULL},
    };
    GOptionGroup *whatif = g_option_group_new(
        "whatif", "What-if options (the step also replayed clean):", "Show what-if options", in,
        NULL);
    g_option_group_add_entries(whatif, whatif_entries);
    g_option_context_add_group(ctx, whatif);
}

void cli_inputs_clear(CliInputs *in)
{
    g_free(in->model);
    g_free(in->cluster);
    g_free(in->plan);
    g_free(in->nodes);
    g_free(in->gpus_per_node);
    g_free(in->seq_length);
    g_free(in->megatron_args);
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        g_free(in->flag_text[f]);
    g_strfreev(in->slow_gpu);
    g_strfreev(in->slow_link);
    g_free(in->jitter);
    g_free(in->seed);
}

/* The what-if flags given (app/whatif.h). `seeds_runs`: --seed also
 * seeds a run's failures, so it may come without --jitter. */
WhatIf *cli_inputs_whatif(const CliInputs *in, gboolean seeds_runs, GError **error)
{
    g_autoptr(WhatIf) w = whatif_new();
    const char *seed = seeds_runs && !in->jitter ? NULL : in->seed;
    if (!whatif_parse(w, in->slow_gpu, in->slow_link, in->jitter, seed, error))
        return NULL;
    return g_steal_pointer(&w);
}

ClusterSpec *cli_cluster_load(const CliInputs *in, const char *given, int nodes, GError **error)
{
    double per_node;
    g_autofree char *path = cli_input_path(&cli_clusters, given, CLI_DEFAULT_CLUSTER, error);
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!path ||
        !cli_parse_number("--gpus-per-node", in->gpus_per_node, 1, CLUSTER_MAX_GPUS, TRUE, 0,
                          &per_node, error) ||
        !(cluster = cluster_spec_load(path, nodes, error)) ||
        !cluster_spec_use_gpus_per_node(cluster, (int)per_node, "--gpus-per-node", error))
        return NULL;
    return g_steal_pointer(&cluster);
}

/* Loads the model (its sequence length replaced by --seq-length), the
 * cluster and the plan: the plan file, else `default_plan` (if any) when
 * the model and the cluster are the shipped defaults, named or not; then
 * the flags; then DEFAULT_GLOBAL_BATCH if nothing gave the global batch. */
/* The launch line of --megatron-args, read: NULL (no error) when none is
 * given. */
static gboolean read_megatron(const CliInputs *in, MegatronLine **line, GError **error)
{
    *line = NULL;
    if (!in->megatron_args)
        return TRUE;
    if (in->plan) {
        g_autofree char *got = ps_error_quote(in->plan);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--megatron-args: expected no --plan beside it (the launch line is the whole "
                    "plan; plan flags override it), got --plan %s",
                    got);
        return FALSE;
    }
    return (*line = megatron_line_read(in->megatron_args, error)) != NULL;
}

/* The model: the file's, or the launch line's; with its sequence length
 * from --seq-length, else the line's; a file's model checked against the
 * line's shape flags. */
static gboolean load_model(const CliInputs *in, const MegatronLine *line, const char *path,
                           ModelSpec **model, GError **error)
{
    gboolean max_positions = FALSE;
    const char *line_seq = line ? megatron_line_seq_length(line) : NULL;
    if (!path) {
        /* named after its file (llama3-70b.sh: llama3-70b), if any */
        g_autofree char *file =
            g_path_get_basename(in->megatron_args[0] == '@' ? in->megatron_args + 1 : "");
        file[strcspn(file, ".")] = '\0';
        if (!(*model = megatron_line_model(line, *file ? file : "megatron-args", error)))
            return FALSE;
    } else {
        g_autofree char *flag = g_strdup_printf("--model %s", in->model ? in->model : path);
        if (!(*model = model_spec_load_noting(path, &max_positions, error)) ||
            (line && !megatron_line_check_model(line, *model, flag, error)))
            return FALSE;
    }
    if (in->seq_length || line_seq)
        return model_spec_set_seq_length(
            *model, in->seq_length ? in->seq_length : line_seq,
            in->seq_length ? "--seq-length" : "--megatron-args: --seq-length", error);
    /* the config's longest context, when it is no longer than the
     * default, is taken as it is: nothing to warn of */
    int longest = (*model)->seq_length;
    if (max_positions && longest > HF_DEFAULT_SEQ_LENGTH) {
        g_autofree char *text = g_strdup_printf("%d", HF_DEFAULT_SEQ_LENGTH);
        if (!model_spec_set_seq_length(*model, text, "--seq-length", error))
            return FALSE;
        text_err("plansim: warning: %s: sequence length %d, as the config gives no training "
                 "length (max_position_embeddings, the longest context the model takes: %d); "
                 "--seq-length S sets it\n",
                 path, (*model)->seq_length, longest);
    }
    return TRUE;
}

gboolean cli_inputs_load(const CliInputs *in, const char *default_plan, ModelSpec **model,
                            ClusterSpec **cluster, PlanSpec *plan, GError **error)
{
    double nodes;
    g_autoptr(MegatronLine) line = NULL;
    if (!read_megatron(in, &line, error))
        return FALSE;
    /* the line's model, when it gives one and no --model is */
    gboolean line_model = line && !in->model && megatron_line_has_model(line);
    g_autofree char *model_path =
        line_model ? NULL : cli_input_path(&cli_models, in->model, CLI_DEFAULT_MODEL, error);
    g_autofree char *cluster_path =
        model_path || line_model
            ? cli_input_path(&cli_clusters, in->cluster, CLI_DEFAULT_CLUSTER, error)
            : NULL;
    g_autofree char *plan_path =
        in->plan && cluster_path ? cli_input_path(&cli_plans, in->plan, NULL, error) : NULL;
    g_autofree char *default_model = shipped_path(CLI_DEFAULT_MODEL);
    g_autofree char *default_cluster = shipped_path(CLI_DEFAULT_CLUSTER);
    if (!cluster_path || (in->plan && !plan_path))
        return FALSE;
    if (!in->plan && !line && default_plan && cli_same_file(model_path, default_model) &&
        cli_same_file(cluster_path, default_cluster))
        plan_path = shipped_path(default_plan);
    const char *args_file =
        in->megatron_args && in->megatron_args[0] == '@' ? in->megatron_args + 1 : NULL;
    const char *inputs[] = {model_path, cluster_path, plan_path, in->grid, args_file};
    if (!cli_check_outputs(in->outputs, G_N_ELEMENTS(in->outputs), inputs, G_N_ELEMENTS(inputs),
                           error))
        return FALSE;
    if (!cli_parse_number("--nodes", in->nodes, 1, CLUSTER_MAX_GPUS, TRUE, 0, &nodes, error) ||
        !load_model(in, line, model_path, model, error) ||
        !(*cluster = cli_cluster_load(in, cluster_path, (int)nodes, error)) ||
        (plan_path && !plan_spec_load(plan, plan_path, error)) ||
        (line && !megatron_line_apply(line, plan, *model, error)))
        return FALSE;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        if (!in->flag_text[f])
            continue;
        g_autofree char *flag = g_strconcat(in->flag_name[f], plan_fields[f].flag, NULL);
        if (!plan_spec_set(plan, (PlanField)f, in->flag_text[f], flag, error))
            return FALSE;
    }
    /* as Megatron-LM derives dp from the world size, a flag that reshapes
     * one replica of the model (tp, cp or pp) without --dp leaves dp to be
     * derived again, not the plan file's */
    if (!in->flag_text[PLAN_DP] &&
        (in->flag_text[PLAN_TP] || in->flag_text[PLAN_CP] || in->flag_text[PLAN_PP]))
        plan->dp = 0;
    /* a launch line without --global-batch-size is Megatron-LM's: one
     * micro-batch per data-parallel rank (plan_spec_resolve) */
    if (!plan->global_batch_size && !line)
        plan->global_batch_size = DEFAULT_GLOBAL_BATCH;
    if (line && megatron_line_unmodelled(line))
        text_err("plansim: warning: --megatron-args: not modelled, read as leaving the "
                 "step as it is: %s\n",
                 megatron_line_unmodelled(line));
    return TRUE;
}

/* The long options `ctx`'s help lists, without "--", into `names`. */
static void help_options(GOptionContext *ctx, GPtrArray *names)
{
    g_autofree char *help = g_option_context_get_help(ctx, FALSE, NULL);
    g_auto(GStrv) lines = g_strsplit(help, "\n", -1);
    for (char **line = lines; *line; line++) {
        const char *text = *line + strspn(*line, " ");
        const char *option = text[0] == '-' ? strstr(text, "--") : NULL;
        if (option)
            g_ptr_array_add(names, g_strndup(option + 2, strcspn(option + 2, "= ")));
    }
}

/* Replaces the parser's error about an unknown option with one that names
 * it and the nearest option `ctx` has. */
static void suggest_option(GOptionContext *ctx, char **args, GError **error)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    help_options(ctx, names);
    g_ptr_array_add(names, NULL);
    for (char **arg = args + 1; *arg && strcmp(*arg, "--") != 0; arg++) {
        if (!g_str_has_prefix(*arg, "--"))
            continue;
        g_autofree char *name = g_strndup(*arg + 2, strcspn(*arg + 2, "="));
        if (g_strv_contains((const char *const *)names->pdata, name))
            continue;
        const char *near = text_nearest(name, (const char *const *)names->pdata);
        g_autofree char *hint =
            near ? g_strdup_printf(" (did you mean --%s?)", near) : g_strdup("");
        g_autofree char *cut = ps_error_cut(name);
        g_clear_error(error);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: --%s: unknown option%s", args[0], cut,
                    hint);
        return;
    }
}


/* Refuses the first argument of `argv` that is not UTF-8 (GLib's parser
 * would take it as true for a boolean, or fail naming no flag), naming the
 * flag it belongs to: its own "--flag" part, else the flag before it. */
static gboolean check_utf8(int argc, char **argv, GError **error)
{
    for (int i = 1; i < argc; i++) {
        if (g_utf8_validate(argv[i], -1, NULL))
            continue;
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        g_autofree char *flag = arg[0] == '-' && eq ? g_strndup(arg, (gsize)(eq - arg))
                                : i > 1 && argv[i - 1][0] == '-' ? g_strdup(argv[i - 1])
                                                                 : NULL;
        g_autofree char *where = flag && g_utf8_validate(flag, -1, NULL)
                                     ? g_strdup_printf("%s: %s", argv[0], flag)
                                     : g_strdup(argv[0]);
        g_autofree char *got = g_strdup_printf("\"%s\"", flag && eq ? eq + 1 : arg);
        ps_error_value(error, where, got, "UTF-8 text");
        return FALSE;
    }
    return TRUE;
}

gboolean cli_parse(GOptionContext *ctx, int argc, char **argv, GError **error)
{
    if (!check_utf8(argc, argv, error))
        return FALSE;
    g_auto(GStrv) given = g_strdupv(argv); /* as given: the parser may reorder argv */
    g_autofree char **args = g_memdup2(argv, sizeof *argv * (gsize)(argc + 1));
    char **parsed = args;
    if (!g_option_context_parse(ctx, &argc, &parsed, error)) {
        g_prefix_error(error, "%s: ", given[0]);
        if (g_error_matches(*error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION))
            suggest_option(ctx, given, error);
        if ((*error)->domain != PS_ERROR) { /* GLib's own (a missing value): bad input too */
            GError *glib = *error;
            *error = NULL;
            g_set_error_literal(error, PS_ERROR, PS_ERROR_INPUT, glib->message);
            g_error_free(glib);
        }
        return FALSE;
    }
    if (argc > 1) {
        g_autofree char *got = g_strdup_printf("\"%s\"", parsed[1]);
        ps_error_value(error, given[0], got, "options, not arguments");
        return FALSE;
    }
    return TRUE;
}
