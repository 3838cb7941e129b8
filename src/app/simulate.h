/* simulate.h: one step of one plan, from specs to report.
 *
 * The whole data flow in one call: check the plan is supported, lay the
 * ranks out, emit every rank's program, replay it on the engine, read the
 * metrics. */
#ifndef PLANSIM_APP_SIMULATE_H
#define PLANSIM_APP_SIMULATE_H

#include "app/whatif.h"
#include "metrics/timeline.h"
#include "output/report.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"

/* Simulates `plan` (resolved with plan_spec_resolve) of `model` on
 * `cluster`. The report borrows the three specs. */
gboolean simulate_run(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                      Report *out, GError **error);

/* simulate_run the long way, as the reference its shortcuts must match:
 * the steady state replayed period after period, none skipped (engine.h),
 * and every flow through the fair share, none apart (net.h). The same
 * report but for metrics.events_skipped and metrics.flows_apart, which
 * tests and benchmarks compare. */
gboolean simulate_run_whole(const ModelSpec *model, const ClusterSpec *cluster,
                            const PlanSpec *plan, Report *out, GError **error);

/* simulate_run for a step of at most `max_tasks` tasks (emit_step's cap; simulate_run
 * gives EMIT_MAX_TASKS): a bigger one fails (PS_ERROR_INPUT), before it is
 * built when its size is known in advance. A step of at least 16 x pp
 * micro-batches and, at every shift of its symmetry, a 50th of the cap
 * (emit_tasks_at_least) is first probed at 2 x pp micro-batches, to replay it
 * at once with the shifts it keeps (the same report). */
gboolean simulate_run_within(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan, gsize max_tasks, Report *out, GError **error);

/* simulate_run, and writes the replay as a Chrome trace to `trace_path`
 * (trace.h; every rank, or each stage's first when `stages_only`). */
gboolean simulate_run_traced(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan, const char *trace_path, gboolean stages_only,
                             Report *out, GError **error);

/* simulate_run_traced under the what-ifs `whatif` (whatif.h; NULL or none set:
 * simulate_run_traced itself). Slowed GPUs and links are replayed in cells
 * around them (symmetry_new_cells: the report's symmetry reads "tp x dp
 * around the what-if"), or with every rank when the cells do not stand
 * for the full replay ("none (what-if: cells unequal)") or noise makes
 * every rank its own ("none (jitter)"); the plan is also simulated
 * without them: the report's whatif, clean_step_time_s and
 * clean_critical_rank. */
gboolean simulate_run_whatif(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan, const WhatIf *whatif, const char *trace_path,
                             gboolean stages_only, Report *out, GError **error);

/* simulate_run_whatif, and when `timeline` is not NULL the timeline of the
 * step's critical rank and its pipeline neighbours (metrics/timeline.h;
 * timeline_clear frees it), set only when it succeeds. */
gboolean simulate_run_timeline(const ModelSpec *model, const ClusterSpec *cluster,
                               const PlanSpec *plan, const WhatIf *whatif, const char *trace_path,
                               gboolean stages_only, Timeline *timeline, Report *out,
                               GError **error);

#endif
