/* run_report.c: the run's figures, one table for JSON and CSV, and the
 * text built from the same figures. */
#include "output/run_report.h"

#include <math.h>

#include "base/jsonw.h"

/* A figure: its JSON object (NULL: the top level) and key; CSV names it
 * object_key. Counts print as whole numbers. */
typedef struct {
    const char *group, *key;
    double value;
    gboolean count;
} Figure;

#define MAX_FIGURES 64

static int add(Figure *f, int n, const char *group, const char *key, double value, gboolean count)
{
    g_assert(n < MAX_FIGURES);
    f[n] = (Figure){.group = group, .key = key, .value = value, .count = count};
    return n + 1;
}

/* A spread's figures: mean, p10, p50, p90, each times `scale`. */
static int add_spread(Figure *f, int n, const char *group, double mean, const RunSpread *s,
                      double scale)
{
    n = add(f, n, group, "mean", mean * scale, FALSE);
    n = add(f, n, group, "p10", s->p10 * scale, FALSE);
    n = add(f, n, group, "p50", s->p50 * scale, FALSE);
    return add(f, n, group, "p90", s->p90 * scale, FALSE);
}

/* Every figure of the report, in order. */
static int figures(const RunReport *r, Figure *f)
{
    const RunPlan *p = r->run;
    const RunModel *m = &p->model;
    const RunStats *s = &p->stats;
    const Checkpoint *c = &p->checkpoint;
    double clean = m->steps * m->step_s, hours = p->gpus / 3600.0;
    int n = 0;
    n = add(f, n, NULL, "gpus", p->gpus, TRUE);
    n = add(f, n, NULL, "nodes", p->nodes, TRUE);
    n = add(f, n, NULL, "tokens", p->tokens, TRUE);
    n = add(f, n, NULL, "steps", m->steps, TRUE);
    n = add(f, n, NULL, "step_time_s", m->step_s, FALSE);
    n = add(f, n, "clean", "days", clean / 86400, FALSE);
    n = add(f, n, "clean", "gpu_hours", clean * hours, FALSE);
    n = add(f, n, "checkpoint", "total_bytes", c->total_bytes, TRUE);
    n = add(f, n, "checkpoint", "gpu_bytes", c->gpu_bytes, TRUE);
    n = add(f, n, "checkpoint", "node_bytes", c->node_bytes, TRUE);
    n = add(f, n, "checkpoint", "pause_s", m->pause_s, FALSE);
    n = add(f, n, "checkpoint", "write_s", m->write_s, FALSE);
    n = add(f, n, "checkpoint", "load_s", c->load_s, FALSE);
    n = add(f, n, "failures", "mtbf_hours", p->mtbf_s / 3600, FALSE);
    for (int k = 0; k < FAILURE_KINDS; k++) {
        static const char *const keys[] = {"gpu_per_1000_node_days", "node_per_1000_node_days",
                                           "nic_per_1000_node_days"};
        n = add(f, n, "failures", keys[k], m->rate_per_s[k] * 3600 * 24000 / p->nodes, FALSE);
    }
    n = add(f, n, "failures", "restart_s", m->restart_s, FALSE);
    n = add(f, n, "failures", "expected", p->expected_failures, FALSE);
    double observed = 0;
    for (int k = 0; k < FAILURE_KINDS; k++)
        observed += s->mean.failures[k];
    n = add(f, n, "failures", "observed", observed, FALSE);
    for (int k = 0; k < FAILURE_KINDS; k++) {
        static const char *const keys[] = {"observed_gpu", "observed_node", "observed_nic"};
        n = add(f, n, "failures", keys[k], s->mean.failures[k], FALSE);
    }
    n = add(f, n, "interval", "every_steps", s->every, TRUE);
    n = add(f, n, "interval", "every_s", s->every * m->step_s, FALSE);
    n = add(f, n, "interval", "best_steps", p->best_every, TRUE);
    n = add(f, n, "interval", "best_s", p->best_every * m->step_s, FALSE);
    n = add(f, n, "interval", "young_s", p->young_s, FALSE);
    n = add(f, n, "interval", "daly_s", p->daly_s, FALSE);
    n = add(f, n, "interval", "saxena_s", p->saxena_s, FALSE);
    n = add(f, n, NULL, "trials", m->trials, TRUE);
    n = add_spread(f, n, "days", s->mean.wall_s, &s->wall_s, 1 / 86400.0);
    n = add_spread(f, n, "gpu_hours", s->mean.wall_s, &s->wall_s, hours);
    if (r->gpu_hour_price > 0)
        n = add_spread(f, n, "cost", s->mean.wall_s, &s->wall_s, hours * r->gpu_hour_price);
    n = add_spread(f, n, "ettr", s->ettr_mean, &s->ettr, 1);
    n = add(f, n, "lost_days", "checkpoints", s->mean.save_s / 86400, FALSE);
    n = add(f, n, "lost_days", "recomputed", s->mean.lost_s / 86400, FALSE);
    n = add(f, n, "lost_days", "restarts", s->mean.restart_s / 86400, FALSE);
    return add(f, n, NULL, "checkpoints", s->mean.checkpoints, FALSE);
}

static void write_value(JsonWriter *w, const Figure *f)
{
    if (f->count)
        jsonw_int(w, f->value);
    else
        jsonw_number(w, f->value);
}

static char *render_json(const RunReport *r, const Figure *f, int n)
{
    GString *out = g_string_new(NULL);
    JsonWriter w;
    jsonw_init(&w, out);
    jsonw_begin_object(&w, 2);
    jsonw_string(jsonw_key(&w, "model"), r->model);
    jsonw_string(jsonw_key(&w, "cluster"), r->cluster);
    g_autofree char *flags = plan_spec_flags(r->plan);
    jsonw_string(jsonw_key(&w, "plan"), flags);
    jsonw_string(jsonw_key(&w, "save"), r->async ? "async" : "sync");
    jsonw_uint64(jsonw_key(&w, "seed"), r->run->model.seed);
    for (int i = 0; i < n;) {
        if (!f[i].group) {
            write_value(jsonw_key(&w, f[i].key), &f[i]);
            i++;
            continue;
        }
        const char *group = f[i].group;
        jsonw_begin_object(jsonw_key(&w, group), JSONW_INLINE);
        for (; i < n && f[i].group && strcmp(f[i].group, group) == 0; i++)
            write_value(jsonw_key(&w, f[i].key), &f[i]);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}

static char *render_csv(const RunReport *r, const Figure *f, int n)
{
    GString *out = g_string_new("model,cluster,plan,save,seed");
    for (int i = 0; i < n; i++)
        g_string_append_printf(out, ",%s%s%s", f[i].group ? f[i].group : "", f[i].group ? "_" : "",
                               f[i].key);
    g_autofree char *flags = plan_spec_flags(r->plan);
    const char *cells[] = {r->model, r->cluster, flags, r->async ? "async" : "sync"};
    for (gsize i = 0; i < G_N_ELEMENTS(cells); i++) {
        g_string_append_c(out, i ? ',' : '\n');
        report_csv_text(out, cells[i]);
    }
    g_string_append_printf(out, ",%" G_GUINT64_FORMAT, r->run->model.seed);
    for (int i = 0; i < n; i++) /* an infinite MTBF (no failures): an empty cell */
        if (isfinite(f[i].value))
            g_string_append_printf(out, f[i].count ? ",%.0f" : ",%.10g", f[i].value);
        else
            g_string_append_c(out, ',');
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}

/* The value of figure group.key (the table's). */
static double figure(const Figure *f, int n, const char *group, const char *key)
{
    for (int i = 0; i < n; i++)
        if (g_strcmp0(f[i].group, group) == 0 && strcmp(f[i].key, key) == 0)
            return f[i].value;
    g_assert_not_reached();
}

/* A spread's row of the text's table. */
static void spread_row(GString *out, const char *label, const Figure *f, int n, const char *group)
{
    g_string_append_printf(out, "%-14s", label);
    static const char *const keys[] = {"mean", "p10", "p50", "p90"};
    for (gsize i = 0; i < G_N_ELEMENTS(keys); i++)
        g_string_append_printf(out, " %10.4g", figure(f, n, group, keys[i]));
    g_string_append_c(out, '\n');
}

static char *render_text(const RunReport *r, const Figure *f, int n)
{
    const RunPlan *p = r->run;
    const RunModel *m = &p->model;
    GString *out = g_string_new(NULL);
    g_autofree char *flags = plan_spec_flags(r->plan);
#define F(g, k) figure(f, n, g, k)
    g_string_append_printf(out, "%s on %s: %d GPU%s on %d node%s, %.4g tokens in %.0f step%s\n",
                           r->model, r->cluster, p->gpus, p->gpus == 1 ? "" : "s", p->nodes,
                           p->nodes == 1 ? "" : "s", p->tokens, m->steps, m->steps == 1 ? "" : "s");
    g_string_append_printf(out, "plan: %s\n", flags);
    g_string_append_printf(out, "step         %.4g s (replayed)\n", m->step_s);
    g_string_append_printf(out,
                           "clean run    %.4g days, %.4g GPU-hours (no failures, no "
                           "checkpoints)\n",
                           F("clean", "days"), F("clean", "gpu_hours"));
    g_string_append_printf(out,
                           "checkpoint   %.4g GB in all, %.4g GB on a GPU and %.4g GB on a node at "
                           "most; %s %.4g s, load %.4g s\n",
                           p->checkpoint.total_bytes / 1e9, p->checkpoint.gpu_bytes / 1e9,
                           p->checkpoint.node_bytes / 1e9,
                           r->async ? "snapshot" : "save (synchronous)", m->pause_s,
                           p->checkpoint.load_s);
    if (r->async)
        g_string_append_printf(out, "             then written in the background in %.4g s\n",
                               m->write_s);
    if (isfinite(p->mtbf_s))
        g_string_append_printf(out,
                               "failures     one every %.4g h (per 1,000 node-days: gpu %.3g, "
                               "node %.3g, nic %.3g); a restart takes %.4g min\n",
                               F("failures", "mtbf_hours"), F("failures", "gpu_per_1000_node_days"),
                               F("failures", "node_per_1000_node_days"),
                               F("failures", "nic_per_1000_node_days"), m->restart_s / 60);
    else
        g_string_append(out, "failures     none (a failure rate of 0)\n");
    g_autofree char *best = !isfinite(p->best_every)
                                ? g_strdup("no best found (its search's runs would not end)")
                            : p->stats.every == p->best_every
                                ? g_strdup("the best simulated")
                                : g_strdup_printf("the best simulated: %.0f steps (%.4g s)",
                                                  p->best_every, F("interval", "best_s"));
    g_autofree char *forms = isfinite(p->mtbf_s)
                                 ? g_strdup_printf("closed forms: Young %.4g s, "
                                                   "Daly %.4g s, Saxena %.4g s",
                                                   p->young_s, p->daly_s, p->saxena_s)
                                 : g_strdup("no closed form without failures");
    g_string_append_printf(out, "interval     every %.0f steps (%.4g s), %s; %s\n", p->stats.every,
                           F("interval", "every_s"), best, forms);
    g_string_append_printf(out, "trials       %d, seed %" G_GUINT64_FORMAT "\n\n", m->trials,
                           m->seed);
    g_string_append_printf(out, "%-14s %10s %10s %10s %10s\n", "", "mean", "P10", "P50", "P90");
    spread_row(out, "days", f, n, "days");
    spread_row(out, "GPU-hours", f, n, "gpu_hours");
    if (r->gpu_hour_price > 0)
        spread_row(out, "cost", f, n, "cost");
    g_string_append_printf(out, "%-14s", "ETTR (%)");
    static const char *const keys[] = {"mean", "p10", "p50", "p90"};
    for (gsize i = 0; i < G_N_ELEMENTS(keys); i++)
        g_string_append_printf(out, " %10.2f", 100 * F("ettr", keys[i]));
    g_string_append_printf(out,
                           "\n\nlost (mean)  checkpoints %.4g days, work redone %.4g days, "
                           "restarts %.4g days\n",
                           F("lost_days", "checkpoints"), F("lost_days", "recomputed"),
                           F("lost_days", "restarts"));
    g_string_append_printf(out,
                           "failures     expected %.4g, observed %.4g (gpu %.4g, node %.4g, "
                           "nic %.4g); %.4g checkpoints\n",
                           F("failures", "expected"), F("failures", "observed"),
                           F("failures", "observed_gpu"), F("failures", "observed_node"),
                           F("failures", "observed_nic"), F(NULL, "checkpoints"));
#undef F
    return g_string_free(out, FALSE);
}

char *run_report_render(const RunReport *r, ReportFormat format)
{
    Figure f[MAX_FIGURES];
    int n = figures(r, f);
    return format == FORMAT_JSON  ? render_json(r, f, n)
           : format == FORMAT_CSV ? render_csv(r, f, n)
                                  : render_text(r, f, n);
}
