/* unit.h: the units of a pipeline stage's step and the passes they make:
 * a forward or a backward (whole, or split into B and W) of one
 * micro-batch through one model chunk, as a schedule orders them
 * (schedule.h) and the emitter walks them (emit.h). */
#ifndef PLANSIM_STRATEGY_UNIT_H
#define PLANSIM_STRATEGY_UNIT_H

#include <glib.h>

#include "cost/transformer.h"

/* PHASE_BACKWARD is a whole backward; a zero-bubble schedule splits it
 * into the input gradients (PHASE_INPUT_GRAD, with every operation's
 * backward but the weight gradients) and the weight gradients
 * (PHASE_WEIGHT_GRAD), as Unit's `part` says. */
typedef enum {
    PHASE_FORWARD,
    PHASE_BACKWARD,
    PHASE_RECOMPUTE,
    PHASE_INPUT_GRAD,
    PHASE_WEIGHT_GRAD,
    PHASES
} Phase;

/* The passes a phase makes over a piece's operations (unit_passes):
 * the forward (a forward, or recomputation's replay of one), the input
 * gradients (a whole backward, or B) and the weight gradients (a whole
 * backward, or W). A strategy says in which passes its piece hooks take
 * part (Strategy.piece_passes). */
typedef enum { PASS_FORWARD = 1, PASS_INPUT_GRAD = 2, PASS_WEIGHT_GRAD = 4 } Pass;

/* What a backward unit computes: the whole backward (1F1B and the other
 * schedules), or one of its halves (zero-bubble schedules, Qi et al.
 * 2024): B, the input gradients, which the stage before waits for, and W,
 * the weight gradients, which nothing but the gradients' reduction and the
 * optimizer wait for. W runs after B; the activations stay until W ends. */
typedef enum { BACKWARD_WHOLE, BACKWARD_INPUT, BACKWARD_WEIGHT } BackwardPart;

typedef struct {
    int micro_batch;   /* 0-based, within the step */
    gboolean forward;  /* else backward */
    int chunk;         /* the rank's model chunk, 0 .. virtual_stages - 1 */
    BackwardPart part; /* a backward's: BACKWARD_WHOLE unless split */
    gboolean paired;   /* a steady state's forward that walks together with the next
                        * unit, a backward: the combined 1F1B overlap (schedule.h) */
} Unit;

/* Whether unit `u` receives and sends its gradients between stages: a
 * whole backward or a B (input gradients). */
gboolean unit_passes_gradients(const Unit *u);

/* Whether unit `u` completes its chunk's weight gradients and frees the
 * activations its forward kept: a whole backward or a W. */
gboolean unit_ends_backward(const Unit *u);

/* The passes (Pass bits) phase `phase` makes. */
unsigned unit_passes(Phase phase);

/* The time and hardware FLOPs of `share` of operations that take `w`
 * (their forward, and their backward's weight gradients), in `passes`:
 * the forward once, the input gradients twice the forward less the weight
 * gradients, the weight gradients theirs. So a whole backward takes twice
 * the forward, and B and W split it; the one home of that split. */
typedef struct {
    double seconds, flops;
} PassWork;
PassWork unit_work(unsigned passes, const OpsWork *w, double share);

#endif
