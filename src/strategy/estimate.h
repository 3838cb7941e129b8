/* estimate.h: bounds of a step from the cost model, without a replay.
 *
 * A sweep (app/sweep.c) orders, pre-checks and prunes plans with these. All
 * come from the emitter's own cost functions (cost/transformer.h: the
 * forward of each piece, backward twice it, recomputation's replays, the
 * optimizer step over the rank's shard) and its own model-state rules
 * (states.h's, which emit.c allocates by, and the functions below), so they are
 * bounds of the replay of the very graph emit_step builds.
 *
 * Why estimate_step_lower_bound_s is admissible (<= the replayed step
 * time). A rank's compute stream runs its tasks one after the other
 * (graph.h), each for at least its cost: compute interference only slows
 * a task down, and the stream's collectives (tensor parallelism's) only
 * add time; the bound counts compute tasks only. Take pipeline stage s and
 * any rank of it (every stage has a simulated rank: the symmetry shifts tp
 * and dp only, and the reduced replay is exact):
 *   - fill: the stage's first unit is a forward (every schedule runs each
 *     backward after its forward), of model chunk g >= s. Its first task
 *     waits for the activations of chunk g - 1's forward of the same
 *     micro-batch, sent when that unit's last compute ended, which waited
 *     for chunk g - 2's, and so on: it starts no sooner than F(s), the
 *     forwards of one micro-batch through model chunks 0 .. s - 1;
 *   - busy: from then on the stage's compute stream runs all its units,
 *     U(s) = m x (forward + backward + replays) of its chunks;
 *   - drain: its last unit is a backward, of chunk g >= s; chunk g - 1's
 *     backward of that micro-batch waits for its gradients, and so on down
 *     to chunk 0 on stage 0, whose optimizer step follows: B(s) + opt(0),
 *     with B(s) the backwards (and replays) of one micro-batch through
 *     chunks 0 .. s - 1; and the stage's own optimizer step follows its
 *     last unit too: opt(s). The last unit of a schedule that splits
 *     backwards (zero-bubble, DualPipeV) may be a W, whose B, and the B's
 *     on the stages before, ran earlier: B(s) is taken as 0 for those
 *     schedules. In a V (layout/chunks.h) stage s runs chunks s and
 *     2p - 1 - s, both >= s, so fill and drain hold as they are.
 * So the step lasts at least F(s) + U(s) + max(opt(s), B(s) + opt(0)) for
 * every s; the bound is the largest over the stages, less a relative
 * 1e-6 that covers the rounding of the replay's and this sum's additions
 * (at most ~1e-9 of a step of 1e7 tasks). On one stage it is the rank's
 * compute; for 1F1B with even stages, (m + p - 1)(f + b) + opt, the
 * closed form of the bubble.
 * A schedule that holds one micro-batch in the pipeline at a time
 * (PipeSchedule.one_at_a_time: naive) chains every micro-batch through
 * every chunk, forward and back, before stage 0's optimizer step: the
 * step lasts at least m times that chain plus opt(0).
 * The active strategies' own tasks on the compute stream add, to each
 * block's forward and backward, at least what their block_bound says
 * (strategy.h; each argued beside it: recompute.c's replays,
 * tensor_parallel.c's waits for the collectives that stop a forward's
 * compute, expert_parallel.c's token exchanges), over the network's own bounds (net/netbound.h: a link's
 * payload at its efficiency, an exchange's bytes over a rank's links, a
 * collective's latency floor).
 * A strategy's prefetch before a backward (Strategy.prefetch_s:
 * offloaded activations coming back layer by layer) counts in U(s) as
 * max(B(l), prefetch(l - 1)) for B(l), and in B(s) and the naive chain as
 * B(l) alone for a unit's first layer: argued at estimate.c's chunk_cost.
 * The step also lasts at least estimate_comm_lower_bound_s, and the bound
 * is the larger: see there.
 *
 * Why estimate_peak_lower_bound_bytes is admissible (<= the replayed
 * memory peak). At "step begin" each rank allocates its model states and
 * the GPU's runtime reserve (estimate_states_bytes of its stage) and keeps
 * them all step. It then
 * runs its units in the order of its pipeline schedule (the pipeline is
 * the strategy that orders units, and it asks the plan's schedule row:
 * the same order() is walked here). Each forward piece allocates what it
 * keeps when it starts, and that micro-batch's backward of the chunk frees
 * it (with what a replay re-created) when its pieces end; ZeRO-3's
 * gathered buffers are freed only after they are allocated. So when a
 * forward unit's last piece starts, the rank holds at least its states and
 * the kept activations of every forward unit so far whose backward (a
 * split backward's W) has not run, this one included, less what the
 * strategies release (Strategy.released_bytes: offload's copies to the
 * host, freed when a copy ends, at the soonest at once); the engine records the peak after every
 * allocation. The bound is the largest such sum over the units and the stages, less a relative 1e-9
 * for rounding. It leaves out replays, buffers and the tensor-parallel collectives' memory, so it
 * is exact only when those are nil. */
#ifndef PLANSIM_STRATEGY_ESTIMATE_H
#define PLANSIM_STRATEGY_ESTIMATE_H

#include "strategy/step.h"

/* A lower bound of the step from its communication stream and the
 * strategies' own streams. A rank's communication stream runs its
 * data-parallel collectives (the bytes the active strategies'
 * segment_comm_bytes declare: data_parallel.c's gradient reductions,
 * zero.c's gathers) one after the other, each until its last byte
 * arrives, all within the step; they last at least the larger of two
 * bounds. The rank's own links: netbound_exchange_s. Its node's NICs: for
 * a group of n members, l of them on the rank's node, an all-gather of S
 * bytes must bring in the n - l other members' shards, S (n - l) / n
 * bytes, which no algorithm avoids, and a reduce-scatter must send out as
 * much (the node's share of the others' shards, reduced inside the node
 * at best); an all-reduce does both; an algorithm moves data among the
 * group's members only, so those bytes pass the NICs of the l members,
 * min(l, NICs) of them, each at its capacity times its efficiency. l is
 * taken at its most (layout_plan_most_on_a_node), which only lowers the
 * bound. And each strategy's own stream (stream_bound_s: offload's copies
 * and the host's Adam step, one after the other) runs within the step. */
double estimate_comm_lower_bound_s(const Step *step);

/* The optimizer step of a rank of stage s: the shard of its parameters
 * its ZeRO stage has it update (states_optimizer_s). Resolved plans. */
double estimate_optimizer_s(const Step *step, int s);

/* Model-state bytes (parameters, gradients, optimizer states after ZeRO
 * sharding, states.h) and the GPU's runtime reserve of the most loaded rank,
 * as emit.c allocates them at "step begin": a lower bound of its memory
 * peak. Resolved plans. */
double estimate_states_bytes(const Step *step);

/* A lower bound of the replayed memory peak: per stage, its model states,
 * the runtime reserve and the most activations its schedule's forward
 * units keep at once; the largest over the stages. Resolved, supported
 * plans (strategy_check). */
double estimate_peak_lower_bound_bytes(const Step *step);

/* The same, but once the model states and reserve alone pass `limit`
 * (with the same slack), their bound: a lower bound too, enough to tell
 * that the peak passes `limit`, without the activations' walk. */
double estimate_peak_lower_bound_bytes_past(const Step *step, double limit);

/* A lower bound of the replayed step time, in seconds (the fill, busy and
 * drain argument above). Resolved, supported plans (strategy_check). */
double estimate_step_lower_bound_s(const Step *step);

/* A lower bound of the replayed step time at least estimate_step_lower_bound_s,
 * which walks every unit: the longest chain of units, each stage's in its
 * schedule's order and each unit after the one whose activations or
 * gradients it takes, with a transfer between them where they run on
 * different stages (netbound_send_s: a send runs once its unit's compute
 * ended, and the unit that receives it waits for it, pipeline.c). A unit
 * lasts its chunk's forward (chunk_cost), a backward its busy time after
 * the unit before it on its stage and its chain time after its gradients
 * came (the prefetches' argument at estimate.c's chunk_cost); a
 * zero-bubble schedule's B the compute of its input gradients after both,
 * its W the compute of its weight gradients after the unit before it (its
 * own B came earlier on the stage; no other unit waits for a W). A stage's
 * optimizer step follows its last unit, and the reductions the step's
 * last micro-batch launches (Strategy.segment_reduce_bytes), which all
 * wait for that micro-batch's backward: the communication stream carries
 * them one after the other, at least as long as estimate_comm_lower_bound_s
 * counts such bytes, from the start of its first backward unit on the
 * stage; between the two and the optimizer step come the strategies'
 * tail_s (offload's host Adam step). It sees what the fill, busy and
 * drain argument cannot: a stage that waits in the steady state, for
 * transfers or for a slower stage (interleaved schedules with few
 * micro-batches), and the reductions a step ends with. Its cost grows
 * with the units (micro-batches x model chunks), a sweep's to take only
 * for plans the cheap bound could not prune; it is
 * estimate_step_lower_bound_s for schedules that pair units, and steps of
 * more than 2^20 units. */
double estimate_step_chain_bound_s(const Step *step);

#endif
