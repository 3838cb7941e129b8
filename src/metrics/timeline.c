/* timeline.c: a few ranks' streams over a step, in bins (timeline.h).
 *
 * Each task adds its overlap with each bin it covers to that bin's tally
 * for its tag, so a stream costs O(tasks + bins) and the result does not
 * depend on the order tasks are met: ties between tags go to the lower
 * tag, and idle time wins a bin only when it is more than any tag's. */
#include "metrics/timeline.h"

#include <math.h>
#include <string.h>

/* The graph's rank on GPU `gpu`, or -1 when the graph runs none there. */
static int rank_on(const Graph *g, int gpu)
{
    for (int rank = 0; rank < graph_ranks(g); rank++)
        if (graph_gpu(g, rank) == gpu)
            return rank;
    return -1;
}

/* Adds the tasks of `rank`'s `stream` to `tally` (TIMELINE_BINS rows of
 * TAG_KINDS seconds); FALSE when the stream ran nothing. */
static gboolean tally_stream(const Graph *g, const Replay *r, int rank, int stream, double bin_s,
                             double *tally)
{
    int n;
    const TaskId *tasks = graph_stream(g, rank, stream, &n);
    gboolean busy = FALSE;
    for (int i = 0; i < n; i++) {
        const Task *t = graph_task(g, tasks[i]);
        double start = r->task[tasks[i]].start_s, end = r->task[tasks[i]].end_s;
        if (t->kind == TASK_MARKER || end <= start)
            continue;
        busy = TRUE;
        int first = (int)fmin(floor(start / bin_s), TIMELINE_BINS - 1);
        for (int b = MAX(first, 0); b < TIMELINE_BINS && b * bin_s < end; b++) {
            double from = fmax(start, b * bin_s), to = fmin(end, (b + 1) * bin_s);
            if (to > from)
                tally[b * TAG_KINDS + t->tag] += to - from;
        }
    }
    return busy;
}

/* The spans of a stream's tally: each bin's busiest tag, when busier
 * than idle, runs of one tag merged. */
static GArray *spans_of(const double *tally, double bin_s)
{
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(TimelineSpan));
    for (int b = 0; b < TIMELINE_BINS; b++) {
        const double *bin = tally + b * TAG_KINDS;
        int best = 0;
        double used = 0;
        for (int tag = 0; tag < TAG_KINDS; tag++) {
            used += bin[tag];
            if (bin[tag] > bin[best])
                best = tag;
        }
        if (bin[best] <= 0 || bin[best] < bin_s - used) /* mostly idle */
            continue;
        TimelineSpan *last =
            spans->len ? &g_array_index(spans, TimelineSpan, spans->len - 1) : NULL;
        if (last && last->end == b && last->tag == (TaskTag)best) {
            last->end = b + 1;
        } else {
            TimelineSpan s = {.first = b, .end = b + 1, .tag = (TaskTag)best};
            g_array_append_val(spans, s);
        }
    }
    return spans;
}

static void add_rank(const Graph *g, const Replay *r, const Layout *layout, int rank, double bin_s,
                     Timeline *out)
{
    g_autofree double *tally = g_new(double, TIMELINE_BINS *TAG_KINDS);
    int gpu = graph_gpu(g, rank);
    for (int stream = 0; stream < graph_streams(g); stream++) {
        memset(tally, 0, sizeof(double) * TIMELINE_BINS * TAG_KINDS);
        if (!tally_stream(g, r, rank, stream, bin_s, tally))
            continue;
        TimelineLane lane = {.gpu = gpu,
                             .stage = layout_coord(layout, gpu).pp,
                             .stream = (Stream)stream,
                             .spans = spans_of(tally, bin_s)};
        if (lane.spans->len > 0)
            g_array_append_val(out->lanes, lane);
        else
            g_array_free(lane.spans, TRUE);
    }
}

void timeline_compute(const Graph *g, const Replay *r, const Layout *layout, int critical_gpu,
                      double step_time_s, Timeline *out)
{
    *out = (Timeline){.step_time_s = step_time_s,
                      .critical_gpu = critical_gpu,
                      .lanes = g_array_new(FALSE, FALSE, sizeof(TimelineLane))};
    if (step_time_s <= 0)
        return;
    double bin_s = step_time_s / TIMELINE_BINS;
    Coord critical = layout_coord(layout, critical_gpu);
    for (int d = -1; d <= 1; d++) { /* the stage before, the critical one, the one after */
        Coord c = critical;
        c.pp += d;
        if (c.pp < 0 || c.pp >= layout_size(layout, GROUP_PP))
            continue;
        int rank = rank_on(g, layout_rank(layout, c));
        if (rank >= 0)
            add_rank(g, r, layout, rank, bin_s, out);
    }
}

void timeline_clear(Timeline *t)
{
    for (guint i = 0; t->lanes && i < t->lanes->len; i++)
        g_array_free(g_array_index(t->lanes, TimelineLane, i).spans, TRUE);
    if (t->lanes)
        g_array_free(t->lanes, TRUE);
    t->lanes = NULL;
}

char *timeline_tag_name(TaskTag tag)
{
    static const char *const ids[TAG_KINDS] = {
#define TAG(ID, purpose) #ID,
#include "strategy/tags.def"
#undef TAG
    };
    const char *purpose = emit_comm_name(tag);
    return purpose ? g_strdup(purpose) : g_ascii_strdown(ids[tag], -1);
}
