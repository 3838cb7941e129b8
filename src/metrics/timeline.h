/* timeline.h: what a few ranks' streams do over a step, coarse enough to
 * draw (the HTML report's timeline; output/html.h).
 *
 * A replay has tens of thousands of tasks a rank, most far shorter than a
 * pixel of a picture of the whole step. So each stream of each rank shown
 * is cut into TIMELINE_BINS equal bins over the step, and each bin takes
 * the class (task tag, tags.def) that spent the most time in it, or none
 * when the stream was idle for most of it; runs of bins of one class make
 * a span. A span's ends are thus bin edges: a picture TIMELINE_BINS
 * pixels wide shows what a full trace would, at its resolution. */
#ifndef PLANSIM_METRICS_TIMELINE_H
#define PLANSIM_METRICS_TIMELINE_H

#include <glib.h>

#include "core/graph.h"
#include "engine/engine.h"
#include "layout/layout.h"
#include "strategy/emit.h"

#define TIMELINE_BINS 1000

/* At most this many ranks: the critical one and its two neighbours. */
#define TIMELINE_RANKS 3

/* Bins [first, end) of one stream spent mostly on `tag`. */
typedef struct {
    int first, end;
    TaskTag tag;
} TimelineSpan;

/* One stream of one rank, busy for most of at least one bin. */
typedef struct {
    int gpu, stage;
    Stream stream;
    GArray *spans; /* TimelineSpan, in time order; owned */
} TimelineLane;

typedef struct {
    double step_time_s; /* the bins cover [0, step_time_s) */
    int critical_gpu;
    GArray *lanes; /* TimelineLane: rank by rank (by stage), stream by stream; owned */
} Timeline;

/* The timeline of the replay `r` of `g`, laid out as `layout`, over
 * [0, step_time_s): the rank on GPU `critical_gpu` and those of the graph
 * on the stages before and after it at the same tp, dp and cp (a
 * symmetry-reduced graph may hold neither). timeline_clear frees it. */
void timeline_compute(const Graph *g, const Replay *r, const Layout *layout, int critical_gpu,
                      double step_time_s, Timeline *out);
void timeline_clear(Timeline *t);

/* A tag's name for a legend, newly allocated: "forward", "backward", ...,
 * "tp", "dp", ... (tags.def's IDs in lower case, a purpose for
 * communication). */
char *timeline_tag_name(TaskTag tag);

#endif
