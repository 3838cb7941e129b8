/* report_html.h: simulate's and run's reports as HTML pages (--html;
 * output/html.h builds them): the headline figures, charts of where the
 * time and the memory go, and the text report in full beneath. */
#ifndef PLANSIM_OUTPUT_REPORT_HTML_H
#define PLANSIM_OUTPUT_REPORT_HTML_H

#include "metrics/breakdown.h"
#include "metrics/timeline.h"
#include "output/report.h"
#include "output/run_report.h"

/* A step's page, newly allocated: step time first, then tokens/s, MFU,
 * memory, bubble and exposed communication; the breakdown `b` of the
 * critical rank (breakdown_compute) as bars; each stage's memory peak
 * by kind as stacked columns against the GPU's capacity; the timeline `t`
 * of the critical rank and its neighbours; the diagnosis and the text
 * report. */
char *report_html_step(const Report *rep, const Breakdown *b, const Timeline *t);

/* A run's page, newly allocated: its mean days first, their P10 to P90,
 * the clean run, ETTR and the checkpoint interval; the days, the time
 * lost and the interval against its closed forms as bars; the text
 * report. */
char *report_html_run(const RunReport *r);

#endif
