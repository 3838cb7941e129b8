/* cmd_simulate.c: plansim simulate (cmd_simulate.h), one step's report
 * from the inputs and the command's own flags. */
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "app/cmd_simulate.h"
#include "app/advice.h"
#include "app/cli.h"
#include "app/command.h"
#include "app/progress.h"
#include "app/simulate.h"
#include "metrics/breakdown.h"
#include "metrics/diagnosis.h"
#include "metrics/training.h"
#include "output/report.h"
#include "output/report_html.h"
#include "strategy/strategy.h"
#include "base/error.h"
#include "base/text.h"

typedef struct {
    CliInputs in;
    char *format, *output, *trace, *trace_ranks, *print, *html;
    gboolean no_advice;
    CommandTraining training;
    gboolean explain, breakdown;
} SimulateArgs;

static gboolean simulate(void *args, GError **error)
{
    SimulateArgs *a = args;
    ReportFormat format = FORMAT_TEXT;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    a->in.outputs[0] = (CliOutput){.flag = "-o", .path = a->output};
    a->in.outputs[1] = (CliOutput){.flag = "--trace", .path = a->trace};
    a->in.outputs[2] = (CliOutput){.flag = "--html", .path = a->html};
    int print;
    if (!cli_parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
        !command_parse_print(a->print, a->trace, &print, error) ||
        !cli_inputs_load(&a->in, CLI_DEFAULT_PLAN, &model, &cluster, plan, error))
        return FALSE;
    static const char *const which[] = {"all", "stages", NULL};
    int stages_only = -1; /* by default every GPU of a small world, one per stage of a big one */
    if (!cli_parse_choice("--trace-ranks", a->trace_ranks, which, &stages_only, error) ||
        !strategy_resolve(plan, model, cluster, error))
        return FALSE;
    if (print >= 0)
        return command_print_plan(print, plan, model, a->output, error);
    if (stages_only < 0)
        stages_only = plan_spec_gpus(plan) > 64;
    g_autoptr(WhatIf) whatif = cli_inputs_whatif(&a->in, FALSE, error);
    Report rep;
    double tokens, price;
    if (!command_parse_training(&a->training, cluster, &tokens, &price, error))
        return FALSE;
    if (a->explain && a->breakdown) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--explain: expected the report, got --breakdown (which replaces it)");
        return FALSE;
    }
    if (a->explain && format != FORMAT_TEXT) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--explain: expected --format text (JSON has the \"diagnosis\"), got %s",
                    report_format_names[format]);
        return FALSE;
    }
    Progress *progress = progress_start("simulate: replaying the step");
    Timeline timeline = {0};
    if (!whatif || !simulate_run_timeline(model, cluster, plan, whatif, a->trace, stages_only,
                                          a->html ? &timeline : NULL, &rep, error)) {
        progress_stop(progress);
        return FALSE;
    }
    training_of_step(&rep.training, tokens, price, model, plan, rep.metrics.step_time_s);
    Step step = step_of(model, cluster, plan);
    diagnosis_compute(&rep.diagnosis, &rep.metrics, &step);
    ReportAdvice advice[ADVICE_MAX];
    rep.advised = !rep.metrics.fits && !a->no_advice;
    rep.n_advice = rep.advised ? advice_find(model, cluster, plan, advice, &rep.advice_partial) : 0;
    rep.advice = advice;
    progress_stop(progress);
    command_warn_plan(&a->in, plan, model, cluster);
    Breakdown b;
    if (a->breakdown || a->html)
        breakdown_compute(&step, rep.metrics.critical_stage, &b);
    g_autofree char *report = a->breakdown ? report_breakdown_render(&rep, &b, format)
                                           : report_render(&rep, format, TRUE);
    g_autofree char *prose = a->explain ? report_explain(&rep) : NULL;
    g_autofree char *text = g_strjoin("\n", report, prose, NULL);
    g_autofree char *page = a->html ? report_html_step(&rep, &b, &timeline) : NULL;
    timeline_clear(&timeline);
    advice_clear(advice, rep.n_advice);
    report_clear(&rep);
    gboolean paged = page && text_write_atomic(a->html, page, strlen(page), error);
    if ((paged || !page) &&
        text_write_atomic(a->output ? a->output : "-", text, strlen(text), error))
        return TRUE;
    /* all or nothing: the trace the run wrote goes too, and the page */
    if (cli_replaceable(a->trace))
        g_unlink(a->trace);
    if (paged && cli_replaceable(a->html))
        g_unlink(a->html);
    return FALSE;
}

int cmd_simulate(int argc, char **argv)
{
    SimulateArgs a = {0};
    GOptionEntry entries[] = {
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the report to FILE (whole or not at all)", "FILE"},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &a.trace,
         "write the replay as a Chrome trace (Perfetto, chrome://tracing)", "FILE"},
        {"html", 0, 0, G_OPTION_ARG_FILENAME, &a.html,
         "also write the report as one self-contained HTML page: figures, charts of the time, "
         "the memory per stage and the critical rank's timeline",
         "FILE"},
        {"trace-ranks", 0, 0, G_OPTION_ARG_FILENAME, &a.trace_ranks,
         "all, or stages (each stage's first GPU); default all up to 64 GPUs", "WHICH"},
        {"no-advice", 0, 0, G_OPTION_ARG_NONE, &a.no_advice,
         "a plan that does not fit: skip looking for the changes that make it fit", NULL},
        COMMAND_TRAINING_ENTRIES(a.training),
        {"breakdown", 0, 0, G_OPTION_ARG_NONE, &a.breakdown,
         "instead of the report, where the critical rank's step goes by kernel class "
         "(GEMM, attention, memory-bound, optimizer, exposed communication per group)",
         NULL},
        {"explain", 0, 0, G_OPTION_ARG_NONE, &a.explain,
         "after the report, walk the diagnosis checklist in prose", NULL},
        COMMAND_PRINT_ENTRY(a.print),
        {NULL},
    };
    return command_main(argc, argv, "- simulate one training step", entries, &a.in, simulate, &a);
}
