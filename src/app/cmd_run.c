/* cmd_run.c: plansim run (cmd_run.h), a whole training run's report from
 * one replayed step. */
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "app/cmd_run.h"
#include "app/cli.h"
#include "app/command.h"
#include "app/progress.h"
#include "app/simulate.h"
#include "metrics/runplan.h"
#include "output/report.h"
#include "output/report_html.h"
#include "output/run_report.h"
#include "strategy/strategy.h"
#include "base/error.h"
#include "base/text.h"
#include "base/units.h"

typedef struct {
    CliInputs in;
    char *format, *output, *print, *html;
    CommandTraining training;
    CommandRunFlags run;
} RunCommandArgs;

static gboolean run(void *args, GError **error)
{
    RunCommandArgs *a = args;
    ReportFormat format = FORMAT_TEXT;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    g_autoptr(WhatIf) whatif = NULL;
    a->in.outputs[0] = (CliOutput){.flag = "-o", .path = a->output};
    a->in.outputs[1] = (CliOutput){.flag = "--html", .path = a->html};
    double tokens, price;
    RunChoice choice;
    int print;
    if (!cli_parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
        !command_parse_print(a->print, NULL, &print, error) ||
        !cli_inputs_load(&a->in, CLI_DEFAULT_PLAN, &model, &cluster, plan, error) ||
        !strategy_resolve(plan, model, cluster, error))
        return FALSE;
    if (print >= 0)
        return command_print_plan(print, plan, model, a->output, error);
    if (!(whatif = cli_inputs_whatif(&a->in, TRUE, error)) ||
        !command_parse_training(&a->training, cluster, &tokens, &price, error) ||
        !command_parse_run(&a->in, &a->run, &choice, error))
        return FALSE;
    if (tokens <= 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--tokens: expected the tokens the run trains on (2T), got none");
        return FALSE;
    }
    Report rep;
    Progress *progress = progress_start("run: replaying the step");
    gboolean replayed = simulate_run_whatif(model, cluster, plan, whatif, NULL, FALSE, &rep, error);
    progress_stop(progress);
    if (!replayed)
        return FALSE;
    command_warn_plan(&a->in, plan, model, cluster);
    if (!rep.metrics.fits) {
        g_set_error(error, PS_ERROR, PS_ERROR_NO_FIT,
                    "run: the plan does not fit: %.4g GiB at its peak, over the GPU's %.4g "
                    "(plansim simulate says what would make it fit)",
                    rep.metrics.peak_bytes / UNITS_GIB, cluster->gpu.memory_bytes / UNITS_GIB);
        report_clear(&rep);
        return FALSE;
    }
    RunPlan rp;
    progress = progress_start("run: simulating the trials");
    Step step = step_of(model, cluster, plan);
    gboolean ok =
        runplan_compute(&step, rep.metrics.step_time_s, tokens, &choice, TRUE, &rp, error);
    progress_stop(progress);
    RunReport rr = {
        .model = model->name,
        .cluster = cluster->name,
        .plan = plan,
        .run = &rp,
        .gpu_hour_price = price,
        .async = choice.async,
    };
    g_autofree char *text = ok ? run_report_render(&rr, format) : NULL;
    g_autofree char *page = ok && a->html ? report_html_run(&rr) : NULL;
    report_clear(&rep);
    if (!ok || (page && !text_write_atomic(a->html, page, strlen(page), error)))
        return FALSE;
    if (text_write_atomic(a->output ? a->output : "-", text, strlen(text), error))
        return TRUE;
    if (page && cli_replaceable(a->html)) /* all or nothing */
        g_unlink(a->html);
    return FALSE;
}

int cmd_run(int argc, char **argv)
{
    RunCommandArgs a = {0};
    GOptionEntry entries[] = {
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the report to FILE (whole or not at all)", "FILE"},
        {"html", 0, 0, G_OPTION_ARG_FILENAME, &a.html,
         "also write the report as one self-contained HTML page: the days, the time lost and "
         "the checkpoint interval as charts",
         "FILE"},
        COMMAND_TRAINING_ENTRIES(a.training),
        COMMAND_RUN_ENTRIES(a.run),
        COMMAND_PRINT_ENTRY(a.print),
        {NULL},
    };
    return command_main(argc, argv,
                        "- a whole training run: failures, checkpoints, restarts and goodput",
                        entries, &a.in, run, &a);
}
