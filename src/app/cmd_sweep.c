/* cmd_sweep.c: plansim sweep (cmd_sweep.h), the best plans of a space
 * (app/sweep.c runs it) and the sweep's text report: the --top table with
 * each plan's twins, the command that simulates the best, what each axis
 * bought it, the space walked and the reasons of the invalid plans. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "app/cmd_sweep.h"
#include "app/cli.h"
#include "app/command.h"
#include "app/progress.h"
#include "app/simulate.h"
#include "app/sweep.h"
#include "layout/layout.h"
#include "metrics/runplan.h"
#include "metrics/training.h"
#include "output/csvjson.h"
#include "output/html.h"
#include "output/report.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"
#include "spec/grid.h"
#include "strategy/strategy.h"
#include "base/error.h"
#include "base/text.h"
#include "base/units.h"

typedef struct {
    CliInputs in;
    char *gpus, *grid, *space, *threads, *shard, *top, *output, *rank_by, *max_plans, *html;
    char *format;
    gboolean exhaustive, all_rows;
    CommandTraining training;
    CommandRunFlags run;
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
 * `cluster` and `nodes` (NULL: in's): the plan's flags those the user gave
 * and those away from their defaults (plan_spec_flags), not every axis
 * swept. */
static char *simulate_command(const CliInputs *in, const char *cluster, const char *nodes,
                              const PlanSpec *plan, const PlanSpec *base, const char *tail)
{
    const char *flags[] = {"--model", "--cluster", "--nodes", "--gpus-per-node", "--seq-length"};
    const char *values[] = {in->model, cluster ? cluster : in->cluster, nodes ? nodes : in->nodes,
                            in->gpus_per_node, in->seq_length};
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

/* The flags of a run as given (--tokens, the run's flags, --seed), and
 * `price` (NULL: none), for a sweep ranked by run-time to name its best
 * plan's `plansim run`. */
static char *run_tail(const CliInputs *in, const CommandTraining *t, const CommandRunFlags *r,
                      const char *price)
{
    const char *flags[] = {
        "--tokens",       "--gpu-hour-price", "--trials",     "--checkpoint-every",
        "--failure-rate", "--restart",        "--hot-spares", "--seed"};
    const char *values[] = {t->tokens,       price,      r->trials,     r->every,
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

/* The near-twins of row `best` (sweep_best_distinct), `near` (rows, best
 * first), each as the flags it differs by and its throughput against
 * best's: " (near: --virtual-stages 7 +0.2 %; ...)", at most TWINS_SHOWN
 * of them, then how many more; "" when it has none. */
static char *near_text(const SweepSpec *spec, const SweepResult *r, guint best, const GArray *near)
{
    if (near->len == 0)
        return g_strdup("");
    const SweepRow *lead = &g_array_index(r->rows, SweepRow, best);
    g_autoptr(PlanSpec) first = sweep_plan(spec, lead);
    GString *text = g_string_new(" (near: ");
    for (guint i = 0; i < MIN(near->len, TWINS_SHOWN); i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, g_array_index(near, guint, i));
        g_autoptr(PlanSpec) twin = sweep_plan(spec, row);
        g_autofree char *flags = plan_spec_change_flags(first, twin);
        g_string_append_printf(text, "%s%s %+.1f %%", i ? "; " : "", flags,
                               100 * (row->score / lead->score - 1));
    }
    if (near->len > TWINS_SHOWN)
        g_string_append_printf(text, "; %u more", near->len - TWINS_SHOWN);
    g_string_append(text, ")");
    return g_string_free(text, FALSE);
}

/* What each axis bought the winner `plan` (row `winner`): the best plan
 * with the axis at its default (sweep_axis_gains) and the winner's gain
 * over it, a line each, appended to `to`. */
static void gains_text(GString *to, const SweepSpec *spec, const SweepResult *r, guint winner,
                       const PlanSpec *plan)
{
    g_autofree SweepAxisGain *gains = g_new(SweepAxisGain, MAX(spec->grid->axes->len, 1));
    int n = sweep_axis_gains(spec, r, winner, gains);
    if (n > 0)
        g_string_append(
            to, "what the winner's choices bought (against the best plan at each default):\n");
    double mine = g_array_index(r->rows, SweepRow, winner).score;
    for (int i = 0; i < n; i++) {
        g_autoptr(PlanSpec) at = plan_spec_copy(plan);
        plan_field_put(at, gains[i].field, gains[i].value, NULL);
        g_autofree char *flag = plan_spec_change_flags(plan, at);
        if (gains[i].row < 0) {
            g_string_append_printf(to, "  %-32s %s\n", flag,
                                   gains[i].exact ? "no plan fits"
                                                  : "none that fits among the few replayed");
            continue;
        }
        const SweepRow *row = &g_array_index(r->rows, SweepRow, gains[i].row);
        g_autofree char *summary = sweep_summary(spec, row);
        g_autofree char *gain = g_strdup_printf(
            "%s%+.1f %%", gains[i].exact ? "" : "<= ", 100 * (mine / gains[i].score - 1));
        g_string_append_printf(to, "  %-32s %s  (its best%s: %s)\n", flag, gain,
                               gains[i].exact ? "" : " replayed", summary);
    }
}

/* A score (SweepRow.score) as the figure it ranks: tokens/s, the run's
 * days (time, run-time) or its cost. */
static char *score_text(const SweepSpec *spec, double score)
{
    switch (spec->rank_by) {
    case SWEEP_RANK_TIME:
    case SWEEP_RANK_RUN_TIME:
        return g_strdup_printf("%.4g days", 1 / score / 86400);
    case SWEEP_RANK_COST:
        return g_strdup_printf("cost %.4g", 1 / score);
    case SWEEP_RANK_TOKENS_PER_S:
        break;
    }
    return g_strdup_printf("%.4g tokens/s", score);
}

/* When the sweep compares clusters (`given`, their names as --cluster gave
 * them): the best plan on each other cluster (sweep_cluster_bests) and the
 * winner's lead over it, a line each, appended to `to`. */
static void cluster_bests_text(GString *to, const SweepSpec *spec, const SweepResult *r,
                               guint winner, char *const *given)
{
    g_autofree SweepAxisGain *bests = g_new(SweepAxisGain, spec->n_clusters);
    int n = sweep_cluster_bests(spec, r, winner, bests);
    if (n > 0)
        g_string_append(to, "the best on each other cluster (the winner's lead over it):\n");
    double mine = g_array_index(r->rows, SweepRow, winner).score;
    for (int i = 0; i < n; i++) {
        const ClusterSpec *c = spec->clusters[bests[i].value];
        g_autofree char *where = g_strdup_printf("%s:%d", given[bests[i].value], c->nodes);
        if (bests[i].row < 0 || bests[i].score <= 0) {
            g_string_append_printf(to, "  %-24s %s\n", where,
                    bests[i].row >= 0 ? "its best never ends"
                    : bests[i].exact  ? "no plan fits"
                                      : "none that fits among the few replayed");
            continue;
        }
        const SweepRow *row = &g_array_index(r->rows, SweepRow, bests[i].row);
        g_autofree char *summary = sweep_summary(spec, row);
        g_autofree char *figure = score_text(spec, bests[i].score);
        g_string_append_printf(to, "  %-24s %s%+.1f %%  (its best%s: %s, %s)\n", where,
                bests[i].exact ? "" : "<= ", 100 * (mine / bests[i].score - 1),
                bests[i].exact ? "" : " replayed", figure, summary);
    }
}

/* What the GPU's narrow formats would make of the winner `plan` (row
 * `winner`), a note each appended to `to`, when it runs in bf16 and the
 * sweep did not try formats: the sweep keeps the plan's own, a precision
 * being the user's numerics, not a parallelism choice (a format the plan
 * cannot take, or in which it does not fit, is left out). */
static void precision_notes(GString *to, const SweepSpec *spec, const SweepRow *winner,
                            const PlanSpec *plan)
{
    for (guint i = 0; i < spec->grid->axes->len; i++)
        if (g_array_index(spec->grid->axes, GridAxis, i).field == PLAN_DTYPE)
            return;
    if (plan->dtype != DTYPE_BF16)
        return;
    const ClusterSpec *cluster = sweep_cluster(spec, winner);
    for (int d = DTYPE_BF16 + 1; d < DTYPES; d++) {
        if (gpu_peak(&cluster->gpu, (Dtype)d, NULL, NULL) <= 0)
            continue;
        g_autoptr(PlanSpec) other = plan_spec_copy(plan);
        other->dtype = (Dtype)d;
        Report rep;
        if (!strategy_resolve(other, spec->model, cluster, NULL) ||
            !simulate_run(spec->model, cluster, other, &rep, NULL))
            continue;
        if (rep.metrics.fits)
            g_string_append_printf(
                to,
                "note: the sweep keeps bf16, a numerics choice; in %s this plan would take "
                "%.4g s a step (%+.1f %% tokens/s): --dtype bf16,%s compares them\n",
                dtype_names[d], rep.metrics.step_time_s,
                100 * (winner->step_time_s / rep.metrics.step_time_s - 1), dtype_names[d]);
        report_clear(&rep);
    }
}

/* The table's money columns for a row, its plan `plan`: with --tokens the
 * failure-free run's days, and its cost at the row's cluster's price; with
 * a price but no tokens, the step's cost; "-" for a cluster without a
 * price; "" when no cluster has one (`priced`). */
static char *money_text(const SweepSpec *spec, const SweepRow *row, const PlanSpec *plan,
                        gboolean priced)
{
    double price = sweep_cluster(spec, row)->gpu_hour_price;
    Training t;
    training_of_step(&t, spec->tokens, price, spec->model, plan, row->step_time_s);
    double cost = spec->tokens > 0 ? t.cost
                                   : row->step_time_s * plan_spec_gpus(plan) * price / 3600;
    GString *text = g_string_new(NULL);
    if (spec->tokens > 0)
        g_string_append_printf(text, " %8.4g", t.days);
    if (priced && price > 0)
        g_string_append_printf(text, " %10.4g", cost);
    else if (priced)
        g_string_append_printf(text, " %10s", "-");
    return g_string_free(text, FALSE);
}

/* One plan of the --top table: its row, its plan, its summary, the plans
 * that replay as it (twins_text) and its near-twins (near_text). */
typedef struct {
    const SweepRow *row;
    PlanSpec *plan;
    char *summary, *also, *close;
} BestRow;

/* The --top table's `n` plans (`best`, best first; `near`: their
 * near-twins, sweep_best_distinct), newly allocated, each plan's twins
 * found in one pass over the rows; free with best_rows_free. */
static BestRow *best_rows(const SweepSpec *spec, const SweepResult *r, const guint *best,
                          GArray *const *near, int n)
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
    BestRow *rows = g_new(BestRow, n);
    for (int i = 0; i < n; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, best[i]);
        rows[i] = (BestRow){.row = row,
                            .plan = sweep_plan(spec, row),
                            .summary = sweep_summary(spec, row),
                            .also = twins_text(spec, r, best[i], twins[i]),
                            .close = near_text(spec, r, best[i], near[i])};
        g_array_free(twins[i], TRUE);
    }
    g_free(twins);
    return rows;
}

static void best_rows_free(BestRow *rows, int n)
{
    for (int i = 0; i < n; i++) {
        plan_spec_free(rows[i].plan);
        g_free(rows[i].summary);
        g_free(rows[i].also);
        g_free(rows[i].close);
    }
    g_free(rows);
}

/* A row's mean days of its run, for a sweep ranked by run time: "never"
 * when it would not end. */
static char *run_days(const SweepRow *row)
{
    return row->score > 0 ? g_strdup_printf("%.4g", 1 / row->score / 86400) : g_strdup("never");
}

static int by_int(gconstpointer a, gconstpointer b)
{
    return *(const int *)a - *(const int *)b;
}

/* Where the winner's experts are (`plan`, on row's cluster), when it has
 * expert parallelism: whether each expert-parallel group stays inside one
 * node's NVLink domain, its dispatch and combine crossing no NIC, or the
 * most nodes a group spans; a line appended to `to`. */
static void experts_text(GString *to, const SweepSpec *spec, const SweepRow *row,
                         const PlanSpec *plan)
{
    if (plan->ep <= 1)
        return;
    const ClusterSpec *cluster = sweep_cluster(spec, row);
    g_autoptr(Layout) layout = layout_new(plan, cluster);
    int most = 1, n;
    g_autofree int *nodes = g_new(int, plan->ep);
    for (int g = 0; g < layout_groups(layout, GROUP_EP); g++) {
        const int *ranks = layout_group(layout, GROUP_EP, g, &n);
        for (int k = 0; k < n; k++)
            nodes[k] = ranks[k] / cluster->gpus_per_node;
        qsort(nodes, (size_t)n, sizeof *nodes, by_int);
        int spans = 1;
        for (int k = 1; k < n; k++)
            spans += nodes[k] != nodes[k - 1];
        most = MAX(most, spans);
    }
    if (most == 1)
        g_string_append_printf(to,
                               "experts: each ep %d group inside one node's NVLink domain (%d "
                               "GPUs a node): its dispatch and combine cross no NIC\n",
                               plan->ep, cluster->gpus_per_node);
    else
        g_string_append_printf(to,
                               "experts: an ep %d group spans up to %d nodes of %d GPUs: its "
                               "dispatch and combine cross the NICs\n",
                               plan->ep, most, cluster->gpus_per_node);
}

/* What the sweep says of its winner (row `winner`): the command that
 * simulates it, the best on each other cluster when it compares clusters
 * (`given`, as --cluster named them; else NULL), what each axis bought it,
 * and its precision notes. */
static char *winner_text(const CliInputs *in, const SweepSpec *spec, const SweepResult *r,
                         guint winner, char *const *given, const char *tail)
{
    const SweepRow *row = &g_array_index(r->rows, SweepRow, winner);
    g_autoptr(PlanSpec) plan = sweep_plan(spec, row);
    g_autofree char *nodes =
        spec->n_clusters > 1 ? g_strdup_printf("%d", sweep_cluster(spec, row)->nodes) : NULL;
    g_autofree char *command = simulate_command(
        in, given ? given[sweep_cluster_index(spec, row)] : NULL, nodes, plan, spec->base, tail);
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, "best: %s\n", command);
    experts_text(text, spec, row, plan);
    if (given)
        cluster_bests_text(text, spec, r, winner, given);
    gains_text(text, spec, r, winner, plan);
    precision_notes(text, spec, row, plan);
    return g_string_free(text, FALSE);
}

/* Whether any cluster of the sweep has a price: the table's cost column. */
static gboolean priced(const SweepSpec *spec)
{
    gboolean any = FALSE;
    for (int c = 0; c < spec->n_clusters; c++)
        any |= spec->clusters[c]->gpu_hour_price > 0;
    return any && spec->rank_by != SWEEP_RANK_RUN_TIME;
}

/* The --top table: a header, a line per plan (`rows`, n of them, the best
 * first), each plan once with the plans that replay as it and its
 * near-twins, a column naming its cluster when the sweep compares them
 * (`compared`), then what the sweep says of the winner (`winner`,
 * winner_text), newly allocated. */
static char *best_text(const SweepSpec *spec, const BestRow *rows, int n, gboolean compared,
                       const char *winner)
{
    GString *to = g_string_new(NULL);
    gboolean run = spec->rank_by == SWEEP_RANK_RUN_TIME; /* a column of the run's mean days */
    gboolean money = priced(spec);
    g_string_append_printf(to, "%4s %10s %9s %6s %11s %9s %s%s%s%s %s\n", "rank", "tokens/s",
                           "step(s)", "MFU(%)", "TFLOP/s/GPU", "peak(GiB)", run ? " run(days)" : "",
                           spec->tokens > 0 && !run ? "     days" : "",
                           !money             ? ""
                           : spec->tokens > 0 ? "       cost"
                                              : "  cost/step",
                           compared ? " cluster" : "", "plan");
    for (int i = 0; i < n; i++) {
        const SweepRow *row = rows[i].row;
        g_autofree char *days = run ? run_days(row) : NULL;
        g_autofree char *columns = run ? g_strdup_printf(" %9s", days)
                                       : money_text(spec, row, rows[i].plan, money);
        const ClusterSpec *c = sweep_cluster(spec, row);
        g_autofree char *where =
            compared ? g_strdup_printf(" %s:%d", c->name, c->nodes) : g_strdup("");
        g_string_append_printf(to, "%4d %10.4g %9.4g %6.1f %11.1f %9.2f %s%s %s%s%s\n", i + 1,
                               row->tokens_per_s, row->step_time_s, 100 * row->mfu, row->tflops,
                               row->peak_bytes / UNITS_GIB, columns, where, rows[i].summary,
                               rows[i].also, rows[i].close);
    }
    g_string_append(to, winner);
    return g_string_free(to, FALSE);
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
 * x ..." ("clusters dgx-h100:256,gb200-nvl72:28 x ..." when it compares
 * clusters, `compared`); "one plan" with no axis. */
static char *space_text(const PlanGrid *grid, const PlanSpec *base, const GPtrArray *clusters,
                        gboolean compared)
{
    GString *text = g_string_new(grid->axes->len || clusters->len > 1 ? "" : "one plan");
    for (guint i = 0; clusters->len > 1 && i < clusters->len; i++) {
        const ClusterSpec *c = g_ptr_array_index(clusters, i);
        g_string_append_printf(text, "%s", i ? "," : compared ? "clusters " : "nodes ");
        if (compared)
            g_string_append_printf(text, "%s:", c->name);
        g_string_append_printf(text, "%d%s", c->nodes,
                               i + 1 == clusters->len && grid->axes->len ? " x " : "");
    }
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
            text_err("plansim: note: %s pins %s to %s: %s's values %s are not swept\n",
                     plan_field_origin(base, f), plan_fields[f].name, value, grid_file, values);
        }
        plan_grid_remove(grid, f);
    }
}

/* What a sweep walks besides the plan's pinned fields and the axes its
 * --grid file and its flags' value lists name: the default space, or
 * nothing more (--space; the default without a grid file, the second
 * with one). */
enum { SPACE_DEFAULT, SPACE_GRID };
static const char *const space_names[] = {"default", "grid", NULL};

/* The plan flags given as comma-separated values (--dtype bf16,fp8, --tp
 * 4,8), which a sweep tries as axes: each such flag's text moved from `in`
 * (no longer a plan flag) to `lists` (by field), but for the fields whose
 * commas are their own (a list field's, a set's). */
static void take_value_lists(CliInputs *in, char **lists)
{
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        if (in->flag_text[f] && strchr(in->flag_text[f], ',') &&
            !plan_field_takes_commas((PlanField)f))
            lists[f] = g_steal_pointer(&in->flag_text[f]);
}

/* The axes of the value lists (take_value_lists; each freed) into
 * `grid`. */
static gboolean parse_value_lists(char **lists, PlanGrid *grid, GError **error)
{
    gboolean ok = TRUE;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        g_autofree char *text = lists[f];
        g_autofree char *flag = g_strconcat("--", plan_fields[f].flag, NULL);
        ok = ok && (!text || plan_grid_parse_axis(grid, (PlanField)f, text, flag, error));
    }
    return ok;
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
        if (!cli_parse_number("--nodes", sizes[i], 1, CLUSTER_MAX_GPUS / cluster->gpus_per_node,
                              TRUE, 0, &nodes, error)) {
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

/* The clusters a sweep compares (--cluster a,b,c, `names`), `first`
 * (loaded with the model) then the others: each on its own count of
 * `sizes` (--nodes, one for each or one for all), or with --gpus and no
 * --nodes (`gpus`) on the nodes those GPUs fill, else on its file's. Fails
 * on a list of sizes that is neither, a cluster named twice or one too
 * small for --gpus. */
static GPtrArray *cluster_list(const CliInputs *in, const ClusterSpec *first, char **names,
                               char **sizes, double gpus, GError **error)
{
    guint n = g_strv_length(names), n_sizes = sizes ? g_strv_length(sizes) : 0;
    if (n_sizes > 1 && n_sizes != n) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--nodes: expected one node count, or one for each of the %u clusters of "
                    "--cluster, got %u",
                    n, n_sizes);
        return NULL;
    }
    g_autoptr(GPtrArray) clusters =
        g_ptr_array_new_with_free_func((GDestroyNotify)cluster_spec_free);
    for (guint i = 0; i < n; i++) {
        for (guint k = 0; k < i; k++) {
            if (strcmp(names[k], names[i]) == 0) {
                g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                            "--cluster: expected distinct clusters, got %s twice", names[i]);
                return NULL;
            }
        }
        double nodes = 0;
        if (n_sizes && !cli_parse_number("--nodes", sizes[n_sizes > 1 ? i : 0], 1,
                                         CLUSTER_MAX_GPUS, TRUE, 0, &nodes, error))
            return NULL;
        ClusterSpec *c = i == 0 ? cluster_spec_copy(first) : cli_cluster_load(in, names[i], 0, error);
        if (!c)
            return NULL;
        g_ptr_array_add(clusters, c);
        if (!n_sizes && gpus > 0) /* the nodes --gpus fill */
            nodes = ceil(gpus / c->gpus_per_node);
        if (nodes > 0)
            c->nodes = (int)nodes;
        if ((double)c->nodes * c->gpus_per_node > CLUSTER_MAX_GPUS) {
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "--nodes: expected at most %d GPUs on %s, got %d nodes of %d",
                        CLUSTER_MAX_GPUS, names[i], c->nodes, c->gpus_per_node);
            return NULL;
        }
        if (gpus > cluster_spec_gpus(c)) {
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "--gpus: expected at most the %d GPUs of %s, got %.0f",
                        cluster_spec_gpus(c), names[i], gpus);
            return NULL;
        }
    }
    return g_steal_pointer(&clusters);
}

/* Each cluster's price of a GPU-hour (--gpu-hour-price, `prices`: one for
 * each cluster compared, or one for all; else the cluster's own
 * gpu_hour_price, if any). */
static gboolean put_prices(const char *prices, GPtrArray *clusters, gboolean compared,
                           GError **error)
{
    if (!prices)
        return TRUE;
    g_auto(GStrv) each = g_strsplit(prices, ",", -1);
    guint n = g_strv_length(each);
    if (n > 1 && (!compared || n != clusters->len)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--gpu-hour-price: expected one price, or one for each cluster of --cluster "
                    "(%u), got %u",
                    compared ? clusters->len : 1, n);
        return FALSE;
    }
    for (guint i = 0; i < clusters->len; i++) {
        double price;
        if (!cli_parse_number("--gpu-hour-price", each[n > 1 ? i : 0], 0, 1e6, FALSE, 0, &price,
                              error))
            return FALSE;
        ((ClusterSpec *)g_ptr_array_index(clusters, i))->gpu_hour_price = price;
    }
    return TRUE;
}

/* The cluster whose nodes are the widest (the first of those): the default
 * grid's tensor-parallel sizes go up to its node. */
static const ClusterSpec *widest(const GPtrArray *clusters)
{
    const ClusterSpec *w = g_ptr_array_index(clusters, 0);
    for (guint i = 1; i < clusters->len; i++) {
        const ClusterSpec *c = g_ptr_array_index(clusters, i);
        if (c->gpus_per_node > w->gpus_per_node)
            w = c;
    }
    return w;
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
            text_err("  %6" G_GINT64_FORMAT "  %s\n", n, (char *)l->data);
        } else {
            more++;
            rest += n;
        }
    }
    if (more)
        text_err("  %6" G_GINT64_FORMAT "  for %" G_GINT64_FORMAT " other reasons\n", rest, more);
    g_list_free(all);
}

/* The sweep's page (--html): its best figures, the --top table (`rows`,
 * n of them; a cluster column when it compares clusters, `compared`)
 * sortable and the best plans' tokens/s as bars, what it says of the
 * winner (winner_text) and the space it walked (`walked`). */
static char *sweep_page(const SweepSpec *spec, const SweepResult *r, const BestRow *rows, int n,
                        gboolean compared, const char *winner, const char *walked)
{
    g_autofree char *title =
        g_strdup_printf("plansim sweep: %s on %s", spec->model->name, spec->cluster->name);
    g_autoptr(HtmlPage) page = html_page_new(title);
    const SweepRow *top = rows[0].row;
    g_autofree char *tokens = g_strdup_printf("%.4g", top->tokens_per_s);
    g_autofree char *step = g_strdup_printf("%.4g s", top->step_time_s);
    g_autofree char *mfu = g_strdup_printf("%.1f %%", 100 * top->mfu);
    g_autofree char *peak = g_strdup_printf("%.2f GiB", top->peak_bytes / UNITS_GIB);
    g_autofree char *plans = g_strdup_printf("%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT,
                                             r->count[REPORT_SIMULATED], r->combinations);
    HtmlFigure figures[] = {{"best tokens/s", tokens},
                            {"its step time", step},
                            {"its MFU", mfu},
                            {"its memory peak", peak},
                            {"plans simulated", plans}};
    html_figures(page, figures, G_N_ELEMENTS(figures));
    html_paragraph(page, rows[0].summary, TRUE);
    gboolean run = spec->rank_by == SWEEP_RANK_RUN_TIME;
    /* the text table's columns, the plan's twins and near-twins in one */
    HtmlColumn columns[10] = {{"rank", TRUE},    {"tokens/s", TRUE},    {"step (s)", TRUE},
                              {"MFU (%)", TRUE}, {"TFLOP/s/GPU", TRUE}, {"peak (GiB)", TRUE}};
    int k = 6;
    if (run)
        columns[k++] = (HtmlColumn){"run (days)", TRUE};
    if (compared)
        columns[k++] = (HtmlColumn){"cluster", FALSE};
    columns[k++] = (HtmlColumn){"plan", FALSE};
    columns[k++] = (HtmlColumn){"also", FALSE};
    g_autofree HtmlCell *cells = g_new(HtmlCell, (gsize)n * (gsize)k);
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    HtmlBar *bars = g_new(HtmlBar, n);
    for (int i = 0; i < n; i++) {
        const SweepRow *row = rows[i].row;
        double days = row->score > 0 ? 1 / row->score / 86400 : INFINITY;
        double values[] = {i + 1,
                           row->tokens_per_s,
                           row->step_time_s,
                           100 * row->mfu,
                           row->tflops,
                           row->peak_bytes / UNITS_GIB,
                           days};
        const char *formats[] = {"%.0f", "%.4g", "%.4g", "%.1f", "%.1f", "%.2f"};
        HtmlCell *cell = &cells[i * k];
        for (int c = 0; c < 6; c++) {
            char *text = g_strdup_printf(formats[c], values[c]);
            g_ptr_array_add(texts, text);
            cell[c] = (HtmlCell){.text = text, .value = values[c]};
        }
        int c = 6;
        if (run) {
            char *text = run_days(row);
            g_ptr_array_add(texts, text);
            cell[c++] = (HtmlCell){.text = text, .value = days};
        }
        if (compared) {
            const ClusterSpec *where = sweep_cluster(spec, row);
            char *text = g_strdup_printf("%s:%d", where->name, where->nodes);
            g_ptr_array_add(texts, text);
            cell[c++] = (HtmlCell){.text = text};
        }
        char *also = g_strconcat(rows[i].also, rows[i].close, NULL);
        g_ptr_array_add(texts, also);
        cell[c++] = (HtmlCell){.text = rows[i].summary};
        cell[c] = (HtmlCell){.text = g_strstrip(also)};
        char *label = g_strdup_printf("#%d", i + 1);
        g_ptr_array_add(texts, label);
        bars[i] = (HtmlBar){.label = label, .value = row->tokens_per_s, .text = cell[1].text};
    }
    html_table(page, "The best plans (click a heading to sort)", columns, k, cells, n);
    html_bars(page, "Their tokens/s", bars, n);
    g_free(bars);
    html_heading(page, "The winner");
    html_paragraph(page, winner, TRUE);
    html_heading(page, "The space");
    html_paragraph(page, walked, TRUE);
    return html_page_render(page);
}

/* What -o writes (--format): the CSV, or its rows as JSON objects
 * (output/csvjson.h). */
enum { ROWS_CSV, ROWS_JSON };
static const char *const rows_format_names[] = {"csv", "json", NULL};

/* The sweep's files: its page (--html, sweep_page), when a plan fits, then
 * the rows (-o FILE, or -o - for stdout) as --format says, each whole or
 * not at all, and the page removed when the rows cannot be written. */
static gboolean write_files(const SweepArgs *a, int rows_format, const SweepSpec *spec,
                            const SweepResult *r, const BestRow *rows, int n, gboolean compared,
                            const char *winner, const char *walked, GError **error)
{
    g_autofree char *page =
        a->html && n > 0 ? sweep_page(spec, r, rows, n, compared, winner, walked) : NULL;
    if (page && !text_write_atomic(a->html, page, strlen(page), error))
        return FALSE;
    if (!a->output)
        return TRUE;
    g_autofree char *csv = sweep_csv(r, a->all_rows);
    if (rows_format == ROWS_JSON) {
        char *json = csvjson_render(csv);
        g_free(csv);
        csv = json;
    }
    gboolean ok = text_write_atomic(a->output, csv, strlen(csv), error);
    if (!ok && page && cli_replaceable(a->html))
        g_unlink(a->html);
    return ok;
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
    a->in.outputs[0] = (CliOutput){.flag = "-o", .path = a->output};
    a->in.outputs[1] = (CliOutput){.flag = "--html", .path = a->html};
    a->in.grid = a->grid;
    /* --nodes 64,128,256: the inputs at the first size, then a cluster per
     * size, the sweep's outermost axis; --cluster a,b,c: the inputs on the
     * first, then the others (cluster_list), that axis */
    g_auto(GStrv) sizes = a->in.nodes ? g_strsplit(a->in.nodes, ",", -1) : NULL;
    if (sizes && g_strv_length(sizes) > 1) {
        g_free(a->in.nodes);
        a->in.nodes = g_strdup(sizes[0]);
    }
    g_auto(GStrv) names = a->in.cluster ? g_strsplit(a->in.cluster, ",", -1) : NULL;
    gboolean compared = names && g_strv_length(names) > 1;
    if (compared) {
        g_free(a->in.cluster);
        a->in.cluster = g_strdup(names[0]);
        g_clear_pointer(&a->in.nodes, g_free); /* each cluster's, cluster_list */
    }
    g_autoptr(GPtrArray) clusters = NULL;
    g_autoptr(PlanGrid) flagged = plan_grid_new(); /* the flags' value lists */
    char *lists[PLAN_N_FIELDS] = {NULL};
    take_value_lists(&a->in, lists);
    int space = a->grid ? SPACE_GRID : SPACE_DEFAULT, rows_format = ROWS_CSV;
    if (!parse_value_lists(lists, flagged, error) ||
        !cli_parse_choice("--format", a->format, rows_format_names, &rows_format, error) ||
        !cli_parse_choice("--space", a->space, space_names, &space, error) ||
        !cli_parse_number("--gpus", a->gpus, 1, CLUSTER_MAX_GPUS, TRUE, 0, &gpus, error) ||
        !cli_inputs_load(&a->in, NULL, &model, &cluster, base, error) ||
        !(clusters = compared ? cluster_list(&a->in, cluster, names, sizes, gpus, error)
                              : cluster_sizes(cluster, sizes, error)) ||
        !put_prices(a->training.price, clusters, compared, error) ||
        !(whatif = cli_inputs_whatif(&a->in, TRUE, error)) ||
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
    if (a->format && !a->output) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--format: expected -o FILE with it (the rows' format), got --format alone");
        return FALSE;
    }
    if (a->all_rows && !a->output) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--all-rows: expected -o FILE with it (the CSV's rows), got --all-rows alone");
        return FALSE;
    }
    if (gpus && clusters->len > 1 && !compared) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--gpus: expected none with several --nodes (each size's plans use all of its "
                    "GPUs), got %s",
                    a->gpus);
        return FALSE;
    }
    if (gpus > cluster_spec_gpus(cluster) && !compared) {
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
    grid = space == SPACE_DEFAULT ? plan_grid_default(model, widest(clusters)) : plan_grid_new();
    pin_fields(grid, base, NULL);
    if (a->grid && !plan_grid_load(grid, a->grid, error))
        return FALSE;
    pin_fields(grid, base, a->grid);
    plan_grid_merge(grid, flagged);
    /* the prices are the clusters' (put_prices), and need no --tokens: a
     * step has its cost */
    const CommandTraining tokens_only = {.tokens = a->training.tokens};
    double tokens, no_price;
    int rank_by = SWEEP_RANK_TOKENS_PER_S;
    if (!command_parse_training(&tokens_only, NULL, &tokens, &no_price, error) ||
        !cli_parse_choice("--rank-by", a->rank_by, sweep_rank_names, &rank_by, error))
        return FALSE;
    if (rank_by != SWEEP_RANK_TOKENS_PER_S && tokens <= 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--rank-by: expected --tokens too for \"%s\" (of a run), got none", a->rank_by);
        return FALSE;
    }
    for (guint i = 0; compared && rank_by == SWEEP_RANK_COST && i < clusters->len; i++) {
        if (((const ClusterSpec *)g_ptr_array_index(clusters, i))->gpu_hour_price <= 0) {
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "--rank-by: expected a price for each cluster compared by cost "
                        "(--gpu-hour-price, one per --cluster, or the cluster's gpu_hour_price), "
                        "got none for %s",
                        names[i]);
            return FALSE;
        }
    }
    RunChoice run;
    if (!command_parse_run(&a->in, &a->run, &run, error))
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
                      .progress = progress_shows(),
                      .top = (int)top,
                      /* noise can make a step beat its bound: no pruning */
                      .exhaustive = a->exhaustive || whatif->jitter > 0,
                      .max_plans = (gint64)max_plans,
                      .tokens = tokens,
                      .rank_by = (SweepRank)rank_by,
                      .run = &run,
                      .whatif = whatif,
                      /* every row's CSV only for --all-rows: the others are
                       * the simulated rows', which have theirs */
                      .csv = a->output && a->all_rows};
    spec.stop = command_interrupts_catch(); /* Ctrl-C stops the sweep, which writes nothing */
    g_autoptr(SweepResult) r = sweep_run(&spec, error);
    command_interrupts_release();
    if (!r)
        return FALSE;
    if (r->stopped) {
        text_err("plansim: sweep interrupted: nothing written\n");
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
    g_autofree guint *best = g_new(guint, (gsize)top);
    g_autofree GArray **near = g_new0(GArray *, (gsize)top);
    int n = sweep_best_distinct(&spec, r, (int)top, best, near);
    /* the best plan's run, at its cluster's price when the flag gave one */
    g_autofree char *price =
        n > 0 && a->training.price
            ? g_strdup_printf(
                  "%.10g",
                  sweep_cluster(&spec, &g_array_index(r->rows, SweepRow, best[0]))->gpu_hour_price)
            : NULL;
    g_autofree char *tail =
        rank_by == SWEEP_RANK_RUN_TIME ? run_tail(&a->in, &a->training, &a->run, price) : NULL;
    char *const *given = compared ? names : NULL;
    BestRow *rows = n > 0 ? best_rows(&spec, r, best, near, n) : NULL;
    g_autofree char *winner = n > 0 ? winner_text(&a->in, &spec, r, best[0], given, tail) : NULL;
    for (int i = 0; i < n; i++)
        g_array_free(near[i], TRUE);
    g_autofree char *walked = space_text(grid, base, clusters, compared);
    if (!write_files(a, rows_format, &spec, r, rows, n, compared, winner, walked, error)) {
        best_rows_free(rows, n);
        return FALSE;
    }
    /* the table on stdout unless the CSV is there */
    gboolean table_out = !a->output || strcmp(a->output, "-") != 0;
    g_autofree char *table = n > 0 ? best_text(&spec, rows, n, compared, winner) : NULL;
    if (table_out && table && !text_out(table, strlen(table))) {
        best_rows_free(rows, n);
        g_set_error(error, PS_ERROR, PS_ERROR_IO, "standard output: write failed");
        return FALSE;
    }
    text_err("sweep: %s\n", walked);
    text_err("sweep: %" G_GINT64_FORMAT " combinations, %" G_GINT64_FORMAT " valid:",
             r->combinations, r->combinations - r->count[REPORT_INVALID]);
    for (int s = 0; s < REPORT_STATUSES; s++) { /* "120 simulated (90 replayed), 3 pruned, ..." */
        text_err("%s %" G_GINT64_FORMAT " %s", s ? "," : "", r->count[s], report_status_names[s]);
        if (s == REPORT_SIMULATED)
            text_err(" (%" G_GINT64_FORMAT " replayed)", r->replayed);
        if (s == REPORT_INVALID && r->refused > 0)
            text_err(" (%" G_GINT64_FORMAT " refused by the space's rules, unvisited)", r->refused);
    }
    text_err("\n");
    print_reasons(r->reasons);
    if (n == 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_NO_FIT,
                    "sweep: no plan fits in the GPUs' memory (%" G_GINT64_FORMAT
                    " valid plans; the reasons above)",
                    r->combinations - r->count[REPORT_INVALID]);
        return FALSE;
    }
    if (!table_out)
        text_err("%s", table);
    best_rows_free(rows, n);
    return TRUE;
}

int cmd_sweep(int argc, char **argv)
{
    SweepArgs a = {0};
    GOptionEntry entries[] = {
        {"gpus", 0, 0, G_OPTION_ARG_FILENAME, &a.gpus, "GPUs each plan uses (default: all)", "N"},
        {"grid", 0, 0, G_OPTION_ARG_FILENAME, &a.grid,
         "values to try per plan field (JSON); the fields it does not name keep the plan's value",
         "FILE"},
        {"space", 0, 0, G_OPTION_ARG_FILENAME, &a.space,
         "default (the default space, over which a grid's and the flags' lists are laid; the "
         "default without --grid) or grid (only those)",
         "WHAT"},
        {"threads", 'j', 0, G_OPTION_ARG_FILENAME, &a.threads, "threads (default: every core)",
         "N"},
        {"shard", 0, 0, G_OPTION_ARG_FILENAME, &a.shard, "run only the K-th of N slices", "K/N"},
        {"top", 0, 0, G_OPTION_ARG_FILENAME, &a.top,
         "the K best plans that fit, each once, as a table on stdout (stderr with -o -); default "
         "10",
         "K"},
        COMMAND_TRAINING_ENTRIES(a.training),
        {"rank-by", 0, 0, G_OPTION_ARG_FILENAME, &a.rank_by,
         "tokens_per_s (default), or for --tokens the run's time, cost (at each cluster's price, "
         "else GPU-hours) or run-time "
         "(its mean wall-clock time with failures and checkpoints)",
         "WHAT"},
        {"exhaustive", 0, 0, G_OPTION_ARG_NONE, &a.exhaustive,
         "replay every valid plan: no memory pre-check, no pruning", NULL},
        {"max-plans", 0, 0, G_OPTION_ARG_FILENAME, &a.max_plans,
         "with --exhaustive, the most plans it replays (default 1000)", "N"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the plans that fit as CSV to FILE, best first, ranked (whole or not at all; - for "
         "stdout)",
         "FILE"},
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &a.format,
         "what -o writes: csv (default), or json (the same rows as a list of objects)", "FORMAT"},
        {"all-rows", 0, 0, G_OPTION_ARG_NONE, &a.all_rows,
         "with -o, a CSV row for every plan: also those pruned, that do not fit or are invalid",
         NULL},
        {"html", 0, 0, G_OPTION_ARG_FILENAME, &a.html,
         "also write the best plans as one self-contained HTML page: a sortable table, their "
         "tokens/s and what the winner's choices bought",
         "FILE"},
        COMMAND_RUN_ENTRIES(a.run),
        {NULL},
    };
    return command_main(argc, argv, "- the best plans of a grid (-o: as CSV, ranked)",
                        entries, &a.in, sweep, &a);
}
