/* check_report.c: the report writers (output/report.c) in JSON, CSV and
 * text, on a small simulated step and on a report filled in by hand.
 *
 * JSON must parse back with cJSON and hold the keys report.h promises
 * (every plan field, the metrics, the memory section, the comm, stage and
 * link tables); CSV's header must name as many columns as its row has; the
 * values in both must be the Report struct's. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "strategy/emit.h"
#include "strategy/strategy.h"
#include "testutil.h"

/* The cells of one CSV line (RFC 4180: a quoted cell may hold commas and
 * doubled quotes); newly allocated, NULL-terminated. */
static char **csv_cells(const char *line)
{
    GPtrArray *cells = g_ptr_array_new();
    GString *cell = g_string_new(NULL);
    const char *p = line;
    for (;;) {
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++; /* "" is one quote */
                g_string_append_c(cell, *p);
            }
            ck_assert_msg(*p == '"', "unterminated quoted cell in: %s", line);
            p++;
        }
        while (*p && *p != ',' && *p != '\n')
            g_string_append_c(cell, *p++);
        g_ptr_array_add(cells, g_strdup(cell->str));
        g_string_truncate(cell, 0);
        if (*p != ',')
            break;
        p++;
    }
    ck_assert_msg(*p == '\0' || (*p == '\n' && p[1] == '\0'), "junk after the row: %s", p);
    g_string_free(cell, TRUE);
    g_ptr_array_add(cells, NULL);
    return (char **)g_ptr_array_free(cells, FALSE);
}

/* Index of `name` in `header`, or -1. */
static int column(char **header, const char *name)
{
    for (int i = 0; header[i]; i++)
        if (strcmp(header[i], name) == 0)
            return i;
    return -1;
}

/* The CSV with its header, split: *header and *row, each NULL-terminated. */
static void render_csv(const Report *rep, char ***header, char ***row)
{
    g_autofree char *both = report_render(rep, FORMAT_CSV, TRUE);
    g_autofree char *only = report_render(rep, FORMAT_CSV, FALSE);
    g_auto(GStrv) lines = g_strsplit(both, "\n", -1);
    /* two lines, each ending in a newline: "header\nrow\n" splits in 3 */
    ck_assert_int_eq(g_strv_length(lines), 3);
    ck_assert_str_eq(lines[2], "");
    g_autofree char *second = g_strconcat(lines[1], "\n", NULL);
    ck_assert_str_eq(only, second); /* without the header, the same row */
    g_autofree char *alone = report_csv_header();
    g_autofree char *first = g_strconcat(lines[0], "\n", NULL);
    ck_assert_str_eq(alone, first); /* the header sweeps print */
    *header = csv_cells(lines[0]);
    *row = csv_cells(lines[1]);
}

/* A tp 2 x pp 2 step on one node of 4 GPUs, 4 micro-batches: TP
 * collectives, pipeline transfers and two stages to report. */
static Run simulated(void)
{
    Run run = run_new(test_gpt(4, 64, 4, 100, 16), test_cluster(1, 4, 300e9, 25e9));
    run.plan->tp = 2;
    run.plan->pp = 2;
    run.plan->global_batch_size = 4;
    run_simulate(&run);
    return run;
}

static double number(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(cJSON_IsNumber(item), "\"%s\" is not a number", key);
    return item->valuedouble;
}

/* printed with %.10g: equal to 10 significant digits */
#define ck_assert_printed(a, b)                                                                    \
    ck_assert_msg(fabs((a) - (b)) <= 1e-9 * fabs(b), "%s = %.17g, expected %.17g", #a,             \
                  (double)(a), (double)(b))

START_TEST(json_parses_back_with_the_report_values)
{
    Run run = simulated();
    const Report *rep = &run.rep;
    const Metrics *m = &rep->metrics;
    g_autofree char *text = report_render(rep, FORMAT_JSON, FALSE);
    cJSON *json = cJSON_Parse(text);
    ck_assert_msg(json != NULL, "not JSON: %s", text);

    /* the plan: every field, by name */
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(json, "plan");
    ck_assert(cJSON_IsObject(plan));
    int fields = 0;
    for (const char *const *name = plan_field_names(); *name; name++, fields++)
        ck_assert_msg(cJSON_HasObjectItem(plan, *name), "plan lacks \"%s\"", *name);
    ck_assert_int_eq(cJSON_GetArraySize(plan), fields);
    ck_assert_int_eq(number(plan, "tp"), 2);
    ck_assert_int_eq(number(plan, "pp"), 2);
    ck_assert_int_eq(number(plan, "dp"), 1); /* 4 GPUs / (2 x 2) */
    ck_assert_int_eq(number(plan, "global_batch_size"), 4);
    ck_assert_int_eq(number(plan, "micro_batch_size"), 1);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(plan, "schedule")->valuestring, "1f1b");
    const cJSON *split = cJSON_GetObjectItemCaseSensitive(plan, "layers_per_stage");
    ck_assert(cJSON_IsArray(split) && cJSON_GetArraySize(split) == 2); /* 4 layers: 2, 2 */
    ck_assert_int_eq(cJSON_GetArrayItem(split, 0)->valueint, 2);
    ck_assert_int_eq(cJSON_GetArrayItem(split, 1)->valueint, 2);

    /* the top level */
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(json, "model")->valuestring, "test-gpt");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(json, "cluster")->valuestring,
                     "test-cluster");
    ck_assert_int_eq(number(json, "gpus"), 4);
    ck_assert_int_eq(rep->gpus, 4);
    ck_assert_int_eq(number(json, "micro_batches"), 4); /* B / (b dp) = 4 / 1 */
    ck_assert_double_eq(number(json, "parameters"), round(rep->parameters));
    ck_assert_printed(number(json, "step_time_s"), m->step_time_s);
    ck_assert_printed(number(json, "tokens_per_s"), m->tokens_per_s);
    ck_assert_printed(number(json, "model_flops"), m->model_flops);
    ck_assert_printed(number(json, "hardware_flops"), m->hardware_flops);
    ck_assert_printed(number(json, "mfu"), m->mfu);
    ck_assert_printed(number(json, "hfu"), m->hfu);
    ck_assert_printed(number(json, "compute_s"), m->compute_s);
    ck_assert_printed(number(json, "exposed_comm_s"), m->exposed_comm_s);
    ck_assert_printed(number(json, "bubble_fraction"), m->bubble_fraction);
    ck_assert_double_eq(number(json, "recompute_s"), 0); /* no recomputation */
    ck_assert_int_eq(number(json, "critical_rank"), m->critical_rank);
    ck_assert_double_eq(number(json, "events"), (double)m->events);
    ck_assert_int_eq(number(json, "simulated_ranks"), m->simulated_ranks);
    ck_assert(cJSON_HasObjectItem(json, "sim_wall_s")); /* JSON only */
    ck_assert(m->step_time_s > 0 && m->events > 0);

    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(json, "memory");
    ck_assert(cJSON_IsObject(mem));
    ck_assert_double_eq(number(mem, "peak_bytes"), round(m->peak_bytes));
    ck_assert_double_eq(number(mem, "capacity_bytes"), 80.0 * 1073741824.0); /* test_cluster */
    ck_assert(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(mem, "fits")));
    ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mem, "fits")), m->fits);
    ck_assert_int_eq(number(mem, "peak_rank"), m->peak_rank);
    static const char *const split_names[MEM_KINDS] = {"params_bytes",    "grads_bytes",
                                                       "optimizer_bytes", "activations_bytes",
                                                       "buffers_bytes",   "reserve_bytes"};
    double sum = 0;
    for (int k = 0; k < MEM_KINDS; k++) {
        ck_assert_double_eq(number(mem, split_names[k]), round(m->peak_split[k]));
        sum += m->peak_split[k];
    }
    ck_assert_rel(sum, m->peak_bytes, 1e-12); /* the split adds up to the peak */

    /* the comm table: one entry per (purpose, op) used, counts as in the
     * metrics; tp 2 gives TP all-reduces, pp 2 send/recvs */
    const cJSON *comm = cJSON_GetObjectItemCaseSensitive(json, "comm");
    ck_assert(cJSON_IsArray(comm));
    int used = 0;
    for (int tag = 0; tag < TAG_KINDS; tag++)
        for (int op = 0; op < COLL_N_OPS; op++)
            used += m->comm[tag][op].count > 0;
    ck_assert_int_eq(cJSON_GetArraySize(comm), used);
    gboolean tp_all_reduce = FALSE, pp_send = FALSE;
    for (const cJSON *e = comm->child; e; e = e->next) {
        const char *group = cJSON_GetObjectItemCaseSensitive(e, "group")->valuestring;
        const char *op = cJSON_GetObjectItemCaseSensitive(e, "op")->valuestring;
        int tag = -1, o = -1;
        for (int t = 0; t < TAG_KINDS; t++)
            if (emit_comm_name((TaskTag)t) && strcmp(emit_comm_name((TaskTag)t), group) == 0)
                tag = t;
        for (int k = 0; k < COLL_N_OPS; k++)
            if (strcmp(collective_name((CollOp)k), op) == 0)
                o = k;
        ck_assert_msg(tag >= 0 && o >= 0, "unknown comm entry %s %s", group, op);
        const CommStat *c = &m->comm[tag][o];
        ck_assert_int_eq(number(e, "count"), c->count);
        ck_assert_double_eq(number(e, "bytes"), round(c->bytes));
        ck_assert_printed(number(e, "time_s"), c->time_s);
        ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "algorithm")));
        tp_all_reduce |= tag == TAG_TP && o == COLL_ALL_REDUCE;
        pp_send |= tag == TAG_PP && o == COLL_SEND_RECV;
    }
    ck_assert(tp_all_reduce && pp_send);

    /* the stages: one per pipeline stage, layers as split */
    const cJSON *stages = cJSON_GetObjectItemCaseSensitive(json, "stages");
    ck_assert(cJSON_IsArray(stages));
    ck_assert_int_eq(cJSON_GetArraySize(stages), 2);
    ck_assert_int_eq(m->n_stages, 2);
    for (int s = 0; s < 2; s++) {
        const cJSON *st = cJSON_GetArrayItem(stages, s);
        ck_assert_int_eq(number(st, "stage"), s);
        ck_assert_int_eq(number(st, "layers"), 2);
        ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "embedding")), s == 0);
        ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "head")), s == 1);
        ck_assert_printed(number(st, "busy_s"), m->stages[s].busy_s);
        ck_assert_double_eq(number(st, "peak_bytes"), round(m->stages[s].peak_bytes));
    }
    ck_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(json, "links")));
    ck_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(json, "hot_links")));
    cJSON_Delete(json);
    run_free(&run);
}
END_TEST

/* The JSON name of a CSV column and the factor from JSON's value to the
 * CSV's: sizes are GiB in CSV ("peak_gib": "peak_bytes" / 2^30), shares %
 * ("mfu_percent": "mfu" x 100, "bubble_percent": "bubble_fraction" x 100);
 * which of the two JSON has is looked up in `sections`. */
static const cJSON *json_column(const cJSON *const *sections, gsize n, const char *csv, double *scale)
{
    const char *suffix[] = {"", "_bytes", "", "_fraction"};
    const char *cut[] = {"", "_gib", "_percent", "_percent"};
    const double factor[] = {1, 1.0 / 1073741824.0, 100, 100};
    for (gsize k = 0; k < G_N_ELEMENTS(suffix); k++) {
        if (!g_str_has_suffix(csv, cut[k]))
            continue;
        g_autofree char *name =
            g_strdup_printf("%.*s%s", (int)(strlen(csv) - strlen(cut[k])), csv, suffix[k]);
        for (gsize s = 0; s < n; s++) {
            const cJSON *item = cJSON_GetObjectItemCaseSensitive(sections[s], name);
            if (item) {
                *scale = factor[k];
                return item;
            }
        }
    }
    return NULL;
}

/* CSV: the header names as many columns as the row has, each once; the
 * plan's command first, then the plan's fields, in order; sim_wall_s is
 * left out (report.h); every column that JSON also has holds the same
 * value in the CSV's unit, and the CSV-only comm columns sum the comm table
 * per purpose. */
START_TEST(csv_header_matches_its_row)
{
    Run run = simulated();
    const Report *rep = &run.rep;
    const Metrics *m = &rep->metrics;
    char **header, **row;
    render_csv(rep, &header, &row);
    guint n = g_strv_length(header);
    ck_assert_uint_eq(g_strv_length(row), n);
    ck_assert_uint_gt(n, 40);
    for (guint i = 0; i < n; i++)
        ck_assert_msg(column(header, header[i]) == (int)i, "column \"%s\" twice", header[i]);
    ck_assert_str_eq(header[0], "plan_flags");
    g_autofree char *flags = plan_spec_flags(rep->plan);
    ck_assert_str_eq(row[0], flags);
    int f = 1;
    for (const char *const *name = plan_field_names(); *name; name++, f++)
        ck_assert_str_eq(header[f], *name);
    ck_assert_int_eq(column(header, "sim_wall_s"), -1);

    g_autofree char *text = report_render(rep, FORMAT_JSON, FALSE);
    cJSON *json = cJSON_Parse(text);
    ck_assert_ptr_nonnull(json);
    const cJSON *sections[] = {json, cJSON_GetObjectItemCaseSensitive(json, "plan"),
                               cJSON_GetObjectItemCaseSensitive(json, "memory")};
    int in_json = 0;
    for (guint i = 0; i < n; i++) {
        double scale = 1;
        const cJSON *item = json_column(sections, G_N_ELEMENTS(sections), header[i], &scale);
        if (!item)
            continue;
        in_json++;
        if (cJSON_IsNumber(item) && scale != 1) {
            ck_assert_printed(g_ascii_strtod(row[i], NULL), item->valuedouble * scale);
        } else if (cJSON_IsNumber(item)) {
            ck_assert_msg(g_ascii_strtod(row[i], NULL) == item->valuedouble,
                          "%s: CSV %s, JSON %.17g", header[i], row[i], item->valuedouble);
        } else if (cJSON_IsBool(item)) {
            ck_assert_str_eq(row[i], cJSON_IsTrue(item) ? "true" : "false");
        } else if (cJSON_IsString(item)) {
            ck_assert_str_eq(row[i], item->valuestring);
        } else if (cJSON_IsNull(item)) { /* a layout not given */
            ck_assert_str_eq(row[i], "");
        } else {
            ck_assert(cJSON_IsArray(item)); /* layers_per_stage: "2,2" */
            g_autofree char *flat = cJSON_PrintUnformatted(item);
            ck_assert_str_eq(row[i], "2,2");
            ck_assert_str_eq(flat, "[2,2]");
        }
    }
    /* CSV-only: plan_flags, 8 purposes (tp, cp, ep, dp, pp, zero, embedding, amax) x 3 comm columns, 3 link classes,
     * status, bound_s, reason, the 8 training_* columns (JSON's "training" object), and
     * without what-ifs the 4 what-if columns (whatif ... clean_critical_rank) */
    ck_assert_int_eq((int)n - in_json, 1 + 8 * 3 + LINK_CLASSES + 3 + 8 + 4);

    ck_assert_str_eq(row[column(header, "model")], "test-gpt");
    ck_assert_int_eq(atoi(row[column(header, "tp")]), rep->plan->tp);
    ck_assert_printed(g_ascii_strtod(row[column(header, "step_time_s")], NULL), m->step_time_s);
    ck_assert_printed(g_ascii_strtod(row[column(header, "peak_gib")], NULL),
                      round(m->peak_bytes) / 1073741824.0);
    for (int tag = 0; tag < TAG_KINDS; tag++) {
        if (!emit_comm_name((TaskTag)tag))
            continue;
        double bytes = 0, time = 0;
        for (int op = 0; op < COLL_N_OPS; op++) {
            bytes += m->comm[tag][op].bytes;
            time += m->comm[tag][op].time_s;
        }
        g_autofree char *b = g_strdup_printf("comm_%s_gib", emit_comm_name((TaskTag)tag));
        g_autofree char *t = g_strdup_printf("comm_%s_time_s", emit_comm_name((TaskTag)tag));
        ck_assert_int_ge(column(header, b), 0);
        ck_assert_printed(g_ascii_strtod(row[column(header, b)], NULL), round(bytes) / 1073741824.0);
        ck_assert_printed(g_ascii_strtod(row[column(header, t)], NULL), time);
        if (tag == TAG_TP || tag == TAG_PP)
            ck_assert(bytes > 0); /* tp 2 and pp 2 communicate */
    }
    cJSON_Delete(json);
    g_strfreev(header);
    g_strfreev(row);
    run_free(&run);
}
END_TEST

/* A report filled in by hand, so every printed value is known: quotes,
 * commas and backslashes in names survive JSON and CSV; -0 prints as 0;
 * numbers have 10 significant digits, byte counts every digit. */
START_TEST(hand_made_report_prints_exactly)
{
    ModelSpec *model = test_gpt(2, 64, 4, 100, 16);
    ClusterSpec *cluster = test_cluster(1, 8, 1e9, 1e9);
    PlanSpec *plan = plan_spec_new();
    plan->tp = 2;
    test_resolve(plan, model, cluster); /* dp 4, global batch 4 */
    Report rep = {.model = "gpt \"quoted\", v2",
                  .cluster = "c\\d",
                  .plan = plan,
                  .gpus = 8,
                  .parameters = 1.5e9,
                  .micro_batches = 1,
                  .metrics = {.step_time_s = 0.125,
                              .tokens_per_s = 4096,
                              .mfu = 1.0 / 3,
                              .hfu = 0.5,
                              /* 100 TFLOP/s a GPU: 100e12 x 0.125 s x 8 GPUs */
                              .causal_model_flops = 100e12 * 0.125 * 8,
                              .compute_s = 0.1,
                              .exposed_comm_s = -0.0,
                              .peak_bytes = 123456789012.0,
                              .capacity_bytes = 85899345920.0,
                              .fits = FALSE,
                              .peak_rank = 5,
                              .events = 77,
                              .simulated_ranks = 8,
                              .symmetry = "none",
                              .critical_rank = 3},
                  .sim_wall_s = 0.25};
    rep.metrics.comm[TAG_DP][COLL_ALL_REDUCE] =
        (CommStat){2, 1000, 0.5, 0.25, 1u << ALGORITHM_RING};
    rep.metrics.comm[TAG_DP][COLL_REDUCE_SCATTER] =
        (CommStat){1, 24, 0.125, 0, 1u << ALGORITHM_RING};

    g_autofree char *text = report_render(&rep, FORMAT_JSON, FALSE);
    ck_assert_ptr_nonnull(strstr(text, "\"mfu\": 0.3333333333,")); /* %.10g of 1/3 */
    ck_assert_ptr_nonnull(strstr(text, "\"exposed_comm_s\": 0,")); /* not -0 */
    ck_assert_ptr_nonnull(strstr(text, "\"peak_bytes\": 123456789012,"));
    ck_assert_ptr_nonnull(strstr(text, "\"step_time_s\": 0.125,"));
    cJSON *json = cJSON_Parse(text);
    ck_assert_msg(json != NULL, "not JSON: %s", text);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(json, "model")->valuestring,
                     "gpt \"quoted\", v2");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(json, "cluster")->valuestring, "c\\d");
    ck_assert_double_eq(number(json, "parameters"), 1.5e9);
    ck_assert_double_eq(number(json, "events"), 77);
    ck_assert_double_eq(number(json, "sim_wall_s"), 0.25);
    ck_assert_double_eq(number(json, "model_tflops_per_gpu"), 100);
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(json, "memory");
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(mem, "fits")));
    ck_assert_int_eq(number(mem, "peak_rank"), 5);
    const cJSON *comm = cJSON_GetObjectItemCaseSensitive(json, "comm");
    ck_assert_int_eq(cJSON_GetArraySize(comm), 2); /* the two entries used, in table order */
    const cJSON *first = cJSON_GetArrayItem(comm, 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(first, "group")->valuestring, "dp");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(first, "op")->valuestring,
                     collective_name(COLL_ALL_REDUCE));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(first, "algorithm")->valuestring, "ring");
    ck_assert_int_eq(number(first, "count"), 2);
    ck_assert_double_eq(number(first, "exposed_s"), 0.25);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(json, "stages")), 0);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(json, "hot_links")), 0);
    cJSON_Delete(json);

    char **header, **row;
    render_csv(&rep, &header, &row);
    ck_assert_uint_eq(g_strv_length(row), g_strv_length(header));
    ck_assert_str_eq(row[column(header, "model")], "gpt \"quoted\", v2");
    ck_assert_str_eq(row[column(header, "cluster")], "c\\d");
    ck_assert_str_eq(row[column(header, "mfu_percent")], "33.33333333"); /* %.10g of 100/3 */
    ck_assert_str_eq(row[column(header, "exposed_comm_s")], "0");
    ck_assert_str_eq(row[column(header, "fits")], "false");
    /* 1000 + 24 bytes = 2^-20 GiB */
    ck_assert_str_eq(row[column(header, "comm_dp_gib")], "9.536743164e-07");
    ck_assert_str_eq(row[column(header, "peak_gib")], "114.9780946"); /* 123456789012 / 2^30 */
    ck_assert_str_eq(row[column(header, "comm_dp_time_s")], "0.625");   /* 0.5 + 0.125 */
    ck_assert_str_eq(row[column(header, "comm_dp_exposed_s")], "0.25"); /* 0.25 + 0 */
    ck_assert_str_eq(row[column(header, "comm_tp_gib")], "0");
    ck_assert_str_eq(row[column(header, "tp")], "2");
    ck_assert_str_eq(row[column(header, "dp")], "4"); /* 8 GPUs / 2 */
    /* the raw line quotes the model's cell, doubling its quotes */
    g_autofree char *line = report_render(&rep, FORMAT_CSV, FALSE);
    ck_assert_ptr_nonnull(strstr(line, ",\"gpt \"\"quoted\"\", v2\","));
    g_strfreev(header);
    g_strfreev(row);

    /* text: the fit first (123456789012 bytes = 114.98 GiB), the headline and the step
     * line, by hand */
    g_autofree char *human = report_render(&rep, FORMAT_TEXT, FALSE);
    ck_assert_msg(g_str_has_prefix(human, "DOES NOT FIT: peak 114.98 GiB of 80.00 GiB on rank 5\n"
                                          "gpt \"quoted\", v2 on c\\d: 8 GPUs = tp 2 x pp 1 x dp "
                                          "4, 1.5 B parameters\n"),
                  "%s", human);
    ck_assert_ptr_nonnull(
        strstr(human, "step time        0.125 s, 4096 tokens/s, 100 model TFLOP/s a GPU, MFU 33.3 "
                      "%, HFU 50.0 %\n"));
    ck_assert_ptr_nonnull(strstr(human, "DOES NOT FIT"));
    ck_assert_ptr_nonnull(strstr(human, "on rank 5"));
    ck_assert_ptr_nonnull(strstr(human, "simulated        8 of 8 ranks (symmetry: none), 77 events"));
    plan_spec_free(plan);
    model_spec_free(model);
    cluster_spec_free(cluster);
}
END_TEST

START_TEST(format_names)
{
    ReportFormat f = FORMAT_TEXT;
    ck_assert(report_format_parse("json", &f) && f == FORMAT_JSON);
    ck_assert(report_format_parse("csv", &f) && f == FORMAT_CSV);
    ck_assert(report_format_parse("text", &f) && f == FORMAT_TEXT);
    f = FORMAT_CSV;
    ck_assert(!report_format_parse("JSON", &f));
    ck_assert(!report_format_parse(NULL, &f));
    ck_assert_int_eq(f, FORMAT_CSV); /* untouched */
}
END_TEST

/* simulate --breakdown against the replay: on the critical rank, the
 * kernel classes per micro-batch times the micro-batches, plus the
 * optimizer step, are the replay's compute time, the recomputation row its
 * recomputation (no interference, so each task lasts its cost); the JSON
 * rows sum to the step. Plans: one stage and two, interleaved, every
 * recomputation, standard and FlashAttention, context parallelism, fp8. */
START_TEST(breakdown_adds_up_to_the_replay)
{
    static const struct {
        int tp, pp, vp, cp;
        Recompute rc;
        Attention attention;
        Dtype dtype;
    } plans[] = {
        {1, 1, 1, 1, RECOMPUTE_NONE, ATTENTION_FLASH, DTYPE_BF16},
        {2, 2, 1, 1, RECOMPUTE_SELECTIVE, ATTENTION_STANDARD, DTYPE_BF16},
        {2, 2, 2, 1, RECOMPUTE_FULL, ATTENTION_FLASH, DTYPE_BF16},
        {1, 2, 1, 2, RECOMPUTE_NONE, ATTENTION_FLASH, DTYPE_BF16},
        {2, 1, 1, 1, RECOMPUTE_FULL, ATTENTION_STANDARD, DTYPE_FP8},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(plans); i++) {
        ModelSpec llama = test_llama(8, 1024, 16, 4, 2816, 32000, 2048);
        ModelSpec *model = g_memdup2(&llama, sizeof llama);
        model->name = g_strdup(llama.name);
        Run run = run_new(model, test_shipped_cluster("dgx-h100.json", 1));
        run.plan->tp = plans[i].tp;
        run.plan->pp = plans[i].pp;
        run.plan->cp = plans[i].cp;
        run.plan->virtual_stages = plans[i].vp;
        run.plan->schedule = plans[i].vp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        run.plan->recompute = plans[i].rc;
        run.plan->attention = plans[i].attention;
        run.plan->dtype = plans[i].dtype;
        run.plan->global_batch_size = 16;
        run_simulate(&run);
        const Metrics *m = &run.rep.metrics;
        Breakdown b;
        Step resolved = step_of(run.model, run.cluster, run.plan);
        breakdown_compute(&resolved, m->critical_stage, &b);
        double mb = run.rep.micro_batches;
        ck_assert_msg(fabs((mb * breakdown_micro_batch_s(&b) + b.optimizer_s) / m->compute_s - 1) <
                          1e-9,
                      "plan %zu: %.9g s of kernels, the replay computes %.9g s", i,
                      mb * breakdown_micro_batch_s(&b) + b.optimizer_s, m->compute_s);
        ck_assert_double_eq_tol(mb * b.recompute_s, m->recompute_s, 1e-9 * m->compute_s);
        ck_assert(b.launch_s > 0 && b.kernels[BREAKDOWN_GEMM] > 0);
        g_autofree char *json = report_breakdown_render(&run.rep, &b, FORMAT_JSON);
        cJSON *doc = cJSON_Parse(json);
        ck_assert(doc);
        double sum = 0, step = 0;
        const cJSON *row;
        cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "rows"))
        {
            const char *name = cJSON_GetObjectItem(row, "row")->valuestring;
            double s = cJSON_GetObjectItem(row, "s_per_step")->valuedouble;
            if (strcmp(name, "step") == 0)
                step = s;
            else if (!g_str_has_prefix(name, "of_which_"))
                sum += s;
        }
        ck_assert_double_eq_tol(step, m->step_time_s, 1e-9 * step);
        ck_assert_double_eq_tol(sum, step, 1e-8 * step);
        cJSON_Delete(doc);
        run_free(&run);
    }
}
END_TEST

/* cuda_graphs takes away exactly the kernels' launch cost: on one GPU
 * (nothing to wait for), the step without graphs is longer by the
 * kernel_launch_us of every kernel the breakdown counts, each micro-batch's
 * and the optimizer's two (gradient norm, Adam). */
START_TEST(cuda_graphs_remove_the_launches)
{
    double steps[2];
    Breakdown b;
    for (int graphs = 0; graphs < 2; graphs++) {
        Run run = run_new(test_gpt(4, 512, 8, 1000, 512), test_shipped_cluster("dgx-h100.json", 1));
        run.cluster->gpus_per_node = 1;
        run.plan->global_batch_size = 4;
        run.plan->cuda_graphs = graphs;
        run_simulate(&run);
        steps[graphs] = run.rep.metrics.step_time_s;
        if (!graphs) {
            Step step = step_of(run.model, run.cluster, run.plan);
            breakdown_compute(&step, 0, &b);
        }
        double launch = run.cluster->gpu.launch_s;
        ck_assert(launch > 0);
        if (graphs) {
            double kernels = 0;
            for (int c = 0; c < BREAKDOWN_CLASSES; c++)
                kernels += b.kernels[c];
            kernels = kernels * run.rep.micro_batches + 2;
            ck_assert_rel(steps[0] - steps[1], kernels * launch, 1e-9);
        }
        run_free(&run);
    }
}
END_TEST

Suite *suite_report(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("writers");
    tcase_add_test(tc, json_parses_back_with_the_report_values);
    tcase_add_test(tc, csv_header_matches_its_row);
    tcase_add_test(tc, hand_made_report_prints_exactly);
    tcase_add_test(tc, format_names);
    tcase_add_test(tc, breakdown_adds_up_to_the_replay);
    tcase_add_test(tc, cuda_graphs_remove_the_launches);
    suite_add_tcase(s, tc);
    return s;
}
