/* tensor_parallel.h: what the bounds (estimate.h) need to know of the
 * tensor-parallel collectives that tensor_parallel.c emits. */
#ifndef PLANSIM_STRATEGY_TENSOR_PARALLEL_H
#define PLANSIM_STRATEGY_TENSOR_PARALLEL_H

#include "cost/transformer.h"
#include "spec/model.h"
#include "spec/plan.h"

/* The bytes each of the group's collectives moves whole: b (s / c) h
 * activations, as their tensor type holds them. */
double tp_layer_bytes(const ModelSpec *model, const PlanSpec *plan);

#endif
