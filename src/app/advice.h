/* advice.h: the changes that make a plan that does not fit in memory fit.
 *
 * advice.c holds one table of candidate changes, each a plan field and the
 * values to try beyond the plan's own: a higher ZeRO stage, recomputation
 * (selective, full), sequence parallelism, a smaller micro-batch, more
 * tensor or pipeline parallelism on the same GPUs (dp shrinks to match),
 * offload (optimizer, activations). The global batch stays the plan's.
 * The search is a beam, depth by depth: every single change is tried; while
 * fewer than ADVICE_MAX fit, the ADVICE_BEAM candidates of the last depth
 * nearest to fitting (by their memory lower bound) that did not fit each
 * get one change more, to a field they leave alone, up to ADVICE_DEPTH
 * changes (a candidate that fits is not extended: fewer changes are
 * simpler). When none fits on these GPUs, the same search runs on 2, 4,
 * then ADVICE_NODES times the nodes (each plan's dp grown as much), the
 * plan unchanged first, and the advice names `--nodes N`. A
 * candidate that does not resolve or is not supported is dropped, one whose
 * memory lower bound (strategy/estimate.h) exceeds the GPU's memory is
 * carried on without a replay (its replayed peak would exceed it too), and
 * the others are replayed in increasing order of their step-time lower
 * bound until ADVICE_MAX of them fit and no bound left is below the
 * slowest of those. So the result is the ADVICE_MAX fastest candidates
 * that fit, by replayed step time (ties: fewer changes, then table order),
 * among those the beam reaches, each verified by its replay, among those
 * replayed within a budget: the
 * replays of one advice together process at most ADVICE_BUDGET_EVENTS
 * events; a candidate whose step has more tasks than the budget has left
 * (each task is at least one event) is refused: unbuilt when its size is
 * known in advance (emit.h), and the next one is tried; each replay may
 * take half of what is left, and one refused once its graph passes that
 * spends it (one huge step cannot starve the others). So advice on any plan takes about
 * a second at most (docs/benchmarks.md); a candidate left out for the budget can still be simulated
 * on its own, and the report says some were. */
#ifndef PLANSIM_APP_ADVICE_H
#define PLANSIM_APP_ADVICE_H

#include "output/report.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"

#define ADVICE_MAX           5
#define ADVICE_BUDGET_EVENTS 2000000
#define ADVICE_DEPTH         4 /* changes at most */
#define ADVICE_BEAM          16
#define ADVICE_NODES         8

/* The changes to `plan` (resolved) that make it fit, fastest first, into
 * `out`; returns how many (0 .. ADVICE_MAX); *partial says whether a
 * candidate was left out for the budget. Each change is the flags that
 * give it on top of the plan's own ("--tp 2 --recompute selective"): those
 * of the fields it changes, dp only where the plan set it. advice_clear
 * frees them. */
int advice_find(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                ReportAdvice out[ADVICE_MAX], gboolean *partial);
void advice_clear(ReportAdvice *advice, int n);

#endif
