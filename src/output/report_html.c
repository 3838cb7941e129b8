/* report_html.c: the pages of simulate --html and run --html
 * (report_html.h), from the same figures as the text reports. */
#include "output/report_html.h"

#include <math.h>
#include <string.h>

#include "output/html.h"
#include "base/units.h"

/* "GPU" or "GPUs". */
static const char *gpus_word(int n)
{
    return n == 1 ? "GPU" : "GPUs";
}

/* The breakdown's rows as bars, but the step itself (the bars' sum) and
 * the "of which" rows that are empty. */
static void breakdown_bars(HtmlPage *page, const Report *rep, const Breakdown *b)
{
    BreakdownRow rows[REPORT_BREAKDOWN_ROWS];
    int n = report_breakdown_rows(rep, b, rows), shown = 0;
    HtmlBar bars[REPORT_BREAKDOWN_ROWS];
    char texts[REPORT_BREAKDOWN_ROWS][48];
    double step = rep->metrics.step_time_s;
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].name, "step") == 0 ||
            (g_str_has_prefix(rows[i].name, "of_which") && rows[i].per_step_s <= 0))
            continue;
        g_snprintf(texts[shown], sizeof texts[shown], "%.4g s (%.1f %%)", rows[i].per_step_s,
                   step > 0 ? 100 * rows[i].per_step_s / step : 0);
        bars[shown] =
            (HtmlBar){.label = rows[i].name, .value = rows[i].per_step_s, .text = texts[shown]};
        shown++;
    }
    g_autofree char *title = g_strdup_printf(
        "Where the step goes on the critical rank, GPU %d (stage %d), in seconds a step",
        rep->metrics.critical_rank, b->stage);
    html_bars(page, title, bars, shown);
}

/* Each stage's memory peak by kind, in GiB, against the GPU's capacity. */
static void memory_stacks(HtmlPage *page, const Metrics *m)
{
    const char *kinds[MEM_KINDS];
    for (int k = 0; k < MEM_KINDS; k++)
        kinds[k] = emit_mem_name((MemKind)k);
    g_autofree char **labels = g_new0(char *, m->n_stages + 1);
    g_autofree double *values = g_new(double, (gsize)m->n_stages *MEM_KINDS);
    for (int s = 0; s < m->n_stages; s++) {
        labels[s] = g_strdup_printf("stage %d", s);
        for (int k = 0; k < MEM_KINDS; k++)
            values[s * MEM_KINDS + k] = m->stages[s].peak_split[k] / UNITS_GIB;
    }
    g_autofree char *capacity =
        g_strdup_printf("the GPU's %.4g GiB", m->capacity_bytes / UNITS_GIB);
    HtmlStacks stacks = {.title = "Memory peak per pipeline stage (its first GPU), by kind",
                         .unit = "GiB",
                         .series = kinds,
                         .n_series = MEM_KINDS,
                         .labels = (const char *const *)labels,
                         .n_labels = m->n_stages,
                         .values = values,
                         .limit = m->capacity_bytes / UNITS_GIB,
                         .limit_label = capacity};
    html_stacks(page, &stacks);
    g_strfreev(g_steal_pointer(&labels));
}

char *report_html_step(const Report *rep, const Breakdown *b, const Timeline *t)
{
    const Metrics *m = &rep->metrics;
    g_autofree char *title = g_strdup_printf("plansim simulate: %s on %s, %d %s", rep->model,
                                             rep->cluster, rep->gpus, gpus_word(rep->gpus));
    g_autoptr(HtmlPage) page = html_page_new(title);
    g_autofree char *step = g_strdup_printf("%.4g s", m->step_time_s);
    g_autofree char *tokens = g_strdup_printf("%.4g", m->tokens_per_s);
    g_autofree char *mfu = g_strdup_printf("%.1f %%", 100 * m->mfu);
    g_autofree char *memory =
        g_strdup_printf("%.4g of %.4g GiB%s", m->peak_bytes / UNITS_GIB,
                        m->capacity_bytes / UNITS_GIB, m->fits ? "" : ": does not fit");
    g_autofree char *bubble = g_strdup_printf("%.1f %%", 100 * m->bubble_fraction);
    g_autofree char *exposed = g_strdup_printf("%.4g s", m->exposed_comm_s);
    HtmlFigure figures[] = {
        {"step time", step},     {"tokens/s", tokens}, {"MFU", mfu},
        {"memory peak", memory}, {"bubble", bubble},   {"exposed communication", exposed},
    };
    html_figures(page, figures, G_N_ELEMENTS(figures));
    g_autofree char *flags = plan_spec_flags(rep->plan);
    html_paragraph(page, flags, TRUE);
    if (rep->whatif) {
        g_autofree char *whatif =
            g_strdup_printf("Under the what-ifs %s; without them the step takes %.4g s.",
                            rep->whatif, rep->clean_step_time_s);
        html_paragraph(page, whatif, FALSE);
    }
    html_heading(page, "Time");
    breakdown_bars(page, rep, b);
    html_heading(page, "Memory");
    memory_stacks(page, m);
    html_heading(page, "Timeline");
    html_paragraph(page,
                   "Each lane is a stream of a GPU, the critical rank's in bold and those of its "
                   "neighbours in the pipeline; each of its 1000 slices of the step is coloured "
                   "by what took most of it, and left blank when the stream was mostly idle.",
                   FALSE);
    html_timeline(page, "The critical rank and its neighbours over the step", t);
    html_heading(page, "Diagnosis");
    g_autofree char *explain = report_explain(rep);
    html_paragraph(page, explain, TRUE);
    html_heading(page, "The report");
    g_autofree char *text = report_render(rep, FORMAT_TEXT, FALSE);
    html_paragraph(page, text, TRUE);
    return html_page_render(page);
}

/* Bars of `n` durations (`seconds`) in units of `unit_s` seconds named
 * `unit`, with their share of `whole_s` when > 0; the durations that are
 * not finite (no failures: no best interval, no closed form) left out. */
#define SECONDS_BARS 8
static void seconds_bars(HtmlPage *page, const char *title, const char *const *labels,
                         const double *seconds, int n, double unit_s, const char *unit,
                         double whole_s)
{
    g_assert(n <= SECONDS_BARS);
    HtmlBar bars[SECONDS_BARS];
    char texts[SECONDS_BARS][48];
    int shown = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(seconds[i]))
            continue;
        int len =
            g_snprintf(texts[shown], sizeof texts[shown], "%.4g %s", seconds[i] / unit_s, unit);
        if (whole_s > 0)
            g_snprintf(texts[shown] + len, sizeof texts[shown] - (gsize)len, " (%.2f %%)",
                       100 * seconds[i] / whole_s);
        bars[shown] = (HtmlBar){labels[i], seconds[i] / unit_s, texts[shown]};
        shown++;
    }
    html_bars(page, title, bars, shown);
}

char *report_html_run(const RunReport *r)
{
    const RunPlan *p = r->run;
    const RunStats *s = &p->stats;
    double clean_s = p->model.steps * p->model.step_s, day = 86400, every_s = s->every * p->step_s;
    g_autofree char *title = g_strdup_printf("plansim run: %s on %s, %d %s", r->model, r->cluster,
                                             p->gpus, gpus_word(p->gpus));
    g_autoptr(HtmlPage) page = html_page_new(title);
    g_autofree char *days = g_strdup_printf("%.4g days", s->mean.wall_s / day);
    g_autofree char *spread =
        g_strdup_printf("%.4g to %.4g days", s->wall_s.p10 / day, s->wall_s.p90 / day);
    g_autofree char *clean = g_strdup_printf("%.4g days", clean_s / day);
    g_autofree char *ettr = g_strdup_printf("%.2f %%", 100 * s->ettr_mean);
    g_autofree char *interval = g_strdup_printf("%.0f steps (%.4g min)", s->every, every_s / 60);
    g_autofree char *step = g_strdup_printf("%.4g s", p->step_s);
    HtmlFigure figures[] = {
        {"run time (mean)", days},      {"P10 to P90", spread},
        {"without failures", clean},    {"ETTR", ettr},
        {"checkpoint every", interval}, {"step time", step},
    };
    html_figures(page, figures, G_N_ELEMENTS(figures));
    g_autofree char *flags = plan_spec_flags(r->plan);
    html_paragraph(page, flags, TRUE);

    html_heading(page, "Days");
    const char *day_labels[] = {"without failures", "P10", "P50", "mean", "P90"};
    double day_values[] = {clean_s, s->wall_s.p10, s->wall_s.p50, s->mean.wall_s, s->wall_s.p90};
    g_autofree char *trials = g_strdup_printf("The run's days over %d trials", p->model.trials);
    seconds_bars(page, trials, day_labels, day_values, G_N_ELEMENTS(day_values), day, "days", 0);
    html_heading(page, "Losses");
    const char *lost_labels[] = {"checkpoints", "work redone", "restarts"};
    double lost[] = {s->mean.save_s, s->mean.lost_s, s->mean.restart_s};
    seconds_bars(page, "Time lost, the mean of the trials, in days (the share of the run)",
                 lost_labels, lost, G_N_ELEMENTS(lost), day, "days", s->mean.wall_s);
    html_heading(page, "Checkpoint interval");
    const char *interval_labels[] = {"chosen", "best simulated", "Young", "Daly", "Saxena"};
    double intervals[] = {every_s, p->best_every * p->step_s, p->young_s, p->daly_s, p->saxena_s};
    seconds_bars(page, "The interval between checkpoints against the closed forms, in minutes",
                 interval_labels, intervals, G_N_ELEMENTS(intervals), 60, "min", 0);
    html_heading(page, "The report");
    g_autofree char *text = run_report_render(r, FORMAT_TEXT);
    html_paragraph(page, text, TRUE);
    return html_page_render(page);
}
