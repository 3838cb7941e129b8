/* chunks.h: how a plan's layers sit on its pipeline: the model chunks.
 *
 * The model is cut into pp x virtual_stages model chunks, numbered in
 * model order from 0, and chunk g holds the plan's layers_per_stage[g]
 * layers (an even split unless the plan gives one). Stage s runs chunks
 * s, s + pp, s + 2 pp, ...: its c-th chunk (c from 0 to virtual_stages
 * - 1) is chunk c x pp + s, Megatron-LM's interleaving; under a schedule
 * that places them in a V (base/schedules.def's SCHEDULE_V: DualPipeV's
 * two chunks a stage), chunks s and 2 pp - 1 - s, so that a micro-batch
 * goes down the stages and back up. The first chunk also holds the
 * embedding, the last the head. The one home of these facts (chunks.c);
 * the plan must be resolved (plan_spec_resolve). */
#ifndef PLANSIM_LAYOUT_CHUNKS_H
#define PLANSIM_LAYOUT_CHUNKS_H

#include "spec/plan.h"

/* The model chunks: pp x virtual_stages. */
int chunks_count(const PlanSpec *plan);

/* The model chunk that is stage `stage`'s c-th. */
int chunks_of_stage(const PlanSpec *plan, int stage, int c);

/* The stage that runs model chunk `g`. */
int chunks_stage(const PlanSpec *plan, int g);

/* Where model chunk g's output goes, chunk g + 1: 1 on the next stage
 * (the first after the last), -1 on the previous one, 0 on the same. */
int chunks_toward(const PlanSpec *plan, int g);

/* The layers of model chunk `g`. */
int chunks_layers(const PlanSpec *plan, int g);

/* The model's first layer in model chunk `g`: the layers of the chunks
 * before it. */
int chunks_first_layer(const PlanSpec *plan, int g);

/* The first layer of every model chunk, and after the last the model's
 * layer count: chunks_count + 1 of them, newly allocated (g_free). */
int *chunks_firsts(const PlanSpec *plan);

/* The model chunk holding layer `layer`. */
int chunks_of_layer(const PlanSpec *plan, int layer);

/* The layers stage `stage` holds, over its chunks. */
int chunks_stage_layers(const PlanSpec *plan, int stage);

#endif
