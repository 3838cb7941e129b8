/* pipeline.h: what the bounds (estimate.h) need to know of the transfers
 * between pipeline stages that pipeline.c emits. */
#ifndef PLANSIM_STRATEGY_PIPELINE_H
#define PLANSIM_STRATEGY_PIPELINE_H

#include "cost/transformer.h"
#include "spec/model.h"
#include "spec/plan.h"

/* The bytes one rank sends a neighbouring stage per micro-batch, forward
 * (activations) or backward (gradients): b s h elements as activations
 * hold them, over t, and over c with context parallelism (each rank sends
 * its s/c tokens), for a rank's `shard` of a micro-batch. */
double pipeline_transfer_bytes(const ModelSpec *model, const PlanSpec *plan, Shard shard);

#endif
