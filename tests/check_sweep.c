/* check_sweep.c: the sweep (app/sweep.c): how many combinations a grid
 * has and in which order their rows come back, shards that partition the
 * grid, the best-K choice; the bounds of strategy/estimate.h held against
 * replays of every plan of a grid; and branch and bound, which must rank
 * the same best K as an exhaustive sweep.
 *
 * The grid: tp {1, 2, 4} x pp {1, 2, 3} x micro_batch_size {1, 2} = 18
 * combinations (the product of the axes' sizes), numbered with the last
 * axis fastest (sweep.h): combination i is tp[i / 6], pp[i / 2 % 3],
 * mbs[i % 2]. On 4 GPUs dp = 4 / (tp pp); a plan is invalid when tp x pp
 * does not divide 4: pp 3 (3 tp values x 2 mbs = 6 combinations) and
 * tp 4 x pp 2 (2 more), so 8 invalid, each refused by the walk (app/space.h)
 * as soon as tp and pp are set, without a row, and 10 simulated (no more
 * than the default top 10: nothing to prune). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/space.h"
#include "app/sweep.h"
#include "cost/transformer.h"
#include "net/netbound.h"
#include "strategy/estimate.h"
#include "strategy/states.h"
#include "strategy/strategy.h"
#include "testrandom.h"
#include "testutil.h"

enum { GPUS = 4, COMBINATIONS = 18, SKIPPED = 8, VALID = 10 };
static const int tps[] = {1, 2, 4}, pps[] = {1, 2, 3}, mbss[] = {1, 2};

/* The axes in plan-field order (tp, pp, micro_batch_size), so that the
 * order is the same whether a grid keeps the file's order or the fields'. */
#define GRID "{\"tp\": [1, 2, 4], \"pp\": [1, 2, 3], \"micro_batch_size\": [1, 2]}"

typedef struct {
    ModelSpec *model;
    ClusterSpec *cluster;
    PlanSpec *base;
    PlanGrid *grid;
    gint stop;
} Fixture;

static Fixture fixture_new(void)
{
    /* 4 layers, hidden 64, 4 heads: tp 1, 2, 4 divide the heads, pp 1, 2
     * the layers */
    Fixture f = {test_gpt(4, 64, 4, 100, 16), test_cluster(1, GPUS, 300e9, 25e9), plan_spec_new(),
                 plan_grid_new(), 0};
    char *path = test_write_tmp(GRID);
    GError *error = NULL;
    ck_assert_msg(plan_grid_load(f.grid, path, &error), "%s", error ? error->message : "");
    test_remove(path);
    return f;
}

static void fixture_free(Fixture *f)
{
    model_spec_free(f->model);
    cluster_spec_free(f->cluster);
    plan_spec_free(f->base);
    plan_grid_free(f->grid);
}

/* The sweep of f's grid on `gpus` GPUs, the best `top` kept exact (0: the
 * default), or every plan replayed. */
static SweepSpec spec_of(Fixture *f, int gpus, int threads, int shard, int shards, int top,
                         gboolean exhaustive)
{
    return (SweepSpec){.model = f->model,
                       .cluster = f->cluster,
                       .base = f->base,
                       .grid = f->grid,
                       .gpus = gpus,
                       .threads = threads,
                       .shard = shard,
                       .shards = shards,
                       .stop = &f->stop,
                       .top = top,
                       .exhaustive = exhaustive,
                       .csv = TRUE};
}

static SweepResult *sweep_of(Fixture *f, int gpus, int threads, int shard, int shards, int top,
                             gboolean exhaustive)
{
    SweepSpec spec = spec_of(f, gpus, threads, shard, shards, top, exhaustive);
    GError *error = NULL;
    SweepResult *r = sweep_run(&spec, &error);
    ck_assert_msg(r != NULL, "%s", error ? error->message : "");
    ck_assert(!r->stopped);
    return r;
}

static SweepResult *sweep(Fixture *f, int threads, int shard, int shards)
{
    return sweep_of(f, GPUS, threads, shard, shards, 0, FALSE);
}

/* The text of column `name` in a CSV row, its quotes dropped: the header
 * has no quotes; in the row, commas inside a quoted cell ("2,2") do not
 * separate columns. */
static char *cell_text(const char *header, const char *row, const char *name)
{
    g_auto(GStrv) names = g_strsplit(header, ",", -1);
    int want = -1;
    for (int i = 0; names[i] && want < 0; i++)
        if (strcmp(g_strchomp(names[i]), name) == 0)
            want = i;
    ck_assert_msg(want >= 0, "no column %s in %s", name, header);
    int col = 0;
    gboolean quoted = FALSE;
    GString *out = g_string_new(NULL);
    for (const char *p = row; *p && *p != '\n'; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == ',' && !quoted)
            col++;
        else if (col == want)
            g_string_append_c(out, *p);
        if (col > want)
            break;
    }
    ck_assert_msg(col >= want, "row too short for %s: %s", name, row);
    return g_string_free(out, FALSE);
}

/* The value of column `name` in a CSV row, as an integer. */
static int cell(const char *header, const char *row, const char *name)
{
    g_autofree char *text = cell_text(header, row, name);
    return atoi(text);
}

/* Count and order: 18 combinations, 10 rows in combination order, each
 * simulated, its tp, pp, dp, mbs those of the next valid combination, and
 * 8 invalid, refused without rows, the reasons' counts adding up to 8 and
 * naming the cause (over the GPUs, or not dividing them); the header is
 * the CSV header of a report, ending in a newline, and so is each row. */
START_TEST(combinations_count_and_order)
{
    Fixture f = fixture_new();
    ck_assert_int_eq(plan_grid_size(f.grid), COMBINATIONS); /* 3 x 3 x 2 */
    SweepResult *r = sweep(&f, 1, 1, 1);
    ck_assert_int_eq(r->combinations, COMBINATIONS);
    ck_assert_int_eq(r->refused, SKIPPED);
    ck_assert_int_eq(r->count[REPORT_INVALID], SKIPPED);
    ck_assert_int_eq(r->count[REPORT_SIMULATED], VALID);
    ck_assert_uint_eq(r->rows->len, VALID);
    gint64 reasons = 0;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, r->reasons);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        reasons += *(gint64 *)value;
        ck_assert_msg(strstr(key, "at most the cluster's 4 GPUs") ||
                          strstr(key, "tp x pp divides the cluster's 4 GPUs"),
                      "%s", (char *)key);
    }
    ck_assert_int_eq(reasons, SKIPPED);
    ck_assert(g_str_has_suffix(r->header, "\n"));
    ck_assert(g_str_has_prefix(r->header, "plan_flags,tp,pp,dp,"));
    guint row = 0;
    for (int i = 0; i < COMBINATIONS; i++) {
        int tp = tps[i / 6], pp = pps[i / 2 % 3], mbs = mbss[i % 2];
        if (GPUS % (tp * pp) != 0)
            continue; /* refused */
        const SweepRow *sr = &g_array_index(r->rows, SweepRow, row);
        ck_assert_int_eq(sr->combination, i);
        ck_assert(g_str_has_suffix(sr->csv, "\n"));
        g_autofree char *status = cell_text(r->header, sr->csv, "status");
        ck_assert_int_eq(sr->status, REPORT_SIMULATED);
        ck_assert_str_eq(status, "simulated");
        ck_assert_msg(cell(r->header, sr->csv, "tp") == tp &&
                          cell(r->header, sr->csv, "pp") == pp &&
                          cell(r->header, sr->csv, "micro_batch_size") == mbs,
                      "row %u: %s, expected combination %d (tp %d pp %d mbs %d)", row, sr->csv, i,
                      tp, pp, mbs);
        ck_assert_int_eq(cell(r->header, sr->csv, "dp"), GPUS / (tp * pp));
        ck_assert(sr->tokens_per_s > 0 && sr->step_time_s > 0 && sr->peak_bytes > 0);
        g_autofree char *prefix =
            g_strdup_printf("tp %d x pp %d x dp %d,", tp, pp, GPUS / (tp * pp));
        SweepSpec spec = spec_of(&f, GPUS, 1, 1, 1, 0, FALSE);
        g_autofree char *summary = sweep_summary(&spec, sr);
        ck_assert_msg(g_str_has_prefix(summary, prefix), "%s", summary);
        row++;
    }
    ck_assert_uint_eq(row, VALID);
    sweep_result_free(r);
    fixture_free(&f);
}
END_TEST

/* The thread count changes nothing: rows byte for byte equal. */
START_TEST(rows_do_not_depend_on_threads)
{
    Fixture f = fixture_new();
    SweepResult *one = sweep(&f, 1, 1, 1);
    SweepResult *three = sweep(&f, 3, 1, 1);
    ck_assert_uint_eq(one->rows->len, three->rows->len);
    ck_assert_uint_eq(one->rows->len, three->rows->len);
    for (guint i = 0; i < one->rows->len; i++)
        ck_assert_str_eq(g_array_index(one->rows, SweepRow, i).csv,
                         g_array_index(three->rows, SweepRow, i).csv);
    sweep_result_free(one);
    sweep_result_free(three);
    fixture_free(&f);
}
END_TEST

/* sweep_shard_of gives every combination one shard in 1 .. N; and for N
 * = 2, 3, 5 the shards' combinations add up to the grid's 18 (shard 1
 * counts the refused ones), their rows and invalid ones to the whole
 * sweep's, each whole-sweep row in exactly one shard, in the same
 * relative order. */
START_TEST(shards_partition_the_grid)
{
    for (int n = 1; n <= 7; n++)
        for (gint64 c = 0; c < 10000; c++) {
            int k = sweep_shard_of(c, n);
            ck_assert_msg(k >= 1 && k <= n, "combination %" G_GINT64_FORMAT ": shard %d of %d", c,
                          k, n);
            ck_assert_int_eq(sweep_shard_of(c, n), k); /* the same every time */
        }
    Fixture f = fixture_new();
    SweepResult *all = sweep(&f, 2, 1, 1);
    static const int shard_counts[] = {2, 3, 5};
    for (gsize s = 0; s < G_N_ELEMENTS(shard_counts); s++) {
        int n = shard_counts[s];
        int *owner = g_new0(int, all->rows->len); /* shard holding each row */
        gint64 combinations = 0, invalid = 0;
        for (int k = 1; k <= n; k++) {
            int expect = 0; /* this shard's rows, by sweep_shard_of */
            for (gint64 c = 0; c < COMBINATIONS; c++)
                expect += sweep_shard_of(c, n) == k && GPUS % (tps[c / 6] * pps[c / 2 % 3]) == 0;
            SweepResult *part = sweep(&f, 2, k, n);
            ck_assert_int_eq(part->rows->len, expect);
            ck_assert_int_eq(part->combinations, expect + (k == 1 ? SKIPPED : 0));
            ck_assert_str_eq(part->header, all->header);
            combinations += part->combinations;
            invalid += part->count[REPORT_INVALID];
            guint from = 0; /* rows appear in the whole sweep's order */
            for (guint i = 0; i < part->rows->len; i++) {
                const char *csv = g_array_index(part->rows, SweepRow, i).csv;
                guint j = from;
                while (j < all->rows->len && strcmp(g_array_index(all->rows, SweepRow, j).csv, csv))
                    j++;
                ck_assert_msg(j < all->rows->len,
                              "shard %d/%d: row not in the sweep, or out of "
                              "order: %s",
                              k, n, csv);
                ck_assert_msg(owner[j] == 0, "row %u in shards %d and %d of %d", j, owner[j], k, n);
                owner[j] = k;
                from = j + 1;
            }
            sweep_result_free(part);
        }
        ck_assert_int_eq(combinations, COMBINATIONS);
        ck_assert_int_eq(invalid, SKIPPED);
        for (guint j = 0; j < all->rows->len; j++)
            ck_assert_msg(owner[j] != 0, "row %u in no shard of %d", j, n);
        g_free(owner);
    }
    GError *error = NULL;
    SweepSpec bad = {.model = f.model,
                     .cluster = f.cluster,
                     .base = f.base,
                     .grid = f.grid,
                     .gpus = GPUS,
                     .threads = 1,
                     .shard = 3,
                     .shards = 2,
                     .stop = &f.stop};
    ck_assert_ptr_null(sweep_run(&bad, &error));
    ck_assert_ptr_nonnull(strstr(error->message, "3/2"));
    g_clear_error(&error);
    bad.shard = 0;
    ck_assert_ptr_null(sweep_run(&bad, &error));
    g_clear_error(&error);
    sweep_result_free(all);
    fixture_free(&f);
}
END_TEST

/* sweep_best on rows made by hand. tokens/s 5, 9, 7, 9, 3, 8 with row 5
 * not fitting: by tokens/s, descending, the earlier first on a tie, the
 * fitting rows are 1 (9), 3 (9), 2 (7), 0 (5), 4 (3); with row 3 a twin
 * of row 1 (the same plan), 1, 2, 0. */
START_TEST(best_k_by_tokens_ties_earlier_first)
{
    static const double tokens[] = {5, 9, 7, 9, 3, 8};
    static const gboolean fits[] = {TRUE, TRUE, TRUE, TRUE, TRUE, FALSE};
    SweepResult r = {.rows = g_array_new(FALSE, TRUE, sizeof(SweepRow))};
    for (gsize i = 0; i < G_N_ELEMENTS(tokens); i++) {
        /* a sweep by tokens/s scores a row by its tokens/s */
        SweepRow row = {
            .tokens_per_s = tokens[i], .score = tokens[i], .fits = fits[i], .twin_of = -1};
        g_array_append_val(r.rows, row);
    }
    guint best[10];
    ck_assert_int_eq(sweep_best(&r, 3, best), 3);
    ck_assert(best[0] == 1 && best[1] == 3 && best[2] == 2);
    ck_assert_int_eq(sweep_best(&r, 1, best), 1);
    ck_assert_int_eq(best[0], 1);
    ck_assert_int_eq(sweep_best(&r, 10, best), 5); /* only 5 fit */
    static const guint all[] = {1, 3, 2, 0, 4};
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(best[i], all[i]);
    g_array_index(r.rows, SweepRow, 3).twin_of = 1;
    ck_assert_int_eq(sweep_best(&r, 3, best), 3);
    ck_assert(best[0] == 1 && best[1] == 2 && best[2] == 0);
    for (guint i = 0; i < r.rows->len; i++)
        g_array_index(r.rows, SweepRow, i).fits = FALSE;
    ck_assert_int_eq(sweep_best(&r, 3, best), 0);
    g_array_free(r.rows, TRUE);
}
END_TEST

/* On the real sweep: the best 3 fit, in non-increasing tokens/s, and no
 * fitting row left out beats the third. */
START_TEST(best_k_of_a_sweep)
{
    Fixture f = fixture_new();
    SweepResult *r = sweep(&f, 2, 1, 1);
    guint best[3];
    int n = sweep_best(r, 3, best);
    ck_assert_int_eq(n, 3); /* the tiny model fits everywhere */
    for (int i = 0; i < n; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, best[i]);
        ck_assert(row->fits);
        if (i > 0)
            ck_assert(g_array_index(r->rows, SweepRow, best[i - 1]).tokens_per_s >=
                      row->tokens_per_s);
    }
    double third = g_array_index(r->rows, SweepRow, best[2]).tokens_per_s;
    for (guint i = 0; i < r->rows->len; i++) {
        if (i == best[0] || i == best[1] || i == best[2])
            continue;
        ck_assert(g_array_index(r->rows, SweepRow, i).tokens_per_s <= third);
    }
    sweep_result_free(r);
    fixture_free(&f);
}
END_TEST

/* ---- bounds and branch and bound, on the shipped tiny model ---------- */

/* tiny-gpt on one DGX A100 node (8 GPUs, real latencies and launch
 * costs), the grid given. */
static Fixture shipped_new(const char *grid)
{
    Fixture f = {test_shipped_model("models", "tiny-gpt.json"),
                 test_shipped_cluster("dgx-a100-80gb.json", 1), plan_spec_new(), plan_grid_new(),
                 0};
    f.base->global_batch_size = 16;
    char *path = test_write_tmp(grid);
    GError *error = NULL;
    ck_assert_msg(plan_grid_load(f.grid, path, &error), "%s", error ? error->message : "");
    test_remove(path);
    return f;
}

/* Every scheme the emitter has, with both gradient types:
 * 3 x 3 x 2 x 4 x 2 x 4 x 2 x 2 x 3 = 6912 combinations. */
#define WIDE_GRID                                                                                  \
    "{\"tp\": [1, 2, 4], \"pp\": [1, 2, 4], \"micro_batch_size\": [1, 2],"                         \
    " \"schedule\": [\"naive\", \"gpipe\", \"1f1b\", \"interleaved\"], \"virtual_stages\": [1, "   \
    "2],"                                                                                          \
    " \"zero_stage\": [0, 1, 2, 3], \"grad_accum_dtype\": [\"fp32\", \"bf16\"],"                   \
    " \"sequence_parallel\": [false, true], \"recompute\": [\"none\", \"selective\", \"full\"]}"

/* The plan of combination `combo` on `gpus` GPUs, resolved and checked, or
 * NULL if invalid. */
static PlanSpec *plan_of(const Fixture *f, gint64 combo, int gpus)
{
    PlanSpec *plan = plan_spec_copy(f->base);
    plan_grid_apply(f->grid, combo, plan);
    plan->dp = gpus / (plan->tp * plan->pp);
    if (plan->dp == 0 || gpus % (plan->tp * plan->pp) != 0 ||
        !plan_spec_resolve(plan, f->model, f->cluster, NULL) ||
        !strategy_check(plan, f->model, NULL)) {
        plan_spec_free(plan);
        return NULL;
    }
    return plan;
}

/* Replays `plan`, combination c, and checks its bounds: the step-time
 * bound at most the replayed step, the states bound at most the memory
 * bound at most the replayed peak, and the states bound the ledger's model
 * states and reserve of the most loaded stage, to rounding. Returns the
 * step bound over the replayed step, and sets *memory to the memory bound
 * over the replayed peak. */
static double check_bounds(const Fixture *f, const PlanSpec *plan, gint64 c, double *memory)
{
    Report rep;
    GError *error = NULL;
    ck_assert_msg(simulate_run(f->model, f->cluster, plan, &rep, &error), "%s", error->message);
    Step step = step_of(f->model, f->cluster, plan);
    double bound = estimate_step_lower_bound_s(&step);
    double peak = estimate_peak_lower_bound_bytes(&step);
    double states = estimate_states_bytes(&step);
    double chain = estimate_step_chain_bound_s(&step);
    ck_assert_msg(bound > 0 && bound <= chain && chain <= rep.metrics.step_time_s,
                  "combination %" G_GINT64_FORMAT ": bound %.17g s, chain bound %.17g s, step "
                  "%.17g s",
                  c, bound, chain, rep.metrics.step_time_s);
    ck_assert_msg(states > 0 && states <= peak && peak <= rep.metrics.peak_bytes,
                  "combination %" G_GINT64_FORMAT ": states %.17g, memory bound %.17g, peak "
                  "%.17g bytes",
                  c, states, peak, rep.metrics.peak_bytes);
    double held = 0; /* the ledger's: constant all step, so as at each stage's peak */
    for (int s = 0; s < rep.metrics.n_stages; s++) {
        const double *split = rep.metrics.stages[s].peak_split;
        held = MAX(held, split[MEM_PARAMS] + split[MEM_GRADS] + split[MEM_OPTIMIZER] +
                             split[MEM_RESERVE]);
    }
    ck_assert_rel(states, held, 1e-12);
    *memory = peak / rep.metrics.peak_bytes;
    double ratio = bound / rep.metrics.step_time_s;
    report_clear(&rep);
    return ratio;
}

/* Admissibility, checked exhaustively: on every valid plan of the wide grid
 * on 8 GPUs (2,112 of them) the step-time bound is at most the replayed
 * step time, and the memory bounds at most the replayed peak; the states
 * bound is the ledger's model states and reserve of the most loaded
 * stage, to rounding, with fp32 and bf16 gradients alike; the bounds
 * are not vacuous (the tightest within 10 % of the replay, the loosest
 * above 5 %). On one GPU the bound is the replay's compute, all of the
 * step: equal to within the bound's slack. */
START_TEST(bounds_hold_on_every_plan)
{
    Fixture f = shipped_new(WIDE_GRID);
    int valid = 0;
    double tightest = 0, loosest = 1, fullest = 0;
    for (gint64 c = 0; c < plan_grid_size(f.grid); c++) {
        g_autoptr(PlanSpec) plan = plan_of(&f, c, 8);
        if (!plan)
            continue;
        double memory, ratio = check_bounds(&f, plan, c, &memory);
        tightest = MAX(tightest, ratio);
        fullest = MAX(fullest, memory);
        loosest = MIN(loosest, ratio);
        valid++;
    }
    ck_assert_int_gt(valid, 1000);
    ck_assert(tightest > 0.9 && loosest > 0.05 && fullest > 0.9);
    /* one GPU: nothing but compute */
    gint64 one = 0;
    g_autoptr(PlanSpec) plan = plan_of(&f, one, 1);
    ck_assert(plan && plan->tp == 1 && plan->pp == 1 && plan->dp == 1);
    Report rep;
    ck_assert(simulate_run(f.model, f.cluster, plan, &rep, NULL));
    Step step = step_of(f.model, f.cluster, plan);
    ck_assert_rel(estimate_step_lower_bound_s(&step), rep.metrics.step_time_s, 2e-6);
    report_clear(&rep);
    fixture_free(&f);
}
END_TEST

/* The first plan of the shipped fixture's `grid` on `gpus` GPUs at global
 * batch `batch`, its fixture in *f, and its step with `micro_batches` a
 * rank in *step. */
static PlanSpec *first_plan(Fixture *f, const char *grid, int batch, int gpus, int micro_batches,
                            Step *step)
{
    *f = shipped_new(grid);
    f->base->global_batch_size = batch;
    PlanSpec *plan = plan_of(f, 0, gpus);
    ck_assert(plan != NULL);
    *step = step_of(f->model, f->cluster, plan);
    ck_assert_int_eq(step->micro_batches, micro_batches);
    return plan;
}

/* The step time `plan` replays in. */
static double replayed_step_s(const Fixture *f, const PlanSpec *plan)
{
    Report rep;
    ck_assert(simulate_run(f->model, f->cluster, plan, &rep, NULL));
    double s = rep.metrics.step_time_s;
    report_clear(&rep);
    return s;
}

/* The chain bound by hand: tiny-gpt on 2 GPUs, pp 2, 1F1B, 2
 * micro-batches. With f_s, b_s a micro-batch's forward and backward on
 * stage s (the last stage, with the head, the slower) and h a transfer
 * between the two, the chain of units is F0 on stage 0, a transfer, F0 B0
 * F1 B1 on stage 1, a transfer, B1 on stage 0, its optimizer step:
 * f_0 + 2 (f_1 + b_1) + b_0 + 2 h + opt_0, where the fill, busy and drain
 * bound has the same without the transfers. So the two differ by 2 h, less
 * the bounds' relative slack of 1e-6; h is netbound_send_s's on one node
 * (its base latency, the least message latency, and b s h bf16 bytes over
 * NVLink's payload at its Simple efficiency), and the replay takes at
 * least the chain. */
START_TEST(chain_bound_counts_the_transfers)
{
    Fixture f;
    Step step;
    g_autoptr(PlanSpec) plan =
        first_plan(&f, "{\"pp\": [2], \"schedule\": [\"1f1b\"]}", 2, 2, 2, &step);
    const ClusterSpec *c = f.cluster;
    double bytes = 2.0 * f.model->seq_length * f.model->hidden_size; /* b = 1, t = 1 */
    double alpha = MIN(netbound_least_alpha_s(c, &c->intra), netbound_least_alpha_s(c, &c->inter));
    int nics;
    double link_Bps = MAX(netbound_payload_Bps(&c->intra, c->intra.bandwidth_Bps),
                          netbound_nic_payload_Bps(c, &nics));
    double hop = c->base_latency_s + alpha + bytes / link_Bps;
    ck_assert_double_eq(netbound_send_s(c, bytes, FALSE), hop);
    double cheap = estimate_step_lower_bound_s(&step), chain = estimate_step_chain_bound_s(&step);
    ck_assert_rel(chain - cheap, 2 * hop * (1 - 1e-6), 1e-9 * chain / hop);
    ck_assert(chain <= replayed_step_s(&f, plan));
    fixture_free(&f);
}
END_TEST

/* A zero-bubble schedule's units on the chain (estimate.h): on 4 stages
 * of tiny-gpt's 4 layers under ZB-H1 with 4 micro-batches a rank, whose
 * step is much of it fill and drain, the walk of the B and W units lifts
 * the bound above the fill, busy and drain bound (which counts no drain
 * for a split backward: 0.907 of the step) to within 5 % of the replayed
 * step (0.977 when written), and not past it. Before the walk took B and
 * W, the chain bound of such a schedule was the other. */
START_TEST(chain_bound_walks_zero_bubble_units)
{
    Fixture f;
    Step step;
    g_autoptr(PlanSpec) plan =
        first_plan(&f, "{\"pp\": [4], \"schedule\": [\"zb-h1\"]}", 8, 8, 4, &step);
    double cheap = estimate_step_lower_bound_s(&step), chain = estimate_step_chain_bound_s(&step);
    double replayed = replayed_step_s(&f, plan);
    ck_assert_msg(chain > 1.05 * cheap && chain >= 0.95 * replayed && chain <= replayed,
                  "chain %g s, cheap %g s, step %g s", chain, cheap, replayed);
    fixture_free(&f);
}
END_TEST

/* The chain bound's reductions by hand: one stage, dp 2 over two nodes of
 * one GPU, one micro-batch, no ZeRO. Its gradients, G = 4 bytes a
 * parameter (fp32), all-reduce after its backward starts, and the
 * optimizer step waits for them: the step lasts at least f + G / (2 B) +
 * opt, with f the forward and B a NIC's payload a second (half the bytes
 * leave the node), which on slow NICs is above f + b + opt. So halving the
 * NICs' bandwidth raises the bound by G / (2 B), and the replay takes at
 * least the bound. */
START_TEST(chain_bound_waits_for_the_last_reductions)
{
    ModelSpec *m = test_gpt(4, 256, 8, 1024, 128);
    double chain[2], added = 0;
    for (int k = 0; k < 2; k++) {
        ClusterSpec *c = test_cluster(2, 1, 300e9, k == 0 ? 1e9 : 0.5e9);
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->dp = 2;
        plan->global_batch_size = 2;
        plan->zero_stage = 0;
        test_resolve(plan, m, c);
        Step step = step_of(m, c, plan);
        ck_assert_int_eq(step.micro_batches, 1);
        chain[k] = estimate_step_chain_bound_s(&step);
        int nics;
        double grads =
            states_tensor_bytes(plan, TENSOR_GRAD) * states_stage_params_of(m, plan, 0).params;
        added += (k == 0 ? -1 : 1) * grads / (2 * netbound_nic_payload_Bps(c, &nics));
        Report rep;
        ck_assert(simulate_run(m, c, plan, &rep, NULL));
        ck_assert(chain[k] <= rep.metrics.step_time_s);
        report_clear(&rep);
        cluster_spec_free(c);
    }
    /* less a segment's reduction that alone fits in a packet (the final
     * norm's 256 fp32 gradients: 1 KiB, 1e-6 s), which the bound counts as
     * loading no link (netbound_loaded_bytes) */
    double kib = 1024 / (2 * 0.5e9);
    ck_assert_msg(chain[1] - chain[0] <= added && chain[1] - chain[0] >= added - 2 * kib,
                  "raised by %.17g s, expected %.17g s", chain[1] - chain[0], added);
    model_spec_free(m);
}
END_TEST

/* Both step bounds on random steps (testrandom.h: random models and
 * clusters, every schedule, rank order, forced algorithm, offload and
 * experts' plan, with few micro-batches or a steady state): the fill,
 * busy and drain bound at most the chain bound at most the replayed step;
 * the chain bound higher on some. */
START_TEST(bounds_hold_on_random_steps)
{
    enum { STEPS = 120 };
    GRand *rng = g_rand_new_with_seed(20261208);
    int tried = 0, raised = 0;
    for (int i = 0; i < STEPS; i++) {
        RandomStep s = random_step(rng, i % 2, &tried, 20 * STEPS);
        Report rep;
        GError *error = NULL;
        ck_assert_msg(simulate_run(s.m, s.c, s.plan, &rep, &error), "%s", error->message);
        Step step = step_of(s.m, s.c, s.plan);
        double cheap = estimate_step_lower_bound_s(&step),
               chain = estimate_step_chain_bound_s(&step);
        ck_assert_msg(cheap <= chain && chain <= rep.metrics.step_time_s,
                      "step %d (schedule %s, pp %d, %d micro-batches): bound %.17g s, chain bound "
                      "%.17g s, step %.17g s",
                      i, schedule_names[s.plan->schedule], s.plan->pp,
                      plan_spec_micro_batches(s.plan), cheap, chain, rep.metrics.step_time_s);
        raised += chain > cheap;
        report_clear(&rep);
        random_step_clear(&s);
    }
    g_print("chain bound: above the other on %d of %d random steps\n", raised, STEPS);
    ck_assert_int_gt(raised, STEPS / 10);
    g_rand_free(rng);
}
END_TEST

/* check_bounds on every valid plan of the fixture's grid on 8 GPUs;
 * returns how many, and counts in *sharded (when not NULL) those with
 * experts split over ep whose states ZeRO shards. */
static int grid_bounds_hold(const Fixture *f, int *sharded)
{
    int valid = 0;
    for (gint64 c = 0; c < plan_grid_size(f->grid); c++) {
        g_autoptr(PlanSpec) plan = plan_of(f, c, 8);
        if (!plan)
            continue;
        double memory;
        check_bounds(f, plan, c, &memory);
        valid++;
        if (sharded)
            *sharded += plan->ep > 1 && plan->zero_stage > 0;
    }
    return valid;
}

/* Partial recomputation (recompute_num_layers: the first N layers of each
 * chunk replayed, the others whole): the bounds hold on every valid plan
 * of tiny-gpt's 4 layers on 8 GPUs, over N from 0 (every layer) to 3,
 * 1 and 2 stages, with chunks, a split backward and ZeRO-3's gathers. */
START_TEST(bounds_hold_with_partial_recomputation)
{
    Fixture f = shipped_new("{\"tp\": [1, 2], \"pp\": [1, 2], \"schedule\": [\"1f1b\", "
                            "\"interleaved\", \"zb-h1\"], \"virtual_stages\": [1, 2], "
                            "\"zero_stage\": [1, 3], \"recompute\": [\"full\"], "
                            "\"recompute_num_layers\": [0, 1, 2, 3]}");
    ck_assert_int_ge(grid_bounds_hold(&f, NULL), 64);
    fixture_free(&f);
}
END_TEST

/* Mixtures of experts under ZeRO: tiny-gpt with 8 experts of which 2
 * per token in every layer, ep 1, 2, 4 and 8 with each ZeRO stage, on 1
 * and 2 stages, fp32 and bf16 gradients, with and without recomputation:
 * every valid plan's bounds hold, and its states bound is the ledger's
 * model states, dense states split over dp x cp and the experts' over
 * dp x cp / ep alike (states.h). */
#define MOE_GRID                                                                                   \
    "{\"pp\": [1, 2], \"ep\": [1, 2, 4, 8], \"zero_stage\": [0, 1, 2, 3],"                         \
    " \"grad_accum_dtype\": [\"fp32\", \"bf16\"], \"recompute\": [\"none\", \"full\"]}"

START_TEST(bounds_hold_with_experts_and_zero)
{
    Fixture f = shipped_new(MOE_GRID);
    f.model->experts = 8;
    f.model->experts_per_token = 2;
    f.model->moe_ffn_hidden_size = 512;
    f.model->moe_layer_frequency = 1;
    int sharded = 0, valid = grid_bounds_hold(&f, &sharded);
    /* pp 1: dp 8, every ep; pp 2: dp 4, ep 8 too many */
    ck_assert_int_eq(valid, 4 * 4 * 2 * 2 + 3 * 4 * 2 * 2);
    ck_assert_int_eq(sharded, 3 * 3 * 2 * 2 + 2 * 3 * 2 * 2);
    fixture_free(&f);
}
END_TEST

/* The combined 1F1B overlap (overlap_moe_expert_parallel_comm): its
 * pairs walk a forward as the other's backward frees, after one warm-up
 * forward more, and may hide every exchange of a paired unit; and the
 * flex dispatcher's deduplicated exchanges: on every valid plan of
 * tiny-gpt with 8 experts, 1, 2 and 4 stages under 1F1B and
 * interleaving, ep 2 to 8, ZeRO 1 to 3, with and without the overlap, the
 * bounds hold. */
START_TEST(bounds_hold_with_the_combined_overlap)
{
    Fixture f = shipped_new("{\"pp\": [1, 2, 4], \"schedule\": [\"1f1b\", \"interleaved\"], "
                            "\"virtual_stages\": [1, 2], \"ep\": [2, 4, 8], "
                            "\"zero_stage\": [1, 2, 3], \"micro_batch_size\": [1, 2], "
                            "\"moe_dispatcher\": [\"all_to_all\", \"flex\"], "
                            "\"overlap_moe_expert_parallel_comm\": [false, true]}");
    f.model->experts = 8;
    f.model->experts_per_token = 2;
    f.model->moe_ffn_hidden_size = 512;
    f.model->moe_layer_frequency = 1;
    ck_assert_int_ge(grid_bounds_hold(&f, NULL), 96);
    fixture_free(&f);
}
END_TEST

/* Offloaded activations, on host links from as good as instant to 10,000
 * times slower than the DGX A100's: on every valid plan (each schedule,
 * with one layer or all but a chunk's last offloaded) the bounds hold,
 * and on the slow links the prefetches a backward waits for raise the
 * step bound of some. */
#define OFFLOAD_GRID                                                                               \
    "{\"tp\": [1, 2], \"pp\": [1, 2, 4], \"micro_batch_size\": [1, 2],"                            \
    " \"schedule\": [\"gpipe\", \"1f1b\", \"interleaved\", \"zb-h1\", \"zb-h2\"],"                 \
    " \"virtual_stages\": [1, 2], \"zero_stage\": [0, 3], \"offload\": [\"activations\"],"         \
    " \"offload_layers\": [0, 1]}"

START_TEST(bounds_hold_with_offloaded_activations)
{
    Fixture f = shipped_new(OFFLOAD_GRID);
    const double fast = f.cluster->gpu.pcie_Bps;
    int valid = 0, raised = 0;
    for (gint64 c = 0; c < plan_grid_size(f.grid); c++) {
        g_autoptr(PlanSpec) plan = plan_of(&f, c, 8);
        if (!plan)
            continue;
        double bound_fast = 0;
        for (double slower = 1; slower <= 1e4; slower *= 10) {
            f.cluster->gpu.pcie_Bps = fast / slower;
            double memory;
            check_bounds(&f, plan, c, &memory);
            Step step = step_of(f.model, f.cluster, plan);
            double bound = estimate_step_lower_bound_s(&step);
            if (slower == 1)
                bound_fast = bound;
            raised += bound > 1.01 * bound_fast && bound > estimate_comm_lower_bound_s(&step);
        }
        f.cluster->gpu.pcie_Bps = fast;
        valid++;
    }
    ck_assert_int_gt(valid, 50);
    ck_assert_int_gt(raised, 0);
    fixture_free(&f);
}
END_TEST

/* A grid of 576 combinations, 180 valid on 8 GPUs. Under FlashAttention
 * (the default) "none" and "selective" recomputation have the same normal
 * form, so a pruned sweep replays one of each pair for both. */
#define REAL_GRID                                                                                  \
    "{\"tp\": [1, 2, 4], \"pp\": [1, 2], \"micro_batch_size\": [1, 2], \"zero_stage\": [1, 3],"    \
    " \"recompute\": [\"none\", \"selective\", \"full\"], \"sequence_parallel\": [false, true],"   \
    " \"schedule\": [\"1f1b\", \"interleaved\"], \"virtual_stages\": [1, 2]}"

/* Branch and bound against the exhaustive sweep, for K = 1, 3 and 10: the
 * same best K, their rows byte for byte; every row the pruned sweep
 * simulated is the exhaustive one's; pruned rows carry their bound in
 * bound_s, at most the replayed step, and no step time; some plans are
 * pruned; and 1 or 3 threads write the same rows. The simulated rows
 * include the twins (REAL_GRID) the pruned sweep did not replay. */
START_TEST(pruning_ranks_the_exhaustive_best)
{
    Fixture f = shipped_new(REAL_GRID);
    SweepResult *all = sweep_of(&f, 8, 2, 1, 1, 0, TRUE);
    ck_assert_int_eq(all->count[REPORT_SIMULATED], 180);
    ck_assert_int_eq(all->count[REPORT_PRUNED] + all->count[REPORT_DOES_NOT_FIT], 0);
    static const int ks[] = {1, 3, 10};
    for (gsize t = 0; t < G_N_ELEMENTS(ks); t++) {
        int k = ks[t];
        SweepResult *pruned = sweep_of(&f, 8, 2, 1, 1, k, FALSE);
        ck_assert_int_gt(pruned->count[REPORT_PRUNED], 0);
        ck_assert_uint_eq(pruned->rows->len, all->rows->len);
        guint best_all[10], best_pruned[10];
        ck_assert_int_eq(sweep_best(all, k, best_all), k);
        ck_assert_int_eq(sweep_best(pruned, k, best_pruned), k);
        for (int i = 0; i < k; i++) {
            ck_assert_uint_eq(best_all[i], best_pruned[i]);
            ck_assert_str_eq(g_array_index(all->rows, SweepRow, best_all[i]).csv,
                             g_array_index(pruned->rows, SweepRow, best_pruned[i]).csv);
        }
        for (guint i = 0; i < pruned->rows->len; i++) {
            const SweepRow *p = &g_array_index(pruned->rows, SweepRow, i);
            const SweepRow *a = &g_array_index(all->rows, SweepRow, i);
            if (p->status == REPORT_SIMULATED)
                ck_assert_str_eq(p->csv, a->csv);
            if (p->status != REPORT_PRUNED)
                continue;
            g_autofree char *bound = cell_text(pruned->header, p->csv, "bound_s");
            g_autofree char *step = cell_text(pruned->header, p->csv, "step_time_s");
            g_autofree char *tokens = cell_text(pruned->header, p->csv, "tokens_per_s");
            g_autofree char *status = cell_text(pruned->header, p->csv, "status");
            ck_assert_str_eq(status, "pruned");
            ck_assert_str_eq(step, ""); /* not replayed: the bound is bound_s */
            ck_assert_str_eq(tokens, "");
            ck_assert(p->bound_s > 0 && p->bound_s <= a->step_time_s);
            ck_assert(g_ascii_strtod(bound, NULL) == p->bound_s ||
                      fabs(g_ascii_strtod(bound, NULL) / p->bound_s - 1) < 1e-9);
        }
        if (k == 3) {
            SweepResult *three = sweep_of(&f, 8, 3, 1, 1, k, FALSE);
            SweepResult *one = sweep_of(&f, 8, 1, 1, 1, k, FALSE);
            for (guint i = 0; i < one->rows->len; i++)
                ck_assert_str_eq(g_array_index(one->rows, SweepRow, i).csv,
                                 g_array_index(three->rows, SweepRow, i).csv);
            sweep_result_free(three);
            sweep_result_free(one);
        }
        sweep_result_free(pruned);
    }
    sweep_result_free(all);
    fixture_free(&f);
}
END_TEST

/* The memory pre-check on GPUs of 24 MB: some plans are does_not_fit
 * without a replay, their peak_bytes the memory bound, and each of them
 * replayed does not fit, its peak at least the bound; the others are
 * replayed or pruned as usual. Without a CSV the rows are the same, but
 * that a plan's model states alone pass the memory is enough: its
 * peak_bytes is then their bound, above 24 MB and at most the whole
 * bound. */
START_TEST(memory_precheck_only_drops_plans_that_cannot_fit)
{
    Fixture f = shipped_new(REAL_GRID);
    f.cluster->gpu.memory_bytes = 24e6;
    f.cluster->gpu.reserve_bytes = 0; /* the shipped 4 GiB would leave nothing */
    SweepResult *all = sweep_of(&f, 8, 2, 1, 1, 0, TRUE);
    SweepResult *checked = sweep_of(&f, 8, 2, 1, 1, 0, FALSE);
    int dropped = checked->count[REPORT_DOES_NOT_FIT], fitting = 0;
    ck_assert_int_gt(dropped, 0);
    for (guint i = 0; i < checked->rows->len; i++) {
        const SweepRow *c = &g_array_index(checked->rows, SweepRow, i);
        const SweepRow *a = &g_array_index(all->rows, SweepRow, i);
        fitting += a->status == REPORT_SIMULATED && a->fits;
        if (c->status != REPORT_DOES_NOT_FIT)
            continue;
        ck_assert(a->status == REPORT_SIMULATED && !a->fits);
        ck_assert(c->peak_bytes > 24e6 && c->peak_bytes <= a->peak_bytes);
        g_autofree char *fits = cell_text(checked->header, c->csv, "fits");
        g_autofree char *step = cell_text(checked->header, c->csv, "step_time_s");
        ck_assert_str_eq(fits, "false");
        ck_assert_str_eq(step, "");
    }
    ck_assert_int_gt(fitting, 0);
    guint best_all[10], best_checked[10];
    int n = sweep_best(all, 10, best_all);
    ck_assert_int_eq(sweep_best(checked, 10, best_checked), n);
    for (int i = 0; i < n; i++)
        ck_assert_uint_eq(best_all[i], best_checked[i]);
    SweepSpec spec = spec_of(&f, 8, 2, 1, 1, 0, FALSE);
    spec.csv = FALSE;
    SweepResult *plain = sweep_run(&spec, NULL);
    int states_alone = 0;
    for (guint i = 0; i < checked->rows->len; i++) {
        const SweepRow *c = &g_array_index(checked->rows, SweepRow, i);
        const SweepRow *p = &g_array_index(plain->rows, SweepRow, i);
        ck_assert_int_eq(p->status, c->status);
        if (c->status != REPORT_DOES_NOT_FIT)
            continue;
        ck_assert(p->peak_bytes > 24e6 && p->peak_bytes <= c->peak_bytes);
        states_alone += p->peak_bytes < c->peak_bytes;
    }
    ck_assert_int_gt(states_alone, 0);
    sweep_result_free(plain);
    sweep_result_free(all);
    sweep_result_free(checked);
    fixture_free(&f);
}
END_TEST

/* What each axis bought the winner (sweep_axis_gains): on the pruned
 * sweep (K = 3), for each axis on which the winner is not at the default,
 * a plan that fits at the default, at most as good as the exhaustive
 * sweep's best row so (found here by reading every row), and that best
 * exactly when the gain says it is exact; on this grid the search within
 * SWEEP_GAIN_REPLAYS replays is exact for some axes. */
START_TEST(axis_gains_match_the_exhaustive)
{
    Fixture f = shipped_new(REAL_GRID);
    SweepResult *all = sweep_of(&f, 8, 2, 1, 1, 0, TRUE);
    SweepResult *pruned = sweep_of(&f, 8, 2, 1, 1, 3, FALSE);
    SweepSpec spec = spec_of(&f, 8, 2, 1, 1, 3, FALSE);
    guint best;
    ck_assert_int_eq(sweep_best(pruned, 1, &best), 1);
    SweepAxisGain gains[16];
    int n = sweep_axis_gains(&spec, pruned, best, gains), exact = 0;
    ck_assert_int_ge(n, 1);
    g_autoptr(PlanSpec) scratch = plan_spec_copy(f.base);
    for (int i = 0; i < n; i++) {
        double expected = 0;
        for (guint k = 0; k < all->rows->len; k++) {
            const SweepRow *row = &g_array_index(all->rows, SweepRow, k);
            plan_grid_apply(f.grid, row->combination, scratch);
            if (row->status == REPORT_SIMULATED && row->fits &&
                plan_field_get(scratch, gains[i].field) == gains[i].value)
                expected = MAX(expected, row->score);
        }
        ck_assert_msg(expected > 0, "%s: no plan at the default", plan_fields[gains[i].field].name);
        ck_assert_int_ge(gains[i].row, 0);
        const SweepRow *found = &g_array_index(all->rows, SweepRow, gains[i].row);
        ck_assert_rel(gains[i].score, found->score, 1e-12); /* its own figure */
        ck_assert(gains[i].score <= expected);
        if (gains[i].exact)
            ck_assert_rel(gains[i].score, expected, 1e-12);
        exact += gains[i].exact;
    }
    ck_assert_int_ge(exact, 1);
    sweep_result_free(all);
    sweep_result_free(pruned);
    fixture_free(&f);
}
END_TEST

/* A top K of distinct plans (sweep_best_distinct, issue 37): an
 * 8-layer GPT on 8 A100s, every tp x pp x micro-batch x schedule x chunks
 * x offload replayed. Plans that differ only in chunks, micro-batches,
 * 1F1B's interleaving and the activations' offload ("near" flags) and are within SWEEP_NEAR of each other are
 * one entry: no two entries are so; each entry's near-twins differ from it
 * only so, each within SWEEP_NEAR of the one above; the entry is the
 * simplest of those within SWEEP_NEAR of the group's best (no offload of
 * activations, then the fewest chunks, then the largest micro-batch);
 * groups come by their best rows' order (sweep_best's); and the grid has
 * near-twins to collapse (the test is not vacuous). */
#define NEAR_GRID                                                                                  \
    "{\"tp\": [1, 2], \"pp\": [1, 2, 4], \"micro_batch_size\": [1, 2, 4],"                        \
    " \"schedule\": [\"1f1b\", \"interleaved\"], \"virtual_stages\": [1, 2, 4],"            \
    " \"offload\": [\"none\", \"activations\"]}"

/* Whether plans a and b differ only in the near flags. */
static gboolean differ_only_near(const PlanSpec *a, const PlanSpec *b)
{
    static const char *const near[] = {"--virtual-stages", "--micro-batch-size", "--schedule",
                                       "--pipeline-model-parallel-layout", "--offload",
                                       "--offload-layers"};
    g_autofree char *flags = plan_spec_change_flags(a, b);
    g_auto(GStrv) words = g_strsplit(flags, " ", -1);
    for (int i = 0; words[i]; i++) {
        if (!g_str_has_prefix(words[i], "--"))
            continue; /* a value */
        gboolean allowed = FALSE;
        for (gsize k = 0; k < G_N_ELEMENTS(near); k++)
            allowed |= strcmp(words[i], near[k]) == 0;
        if (!allowed)
            return FALSE;
    }
    return TRUE;
}

/* Clusters compared (sweep --cluster a,b): the same 8 GPUs as DGX A100 and
 * DGX H100 nodes, at 1 and 4 a GPU-hour. By time the H100s win; by cost
 * the A100s, as no part of the H100's step is 4 times the A100's speed
 * (dense bf16 989 against 312 TFLOP/s, 3.2x; HBM 3.35 against 2.0 TB/s;
 * NVLink 450 against 300 GB/s a direction: the datasheets). Twins are
 * found within a cluster only (a plan on the H100s is no twin of the
 * same plan on the A100s), and at pp 1 the naive schedule, and GPipe with
 * one micro-batch, are 1F1B's twins: a pruned sweep's rows, replayed or
 * twins, are the exhaustive sweep's. A row's score is its run's cost at
 * its cluster's price: steps x step x 8 GPUs / 3600 s x price. */
START_TEST(clusters_rank_by_time_and_by_cost)
{
    Fixture f = shipped_new("{\"tp\": [1, 2], \"pp\": [1, 2], \"micro_batch_size\": [1, 2],"
                            " \"schedule\": [\"1f1b\", \"gpipe\", \"naive\"]}");
    f.base->global_batch_size = 8; /* at dp 8 and mbs 1, one micro-batch */
    ClusterSpec *h100 = test_shipped_cluster("dgx-h100.json", 1);
    f.cluster->gpu_hour_price = 1;
    h100->gpu_hour_price = 4;
    const ClusterSpec *clusters[] = {f.cluster, h100};
    const double tokens = 1e9;
    guint winner[2];
    for (int by = 0; by < 2; by++) {
        SweepResult *r[2];
        for (int exhaustive = 0; exhaustive < 2; exhaustive++) {
            SweepSpec spec = spec_of(&f, 0, 2, 1, 1, 3, exhaustive);
            spec.clusters = clusters;
            spec.n_clusters = 2;
            spec.tokens = tokens;
            spec.rank_by = by ? SWEEP_RANK_COST : SWEEP_RANK_TIME;
            r[exhaustive] = sweep_run(&spec, NULL);
            ck_assert_ptr_nonnull(r[exhaustive]);
            ck_assert_int_eq(sweep_best(r[exhaustive], 1, &winner[by]), 1);
            const SweepRow *w = &g_array_index(r[exhaustive]->rows, SweepRow, winner[by]);
            ck_assert_ptr_eq(sweep_cluster(&spec, w), clusters[by ? 0 : 1]);
            g_autoptr(PlanSpec) plan = sweep_plan(&spec, w);
            double steps = ceil(tokens / (8.0 * f.model->seq_length));
            double cost = steps * w->step_time_s * 8 / 3600 * (by ? 1 : 4);
            if (by)
                ck_assert_double_eq_tol(1 / w->score, cost, 1e-9 * cost);
        }
        ck_assert_int_lt(r[0]->replayed, r[0]->count[REPORT_SIMULATED]); /* twins */
        for (guint i = 0; i < r[0]->rows->len; i++) {
            const SweepRow *row = &g_array_index(r[0]->rows, SweepRow, i);
            if (row->status == REPORT_SIMULATED)
                ck_assert_str_eq(row->csv, g_array_index(r[1]->rows, SweepRow, i).csv);
        }
        sweep_result_free(r[0]);
        sweep_result_free(r[1]);
    }
    cluster_spec_free(h100);
    fixture_free(&f);
}
END_TEST

static gint by_score_down(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x > y ? -1 : x < y;
}

START_TEST(best_distinct_collapses_near_twins)
{
    Fixture f = shipped_new(NEAR_GRID);
    model_spec_free(f.model);
    f.model = test_gpt(8, 64, 4, 100, 16);
    SweepSpec spec = spec_of(&f, 8, 2, 1, 1, 0, TRUE);
    SweepResult *r = sweep_run(&spec, NULL);
    ck_assert_ptr_nonnull(r);
    enum { K = 10 };
    guint best[K], order[K];
    GArray *near[K] = {0};
    int n = sweep_best_distinct(&spec, r, K, best, near), collapsed = 0, offloads = 0;
    ck_assert_int_eq(n, K);
    ck_assert_int_eq(sweep_best(r, K, order), K);
    double last = INFINITY;
    for (int i = 0; i < n; i++) {
        const SweepRow *lead = &g_array_index(r->rows, SweepRow, best[i]);
        g_autoptr(PlanSpec) plan = sweep_plan(&spec, lead);
        double top = lead->score;
        for (guint m = 0; m < near[i]->len; m++)
            top = MAX(top, g_array_index(r->rows, SweepRow, g_array_index(near[i], guint, m)).score);
        ck_assert(top <= last); /* groups by their best rows */
        last = top;
        /* the group's rows, best first, each within SWEEP_NEAR of the one
         * above; the lead the simplest of those within SWEEP_NEAR of the best */
        g_autoptr(GArray) scores = g_array_new(FALSE, FALSE, sizeof(double));
        g_array_append_val(scores, lead->score);
        for (guint m = 0; m < near[i]->len; m++) {
            const SweepRow *row = &g_array_index(r->rows, SweepRow, g_array_index(near[i], guint, m));
            g_autoptr(PlanSpec) twin = sweep_plan(&spec, row);
            ck_assert(differ_only_near(plan, twin));
            offloads += twin->offload != plan->offload;
            g_array_append_val(scores, row->score);
            if (row->score >= top * (1 - SWEEP_NEAR) && twin->offload == plan->offload)
                ck_assert(twin->virtual_stages > plan->virtual_stages ||
                          (twin->virtual_stages == plan->virtual_stages &&
                           twin->micro_batch_size <= plan->micro_batch_size));
            if (row->score >= top * (1 - SWEEP_NEAR))
                ck_assert(plan->offload != OFFLOAD_ACTIVATIONS ||
                          twin->offload == OFFLOAD_ACTIVATIONS);
        }
        ck_assert(lead->score >= top * (1 - SWEEP_NEAR));
        g_array_sort(scores, by_score_down);
        for (guint m = 1; m < scores->len; m++)
            ck_assert(g_array_index(scores, double, m) >=
                      g_array_index(scores, double, m - 1) * (1 - SWEEP_NEAR));
        collapsed += near[i]->len > 0;
        for (int j = 0; j < i; j++) {
            const SweepRow *other = &g_array_index(r->rows, SweepRow, best[j]);
            g_autoptr(PlanSpec) them = sweep_plan(&spec, other);
            double hi = MAX(lead->score, other->score), lo = MIN(lead->score, other->score);
            ck_assert_msg(!differ_only_near(plan, them) || lo < hi * (1 - SWEEP_NEAR),
                          "entries %d and %d are near-twins", j + 1, i + 1);
        }
    }
    /* the first group holds the best row of all */
    gboolean first = best[0] == order[0];
    for (guint m = 0; m < near[0]->len; m++)
        first |= g_array_index(near[0], guint, m) == order[0];
    ck_assert(first);
    ck_assert_int_gt(collapsed, 0);
    ck_assert_int_gt(offloads, 0); /* activations' offload collapses too */
    for (int i = 0; i < n; i++)
        g_array_free(near[i], TRUE);
    sweep_result_free(r);
    fixture_free(&f);
}
END_TEST

/* ---- plans across nodes, and random spaces ---------------------------- */

/* The communication bound (estimate_comm_lower_bound_s) across 4 nodes of
 * 8 A100s:
 * a GPT of 4 layers of 1,024 (and with 8 experts a token's 2 of them) on
 * 128-token sequences, every valid plan of tp x pp x ZeRO stage
 * x rank order x gradient type x ep, data parallelism spanning nodes
 * (expert groups of 8 over tp 2, whose all-to-alls cross nodes): the
 * step-time and memory bounds hold (check_bounds), and the NIC bound is
 * the tighter one for some plans, within 2x of their replay (not
 * vacuous). */
#define NODES_GRID                                                                                 \
    "{\"tp\": [1, 2, 8], \"pp\": [1, 2], \"zero_stage\": [0, 1, 2, 3], \"ep\": [1, 4, 8],"         \
    " \"rank_order\": [\"tp-dp-pp\", \"dp-tp-pp\"], \"grad_accum_dtype\": [\"fp32\", \"bf16\"],"   \
    " \"offload\": [\"none\", \"optimizer\", \"activations\"],"                                    \
    " \"moe_dispatcher\": [\"all_to_all\", \"all_gather\"]}"

START_TEST(bounds_hold_across_nodes)
{
    for (int moe = 0; moe < 2; moe++) {
        Fixture f = shipped_new(NODES_GRID);
        cluster_spec_free(f.cluster);
        f.cluster = test_shipped_cluster("dgx-a100-80gb.json", 4);
        f.base->global_batch_size = 64;
        /* wide layers on short sequences: the gradients outweigh the compute */
        model_spec_free(f.model);
        f.model =
            moe ? test_moe(4, 1024, 8, 1024, 128, 8, 2, 1024) : test_gpt(4, 1024, 8, 1024, 128);
        int valid = 0, comm_bound = 0;
        for (gint64 c = 0; c < plan_grid_size(f.grid); c++) {
            g_autoptr(PlanSpec) plan = plan_of(&f, c, 32);
            if (!plan)
                continue;
            double memory, ratio = check_bounds(&f, plan, c, &memory);
            Step step = step_of(f.model, f.cluster, plan);
            double comm = estimate_comm_lower_bound_s(&step);
            ck_assert(comm <= estimate_step_lower_bound_s(&step));
            comm_bound += ratio > 0.5 && comm == estimate_step_lower_bound_s(&step);
            valid++;
        }
        ck_assert_int_gt(valid, moe ? 100 : 50);
        ck_assert_int_gt(comm_bound, 0);
        fixture_free(&f);
    }
}
END_TEST

/* The all-to-all plan of the tests below: 16 experts over ep 16 on 2
 * nodes of 8 GPUs whose NICs are 100 times slower than NVLink (3 GB/s
 * against 300), both link classes at `efficiency`, a message across nodes
 * `alpha` seconds, wide tokens and thin experts, tokens dispatched `how`;
 * its step bound and its replayed step, and its MoE layers in *moe (if
 * not NULL). */
static void exchange_plan(double efficiency, double alpha, MoeDispatcher how, double *bound,
                          double *step, int *moe)
{
    ClusterSpec *c = test_cluster(2, 8, 300e9, 3e9);
    c->intra.efficiency = c->inter.efficiency = efficiency;
    c->inter.latency_s = alpha;
    ModelSpec *m = test_moe(2, 2048, 16, 1024, 1024, 16, 2, 128);
    for (int l = 0; moe && l < m->layers; l++)
        *moe += transformer_layer_moe(m, l);
    PlanSpec *plan = plan_spec_new();
    plan->dp = 16;
    plan->ep = 16;
    plan->moe_dispatcher = how;
    plan->micro_batch_size = 1;
    plan->global_batch_size = 16;
    test_resolve(plan, m, c);
    Report rep;
    GError *error = NULL;
    ck_assert_msg(simulate_run(m, c, plan, &rep, &error), "%s", error ? error->message : "");
    Step resolved = step_of(m, c, plan);
    *bound = estimate_step_lower_bound_s(&resolved);
    *step = rep.metrics.step_time_s;
    report_clear(&rep);
    plan_spec_free(plan);
    model_spec_free(m);
    cluster_spec_free(c);
}

/* An all-to-all across nodes bounds the step (exchange_plan at full
 * efficiency). A rank sends 8/16 of each exchange to the other node
 * through its NIC (topology.c's paths): the step bound is at most the
 * replay and, with that term, within 2x of it (0.0135 s against 0.0195
 * s); with the exchange's bytes over NVLink + NIC alone it was 0.0030 s,
 * a sixth. */
START_TEST(expert_exchanges_across_nodes_bound_the_step)
{
    double bound, step;
    exchange_plan(1, 0, MOE_DISPATCHER_ALL_TO_ALL, &bound, &step, NULL);
    ck_assert_msg(bound <= step && bound > 0.5 * step, "bound %.17g s, step %.17g s", bound, step);
}
END_TEST

/* The flex dispatcher's deduplicated exchange across the nodes (each
 * token once to the other node when one of its 2 experts of 16 is there:
 * 1 - C(8, 2) / C(16, 2) = 0.77 of the tokens, against 1 of its 2 copies
 * on average) still bounds the step, below the replay, within 2x of it,
 * and below the all-to-all's. */
START_TEST(flex_exchanges_across_nodes_bound_the_step)
{
    double bound[2], step[2];
    exchange_plan(1, 0, MOE_DISPATCHER_ALL_TO_ALL, &bound[0], &step[0], NULL);
    exchange_plan(1, 0, MOE_DISPATCHER_FLEX, &bound[1], &step[1], NULL);
    ck_assert_msg(bound[1] <= step[1] && bound[1] > 0.5 * step[1], "bound %.17g s, step %.17g s",
                  bound[1], step[1]);
    ck_assert(step[1] < step[0] && bound[1] < bound[0]);
}
END_TEST

/* A link carries its payload at most at its class's efficiency: the same
 * plan with both link classes at half their line rate, where the
 * exchanges' bytes through the NIC bound the step: they take at least
 * twice as long, so the bound rises by more than half and stays at most
 * the replay. Without the efficiency in the bound it did not move. */
START_TEST(links_carry_their_efficiency)
{
    double bound[2], step[2];
    for (int half = 0; half < 2; half++)
        exchange_plan(half ? 0.5 : 1, 0, MOE_DISPATCHER_ALL_TO_ALL, &bound[half], &step[half],
                      NULL);
    ck_assert_msg(bound[1] <= step[1] && bound[1] > 1.5 * bound[0],
                  "bounds %.17g and %.17g s, steps %.17g and %.17g s", bound[0], bound[1], step[0],
                  step[1]);
}
END_TEST

/* An all-to-all waits its latency: the same plan with a message across
 * nodes taking 1 ms (the Simple protocol alone, no base latency), so that
 * each exchange, whose direct plan sends its 15 messages one after the
 * other, waits 15 ms before its bytes move; per MoE layer a micro-batch
 * makes 4 (dispatch and combine, forward and backward), so the step
 * lasts at least 60 ms a MoE layer. Without the latency the bound was
 * 0.0135 s. */
START_TEST(all_to_all_latency_bounds_the_step)
{
    double bound, step;
    int moe = 0;
    exchange_plan(1, 1e-3, MOE_DISPATCHER_ALL_TO_ALL, &bound, &step, &moe);
    ck_assert_int_gt(moe, 0);
    ck_assert_msg(bound >= moe * 4 * 15e-3 * (1 - 1e-6) && bound <= step,
                  "bound %.17g s, latencies %.17g s, step %.17g s", bound, moe * 4 * 15e-3, step);
}
END_TEST

/* The forward's tensor-parallel collectives hold its compute: a GPT of
 * L = 4 layers of h = 1,024 on 128 tokens, tp 2 without sequence
 * parallelism, m = 4 micro-batches of 1, on 2 GPUs whose NVLink and NIC
 * move 1 GB/s each: each block's forward waits for the all-reduce of its
 * row-parallel output, b s h bf16 bytes = 262,144, of which each rank
 * sends at least half over its 2 GB/s of links, 65.5 us, so the step lasts
 * at least 2 L m of them, 2.1 ms (with the compute, more; the replay, its
 * collectives' latencies and all, 19.8 ms). Without that term the bound
 * was 1.06 ms. */
START_TEST(tensor_parallel_waits_bound_the_step)
{
    enum { L = 4, M = 4 };
    ClusterSpec *c = test_cluster(1, 2, 1e9, 1e9);
    ModelSpec *m = test_gpt(L, 1024, 16, 512, 128);
    PlanSpec *plan = plan_spec_new();
    plan->tp = 2;
    plan->micro_batch_size = 1;
    plan->global_batch_size = M;
    test_resolve(plan, m, c);
    Report rep;
    GError *error = NULL;
    ck_assert_msg(simulate_run(m, c, plan, &rep, &error), "%s", error ? error->message : "");
    double wait = 1.0 * 128 * 1024 * 2 / 2 / 2e9;
    Step resolved = step_of(m, c, plan);
    double bound = estimate_step_lower_bound_s(&resolved), step = rep.metrics.step_time_s;
    ck_assert_msg(bound >= 2 * L * M * wait * (1 - 1e-6) && bound <= step,
                  "bound %.17g s, waits %.17g s, step %.17g s", bound, 2 * L * M * wait, step);
    report_clear(&rep);
    plan_spec_free(plan);
    model_spec_free(m);
    cluster_spec_free(c);
}
END_TEST

/* --gpus: plans on fewer GPUs than the cluster's take dp from them (4 of
 * a node's 8: tp 2 gives dp 2). */
START_TEST(gpus_fewer_than_the_cluster)
{
    Fixture f = shipped_new("{\"tp\": [2, 4]}");
    SweepResult *r = sweep_of(&f, 4, 1, 1, 1, 0, FALSE);
    ck_assert_uint_eq(r->rows->len, 2);
    for (guint i = 0; i < 2; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, i);
        ck_assert_int_eq(row->status, REPORT_SIMULATED);
        ck_assert_int_eq(cell(r->header, row->csv, "gpus"), 4);
        ck_assert_int_eq(cell(r->header, row->csv, "dp"), 4 / cell(r->header, row->csv, "tp"));
    }
    sweep_result_free(r);
    fixture_free(&f);
}
END_TEST

/* Cluster sizes as the outermost axis (--nodes 1,2): combination c of
 * size k is grid combination c - k G, and its row is byte for byte that
 * of the sweep on that size alone. */
START_TEST(node_counts_are_an_axis)
{
    Fixture f = shipped_new("{\"tp\": [1, 2, 4], \"pp\": [1, 2]}");
    f.base->global_batch_size = 64;
    ClusterSpec *sizes[2] = {test_shipped_cluster("dgx-a100-80gb.json", 1),
                             test_shipped_cluster("dgx-a100-80gb.json", 2)};
    SweepSpec both = spec_of(&f, 0, 2, 1, 1, 0, TRUE);
    both.clusters = (const ClusterSpec *const *)sizes;
    both.n_clusters = 2;
    both.csv = TRUE;
    GError *error = NULL;
    SweepResult *r = sweep_run(&both, &error);
    ck_assert_msg(r, "%s", error ? error->message : "");
    ck_assert_int_eq(r->combinations, 2 * 6);
    guint at = 0;
    for (int k = 0; k < 2; k++) {
        SweepSpec one = spec_of(&f, 0, 2, 1, 1, 0, TRUE);
        one.cluster = sizes[k];
        SweepResult *alone = sweep_run(&one, &error);
        ck_assert_msg(alone, "%s", error ? error->message : "");
        for (guint i = 0; i < alone->rows->len; i++, at++) {
            const SweepRow *a = &g_array_index(alone->rows, SweepRow, i);
            const SweepRow *b = &g_array_index(r->rows, SweepRow, at);
            ck_assert_int_eq(b->combination, a->combination + 6 * k);
            ck_assert_str_eq(b->csv, a->csv);
            ck_assert(sweep_cluster(&both, b) == sizes[k]);
        }
        sweep_result_free(alone);
    }
    ck_assert_uint_eq(at, r->rows->len);
    sweep_result_free(r);
    cluster_spec_free(sizes[0]);
    cluster_spec_free(sizes[1]);
    fixture_free(&f);
}
END_TEST

/* A space of more than SWEEP_MAX_PLANS plans that pass its rules (every
 * bucket size, read size and imbalance valid) is refused, its walk
 * stopped there, in well under a minute: no grid hangs a sweep. */
START_TEST(too_many_plans_are_refused)
{
    GString *json = g_string_new("{\"ddp_bucket_size\": [1");
    for (int i = 2; i <= 1000; i++)
        g_string_append_printf(json, ", %d", i);
    g_string_append(json, "], \"bytes_per_sample\": [1");
    for (int i = 2; i <= 1000; i++)
        g_string_append_printf(json, ", %d", i);
    g_string_append(json, "], \"moe_imbalance_percent\": [100");
    for (int i = 101; i < 120; i++)
        g_string_append_printf(json, ", %d", i);
    g_string_append(json, "]}");
    Fixture f = shipped_new(json->str);
    g_string_free(json, TRUE);
    SweepSpec spec = spec_of(&f, 8, 2, 1, 1, 0, FALSE);
    GError *error = NULL;
    ck_assert_ptr_null(sweep_run(&spec, &error));
    ck_assert_msg(strstr(error->message, "at most 10000000 plans"), "%s", error->message);
    g_error_free(error);
    fixture_free(&f);
}
END_TEST

/* An exhaustive sweep replays at most max_plans plans: the grid's 10
 * plans that pass the walk's rules (the header's count) are refused under
 * a limit of 9, before any is made, naming --exhaustive, or --jitter when
 * noise made the sweep exhaustive, and --max-plans; a limit of 10 replays
 * all 10. */
START_TEST(exhaustive_sweeps_are_limited)
{
    Fixture f = fixture_new();
    SweepSpec spec = spec_of(&f, GPUS, 1, 1, 1, 0, TRUE);
    spec.max_plans = VALID - 1;
    GError *error = NULL;
    ck_assert_ptr_null(sweep_run(&spec, &error));
    ck_assert_str_eq(error->message,
                     "--exhaustive: expected a space of at most 9 plans to replay every one "
                     "(raise it with --max-plans), got 10 that pass the space's rules");
    g_clear_error(&error);
    WhatIf noise = {.jitter = 0.1, .seed = 1};
    spec.whatif = &noise;
    ck_assert_ptr_null(sweep_run(&spec, &error));
    ck_assert_msg(g_str_has_prefix(error->message, "--jitter: expected a space of at most 9 plans"),
                  "%s", error->message);
    g_clear_error(&error);
    spec.whatif = NULL;
    spec.max_plans = VALID;
    SweepResult *r = sweep_run(&spec, &error);
    ck_assert_msg(r != NULL, "%s", error ? error->message : "");
    ck_assert_int_eq(r->count[REPORT_SIMULATED], VALID);
    sweep_result_free(r);
    fixture_free(&f);
}
END_TEST

/* The values a random space draws from: every axis of the default space
 * (plan_fields.def), with context parallelism (which tiny-gpt's 128
 * tokens do not reach by default) and the global batch. */
static const struct {
    const char *field;
    const char *values[6];
} choices[] = {
    {"tp", {"1", "2", "4", "8"}},
    {"pp", {"1", "2", "4"}},
    {"micro_batch_size", {"1", "2", "4"}},
    {"global_batch_size", {"32", "64"}},
    {"cp", {"1", "2"}},
    {"cp_algorithm", {"\"ring\"", "\"all_to_all\""}},
    {"ep", {"1", "2", "4"}},
    {"schedule",
     {"\"1f1b\"", "\"naive\"", "\"gpipe\"", "\"interleaved\"", "\"zb-h1\"", "\"zb-h2\""}},
    {"virtual_stages", {"1", "2"}},
    {"zero_stage", {"0", "1", "2", "3"}},
    {"offload", {"\"none\"", "\"optimizer\"", "\"activations\""}},
    {"sequence_parallel", {"false", "true"}},
    {"tp_comm_overlap", {"false", "true"}},
    {"recompute", {"\"none\"", "\"selective\"", "\"full\""}},
    {"dtype", {"\"bf16\"", "\"fp8\""}},
};

/* A random space of `choices`: every axis, two values on `wide` of them
 * (drawn), one on the others; as a grid file's text. */
static char *random_space(GRand *rng, int wide)
{
    int n = G_N_ELEMENTS(choices), two[G_N_ELEMENTS(choices)] = {0};
    for (int k = 0; k < wide; k++)
        two[g_rand_int_range(rng, 0, n)] = 1;
    GString *json = g_string_new("{");
    for (int i = 0; i < n; i++) {
        int count = 0;
        while (count < 6 && choices[i].values[count])
            count++;
        /* the first value (the field's default) half the time */
        int a = g_rand_boolean(rng) ? 0 : g_rand_int_range(rng, 0, count),
            b = g_rand_int_range(rng, 0, count);
        g_string_append_printf(json, "%s\"%s\": [%s", i ? ", " : "", choices[i].field,
                               choices[i].values[a]);
        if (two[i] && b != a)
            g_string_append_printf(json, ", %s", choices[i].values[b]);
        g_string_append(json, "]");
    }
    g_string_append(json, "}");
    return g_string_free(json, FALSE);
}

/* RANDOM_SPACES random spaces of every axis (random_space, 9 draws of two
 * values), for a GPT of 4 layers of 1,024 with 4 experts (so that ep
 * is an axis), a token's 2, on 128-token sequences, on two DGX H100 nodes
 * (FP8, offload, data parallelism across nodes, where the communication
 * bound binds):
 *   - the walk refuses only invalid combinations: each one without a row
 *     fails space_plan, each with a row is the next one that passes the
 *     rules;
 *   - branch and bound ranks the exhaustive sweep's best K (1 to 3) first,
 *     their rows byte for byte, and every row it simulated is the
 *     exhaustive sweep's. */
#define RANDOM_SPACES 400

START_TEST(random_spaces_rank_the_exhaustive_best)
{
    GRand *rng = g_rand_new_with_seed(22);
    int compared = 0, refused = 0;
    for (int t = 0; t < RANDOM_SPACES; t++) {
        g_autofree char *grid = random_space(rng, 9);
        Fixture f = shipped_new(grid);
        cluster_spec_free(f.cluster);
        f.cluster = test_shipped_cluster("dgx-h100.json", 2);
        f.base->global_batch_size = 0; /* the grid's */
        model_spec_free(f.model);
        f.model = test_moe(4, 1024, 8, 1024, 128, 4, 2, 1024);
        SweepResult *all = sweep_of(&f, 0, 2, 1, 1, 0, TRUE);
        Space space = {f.model, (const ClusterSpec *const *)&f.cluster, 1, 0, f.base, f.grid};
        guint row = 0;
        for (gint64 c = 0; c < plan_grid_size(f.grid); c++) {
            g_autoptr(PlanSpec) plan = NULL;
            gboolean valid = space_plan(&space, c, &plan, NULL);
            gboolean listed =
                row < all->rows->len && g_array_index(all->rows, SweepRow, row).combination == c;
            ck_assert_msg(listed || !valid, "%s: combination %" G_GINT64_FORMAT " refused, valid",
                          grid, c);
            refused += !listed;
            row += listed;
        }
        ck_assert_uint_eq(row, all->rows->len);
        int k = 1 + t % 3;
        SweepResult *pruned = sweep_of(&f, 0, 2, 1, 1, k, FALSE);
        guint best_all[3], best_pruned[3];
        int n = sweep_best(all, k, best_all);
        ck_assert_int_eq(sweep_best(pruned, k, best_pruned), n);
        for (int i = 0; i < n; i++) {
            ck_assert_msg(best_all[i] == best_pruned[i], "%s: rank %d", grid, i + 1);
            ck_assert_str_eq(g_array_index(all->rows, SweepRow, best_all[i]).csv,
                             g_array_index(pruned->rows, SweepRow, best_pruned[i]).csv);
        }
        for (guint i = 0; i < pruned->rows->len; i++) {
            const SweepRow *p = &g_array_index(pruned->rows, SweepRow, i);
            if (p->status == REPORT_SIMULATED)
                ck_assert_str_eq(p->csv, g_array_index(all->rows, SweepRow, i).csv);
        }
        compared += n > 0;
        sweep_result_free(all);
        sweep_result_free(pruned);
        fixture_free(&f);
    }
    g_rand_free(rng);
    /* a third of the spaces or more have a plan that fits, and the rules refuse some */
    ck_assert_int_gt(compared, RANDOM_SPACES / 3);
    ck_assert_int_gt(refused, 0);
}
END_TEST

Suite *suite_sweep(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("grid");
    tcase_add_test(tc, combinations_count_and_order);
    tcase_add_test(tc, rows_do_not_depend_on_threads);
    tcase_add_test(tc, shards_partition_the_grid);
    tcase_add_test(tc, best_k_by_tokens_ties_earlier_first);
    tcase_add_test(tc, best_k_of_a_sweep);
    tcase_add_test(tc, best_distinct_collapses_near_twins);
    suite_add_tcase(s, tc);
    tc = tcase_create("bounds");
    tcase_add_test(tc, bounds_hold_on_every_plan);
    tcase_add_test(tc, chain_bound_counts_the_transfers);
    tcase_add_test(tc, chain_bound_walks_zero_bubble_units);
    tcase_add_test(tc, chain_bound_waits_for_the_last_reductions);
    tcase_add_test(tc, bounds_hold_on_random_steps);
    tcase_add_test(tc, bounds_hold_with_partial_recomputation);
    tcase_add_test(tc, bounds_hold_with_experts_and_zero);
    tcase_add_test(tc, bounds_hold_with_the_combined_overlap);
    tcase_add_test(tc, bounds_hold_with_offloaded_activations);
    tcase_add_test(tc, pruning_ranks_the_exhaustive_best);
    tcase_add_test(tc, axis_gains_match_the_exhaustive);
    tcase_add_test(tc, memory_precheck_only_drops_plans_that_cannot_fit);
    suite_add_tcase(s, tc);
    tc = tcase_create("spaces");
    tcase_add_test(tc, bounds_hold_across_nodes);
    tcase_add_test(tc, expert_exchanges_across_nodes_bound_the_step);
    tcase_add_test(tc, flex_exchanges_across_nodes_bound_the_step);
    tcase_add_test(tc, tensor_parallel_waits_bound_the_step);
    tcase_add_test(tc, links_carry_their_efficiency);
    tcase_add_test(tc, all_to_all_latency_bounds_the_step);
    tcase_add_test(tc, gpus_fewer_than_the_cluster);
    tcase_add_test(tc, node_counts_are_an_axis);
    tcase_add_test(tc, too_many_plans_are_refused);
    tcase_add_test(tc, exhaustive_sweeps_are_limited);
    tcase_add_test(tc, random_spaces_rank_the_exhaustive_best);
    tcase_add_test(tc, clusters_rank_by_time_and_by_cost);
    suite_add_tcase(s, tc);
    return s;
}
