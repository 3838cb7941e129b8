/* recompute.c: activation recomputation (Korthikanti et al. 2022).
 *
 * Under "full" a layer keeps only its input from the forward and replays
 * its whole forward, tensor-parallel collectives included, right before
 * its backward; under "selective" it keeps everything but the attention
 * core (scores, softmax, dropout, score x V) and replays that. What is kept
 * and replayed is the emitter's (emit_replay, from transformer.c); this
 * module decides when: at the start of each layer's backward, after any
 * gather of the layer's parameters. */
#include "strategy/strategy.h"

static gboolean active(const PlanSpec *plan)
{
    return plan->recompute != RECOMPUTE_NONE;
}

static void segment_begin(Emit *e, void *state, const Unit *u, const Segment *seg)
{
    (void)state;
    if (!u->forward && seg->kind == SEGMENT_LAYER)
        emit_replay(e, u, seg);
}

const Strategy strategy_recompute = {
    .name = "recompute",
    .active = active,
    .segment_begin = segment_begin,
};
