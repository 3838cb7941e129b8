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

/* How many tensor-parallel collectives the forward of a piece of
 * operations `ops` waits for, its compute stopped: the sum of the
 * row-parallel output (an all-reduce, or a reduce-scatter with sequence
 * parallelism), and with sequence parallelism the all-gather of the
 * column-parallel GEMM's input; each moves tp_layer_bytes. 0 with tp 1, or
 * with tp_comm_overlap, whose collectives run beside the GEMM's parts. */
int tp_forward_waits(const PlanSpec *plan, const OpList *ops);

#endif
