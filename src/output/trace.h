/* trace.h: a replay as a Chrome trace (the JSON Perfetto and
 * chrome://tracing open).
 *
 * One process per traced GPU, one thread per stream (compute,
 * communication, pipeline), every task a complete event ("X") named as the
 * graph names it, with its kind, tag and bytes or FLOPs in args; and per
 * GPU a "memory" counter track ("C") of the bytes in use, in GiB. Times are
 * microseconds. A collective appears on every member's stream that runs it;
 * a pipeline receive is not a task of the receiver. */
#ifndef PLANSIM_OUTPUT_TRACE_H
#define PLANSIM_OUTPUT_TRACE_H

#include <glib.h>

#include "core/graph.h"
#include "engine/engine.h"
#include "layout/layout.h"

/* The trace of `r`, for every rank or, when `stages_only`, for the first
 * rank (tp 0, dp 0) of each pipeline stage; newly allocated. */
char *trace_render(const Graph *g, const Replay *r, const Layout *layout, gboolean stages_only);

#endif
