/* diagnosis.h: the checklist of the parallelism notes, walked over a
 * simulated step: is the step near its ideal, and if not, is it held back
 * by communication, the pipeline bubble, memory or data loading?
 *
 * Each check has one figure (`value`), the threshold where its verdict
 * turns, a short verdict and a sentence or two with its numbers and what
 * to change. The figures and thresholds (docs/report.md, "Diagnosis"):
 *   compute        MFU: the ideal step, model FLOPs / (GPUs x peak), over
 *                  the step; >= 0.45 is compute-efficient;
 *   communication  the largest exposed time of one group (tp, dp, pp,
 *                  zero) over the step; >= 0.10 names it as the bound;
 *   bubble         bubble_fraction; >= 0.10 asks for more micro-batches
 *                  or interleaving, by the 1F1B rule of thumb (p - 1) / m;
 *   memory         peak over capacity; > 1 does not fit, >= 0.90 is tight;
 *   data           the data loader's time per step over the first stage's
 *                  compute; >= 1 is the bottleneck (data_loader.h). */
#ifndef PLANSIM_METRICS_DIAGNOSIS_H
#define PLANSIM_METRICS_DIAGNOSIS_H

#include "metrics/metrics.h"

typedef enum {
    DIAG_COMPUTE,
    DIAG_COMMUNICATION,
    DIAG_BUBBLE,
    DIAG_MEMORY,
    DIAG_DATA,
    DIAG_ITEMS
} DiagItem;

typedef struct {
    const char *name;     /* "compute", "communication", ... */
    const char *question; /* the checklist's question */
    double value;         /* the figure above */
    double threshold;     /* where the verdict turns */
    char *verdict;        /* a few words, owned */
    char *text;           /* the numbers and the advice, owned */
} DiagCheck;

typedef struct {
    DiagCheck item[DIAG_ITEMS]; /* in checklist order; verdict NULL: not diagnosed */
} Diagnosis;

/* Walks the checklist over the metrics `m` of `step`. diagnosis_clear
 * frees what it owns. */
void diagnosis_compute(Diagnosis *out, const Metrics *m, const Step *step);
void diagnosis_clear(Diagnosis *d);

#endif
