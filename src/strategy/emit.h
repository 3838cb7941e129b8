/* emit.h: the emitter, which writes every rank's program for one step.
 *
 * For each rank the emitter walks the step: persistent memory at its start,
 * the units (a micro-batch's forward or backward) in the order a schedule
 * gives, then the optimizer. It emits the transformer's own work (embedding,
 * each layer's attention and MLP blocks, head) and calls the active strategy
 * modules (strategy.h) at fixed points so that each adds its own tasks:
 * data parallelism reduces gradients as backward produces them, for
 * example. Modules use only the functions below; none touches the graph or
 * another module directly. */
#ifndef PLANSIM_STRATEGY_EMIT_H
#define PLANSIM_STRATEGY_EMIT_H

#include <glib.h>

#include "core/graph.h"
#include "layout/layout.h"
#include "model/transformer.h"
#include "spec/spec.h"

typedef enum { STREAM_COMPUTE, STREAM_COMM, EMIT_STREAMS } Stream;

typedef enum {
    MEM_PARAMS,
    MEM_GRADS,
    MEM_OPTIMIZER,
    MEM_ACTIVATIONS,
    MEM_BUFFERS,
    MEM_KINDS
} MemKind;

/* What a task is, for the metrics: compute phases, then the purpose of a
 * collective (the group kind it reduces over). */
typedef enum {
    TAG_FORWARD,
    TAG_BACKWARD,
    TAG_RECOMPUTE,
    TAG_OPTIMIZER,
    TAG_MARKER,
    TAG_TP,
    TAG_DP,
    TAG_PP,
    TAG_ZERO,
    TAG_KINDS
} TaskTag;

typedef struct {
    int micro_batch;  /* 0-based, within the step */
    gboolean forward; /* else backward */
} Unit;

typedef struct Emit Emit;

/* The step's inputs, as a module sees them. */
const ModelSpec *emit_model(const Emit *e);
const PlanSpec *emit_plan(const Emit *e);
int emit_micro_batches(const Emit *e);

/* The rank being emitted. */
int emit_rank(const Emit *e);

/* Parameters the rank holds (all of the model without model parallelism). */
double emit_params(const Emit *e);

/* Splits one kind of model state (MEM_PARAMS, MEM_GRADS or MEM_OPTIMIZER)
 * `ways` ways, in a strategy's step_begin (ZeRO does). Unsplit, a rank
 * keeps 2, 2 and 12 bytes per held parameter (bf16 parameters and
 * gradients; Adam's fp32 master weights, momentum and variance), and its
 * optimizer steps params / ways[MEM_OPTIMIZER] parameters. */
void emit_shard_state(Emit *e, MemKind kind, int ways);

/* Appends a compute task to the rank's compute stream. */
TaskId emit_compute(Emit *e, double seconds, double flops, TaskTag tag, TaskName name);

/* The rank joins its next collective over its group of `kind`, on `stream`.
 * A group of one rank communicates nothing: TASK_NONE, no task. */
TaskId emit_collective(Emit *e, GroupKind kind, Stream stream, CollOp op, double bytes,
                       TaskTag tag, TaskName name);

/* `after` also waits for `before`; either may be TASK_NONE (no-op). */
void emit_wait(Emit *e, TaskId before, TaskId after);

/* The last task on the rank's stream so far (TASK_NONE if none). */
TaskId emit_last(const Emit *e, Stream stream);

/* Allocates (bytes > 0) or frees (< 0) memory of `kind` on the rank when
 * `task` starts or ends. */
void emit_mem(Emit *e, TaskId task, MemKind kind, double bytes, gboolean at_end);

/* ---- driving the emitter (sim/) --------------------------------------- */

/* The most tasks a step may have; a bigger one is refused as bad input. */
#define EMIT_MAX_TASKS 50000000

/* Builds the graph of one step: every rank, every module. The plan must be
 * resolved and supported (strategy_check). Fails (PS_ERROR_INPUT) for a
 * step of more than EMIT_MAX_TASKS tasks. */
Graph *emit_step(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                 const Layout *layout, GError **error);

/* "params", "grads", ... for reports. */
const char *emit_mem_name(MemKind kind);

#endif
