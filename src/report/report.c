/* report.c: the writers.
 *
 * One list of fields (collect) feeds JSON and CSV, so the two never drift:
 * each field has a section ("" for the top level, "plan", "memory"), a name
 * and a value that is a number, an integer, a boolean or a string. JSON
 * nests consecutive fields of one section in an object; CSV flattens them. */
#include "report/report.h"

#include <math.h>
#include <string.h>

typedef enum { VALUE_NUMBER, VALUE_INT, VALUE_BOOL, VALUE_STRING, VALUE_LIST } ValueKind;

typedef enum { IN_JSON = 1, IN_CSV = 2, IN_BOTH = 3 } Where;

typedef struct {
    const char *section;
    const char *name; /* a literal, or owned by Fields.names */
    ValueKind kind;
    double number; /* NUMBER, INT, BOOL */
    char *text;    /* STRING, owned */
    Where where;
} Field;

#define MAX_FIELDS 64

typedef struct {
    Field f[MAX_FIELDS];
    int n;
    GPtrArray *names; /* names made up at run time */
} Fields;

static Field *put(Fields *fs, const char *section, const char *name, ValueKind kind, double number,
                  const char *text)
{
    g_assert(fs->n < MAX_FIELDS);
    fs->f[fs->n] = (Field){section, name, kind, number, g_strdup(text), IN_BOTH};
    return &fs->f[fs->n++];
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

static void collect(const Report *rep, Fields *fs)
{
    const Metrics *m = &rep->metrics;
    fs->n = 0;
    fs->names = g_ptr_array_new_with_free_func(g_free);
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        g_autofree char *text = plan_field_text(rep->plan, (PlanField)f);
        if (plan_field_is_list((PlanField)f))
            put(fs, "plan", plan_field_name((PlanField)f), VALUE_LIST, 0, text);
        else if (plan_field_is_word((PlanField)f))
            put(fs, "plan", plan_field_name((PlanField)f), VALUE_STRING, 0, text);
        else if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)
            put(fs, "plan", plan_field_name((PlanField)f), VALUE_BOOL, text[0] == 't', NULL);
        else
            put(fs, "plan", plan_field_name((PlanField)f), VALUE_INT, g_ascii_strtod(text, NULL),
                NULL);
    }
    put(fs, "", "model", VALUE_STRING, 0, rep->model);
    put(fs, "", "cluster", VALUE_STRING, 0, rep->cluster);
    put(fs, "", "gpus", VALUE_INT, rep->gpus, NULL);
    put(fs, "", "parameters", VALUE_INT, rep->parameters, NULL);
    put(fs, "", "micro_batches", VALUE_INT, rep->micro_batches, NULL);
    put(fs, "", "step_time_s", VALUE_NUMBER, m->step_time_s, NULL);
    put(fs, "", "tokens_per_s", VALUE_NUMBER, m->tokens_per_s, NULL);
    put(fs, "", "model_flops", VALUE_NUMBER, m->model_flops, NULL);
    put(fs, "", "hardware_flops", VALUE_NUMBER, m->hardware_flops, NULL);
    put(fs, "", "mfu", VALUE_NUMBER, m->mfu, NULL);
    put(fs, "", "hfu", VALUE_NUMBER, m->hfu, NULL);
    put(fs, "", "compute_s", VALUE_NUMBER, m->compute_s, NULL);
    put(fs, "", "recompute_s", VALUE_NUMBER, m->recompute_s, NULL);
    put(fs, "", "exposed_comm_s", VALUE_NUMBER, m->exposed_comm_s, NULL);
    put_comm_columns(fs, m);
    for (int c = 0; c < LINK_CLASSES; c++) {
        char *name = g_strdup_printf("busiest_%s_utilization", topology_class_name((LinkClass)c));
        g_ptr_array_add(fs->names, name);
        put(fs, "", name, VALUE_NUMBER, m->busiest[c].utilization, NULL)->where = IN_CSV;
    }
    put(fs, "", "bubble_fraction", VALUE_NUMBER, m->bubble_fraction, NULL);
    put(fs, "memory", "peak_bytes", VALUE_INT, m->peak_bytes, NULL);
    put(fs, "memory", "capacity_bytes", VALUE_INT, m->capacity_bytes, NULL);
    put(fs, "memory", "fits", VALUE_BOOL, m->fits, NULL);
    put(fs, "memory", "peak_rank", VALUE_INT, m->peak_rank, NULL);
    static const char *const split_names[MEM_KINDS] = {
        "params_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes"};
    for (int k = 0; k < MEM_KINDS; k++)
        put(fs, "memory", split_names[k], VALUE_INT, m->peak_split[k], NULL);
    put(fs, "", "critical_rank", VALUE_INT, m->critical_rank, NULL);
    put(fs, "", "events", VALUE_INT, (double)m->events, NULL);
    put(fs, "", "simulated_ranks", VALUE_INT, m->simulated_ranks, NULL);
    put(fs, "", "sim_wall_s", VALUE_NUMBER, rep->sim_wall_s, NULL)->where = IN_JSON;
}

static void clear(Fields *fs)
{
    for (int i = 0; i < fs->n; i++)
        g_free(fs->f[i].text);
    g_ptr_array_free(fs->names, TRUE);
}

static void append_value(GString *out, const Field *f, gboolean json)
{
    switch (f->kind) {
    case VALUE_NUMBER:
        /* a number's shortest faithful form at 10 significant digits;
         * +0 for -0 so that signs never differ between equal results */
        g_string_append_printf(out, "%.10g", f->number == 0 ? 0.0 : f->number);
        break;
    case VALUE_INT: /* counts and byte sizes: whole numbers, every digit */
        g_string_append_printf(out, "%.0f", f->number);
        break;
    case VALUE_BOOL:
        g_string_append(out, f->number != 0 ? "true" : "false");
        break;
    case VALUE_LIST: /* integers "12,12": a JSON array, a quoted CSV cell */
        g_string_append_printf(out, json ? "[%s]" : "\"%s\"", f->text);
        break;
    case VALUE_STRING:
        if (json) {
            g_string_append_c(out, '"');
            for (const char *c = f->text; *c; c++) {
                if (*c == '"' || *c == '\\')
                    g_string_append_printf(out, "\\%c", *c);
                else if ((unsigned char)*c < 0x20)
                    g_string_append_printf(out, "\\u%04x", *c);
                else
                    g_string_append_c(out, *c);
            }
            g_string_append_c(out, '"');
        } else if (strpbrk(f->text, ",\"\n")) {
            g_auto(GStrv) parts = g_strsplit(f->text, "\"", -1);
            g_autofree char *escaped = g_strjoinv("\"\"", parts);
            g_string_append_printf(out, "\"%s\"", escaped);
        } else {
            g_string_append(out, f->text);
        }
        break;
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
                *row = (CommRow){emit_comm_name((TaskTag)tag), collective_name((CollOp)op),
                                 &m->comm[tag][op], ""};
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
static void render_comm_json(GString *out, const Metrics *m)
{
    CommRow rows[TAG_KINDS * COLL_N_OPS];
    int n = comm_rows(m, rows);
    g_string_append(out, ",\n  \"comm\": [");
    for (int i = 0; i < n; i++) {
        const CommStat *c = rows[i].stat;
        g_string_append_printf(out,
                               "%s\n    {\"group\": \"%s\", \"op\": \"%s\", \"algorithm\": "
                               "\"%s\", \"count\": %d, \"bytes\": %.0f, \"time_s\": %.10g, "
                               "\"exposed_s\": %.10g}",
                               i ? "," : "", rows[i].group, rows[i].op, rows[i].algorithms,
                               c->count, c->bytes, c->time_s, c->exposed_s + 0.0);
    }
    g_string_append(out, n ? "\n  ]" : "]");
}

/* One link's JSON object. */
static void render_link_json(GString *out, const LinkStat *l)
{
    g_string_append_printf(out,
                           "{\"link\": \"%s\", \"class\": \"%s\", \"utilization\": %.10g, "
                           "\"bytes\": %.0f",
                           l->name, topology_class_name(l->link_class), l->utilization, l->bytes);
    for (int tag = 0; tag < TAG_KINDS; tag++)
        if (emit_comm_name((TaskTag)tag))
            g_string_append_printf(out, ", \"%s_bytes\": %.0f", emit_comm_name((TaskTag)tag),
                                   l->by_tag[tag]);
    g_string_append(out, "}");
}

/* The links report: the busiest link per class, then the hottest. */
static void render_links_json(GString *out, const Metrics *m)
{
    g_string_append(out, ",\n  \"links\": {");
    const char *sep = "";
    for (int c = 0; c < LINK_CLASSES; c++) {
        if (!m->busiest[c].name[0])
            continue;
        g_string_append_printf(out, "%s\n    \"%s\": ", sep, topology_class_name((LinkClass)c));
        render_link_json(out, &m->busiest[c]);
        sep = ",";
    }
    g_string_append(out, sep[0] ? "\n  },\n  \"hot_links\": [" : "},\n  \"hot_links\": [");
    for (int i = 0; i < m->n_hottest; i++) {
        g_string_append(out, i ? ",\n    " : "\n    ");
        render_link_json(out, &m->hottest[i]);
    }
    g_string_append(out, m->n_hottest ? "\n  ]" : "]");
}

/* The stage table as a JSON list, one object per pipeline stage. */
static void render_stages_json(GString *out, const Metrics *m)
{
    g_string_append(out, ",\n  \"stages\": [");
    for (int s = 0; s < m->n_stages; s++) {
        const StageStat *st = &m->stages[s];
        g_string_append_printf(out,
                               "%s\n    {\"stage\": %d, \"layers\": %d, \"embedding\": %s, "
                               "\"head\": %s, \"busy_s\": %.10g, \"bubble_s\": %.10g, "
                               "\"p2p_bytes\": %.0f, \"peak_bytes\": %.0f",
                               s ? "," : "", s, st->layers, st->embedding ? "true" : "false",
                               st->head ? "true" : "false", st->busy_s, st->bubble_s + 0.0,
                               st->p2p_bytes, st->peak_bytes);
        for (int k = 0; k < MEM_KINDS; k++)
            g_string_append_printf(out, ", \"%s_bytes\": %.0f", emit_mem_name((MemKind)k),
                                   st->peak_split[k]);
        g_string_append(out, "}");
    }
    g_string_append(out, m->n_stages ? "\n  ]" : "]");
}

static void render_json(GString *out, const Fields *fs, const Metrics *m)
{
    g_string_append(out, "{");
    const char *prev = NULL; /* the previous field's section */
    for (int i = 0; i < fs->n; i++) {
        const Field *f = &fs->f[i];
        if (!(f->where & IN_JSON))
            continue;
        gboolean new_section = prev && strcmp(prev, f->section) != 0;
        if (new_section && prev[0])
            g_string_append(out, "\n  }");
        const char *sep = prev ? "," : "";
        if ((new_section || !prev) && f->section[0]) {
            g_string_append_printf(out, "%s\n  \"%s\": {", sep, f->section);
            sep = "";
        }
        g_string_append_printf(out, "%s\n%s\"%s\": ", sep, f->section[0] ? "    " : "  ", f->name);
        append_value(out, f, TRUE);
        prev = f->section;
    }
    if (prev && prev[0])
        g_string_append(out, "\n  }");
    render_comm_json(out, m);
    render_stages_json(out, m);
    render_links_json(out, m);
    g_string_append(out, "\n}\n");
}

static void render_csv(GString *out, const Fields *fs, gboolean header)
{
    for (int pass = header ? 0 : 1; pass < 2; pass++) {
        const char *sep = "";
        for (int i = 0; i < fs->n; i++) {
            if (!(fs->f[i].where & IN_CSV))
                continue;
            g_string_append(out, sep);
            if (pass == 0)
                g_string_append(out, fs->f[i].name);
            else
                append_value(out, &fs->f[i], FALSE);
            sep = ",";
        }
        g_string_append_c(out, '\n');
    }
}

static const double GiB = 1073741824.0;

static void render_text(GString *out, const Report *rep)
{
    const Metrics *m = &rep->metrics;
    const PlanSpec *p = rep->plan;
    double step = m->step_time_s;
    g_string_append_printf(out, "%s on %s: %d GPUs = tp %d x pp %d x dp %d, %.3g B parameters\n",
                           rep->model, rep->cluster, rep->gpus, p->tp, p->pp, p->dp,
                           rep->parameters / 1e9);
    g_string_append_printf(out,
                           "batch: %d sequences per step = %d micro-batch%s of %d per data-parallel"
                           " rank\n",
                           p->global_batch_size, rep->micro_batches,
                           rep->micro_batches == 1 ? "" : "es", p->micro_batch_size);
    g_string_append_printf(out,
                           "step time        %.4g s, %.4g tokens/s, MFU %.1f %%, HFU %.1f %%\n",
                           step, m->tokens_per_s, 100 * m->mfu, 100 * m->hfu);
    g_string_append_printf(
        out,
        "time split       compute %.4g s (%.1f %%), exposed communication %.4g s "
        "(%.1f %%) on rank %d; bubble %.1f %%\n",
        m->compute_s, step > 0 ? 100 * m->compute_s / step : 0, m->exposed_comm_s,
        step > 0 ? 100 * m->exposed_comm_s / step : 0, m->critical_rank, 100 * m->bubble_fraction);
    if (m->recompute_s > 0)
        g_string_append_printf(out, "recompute        %.4g s of the compute replays forwards\n",
                               m->recompute_s);
    CommRow rows[TAG_KINDS * COLL_N_OPS];
    int n = comm_rows(m, rows);
    for (int i = 0; i < n; i++)
        g_string_append_printf(
            out, "comm %-4s %-14s %6d calls, %9.4g GB sent, %.4g s, %.4g s exposed (%s)\n",
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
        m->capacity_bytes / GiB, m->fits ? "fits" : "DOES NOT FIT", m->peak_rank);
    for (int k = 0; k < MEM_KINDS; k++)
        g_string_append_printf(out, "%s %s %.2f", k ? "," : "", emit_mem_name((MemKind)k),
                               m->peak_split[k] / GiB);
    g_string_append(out, " GiB\n");
    g_string_append_printf(out,
                           "simulated        %d ranks, %" G_GUINT64_FORMAT " events in %.3g s\n",
                           m->simulated_ranks, m->events, rep->sim_wall_s);
}

void report_clear(Report *rep)
{
    metrics_clear(&rep->metrics);
}

gboolean report_format_parse(const char *name, ReportFormat *out)
{
    static const char *const names[] = {"text", "json", "csv"};
    for (int i = 0; i < 3; i++) {
        if (g_strcmp0(name, names[i]) == 0) {
            *out = (ReportFormat)i;
            return TRUE;
        }
    }
    return FALSE;
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
        render_json(out, &fs, &rep->metrics);
    else
        render_csv(out, &fs, header);
    clear(&fs);
    return g_string_free(out, FALSE);
}

char *report_collective_render(const GArray *rows, CollOp op, int ranks, const char *cluster,
                               ReportFormat format)
{
    GString *out = g_string_new(NULL);
    if (format == FORMAT_TEXT)
        g_string_append_printf(out,
                               "# plansim collective: %s over %d GPUs of %s\n"
                               "# %14s %12s %12s %12s  %s\n",
                               collective_name(op), ranks, cluster, "size(B)", "time(us)",
                               "algbw(GB/s)", "busbw(GB/s)", "algorithm");
    else if (format == FORMAT_CSV)
        g_string_append(out, "op,ranks,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm\n");
    else
        g_string_append_printf(out,
                               "{\n  \"op\": \"%s\",\n  \"ranks\": %d,\n  \"cluster\": \"%s\",\n"
                               "  \"rows\": [",
                               collective_name(op), ranks, cluster);
    for (guint i = 0; i < rows->len; i++) {
        const CollRow *r = &g_array_index(rows, CollRow, i);
        const char *algo = collective_algorithm_name(r->algorithm);
        if (format == FORMAT_TEXT)
            g_string_append_printf(out, "  %14.0f %12.2f %12.2f %12.2f  %s\n", r->bytes,
                                   r->time_s * 1e6, r->algbw_Bps / 1e9, r->busbw_Bps / 1e9, algo);
        else if (format == FORMAT_CSV)
            g_string_append_printf(out, "%s,%d,%.0f,%.10g,%.10g,%.10g,%s\n", collective_name(op),
                                   ranks, r->bytes, r->time_s * 1e6, r->algbw_Bps / 1e9,
                                   r->busbw_Bps / 1e9, algo);
        else
            g_string_append_printf(out,
                                   "%s\n    {\"size_bytes\": %.0f, \"time_us\": %.10g, "
                                   "\"algbw_GBps\": %.10g, \"busbw_GBps\": %.10g, "
                                   "\"algorithm\": \"%s\"}",
                                   i ? "," : "", r->bytes, r->time_s * 1e6, r->algbw_Bps / 1e9,
                                   r->busbw_Bps / 1e9, algo);
    }
    if (format == FORMAT_JSON)
        g_string_append(out, rows->len ? "\n  ]\n}\n" : "]\n}\n");
    return g_string_free(out, FALSE);
}
