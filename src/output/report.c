/* report.c: the writers.
 *
 * One list of fields (collect) feeds JSON and CSV, so the two never drift:
 * each field has a section ("" for the top level, "plan", "memory"), a name
 * and a value that is a number, an integer, a boolean or a string. JSON
 * nests consecutive fields of one section in an object; CSV flattens them. */
#include "output/report.h"

#include <math.h>
#include <string.h>

#include "base/jsonw.h"
#include "base/units.h"

typedef enum { VALUE_NUMBER, VALUE_INT, VALUE_BOOL, VALUE_STRING, VALUE_LIST } ValueKind;

typedef enum { IN_JSON = 1, IN_CSV = 2, IN_BOTH = 3 } Where;

typedef struct {
    const char *section;
    const char *name; /* a literal, or owned by Fields.names */
    ValueKind kind;
    double number;        /* NUMBER, INT, BOOL */
    char *text;           /* STRING, LIST (CSV's "12,12"), owned */
    const PlanList *list; /* LIST (JSON's [12,12]), the plan's */
    Where where;
    gboolean blank; /* not known: an empty CSV cell, JSON's null */
    gboolean share; /* a fraction, which CSV gives in % (csv_unit) */
} Field;

/* the plan's fields and the report's own (82 at most today: the metrics,
 * the stages' and the training totals') */
#define MAX_FIELDS (PLAN_N_FIELDS + 96)

typedef struct {
    Field f[MAX_FIELDS];
    int n;
    GPtrArray *names; /* names made up at run time */
} Fields;

static Field *put(Fields *fs, const char *section, const char *name, ValueKind kind, double number,
                  const char *text)
{
    g_assert(fs->n < MAX_FIELDS);
    fs->f[fs->n] = (Field){.section = section,
                           .name = name,
                           .kind = kind,
                           .number = number,
                           .text = g_strdup(text),
                           .where = IN_BOTH};
    return &fs->f[fs->n++];
}

/* How CSV gives a field, for a spreadsheet: a size (a report field, not a
 * plan's, whose JSON name ends in _bytes) in GiB, its column
 * "peak_gib"; a share in %, "mfu_percent" ("bubble_fraction":
 * "bubble_percent"); any other as JSON does. */
typedef enum { CSV_AS_IS, CSV_GIB, CSV_PERCENT } CsvUnit;

static CsvUnit csv_unit(const Field *f)
{
    if (f->share)
        return CSV_PERCENT;
    if (f->kind == VALUE_INT && strcmp(f->section, "plan") != 0 && g_str_has_suffix(f->name, "_bytes"))
        return CSV_GIB;
    return CSV_AS_IS;
}

/* The field's CSV column name (csv_unit), newly allocated. */
static char *csv_name(const Field *f)
{
    switch (csv_unit(f)) {
    case CSV_GIB:
        return g_strdup_printf("%.*s_gib", (int)(strlen(f->name) - strlen("_bytes")), f->name);
    case CSV_PERCENT: {
        gsize n = strlen(f->name);
        if (g_str_has_suffix(f->name, "_fraction"))
            n -= strlen("_fraction");
        return g_strdup_printf("%.*s_percent", (int)n, f->name);
    }
    case CSV_AS_IS:
        break;
    }
    return g_strdup(f->name);
}

/* Puts a share (a fraction; CSV's %). */
static Field *put_share(Fields *fs, const char *name, double share)
{
    Field *f = put(fs, "", name, VALUE_NUMBER, share, NULL);
    f->share = TRUE;
    return f;
}

/* CSV's view of the comm table: per purpose, bytes sent, time and exposed
 * time, all collectives together, so that every row has the same columns. */
static void put_comm_columns(Fields *fs, const Metrics *m)
{
    for (int tag = 0; tag < TAG_KINDS; tag++) {
        const char *group = emit_comm_name((TaskTag)tag);
        if (!group)
            continue;
        CommStat sum = {0};
        for (int op = 0; op < COLL_N_OPS; op++) {
            sum.bytes += m->comm[tag][op].bytes;
            sum.time_s += m->comm[tag][op].time_s;
            sum.exposed_s += m->comm[tag][op].exposed_s;
        }
        static const char *const suffix[] = {"bytes", "time_s", "exposed_s"};
        double values[] = {sum.bytes, sum.time_s, sum.exposed_s};
        for (int k = 0; k < 3; k++) {
            char *name = g_strdup_printf("comm_%s_%s", group, suffix[k]);
            g_ptr_array_add(fs->names, name);
            put(fs, "", name, k == 0 ? VALUE_INT : VALUE_NUMBER, values[k], NULL)->where = IN_CSV;
        }
    }
}

/* The what-if fields: in CSV always, empty without what-ifs; in JSON only
 * with some. */
static void put_whatif(Fields *fs, const Report *rep)
{
    gboolean on = rep->whatif != NULL;
    double clean = rep->clean_step_time_s;
    Field *f[] = {
        put(fs, "", "whatif", VALUE_STRING, 0, on ? rep->whatif : ""),
        put(fs, "", "clean_step_time_s", VALUE_NUMBER, clean, NULL),
        put_share(fs, "step_time_change", clean > 0 ? rep->metrics.step_time_s / clean - 1 : 0),
        put(fs, "", "clean_critical_rank", VALUE_INT, rep->clean_critical_rank, NULL),
    };
    for (gsize i = 0; i < G_N_ELEMENTS(f); i++) {
        f[i]->where = on ? IN_BOTH : IN_CSV;
        f[i]->blank = !on && i > 0;
    }
}

/* The training totals (training.h): JSON's "training" object and CSV's
 * "training_steps", ... columns; blank without --tokens, the price and the
 * cost also without a price. */
static void put_training(Fields *fs, const Training *t)
{
    const struct {
        const char *name;
        ValueKind kind;
        double value;
        gboolean priced;
    } totals[] = {
        {.name = "tokens", .kind = VALUE_INT, .value = t->tokens},
        {.name = "gpu_hour_price",
         .kind = VALUE_NUMBER,
         .value = t->gpu_hour_price,
         .priced = TRUE},
        {.name = "steps", .kind = VALUE_INT, .value = t->steps},
        {.name = "time_s", .kind = VALUE_NUMBER, .value = t->time_s},
        {.name = "days", .kind = VALUE_NUMBER, .value = t->days},
        {.name = "gpu_hours", .kind = VALUE_NUMBER, .value = t->gpu_hours},
        {.name = "cost", .kind = VALUE_NUMBER, .value = t->cost, .priced = TRUE},
        {.name = "tokens_per_gpu_s", .kind = VALUE_NUMBER, .value = t->tokens_per_gpu_s},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(totals); i++) {
        char *column = g_strdup_printf("training_%s", totals[i].name);
        g_ptr_array_add(fs->names, column);
        gboolean blank = t->tokens <= 0 || (totals[i].priced && t->gpu_hour_price <= 0);
        Field *f[] = {put(fs, "training", totals[i].name, totals[i].kind, totals[i].value, NULL),
                      put(fs, "", column, totals[i].kind, totals[i].value, NULL)};
        f[0]->where = IN_JSON;
        f[1]->where = IN_CSV;
        f[0]->blank = f[1]->blank = blank;
    }
}

/* Whether a row of `status` knows the metric `name` (report.h); a pruned
 * row knows none (its bound is bound_s). */
static gboolean known(ReportStatus status, const char *name)
{
    static const char *const does_not_fit[] = {"peak_bytes", "capacity_bytes", "fits", NULL};
    const char *const *names = status == REPORT_DOES_NOT_FIT ? does_not_fit : NULL;
    return status == REPORT_SIMULATED || (names && g_strv_contains(names, name));
}

static void collect(const Report *rep, Fields *fs)
{
    const Metrics *m = &rep->metrics;
    gboolean simulated = rep->status == REPORT_SIMULATED;
    fs->n = 0;
    fs->names = g_ptr_array_new_with_free_func(g_free);
    /* CSV only: the plan as the flags that make it, for a spreadsheet's
     * reader to paste; blank for a plan that did not resolve */
    g_autofree char *flags = rep->status == REPORT_INVALID ? NULL : plan_spec_flags(rep->plan);
    put(fs, "", "plan_flags", VALUE_STRING, 0, flags ? flags : "")->where = IN_CSV;
    static const ValueKind kinds[] = {[FIELD_INT] = VALUE_INT,
                                      [FIELD_BOOL] = VALUE_BOOL,
                                      [FIELD_CHOICE] = VALUE_STRING,
                                      [FIELD_SET] = VALUE_STRING,
                                      [FIELD_LIST] = VALUE_LIST,
                                      [FIELD_LAYOUT] = VALUE_STRING};
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        PlanFieldKind kind = plan_fields[f].kind;
        gboolean scalar = kind == FIELD_INT || kind == FIELD_BOOL;
        g_autofree char *text = scalar ? NULL : plan_field_text(rep->plan, (PlanField)f);
        Field *field = put(fs, "plan", plan_fields[f].name, kinds[kind],
                           scalar ? plan_field_value(rep->plan, (PlanField)f) : 0, text);
        if (kind == FIELD_LIST)
            field->list = (const PlanList *)((const char *)rep->plan + plan_fields[f].offset);
        /* a plan that did not resolve: 0 for a field that cannot be 0; a
         * layout not given (Megatron's None) */
        field->blank =
            (kind == FIELD_LAYOUT && !text[0]) ||
            (!simulated && ((kind == FIELD_INT && field->number == 0 && plan_fields[f].min > 0) ||
                            (kind == FIELD_LIST && field->list->n == 0)));
    }
    put(fs, "", "model", VALUE_STRING, 0, rep->model);
    put(fs, "", "cluster", VALUE_STRING, 0, rep->cluster);
    put(fs, "", "gpus", VALUE_INT, rep->gpus, NULL)->blank = !simulated && rep->gpus == 0;
    put(fs, "", "parameters", VALUE_INT, rep->parameters, NULL)->blank =
        !simulated && rep->parameters == 0;
    put(fs, "", "active_parameters", VALUE_INT, rep->active_parameters, NULL)->blank =
        !simulated && rep->active_parameters == 0;
    put(fs, "", "micro_batches", VALUE_INT, rep->micro_batches, NULL)->blank =
        !simulated && rep->micro_batches == 0;
    int metrics_from = fs->n;
    put(fs, "", "step_time_s", VALUE_NUMBER, m->step_time_s, NULL);
    put(fs, "", "tokens_per_s", VALUE_NUMBER, m->tokens_per_s, NULL);
    put(fs, "", "model_flops", VALUE_NUMBER, m->model_flops, NULL);
    put(fs, "", "hardware_flops", VALUE_NUMBER, m->hardware_flops, NULL);
    put_share(fs, "mfu", m->mfu);
    put_share(fs, "hfu", m->hfu);
    put(fs, "", "model_tflops_per_gpu", VALUE_NUMBER, metrics_model_tflops_per_gpu(m, rep->gpus),
        NULL);
    put(fs, "", "compute_s", VALUE_NUMBER, m->compute_s, NULL);
    put(fs, "", "recompute_s", VALUE_NUMBER, m->recompute_s, NULL);
    put(fs, "", "exposed_comm_s", VALUE_NUMBER, m->exposed_comm_s, NULL);
    put_comm_columns(fs, m);
    for (int c = 0; c < LINK_CLASSES; c++) {
        char *name = g_strdup_printf("busiest_%s_utilization", topology_class_name((LinkClass)c));
        g_ptr_array_add(fs->names, name);
        put_share(fs, name, m->busiest[c].utilization)->where = IN_CSV;
    }
    put_share(fs, "bubble_fraction", m->bubble_fraction);
    put(fs, "memory", "peak_bytes", VALUE_INT, m->peak_bytes, NULL);
    put(fs, "memory", "capacity_bytes", VALUE_INT, m->capacity_bytes, NULL);
    put(fs, "memory", "fits", VALUE_BOOL, m->fits, NULL);
    put(fs, "memory", "host_bytes", VALUE_INT, m->host_bytes, NULL);
    put(fs, "memory", "peak_rank", VALUE_INT, m->peak_rank, NULL);
    for (int k = 0; k < MEM_KINDS; k++) { /* "params_bytes", ..., "reserve_bytes" */
        char *name = g_strdup_printf("%s_bytes", emit_mem_name((MemKind)k));
        g_ptr_array_add(fs->names, name);
        put(fs, "memory", name, VALUE_INT, m->peak_split[k], NULL);
    }
    put(fs, "", "critical_rank", VALUE_INT, m->critical_rank, NULL);
    put(fs, "", "events", VALUE_INT, (double)m->events, NULL);
    put(fs, "", "simulated_ranks", VALUE_INT, m->simulated_ranks, NULL);
    put(fs, "", "symmetry", VALUE_STRING, 0, m->symmetry);
    put_whatif(fs, rep);
    put(fs, "", "sim_wall_s", VALUE_NUMBER, rep->sim_wall_s, NULL)->where = IN_JSON;
    for (int i = metrics_from; i < fs->n; i++)
        fs->f[i].blank |= !known(rep->status, fs->f[i].name);
    put_training(fs, &rep->training);
    /* CSV only: what a sweep did with the plan */
    put(fs, "", "status", VALUE_STRING, 0, report_status_names[rep->status])->where = IN_CSV;
    Field *bound = put(fs, "", "bound_s", VALUE_NUMBER, rep->bound_s, NULL);
    bound->where = IN_CSV;
    bound->blank = !(rep->bound_s > 0);
    put(fs, "", "reason", VALUE_STRING, 0, rep->reason ? rep->reason : "")->where = IN_CSV;
}

static void clear(Fields *fs)
{
    for (int i = 0; i < fs->n; i++)
        g_free(fs->f[i].text);
    g_ptr_array_free(fs->names, TRUE);
}

/* A field's value in JSON. */
static void json_value(JsonWriter *w, const Field *f)
{
    if (f->blank) {
        jsonw_null(w);
        return;
    }
    switch (f->kind) {
    case VALUE_NUMBER:
        jsonw_number(w, f->number);
        break;
    case VALUE_INT:
        jsonw_int(w, f->number);
        break;
    case VALUE_BOOL:
        jsonw_bool(w, f->number != 0);
        break;
    case VALUE_LIST:
        jsonw_begin_list(w, JSONW_COMPACT);
        for (int i = 0; i < f->list->n; i++)
            jsonw_int(w, f->list->v[i]);
        jsonw_end(w);
        break;
    case VALUE_STRING:
        jsonw_string(w, f->text);
        break;
    }
}

/* A field's value as a CSV cell; numbers in the forms of jsonw_number and
 * jsonw_int. */
static void csv_value(GString *out, const Field *f)
{
    if (f->blank)
        return;
    CsvUnit unit = csv_unit(f);
    if (unit != CSV_AS_IS) {
        double value = unit == CSV_GIB ? f->number / UNITS_GIB : 100 * f->number;
        g_string_append_printf(out, "%.10g", value == 0 ? 0.0 : value);
        return;
    }
    switch (f->kind) {
    case VALUE_NUMBER:
        /* +0 for -0 so that signs never differ between equal results */
        g_string_append_printf(out, "%.10g", f->number == 0 ? 0.0 : f->number);
        break;
    case VALUE_INT: /* counts: whole numbers, every digit */
        g_string_append_printf(out, "%.0f", f->number);
        break;
    case VALUE_BOOL:
        g_string_append(out, f->number != 0 ? "true" : "false");
        break;
    case VALUE_LIST: /* integers "12,12": a quoted cell */
        g_string_append_printf(out, "\"%s\"", f->text);
        break;
    case VALUE_STRING:
        report_csv_text(out, f->text);
        break;
    }
}

void report_csv_text(GString *out, const char *text)
{
    if (strpbrk(text, ",\"\n")) {
        g_auto(GStrv) parts = g_strsplit(text, "\"", -1);
        g_autofree char *escaped = g_strjoinv("\"\"", parts);
        g_string_append_printf(out, "\"%s\"", escaped);
    } else {
        g_string_append(out, text);
    }
}

/* A used entry of the comm table, named; `algorithms` like "ring+tree". */
typedef struct {
    const char *group, *op;
    const CommStat *stat;
    char algorithms[48];
} CommRow;

/* The entries of m's comm table that some collective used, in table order;
 * returns how many. */
static int comm_rows(const Metrics *m, CommRow rows[TAG_KINDS * COLL_N_OPS])
{
    int n = 0;
    for (int tag = 0; tag < TAG_KINDS; tag++)
        for (int op = 0; op < COLL_N_OPS; op++)
            if (m->comm[tag][op].count > 0) {
                CommRow *row = &rows[n++];
                *row = (CommRow){.group = emit_comm_name((TaskTag)tag),
                                 .op = collective_name((CollOp)op),
                                 .stat = &m->comm[tag][op],
                                 .algorithms = ""};
                for (int a = 0; a < ALGORITHMS; a++) {
                    if (!(row->stat->algorithms & 1u << a))
                        continue;
                    if (row->algorithms[0])
                        g_strlcat(row->algorithms, "+", sizeof row->algorithms);
                    g_strlcat(row->algorithms, collective_algorithm_name((CollAlgorithm)a),
                              sizeof row->algorithms);
                }
            }
    return n;
}

/* The comm table as a JSON list, one object per kind of collective used. */
static void render_comm_json(JsonWriter *w, const Metrics *m)
{
    CommRow rows[TAG_KINDS * COLL_N_OPS];
    int n = comm_rows(m, rows);
    jsonw_begin_list(jsonw_key(w, "comm"), 4);
    for (int i = 0; i < n; i++) {
        const CommStat *c = rows[i].stat;
        jsonw_begin_object(w, JSONW_INLINE);
        jsonw_string(jsonw_key(w, "group"), rows[i].group);
        jsonw_string(jsonw_key(w, "op"), rows[i].op);
        jsonw_string(jsonw_key(w, "algorithm"), rows[i].algorithms);
        jsonw_int(jsonw_key(w, "count"), c->count);
        jsonw_int(jsonw_key(w, "bytes"), c->bytes);
        jsonw_number(jsonw_key(w, "time_s"), c->time_s);
        jsonw_number(jsonw_key(w, "exposed_s"), c->exposed_s);
        jsonw_end(w);
    }
    jsonw_end(w);
}

/* The member "<prefix>_bytes": `bytes`. */
static void bytes_member(JsonWriter *w, const char *prefix, double bytes)
{
    char key[64];
    g_snprintf(key, sizeof key, "%s_bytes", prefix);
    jsonw_int(jsonw_key(w, key), bytes);
}

/* One link's JSON object. */
static void render_link_json(JsonWriter *w, const LinkStat *l)
{
    jsonw_begin_object(w, JSONW_INLINE);
    jsonw_string(jsonw_key(w, "link"), l->name);
    jsonw_string(jsonw_key(w, "class"), topology_class_name(l->link_class));
    jsonw_number(jsonw_key(w, "utilization"), l->utilization);
    jsonw_int(jsonw_key(w, "bytes"), l->bytes);
    for (int tag = 0; tag < TAG_KINDS; tag++)
        if (emit_comm_name((TaskTag)tag))
            bytes_member(w, emit_comm_name((TaskTag)tag), l->by_tag[tag]);
    jsonw_end(w);
}

/* The links report: the busiest link per class, then the hottest. */
static void render_links_json(JsonWriter *w, const Metrics *m)
{
    jsonw_begin_object(jsonw_key(w, "links"), 4);
    for (int c = 0; c < LINK_CLASSES; c++)
        if (m->busiest[c].name[0])
            render_link_json(jsonw_key(w, topology_class_name((LinkClass)c)), &m->busiest[c]);
    jsonw_end(w);
    jsonw_begin_list(jsonw_key(w, "hot_links"), 4);
    for (int i = 0; i < m->n_hottest; i++)
        render_link_json(w, &m->hottest[i]);
    jsonw_end(w);
}

/* The stage table as a JSON list, one object per pipeline stage. */
static void render_stages_json(JsonWriter *w, const Metrics *m)
{
    jsonw_begin_list(jsonw_key(w, "stages"), 4);
    for (int s = 0; s < m->n_stages; s++) {
        const StageStat *st = &m->stages[s];
        jsonw_begin_object(w, JSONW_INLINE);
        jsonw_int(jsonw_key(w, "stage"), s);
        jsonw_int(jsonw_key(w, "layers"), st->layers);
        jsonw_bool(jsonw_key(w, "embedding"), st->embedding);
        jsonw_bool(jsonw_key(w, "head"), st->head);
        jsonw_number(jsonw_key(w, "busy_s"), st->busy_s);
        jsonw_number(jsonw_key(w, "bubble_s"), st->bubble_s);
        jsonw_int(jsonw_key(w, "p2p_bytes"), st->p2p_bytes);
        jsonw_int(jsonw_key(w, "peak_bytes"), st->peak_bytes);
        for (int k = 0; k < MEM_KINDS; k++)
            bytes_member(w, emit_mem_name((MemKind)k), st->peak_split[k]);
        jsonw_end(w);
    }
    jsonw_end(w);
}

/* The changes that make the plan fit, when they were looked for. */
static void render_advice_json(JsonWriter *w, const Report *rep)
{
    if (!rep->advised)
        return;
    jsonw_begin_list(jsonw_key(w, "advice"), 4);
    for (int i = 0; i < rep->n_advice; i++) {
        const ReportAdvice *a = &rep->advice[i];
        jsonw_begin_object(w, JSONW_INLINE);
        jsonw_string(jsonw_key(w, "change"), a->change);
        jsonw_number(jsonw_key(w, "step_time_s"), a->step_time_s);
        jsonw_int(jsonw_key(w, "peak_bytes"), a->peak_bytes);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_bool(jsonw_key(w, "advice_partial"), rep->advice_partial);
}

/* The checklist as a JSON list, one object per check, when diagnosed. */
static void render_diagnosis_json(JsonWriter *w, const Diagnosis *d)
{
    if (!d->item[0].verdict)
        return;
    jsonw_begin_list(jsonw_key(w, "diagnosis"), 4);
    for (int i = 0; i < DIAG_ITEMS; i++) {
        const DiagCheck *c = &d->item[i];
        jsonw_begin_object(w, JSONW_INLINE);
        jsonw_string(jsonw_key(w, "check"), c->name);
        jsonw_number(jsonw_key(w, "value"), c->value);
        jsonw_number(jsonw_key(w, "threshold"), c->threshold);
        jsonw_string(jsonw_key(w, "verdict"), c->verdict);
        jsonw_string(jsonw_key(w, "detail"), c->text);
        jsonw_end(w);
    }
    jsonw_end(w);
}

/* The fields, consecutive ones of a section as one object, then the
 * tables. */
static void render_json(GString *out, const Fields *fs, const Report *rep)
{
    const Metrics *m = &rep->metrics;
    JsonWriter w;
    jsonw_init(&w, out);
    jsonw_begin_object(&w, 2);
    const char *section = ""; /* the open section's, "" for the top level */
    for (int i = 0; i < fs->n; i++) {
        const Field *f = &fs->f[i];
        if (!(f->where & IN_JSON))
            continue;
        if (strcmp(section, f->section) != 0) {
            if (section[0])
                jsonw_end(&w);
            if (f->section[0])
                jsonw_begin_object(jsonw_key(&w, f->section), 4);
            section = f->section;
        }
        json_value(jsonw_key(&w, f->name), f);
    }
    if (section[0])
        jsonw_end(&w);
    render_comm_json(&w, m);
    render_stages_json(&w, m);
    render_links_json(&w, m);
    render_advice_json(&w, rep);
    render_diagnosis_json(&w, &rep->diagnosis);
    jsonw_end(&w);
    g_string_append_c(out, '\n');
}

static void render_csv(GString *out, const Fields *fs, gboolean header)
{
    if (header) {
        g_autofree char *line = report_csv_header();
        g_string_append(out, line);
    }
    const char *sep = "";
    for (int i = 0; i < fs->n; i++) {
        if (fs->f[i].where & IN_CSV) {
            g_string_append(out, sep);
            csv_value(out, &fs->f[i]);
            sep = ",";
        }
    }
    g_string_append_c(out, '\n');
}

static const double GiB = UNITS_GIB;

/* A plan that does not fit says so first, with the changes that fix it. */
static void render_fit_text(GString *out, const Report *rep)
{
    const Metrics *m = &rep->metrics;
    if (m->fits)
        return;
    g_string_append_printf(out, "DOES NOT FIT: peak %.2f GiB of %.2f GiB on rank %d\n",
                           m->peak_bytes / GiB, m->capacity_bytes / GiB, m->peak_rank);
    if (rep->advised && rep->n_advice == 0)
        g_string_append_printf(out,
                               "to fit: no change the advice searches%s fits, on these GPUs or "
                               "on more nodes (docs/report.md, \"Advice\")\n",
                               rep->advice_partial ? " and replayed" : "");
    if (rep->n_advice > 0)
        g_string_append(out, "to fit, try:\n");
    int width = 0; /* the longest change's, to align the figures */
    for (int i = 0; i < rep->n_advice; i++)
        width = MAX(width, (int)strlen(rep->advice[i].change));
    for (int i = 0; i < rep->n_advice; i++)
        g_string_append_printf(out, "  %-*s  step %.4g s, peak %.2f GiB\n", width,
                               rep->advice[i].change, rep->advice[i].step_time_s,
                               rep->advice[i].peak_bytes / GiB);
    if (rep->advice_partial)
        g_string_append(out, "to fit: changes whose step is too big to replay within the advice's "
                             "budget were not tried (simulate them)\n");
}

/* The training totals' line, with --tokens. */
static void render_training_text(GString *out, const Training *t)
{
    if (t->tokens <= 0)
        return;
    g_string_append_printf(out,
                           "training         %.4g token%s: %.0f step%s, %.4g days, %.4g GPU-hours",
                           t->tokens, t->tokens == 1 ? "" : "s", t->steps,
                           t->steps == 1 ? "" : "s", t->days, t->gpu_hours);
    if (t->gpu_hour_price > 0)
        g_string_append_printf(out, ", cost %.4g (at %.4g per GPU-hour)", t->cost,
                               t->gpu_hour_price);
    g_string_append_printf(out, ", %.4g tokens/s per GPU\n", t->tokens_per_gpu_s);
}

/* The checklist's verdicts on one line; --explain gives the prose. */
static void render_diagnosis_text(GString *out, const Diagnosis *d)
{
    if (!d->item[0].verdict)
        return;
    g_string_append(out, "diagnosis       ");
    for (int i = 0; i < DIAG_ITEMS; i++)
        g_string_append_printf(out, "%s %s: %s", i ? ";" : "", d->item[i].name, d->item[i].verdict);
    g_string_append(out, " (--explain)\n");
}

/* "tp 8 x pp 4 x dp 32", with "cp C x" after tp when cp > 1. */
static void render_text(GString *out, const Report *rep)
{
    const Metrics *m = &rep->metrics;
    const PlanSpec *p = rep->plan;
    double step = m->step_time_s;
    render_fit_text(out, rep);
    g_autofree char *shape = plan_spec_shape(p, TRUE);
    g_autofree char *active =
        rep->active_parameters > 0 && rep->active_parameters < rep->parameters
            ? g_strdup_printf(" (%.3g B active)", rep->active_parameters / 1e9)
            : g_strdup("");
    g_autofree char *placed = rep->node_gpus > 0 && rep->gpus_per_node > 0
                                  ? g_strdup_printf(" on %d node%s of %d, %d used in each",
                                                    rep->gpus / rep->gpus_per_node,
                                                    rep->gpus / rep->gpus_per_node == 1 ? "" : "s",
                                                    rep->node_gpus, rep->gpus_per_node)
                                  : g_strdup("");
    g_string_append_printf(out, "%s on %s: %d GPUs%s = %s, %.3g B parameters%s\n", rep->model,
                           rep->cluster, rep->gpus, placed, shape, rep->parameters / 1e9, active);
    g_autofree char *flags = plan_spec_flags(p);
    g_string_append_printf(out, "plan: %s\n", flags);
    g_string_append_printf(out,
                           "batch: %d sequences per step = %d micro-batch%s of %d per data-parallel"
                           " rank\n",
                           p->global_batch_size, rep->micro_batches,
                           rep->micro_batches == 1 ? "" : "es", p->micro_batch_size);
    g_string_append_printf(out,
                           "step time        %.4g s, %.4g tokens/s, %.4g model TFLOP/s a GPU, MFU "
                           "%.1f %%, HFU %.1f %%",
                           step, m->tokens_per_s, metrics_model_tflops_per_gpu(m, rep->gpus),
                           100 * m->mfu, 100 * m->hfu);
    if (p->dtype != DTYPE_BF16) /* utilizations of the dtype's own peak; the bf16 one a ratio */
        g_string_append_printf(out, " of the %s peak (model FLOPs at %.3gx the bf16 peak)",
                               dtype_names[p->dtype], m->mfu * m->peak_flops / m->bf16_peak_flops);
    g_string_append_c(out, '\n');
    if (rep->whatif)
        g_string_append_printf(out,
                               "what-if          %s: %+.4g s (%+.1f %%) against %.4g s clean, "
                               "critical rank %d (clean: %d)\n",
                               rep->whatif, step - rep->clean_step_time_s,
                               100 * (step / rep->clean_step_time_s - 1), rep->clean_step_time_s,
                               m->critical_rank, rep->clean_critical_rank);
    render_training_text(out, &rep->training);
    /* the rest of the critical rank's step: waiting for other ranks
     * (pipeline transfers, a collective's slowest member) or idle */
    double waiting = metrics_settled(step - m->compute_s - m->exposed_comm_s, step);
    g_string_append_printf(
        out,
        "time split       compute %.4g s (%.1f %%), exposed communication %.4g s "
        "(%.1f %%), waiting %.4g s (%.1f %%) on rank %d; bubble %.1f %% (mean "
        "over ranks)\n",
        m->compute_s, step > 0 ? 100 * m->compute_s / step : 0, m->exposed_comm_s,
        step > 0 ? 100 * m->exposed_comm_s / step : 0, waiting, step > 0 ? 100 * waiting / step : 0,
        m->critical_rank, 100 * m->bubble_fraction);
    if (m->recompute_s > 0)
        g_string_append_printf(out, "recompute        %.4g s of the compute replays forwards\n",
                               m->recompute_s);
    CommRow rows[TAG_KINDS * COLL_N_OPS];
    int n = comm_rows(m, rows);
    for (int i = 0; i < n; i++)
        g_string_append_printf(
            out, "comm %-9s %-14s %6d calls, %9.4g GB sent, %.4g s, %.4g s exposed (%s)\n",
            rows[i].group, rows[i].op, rows[i].stat->count, rows[i].stat->bytes / 1e9,
            rows[i].stat->time_s, rows[i].stat->exposed_s, rows[i].algorithms);
    for (int c = 0; c < LINK_CLASSES; c++) {
        const LinkStat *l = &m->busiest[c];
        if (l->name[0])
            g_string_append_printf(out, "busiest %-6s   %s: %.1f %% used, %.4g GB\n",
                                   topology_class_name((LinkClass)c), l->name, 100 * l->utilization,
                                   l->bytes / 1e9);
    }
    for (int s = 0; m->n_stages > 1 && s < m->n_stages; s++) {
        const StageStat *st = &m->stages[s];
        g_string_append_printf(out,
                               "stage %-3d        %d layers%s%s, busy %.4g s, bubble %.4g s, "
                               "peak %.2f GiB (activations %.2f)\n",
                               s, st->layers, st->embedding ? " + embedding" : "",
                               st->head ? " + head" : "", st->busy_s, st->bubble_s,
                               st->peak_bytes / GiB, st->peak_split[MEM_ACTIVATIONS] / GiB);
    }
    g_string_append_printf(
        out, "memory peak      %.2f GiB of %.2f GiB (%s) on rank %d:", m->peak_bytes / GiB,
        m->capacity_bytes / GiB, m->peak_bytes <= m->capacity_bytes ? "fits" : "DOES NOT FIT",
        m->peak_rank);
    for (int k = 0; k < MEM_KINDS; k++)
        g_string_append_printf(out, "%s %s %.2f", k ? "," : "", emit_mem_name((MemKind)k),
                               m->peak_split[k] / GiB);
    g_string_append(out, " GiB\n");
    if (m->host_bytes > 0)
        g_string_append_printf(out,
                               "host memory      %.2f GiB of %.2f GiB per node (%s): "
                               "offloaded states\n",
                               m->host_bytes / GiB, m->host_capacity_bytes / GiB,
                               m->host_bytes <= m->host_capacity_bytes ? "fits" : "DOES NOT FIT");
    render_diagnosis_text(out, &rep->diagnosis);
    g_string_append_printf(
        out, "simulated        %d of %d rank%s (symmetry: %s), %" G_GUINT64_FORMAT " events",
        m->simulated_ranks, rep->gpus, rep->gpus == 1 ? "" : "s", m->symmetry, m->events);
    if (rep->replayed_whole)
        g_string_append_printf(out, " (replayed whole: %s)", rep->replayed_whole);
    g_string_append_printf(out, " in %.3g s\n", rep->sim_wall_s);
}

void report_clear(Report *rep)
{
    metrics_clear(&rep->metrics);
    diagnosis_clear(&rep->diagnosis);
}

char *report_explain(const Report *rep)
{
    const Diagnosis *d = &rep->diagnosis;
    GString *out = g_string_new(NULL);
    g_autofree char *shape = plan_spec_shape(rep->plan, TRUE);
    g_string_append_printf(out, "Diagnosis of %s on %s, %d GPUs (%s):\n", rep->model, rep->cluster,
                           rep->gpus, shape);
    for (int i = 0; d->item[0].verdict && i < DIAG_ITEMS; i++)
        g_string_append_printf(out, "\n%d. %s\n   %c%s.\n   Verdict: %s.\n", i + 1,
                               d->item[i].question, g_ascii_toupper(d->item[i].text[0]),
                               d->item[i].text + 1, d->item[i].verdict);
    return g_string_free(out, FALSE);
}

const char *const report_format_names[] = {"text", "json", "csv", NULL};

const char *const report_status_names[] = {"simulated", "pruned", "does_not_fit", "invalid", NULL};

gboolean report_format_parse(const char *name, ReportFormat *out)
{
    int i = names_find(report_format_names, name);
    if (i < 0)
        return FALSE;
    *out = (ReportFormat)i;
    return TRUE;
}

char *report_csv_header(void)
{
    /* the columns do not depend on the values: any plan and metrics do */
    g_autoptr(PlanSpec) plan = plan_spec_new();
    Report none = {.plan = plan, .model = "", .cluster = ""};
    Fields fs;
    collect(&none, &fs);
    GString *out = g_string_new(NULL);
    const char *sep = "";
    for (int i = 0; i < fs.n; i++) {
        if (fs.f[i].where & IN_CSV) {
            g_autofree char *name = csv_name(&fs.f[i]);
            g_string_append_printf(out, "%s%s", sep, name);
            sep = ",";
        }
    }
    g_string_append_c(out, '\n');
    clear(&fs);
    return g_string_free(out, FALSE);
}

char *report_render(const Report *rep, ReportFormat format, gboolean header)
{
    GString *out = g_string_new(NULL);
    if (format == FORMAT_TEXT) {
        render_text(out, rep);
        return g_string_free(out, FALSE);
    }
    Fields fs;
    collect(rep, &fs);
    if (format == FORMAT_JSON)
        render_json(out, &fs, rep);
    else
        render_csv(out, &fs, header);
    clear(&fs);
    return g_string_free(out, FALSE);
}

/* The collective benchmark's table as one JSON object. */
static void render_collective_json(GString *out, const GArray *rows, CollOp op, int ranks,
                                   const char *cluster)
{
    JsonWriter w;
    jsonw_init(&w, out);
    jsonw_begin_object(&w, 2);
    jsonw_string(jsonw_key(&w, "op"), collective_name(op));
    jsonw_int(jsonw_key(&w, "ranks"), ranks);
    jsonw_string(jsonw_key(&w, "cluster"), cluster);
    jsonw_begin_list(jsonw_key(&w, "rows"), 4);
    for (guint i = 0; i < rows->len; i++) {
        const CollRow *r = &g_array_index(rows, CollRow, i);
        jsonw_begin_object(&w, JSONW_INLINE);
        jsonw_int(jsonw_key(&w, "size_bytes"), r->bytes);
        jsonw_number(jsonw_key(&w, "time_us"), r->time_s * 1e6);
        jsonw_number(jsonw_key(&w, "algbw_GBps"), r->algbw_Bps / 1e9);
        jsonw_number(jsonw_key(&w, "busbw_GBps"), r->busbw_Bps / 1e9);
        jsonw_string(jsonw_key(&w, "algorithm"), collective_algorithm_name(r->algorithm));
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    g_string_append_c(out, '\n');
}

char *report_collective_render(const GArray *rows, CollOp op, int ranks, const char *cluster,
                               ReportFormat format)
{
    GString *out = g_string_new(NULL);
    if (format == FORMAT_JSON) {
        render_collective_json(out, rows, op, ranks, cluster);
        return g_string_free(out, FALSE);
    }
    if (format == FORMAT_TEXT)
        g_string_append_printf(out,
                               "# plansim collective: %s over %d GPUs of %s\n"
                               "# %14s %12s %12s %12s  %s\n",
                               collective_name(op), ranks, cluster, "size(B)", "time(us)",
                               "algbw(GB/s)", "busbw(GB/s)", "algorithm");
    else
        g_string_append(out, "op,ranks,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm\n");
    for (guint i = 0; i < rows->len; i++) {
        const CollRow *r = &g_array_index(rows, CollRow, i);
        const char *algo = collective_algorithm_name(r->algorithm);
        if (format == FORMAT_TEXT)
            g_string_append_printf(out, "  %14.0f %12.2f %12.2f %12.2f  %s\n", r->bytes,
                                   r->time_s * 1e6, r->algbw_Bps / 1e9, r->busbw_Bps / 1e9, algo);
        else
            g_string_append_printf(out, "%s,%d,%.0f,%.10g,%.10g,%.10g,%s\n", collective_name(op),
                                   ranks, r->bytes, r->time_s * 1e6, r->algbw_Bps / 1e9,
                                   r->busbw_Bps / 1e9, algo);
    }
    return g_string_free(out, FALSE);
}

/* ---- the breakdown (simulate --breakdown) ---------------------------------- */

static BreakdownRow breakdown_row(const char *name, double kernels, double per_micro_batch_s,
                                  double per_step_s)
{
    BreakdownRow r = {
        .kernels = kernels, .per_micro_batch_s = per_micro_batch_s, .per_step_s = per_step_s};
    g_strlcpy(r.name, name, sizeof r.name);
    return r;
}

int report_breakdown_rows(const Report *rep, const Breakdown *b, BreakdownRow *rows)
{
    const Metrics *m = &rep->metrics;
    int n = 0, mb = rep->micro_batches;
    double accounted = 0;
    for (int c = 0; c < BREAKDOWN_CLASSES; c++) {
        rows[n++] = breakdown_row(breakdown_class_names[c], b->kernels[c], b->seconds[c],
                                  mb * b->seconds[c]);
        accounted += mb * b->seconds[c];
    }
    rows[n++] = breakdown_row("of_which_recomputation", -1, b->recompute_s, mb * b->recompute_s);
    rows[n++] = breakdown_row("of_which_kernel_launch", -1, b->launch_s, mb * b->launch_s);
    rows[n++] = breakdown_row("optimizer", -1, -1, b->optimizer_s);
    accounted += b->optimizer_s;
    for (int t = 0; t < TAG_KINDS; t++) {
        double exposed = 0;
        for (int op = 0; op < COLL_N_OPS; op++)
            exposed += m->comm[t][op].exposed_s;
        if (exposed <= 0)
            continue;
        g_autofree char *name = g_strconcat("exposed_", emit_comm_name((TaskTag)t), NULL);
        rows[n++] = breakdown_row(name, -1, -1, exposed);
        accounted += exposed;
    }
    rows[n++] = breakdown_row("other", -1, -1, m->step_time_s - accounted);
    rows[n++] = breakdown_row("step", -1, -1, m->step_time_s);
    return n;
}

char *report_breakdown_render(const Report *rep, const Breakdown *b, ReportFormat format)
{
    BreakdownRow rows[REPORT_BREAKDOWN_ROWS];
    int n = report_breakdown_rows(rep, b, rows);
    double step = rep->metrics.step_time_s;
    GString *out = g_string_new(NULL);
    if (format == FORMAT_JSON) {
        JsonWriter w;
        jsonw_init(&w, out);
        jsonw_begin_object(&w, 2);
        jsonw_int(jsonw_key(&w, "critical_rank"), rep->metrics.critical_rank);
        jsonw_int(jsonw_key(&w, "stage"), b->stage);
        jsonw_int(jsonw_key(&w, "micro_batches"), rep->micro_batches);
        jsonw_begin_list(jsonw_key(&w, "rows"), 4);
        for (int i = 0; i < n; i++) {
            jsonw_begin_object(&w, JSONW_INLINE);
            jsonw_string(jsonw_key(&w, "row"), rows[i].name);
            if (rows[i].kernels >= 0)
                jsonw_int(jsonw_key(&w, "kernels_per_micro_batch"), rows[i].kernels);
            if (rows[i].per_micro_batch_s >= 0)
                jsonw_number(jsonw_key(&w, "ms_per_micro_batch"), 1e3 * rows[i].per_micro_batch_s);
            jsonw_number(jsonw_key(&w, "s_per_step"), rows[i].per_step_s);
            jsonw_number(jsonw_key(&w, "share"), step > 0 ? rows[i].per_step_s / step : 0);
            jsonw_end(&w);
        }
        jsonw_end(&w);
        jsonw_end(&w);
        g_string_append_c(out, '\n');
        return g_string_free(out, FALSE);
    }
    if (format == FORMAT_TEXT)
        g_string_append_printf(out,
                               "# plansim breakdown: rank %d (stage %d, the critical rank), "
                               "%d micro-batches a step\n"
                               "# %-24s %10s %14s %12s %8s\n",
                               rep->metrics.critical_rank, b->stage, rep->micro_batches, "row",
                               "kernels/mb", "ms/micro-batch", "s/step", "share");
    else
        g_string_append(out, "row,kernels_per_micro_batch,ms_per_micro_batch,s_per_step,share\n");
    for (int i = 0; i < n; i++) {
        const BreakdownRow *r = &rows[i];
        double share = step > 0 ? 100 * r->per_step_s / step : 0;
        if (format == FORMAT_TEXT) {
            g_autofree char *k =
                r->kernels >= 0 ? g_strdup_printf("%.0f", r->kernels) : g_strdup("");
            g_autofree char *mb = r->per_micro_batch_s >= 0
                                      ? g_strdup_printf("%.4g", 1e3 * r->per_micro_batch_s)
                                      : g_strdup("");
            g_string_append_printf(out, "  %-24s %10s %14s %12.4g %7.1f%%\n", r->name, k, mb,
                                   r->per_step_s, share);
        } else {
            g_string_append_printf(out, "%s,", r->name);
            if (r->kernels >= 0)
                g_string_append_printf(out, "%.0f", r->kernels);
            g_string_append_c(out, ',');
            if (r->per_micro_batch_s >= 0)
                g_string_append_printf(out, "%.10g", 1e3 * r->per_micro_batch_s);
            g_string_append_printf(out, ",%.10g,%.10g\n", r->per_step_s, share / 100);
        }
    }
    return g_string_free(out, FALSE);
}
