/* fold.h: whether the replay of a graph built short repeats its periods
 * (engine.h, graph.h's graph_fold), for the engine alone. */
#ifndef PLANSIM_ENGINE_FOLD_H
#define PLANSIM_ENGINE_FOLD_H

#include <glib.h>

#include "core/graph.h"
#include "engine/engine.h"

/* The first task of each period, in the order tasks were added: what
 * fold_check counts events from; one TaskId a period, newly allocated. */
TaskId *fold_firsts(const Graph *g);

/* Checks that replay `r` of `g`, built short, repeats its periods (the
 * conditions engine.h lists). When it does, sets r's repeats, period_s,
 * period and last_period and returns the events of a period: those
 * between the instants the last two periods' first tasks started at, from
 * `events_at`, the replay's count of events before the instant each
 * period's first task started; else returns -1 and says in `why` what
 * differs. */
gint64 fold_check(const Graph *g, Replay *r, const guint64 *events_at, GString *why);

#endif
