/* cli.h: the command line's inputs, parsed and loaded: what the commands
 * (app/cmd_*.c) and the command-line fuzz target share.
 *
 * A command's flags are parsed by cli_parse (GLib's option parser, after a
 * check that every argument is UTF-8), the shared inputs (model, cluster,
 * plan, --nodes, --seq-length, the plan flags and the what-ifs) live in a
 * CliInputs, and cli_inputs_load turns them into specs. Shipped inputs
 * (models/, topologies/, plans/) are found by name in the current folder,
 * the installed data folder and the source tree plansim was built from
 * (base/shipped.h). Every function that meets bad input returns FALSE or
 * NULL with a PS_ERROR_INPUT error naming the flag and the value. */
#ifndef PLANSIM_APP_CLI_H
#define PLANSIM_APP_CLI_H

#include <glib.h>

#include "app/whatif.h"
#include "base/shipped.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"

/* The shipped default (docs/inputs.md, "Shipped files"): GPT-3 175B on
 * 512 A100s, 8-way TP inside each node, 8-way PP across nodes, DP 8. */
#define CLI_DEFAULT_MODEL   "models/gpt3-175b.json"
#define CLI_DEFAULT_CLUSTER "topologies/dgx-a100-80gb.json"
#define CLI_DEFAULT_PLAN    "plans/seed-512.json"

/* A kind of shipped input: the flag that names one, and its files
 * (base/shipped.h: what it is, the folders a short name is looked for in). */
typedef struct {
    const char *flag;
    const ShippedKind *files;
} CliShipped;

extern const CliShipped cli_models, cli_clusters, cli_plans;

/* The file an input flag names, newly allocated: the file itself when
 * there is one, else for a name without a folder the shipped
 * FOLDER/NAME.json (".json" may be left out) of the first of `kind`'s
 * folders that has it; `fallback` (a shipped file) when `given` is NULL.
 * An unknown name's error lists the folders looked in and the names they
 * hold. */
char *cli_input_path(const CliShipped *kind, const char *given, const char *fallback,
                     GError **error);

/* Whether two paths name the same existing file. */
gboolean cli_same_file(const char *a, const char *b);

/* A number from a flag in [lo, hi] into *out, or `fallback` when `text`
 * is NULL: an integer when `integral`, with a suffix K, M, G or T as every
 * count is written (text_parse_count). */
gboolean cli_parse_number(const char *flag, const char *text, double lo, double hi,
                          gboolean integral, double fallback, double *out, GError **error);

/* A whole number of bytes from a flag, in [lo, hi]: a count with a suffix
 * K, M, G or T for 2^10 .. 2^40, as nccl-tests reads its -b and -e;
 * `fallback` when `text` is NULL. */
gboolean cli_parse_bytes(const char *flag, const char *text, double lo, double hi,
                         double fallback, double *out, GError **error);

/* A word from a flag, one of `table`'s (its index into `out`), or `out`
 * unchanged when `text` is NULL. */
gboolean cli_parse_choice(const char *flag, const char *text, const char *const *table, int *out,
                          GError **error);

/* A file a command writes: its flag, and the path given (NULL: none). */
typedef struct {
    const char *flag, *path;
} CliOutput;

/* Whether `path` names a file plansim replaces when it writes it: not
 * standard output ("-") nor an existing device or pipe (/dev/null). */
gboolean cli_replaceable(const char *path);

/* Refuses outputs (n of them) with an empty name, that would overwrite one
 * of the `inputs` (`n_inputs` of them, NULLs skipped) or each other: the
 * input would be lost, or one output silently replace another. */
gboolean cli_check_outputs(const CliOutput *outs, int n, const char *const *inputs, int n_inputs,
                           GError **error);

/* The inputs simulate, run and sweep share, as the flags gave them. */
typedef struct {
    char *model, *cluster, *plan, *nodes, *gpus_per_node, *seq_length;
    char *megatron_args; /* a Megatron-LM launch line, or @FILE (spec/megatron.h) */
    CliOutput outputs[3];                 /* what the command writes, checked against the inputs */
    const char *grid;                     /* another input (sweep's --grid), or NULL */
    char *flag_text[PLAN_N_FIELDS];       /* the plan flags given, as text */
    const char *flag_name[PLAN_N_FIELDS]; /* the flag that gave each, "--no-x" included */
    char **slow_gpu, **slow_link, *jitter, *seed; /* what-ifs (app/whatif.h) */
    /* the boolean plan fields' --no- flags and their help, which the
     * parse reads: the inputs' own, so that two threads parse at once */
    char no_flags[PLAN_N_FIELDS][64], no_help[PLAN_N_FIELDS][128];
} CliInputs;

/* Adds the flags of `in` to `ctx`: the inputs, the plan flags (one per
 * plan field, from the table) and the what-ifs. */
void cli_inputs_entries(CliInputs *in, GOptionContext *ctx);

/* Frees what the flags gave `in` (not `in` itself). */
void cli_inputs_clear(CliInputs *in);

/* The what-if flags given (app/whatif.h), newly allocated. `seeds_runs`:
 * --seed also seeds a run's failures, so it may come without --jitter. */
WhatIf *cli_inputs_whatif(const CliInputs *in, gboolean seeds_runs, GError **error);

/* One cluster, named as --cluster takes it (a shipped name or a path;
 * `given` NULL: the default), on `nodes` nodes (0: its file's), with
 * --gpus-per-node if `in` gives it; NULL on failure. */
ClusterSpec *cli_cluster_load(const CliInputs *in, const char *given, int nodes, GError **error);

/* Loads the model (its sequence length replaced by --seq-length), the
 * cluster and the plan: the plan file, else `default_plan` (if any) when
 * the model and the cluster are the shipped defaults, named or not; then
 * the flags; then a default global batch (1,024) if nothing gave one.
 * With --megatron-args (no --plan beside it) the launch line is the plan
 * before the flags, its model shape flags the model when no --model is
 * given (else checked against it), its --seq-length the sequence unless
 * --seq-length is given, and Megatron-LM's global batch its default; the
 * flags it gives that plansim does not model are one warning on stderr.
 * *model and *cluster are the caller's, even on failure. */
gboolean cli_inputs_load(const CliInputs *in, const char *default_plan, ModelSpec **model,
                         ClusterSpec **cluster, PlanSpec *plan, GError **error);

/* Parses `argv` (argc of them, argv[0] the command's name) with `ctx`:
 * every argument must be UTF-8 (the error names the flag), an unknown
 * option's error names the nearest known one, and no argument may be left
 * over. The strings the options take are the caller's to free. */
gboolean cli_parse(GOptionContext *ctx, int argc, char **argv, GError **error);

#endif
