/* run_report.h: a whole run (metrics/runplan.h) as text for a person, JSON or
 * CSV for programs, like a step's report (report.h). Every format gives
 * the same figures, from one table (run_report.c); the same run gives the
 * same bytes. */
#ifndef PLANSIM_OUTPUT_RUN_REPORT_H
#define PLANSIM_OUTPUT_RUN_REPORT_H

#include "metrics/runplan.h"
#include "output/report.h"

typedef struct {
    const char *model, *cluster; /* names */
    const PlanSpec *plan;        /* resolved */
    const RunPlan *run;
    double gpu_hour_price; /* > 0: costs too */
    gboolean async;
} RunReport;

/* The report in `format`, newly allocated. */
char *run_report_render(const RunReport *r, ReportFormat format);

#endif
