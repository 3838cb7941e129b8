/* unit.c: the units of a stage's step and their passes (unit.h). */
#include "strategy/unit.h"

gboolean unit_passes_gradients(const Unit *u)
{
    return !u->forward && u->part != BACKWARD_WEIGHT;
}

gboolean unit_ends_backward(const Unit *u)
{
    return !u->forward && u->part != BACKWARD_INPUT;
}

unsigned unit_passes(Phase phase)
{
    static const unsigned passes[PHASES] = {
        [PHASE_FORWARD] = PASS_FORWARD,
        [PHASE_RECOMPUTE] = PASS_FORWARD,
        [PHASE_BACKWARD] = PASS_INPUT_GRAD | PASS_WEIGHT_GRAD,
        [PHASE_INPUT_GRAD] = PASS_INPUT_GRAD,
        [PHASE_WEIGHT_GRAD] = PASS_WEIGHT_GRAD,
    };
    return passes[phase];
}

PassWork unit_work(unsigned passes, const OpsWork *w, double share)
{
    PassWork p = {0};
    if (passes & PASS_FORWARD) {
        p.seconds += w->seconds;
        p.flops += w->flops;
    }
    if (passes & PASS_INPUT_GRAD) {
        p.seconds += w->backward_seconds - w->wgrad_seconds;
        p.flops += w->backward_flops - w->wgrad_flops;
    }
    if (passes & PASS_WEIGHT_GRAD) {
        p.seconds += w->wgrad_seconds;
        p.flops += w->wgrad_flops;
    }
    return (PassWork){.seconds = share * p.seconds, .flops = share * p.flops};
}
