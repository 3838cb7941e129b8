/* report.h: a simulated step as text for a person, JSON or CSV for programs.
 *
 * Every format prints the same fields (report_columns lists them in order);
 * numbers are printed with a fixed format so that the same step gives the
 * same bytes. sim_wall_s is the only field that varies between runs, and it
 * is left out of CSV so that sweeps compare byte for byte. CSV rows end with
 * three columns of their own, for sweeps: status, bound_s and reason
 * (ReportStatus below); `plansim simulate` fills status with "simulated". */
#ifndef PLANSIM_OUTPUT_REPORT_H
#define PLANSIM_OUTPUT_REPORT_H

#include <glib.h>

#include "metrics/breakdown.h"
#include "metrics/diagnosis.h"
#include "metrics/metrics.h"
#include "metrics/training.h"
#include "spec/plan.h"

/* What a row of a sweep says about its plan (report.c's CSV `status`
 * column): replayed; pruned, its bound of the step time unable to beat the
 * sweep's K-th best; found too big for the GPU by the memory bound, without
 * a replay; or not a valid plan (`reason` says why). */
typedef enum {
    REPORT_SIMULATED,
    REPORT_PRUNED,
    REPORT_DOES_NOT_FIT,
    REPORT_INVALID,
    REPORT_STATUSES
} ReportStatus;
extern const char *const report_status_names[]; /* "simulated", "pruned", ... */

/* A change that makes a plan that does not fit fit (app/advice.h). */
typedef struct {
    char *change;       /* flags to paste onto the command line: "--zero-stage 3" */
    double step_time_s; /* the changed plan's, replayed */
    double peak_bytes;  /* its memory peak, replayed */
} ReportAdvice;

typedef struct {
    const char *model; /* names */
    const char *cluster;
    const PlanSpec *plan; /* resolved */
    int gpus;
    int node_gpus, gpus_per_node; /* a node's GPUs when the job uses fewer, gpus_per_node of
                                   * each (ClusterSpec); node_gpus 0: whole nodes */
    double parameters;
    double active_parameters; /* those one token's forward uses (mixtures of experts) */
    int micro_batches;
    Metrics metrics;
    Training training;   /* the run's totals (--tokens); tokens 0: none, printed blank */
    Diagnosis diagnosis; /* the checklist, or verdicts NULL: not printed */
    double sim_wall_s;
    /* Why a step whose steady state could have been skipped was replayed
     * whole (a static string; NULL: it was skipped, or none could be; the
     * events skipped are metrics.events_skipped) */
    const char *replayed_whole;
    /* Zero for a simulated step. Otherwise only the metrics the status
     * knows are printed, the others left empty: for REPORT_PRUNED none
     * (its bound is bound_s), for REPORT_DOES_NOT_FIT peak_bytes (the bound),
     * capacity_bytes and fits; so are gpus, parameters, micro_batches and
     * plan fields that are 0 where 0 is out of their range (unresolved). */
    ReportStatus status;
    double bound_s;     /* the step-time lower bound; > 0 to print it */
    const char *reason; /* REPORT_INVALID: why */
    /* Under what-ifs (app/whatif.h; NULL: none): their summary, and the
     * clean plan's step time and critical rank */
    const char *whatif;
    double clean_step_time_s;
    int clean_critical_rank;
    /* A plan that does not fit: whether changes were looked for, and those
     * found (app/advice.h), the fastest first */
    gboolean advised;
    const ReportAdvice *advice;
    int n_advice;
    gboolean advice_partial; /* changes too big to replay within the advice's budget
                              * were left out */
} Report;

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV } ReportFormat;

/* Appends `text` as one CSV cell: quoted, its quotes doubled, when it
 * holds a comma, a quote or a newline (RFC 4180). */
void report_csv_text(GString *out, const char *text);
extern const char *const report_format_names[]; /* "text", "json", "csv" */

/* One size of a collective benchmark (plansim collective). */
typedef struct {
    double bytes;
    double time_s;
    double algbw_Bps, busbw_Bps;
    CollAlgorithm algorithm;
} CollRow;

/* The collective benchmark's table (rows of CollRow) in `format`, with a
 * heading naming the op, the ranks and the cluster. */
char *report_collective_render(const GArray *rows, CollOp op, int ranks, const char *cluster,
                               ReportFormat format);

/* Where the critical rank's step goes (simulate --breakdown; docs/report.md,
 * "Breakdown"): per kernel class (breakdown.h) its kernels and time per
 * micro-batch and per step, the recomputation and launch costs among them,
 * the optimizer step, each communication group's exposed time on that
 * rank, the rest of the step ("other": bubble, waits, and compute slowed
 * by interference), and the step. `b` is breakdown_compute's for the
 * critical rank's stage. */
char *report_breakdown_render(const Report *rep, const Breakdown *b, ReportFormat format);

/* One row of the breakdown: a kernel class (kernels and time per
 * micro-batch; -1 where a row has none), or a per-step item. */
typedef struct {
    char name[32];
    double kernels, per_micro_batch_s, per_step_s;
} BreakdownRow;
#define REPORT_BREAKDOWN_ROWS (BREAKDOWN_CLASSES + 3 + TAG_KINDS + 2)

/* The breakdown's rows into `rows` (REPORT_BREAKDOWN_ROWS at most), in
 * report_breakdown_render's order: the kernel classes, of which
 * recomputation and kernel launches, the optimizer, each group's exposed
 * communication, "other" and "step". Returns how many. */
int report_breakdown_rows(const Report *rep, const Breakdown *b, BreakdownRow *rows);

/* Frees what the report's metrics and diagnosis own. */
void report_clear(Report *rep);

/* Parses "text", "json" or "csv"; FALSE for anything else. */
gboolean report_format_parse(const char *name, ReportFormat *out);

/* The CSV header line that report_render's CSV rows go under. */
char *report_csv_header(void);

/* The report in `format`, newly allocated; CSV with its header line when
 * `header`. */
char *report_render(const Report *rep, ReportFormat format, gboolean header);

/* The diagnosis as prose (plansim simulate --explain): each check of the
 * checklist in order, its question, numbers and verdict. */
char *report_explain(const Report *rep);

#endif
