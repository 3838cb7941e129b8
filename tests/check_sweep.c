/* check_sweep.c: the sweep (app/sweep.c): how many combinations a grid
 * has and in which order their rows come back, shards that partition the
 * grid, and the best-K choice.
 *
 * The grid: tp {1, 2, 4} x pp {1, 2, 3} x micro_batch_size {1, 2} = 18
 * combinations (the product of the axes' sizes), numbered with the last
 * axis fastest (sweep.h): combination i is tp[i / 6], pp[i / 2 % 3],
 * mbs[i % 2]. On 4 GPUs dp = 4 / (tp pp); a plan is skipped when tp x pp
 * does not divide 4: pp 3 (3 tp values x 2 mbs = 6 combinations) and
 * tp 4 x pp 2 (2 more), so 8 skipped and 10 simulated. */
#include <stdlib.h>
#include <string.h>

#include "app/sweep.h"
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

static SweepResult *sweep(Fixture *f, int threads, int shard, int shards)
{
    SweepSpec spec = {.model = f->model,
                      .cluster = f->cluster,
                      .base = f->base,
                      .grid = f->grid,
                      .gpus = GPUS,
                      .threads = threads,
                      .shard = shard,
                      .shards = shards,
                      .stop = &f->stop};
    GError *error = NULL;
    SweepResult *r = sweep_run(&spec, &error);
    ck_assert_msg(r != NULL, "%s", error ? error->message : "");
    ck_assert(!r->stopped);
    return r;
}

/* The value of column `name` in a CSV row, as an integer: the header
 * has no quotes; in the row, commas inside a quoted cell ("2,2") do not
 * separate columns. */
static int cell(const char *header, const char *row, const char *name)
{
    g_auto(GStrv) names = g_strsplit(header, ",", -1);
    int want = -1;
    for (int i = 0; names[i] && want < 0; i++)
        if (strcmp(g_strchomp(names[i]), name) == 0)
            want = i;
    ck_assert_msg(want >= 0, "no column %s in %s", name, header);
    int col = 0;
    gboolean quoted = FALSE;
    for (const char *p = row; *p; p++) {
        if (col == want && !quoted)
            return atoi(p);
        if (*p == '"')
            quoted = !quoted;
        else if (*p == ',' && !quoted)
            col++;
    }
    ck_abort_msg("row too short for %s: %s", name, row);
    return -1;
}

/* Count and order: 18 combinations, 10 rows in combination order (each
 * row's tp, pp, dp, mbs those of the next valid combination), 8 skipped,
 * the reasons' counts adding up to 8; the header is the CSV header of a
 * report, ending in a newline, and so is each row. */
START_TEST(combinations_count_and_order)
{
    Fixture f = fixture_new();
    ck_assert_int_eq(plan_grid_size(f.grid), COMBINATIONS); /* 3 x 3 x 2 */
    SweepResult *r = sweep(&f, 1, 1, 1);
    ck_assert_int_eq(r->combinations, COMBINATIONS);
    ck_assert_int_eq(r->skipped, SKIPPED);
    ck_assert_uint_eq(r->rows->len, VALID);
    int reasons = 0;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, r->reasons);
    while (g_hash_table_iter_next(&it, &key, &value))
        reasons += GPOINTER_TO_INT(value);
    ck_assert_int_eq(reasons, SKIPPED);
    ck_assert(g_str_has_suffix(r->header, "\n"));
    ck_assert(g_str_has_prefix(r->header, "tp,pp,dp,"));
    guint row = 0;
    for (int i = 0; i < COMBINATIONS; i++) {
        int tp = tps[i / 6], pp = pps[i / 2 % 3], mbs = mbss[i % 2];
        if (GPUS % (tp * pp) != 0)
            continue;
        ck_assert_uint_lt(row, r->rows->len);
        const SweepRow *sr = &g_array_index(r->rows, SweepRow, row);
        ck_assert(g_str_has_suffix(sr->csv, "\n"));
        ck_assert_msg(cell(r->header, sr->csv, "tp") == tp &&
                          cell(r->header, sr->csv, "pp") == pp &&
                          cell(r->header, sr->csv, "micro_batch_size") == mbs,
                      "row %u: %s, expected combination %d (tp %d pp %d mbs %d)", row, sr->csv, i,
                      tp, pp, mbs);
        ck_assert_int_eq(cell(r->header, sr->csv, "dp"), GPUS / (tp * pp));
        ck_assert(sr->tokens_per_s > 0 && sr->step_time_s > 0 && sr->peak_bytes > 0);
        g_autofree char *prefix = g_strdup_printf("tp %d pp %d dp %d,", tp, pp, GPUS / (tp * pp));
        ck_assert_msg(g_str_has_prefix(sr->summary, prefix), "%s", sr->summary);
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
    for (guint i = 0; i < one->rows->len; i++)
        ck_assert_str_eq(g_array_index(one->rows, SweepRow, i).csv,
                         g_array_index(three->rows, SweepRow, i).csv);
    sweep_result_free(one);
    sweep_result_free(three);
    fixture_free(&f);
}
END_TEST

/* sweep_shard_of gives every combination one shard in 1 .. N; and for N
 * = 2, 3, 5 the shards' combinations add up to the grid's 18, their rows
 * and skips to the whole sweep's, each whole-sweep row in exactly one
 * shard, in the same relative order. */
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
        gint64 combinations = 0;
        int skipped = 0;
        for (int k = 1; k <= n; k++) {
            int expect = 0; /* this shard's combinations, by sweep_shard_of */
            for (gint64 c = 0; c < COMBINATIONS; c++)
                expect += sweep_shard_of(c, n) == k;
            SweepResult *part = sweep(&f, 2, k, n);
            ck_assert_int_eq(part->combinations, expect);
            ck_assert_str_eq(part->header, all->header);
            combinations += part->combinations;
            skipped += part->skipped;
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
        ck_assert_int_eq(skipped, SKIPPED);
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
 * fitting rows are 1 (9), 3 (9), 2 (7), 0 (5), 4 (3). */
START_TEST(best_k_by_tokens_ties_earlier_first)
{
    static const double tokens[] = {5, 9, 7, 9, 3, 8};
    static const gboolean fits[] = {TRUE, TRUE, TRUE, TRUE, TRUE, FALSE};
    SweepResult r = {.rows = g_array_new(FALSE, TRUE, sizeof(SweepRow))};
    for (gsize i = 0; i < G_N_ELEMENTS(tokens); i++) {
        SweepRow row = {.tokens_per_s = tokens[i], .fits = fits[i]};
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

Suite *suite_sweep(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("grid");
    tcase_add_test(tc, combinations_count_and_order);
    tcase_add_test(tc, rows_do_not_depend_on_threads);
    tcase_add_test(tc, shards_partition_the_grid);
    tcase_add_test(tc, best_k_by_tokens_ties_earlier_first);
    tcase_add_test(tc, best_k_of_a_sweep);
    suite_add_tcase(s, tc);
    return s;
}
