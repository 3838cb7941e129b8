/* emit.h: the emitter, which writes every rank's program for one step.
 *
 * For each rank the emitter walks the step: persistent memory at its start,
 * the units (a micro-batch's forward or backward through one model chunk)
 * in the order a schedule gives, the optimizer step, the end of the step.
 * The model is cut into pp x virtual_stages chunks of consecutive layers;
 * chunk c of pipeline stage s is chunk c pp + s of the model, the first
 * also holding the embedding and the last the head. A unit walks its
 * chunk's segments (the embedding, each layer, the head), forward in order
 * and backward in reverse; a segment is one or more pieces, each one
 * compute task (the embedding; a layer's attention block and MLP block;
 * the head). The active strategy modules (strategy.h) are called at the
 * start and end of every unit, segment and piece, and add their own tasks
 * there: the pipeline its sends and receives around each unit, tensor
 * parallelism each block's compute, cut at its collectives, data parallelism its
 * gradient reduction after each backward segment, ZeRO-3 its parameter
 * gathers before each segment, recomputation its replay before a layer's
 * backward. Modules use only the functions below; none touches the graph or
 * another module directly. */
#ifndef PLANSIM_STRATEGY_EMIT_H
#define PLANSIM_STRATEGY_EMIT_H

#include <glib.h>

#include "core/graph.h"
#include "layout/layout.h"
#include "net/symmetry.h"
#include "cost/transformer.h"
#include "spec/model.h"
#include "spec/gpu.h"
#include "spec/cluster.h"
#include "spec/plan.h"
#include "strategy/schedule.h"
#include "strategy/step.h"
#include "strategy/unit.h"

/* A rank's streams (streams.def). */
typedef enum {
#define STREAM(ID, name, always) STREAM_##ID,
#include "strategy/streams.def"
#undef STREAM
    EMIT_STREAMS
} Stream;

/* Pipeline directions: toward the next stage or the previous one; stages
 * wrap around for interleaving. Activations go toward the next and
 * gradients toward the previous, but in a V (layout/chunks.h) the second
 * chunk's go the other way. */
typedef enum { TOWARD_NEXT, TOWARD_PREV, DIRECTIONS } Direction;

/* What a pipeline transfer carries: each flow toward each neighbour is
 * matched send for receive in its own program order. */
typedef enum { FLOW_ACTIVATIONS, FLOW_GRADIENTS, FLOWS } Flow;

/* What a task is, for the metrics: compute phases, then the purpose of a
 * collective (tags.def). */
typedef enum {
#define TAG(ID, purpose) TAG_##ID,
#include "strategy/tags.def"
#undef TAG
    TAG_KINDS
} TaskTag;

/* The embedding, a transformer layer, a multi-token-prediction module's
 * own operations (before its layer: transformer_mtp_ops), the head. */
typedef enum { SEGMENT_EMBEDDING, SEGMENT_LAYER, SEGMENT_MTP, SEGMENT_HEAD } SegmentKind;

/* A part of the model with parameters of its own: the unit in which
 * backward produces gradients, ZeRO-3 gathers parameters and recomputation
 * replays a forward. */
typedef struct {
    SegmentKind kind;
    int layer;     /* SEGMENT_LAYER: 0-based, an MTP layer's from the model's layers
                    * on; SEGMENT_MTP: its layer's; otherwise -1 */
    double params; /* parameters this rank holds for it */
    double uses;   /* parameters its compute needs whole: `params`, and for
                    * the head of a tied model also the word embedding */
    double expert_params; /* of `params`, a MoE layer's routed experts' with
                           * ep > 1, which differ across the expert-parallel
                           * group: their gradients reduce, and ZeRO shards
                           * their states, over the expert-data-parallel one
                           * (states_layer_expert_params); 0 otherwise */
} Segment;

/* One compute task of a segment, as the piece hooks see it. */
typedef struct {
    const Segment *segment;
    Block block; /* SEGMENT_LAYER: which block */
    Phase phase;
    int micro_batch;
    gboolean partial; /* the task redoes part of the block only (a partial
                       * replay): the block's collectives are not in it */
} PieceRef;

/* Whether piece `p` runs backward through its operations: its phase makes
 * the input gradients (a whole backward, or B). */
gboolean emit_piece_backward(const PieceRef *p);

typedef struct Emit Emit;

/* The step's inputs, as a module sees them. */
const ModelSpec *emit_model(const Emit *e);
const PlanSpec *emit_plan(const Emit *e);
const GpuSpec *emit_gpu(const Emit *e);
const ClusterSpec *emit_cluster(const Emit *e);
const Layout *emit_layout(const Emit *e);
int emit_micro_batches(const Emit *e);
/* How the step holds its model states (Step.states). */
const StatesRule *emit_states(const Emit *e);

/* What one GPU computes of a micro-batch (transformer.h): the plan's
 * micro-batch size, tensor parallelism and sequence parallelism. */
Shard emit_shard(const Emit *e);

/* The rank being emitted (its number in the plan), and its pipeline
 * stage (0 .. pp - 1). */
int emit_rank(const Emit *e);
int emit_stage(const Emit *e);

/* The model chunk unit `u` runs, numbered over the whole model
 * (0 .. pp x virtual_stages - 1): chunk u->chunk x pp + stage. */
int emit_model_chunk(const Emit *e, const Unit *u);

/* Parameters the rank holds, all segments together; and of them those on
 * the expert-data-parallel group (Segment.expert_params). */
double emit_params(const Emit *e);
double emit_expert_params(const Emit *e);
/* Of the rank's parameters, its transformer layers' (SEGMENT_LAYER). */
double emit_layer_params(const Emit *e);

/* The segment after `seg` in unit `u`'s walk (backward walks in reverse),
 * or NULL when `seg` is the last. */
const Segment *emit_segment_next(const Emit *e, const Unit *u, const Segment *seg);

/* Sets what the forward of layer block `block` keeps for its backward,
 * `kept` bytes of activations, and what work before that backward (a
 * replay) re-creates, `recreated` bytes; the backward frees both. In a
 * strategy's step_begin; for the rank being emitted. Unset, a block keeps
 * everything its backward needs and nothing is re-created. */
void emit_keep_activations(Emit *e, Block block, double kept, double recreated);

/* Adds a compute task of the strategy's own for piece `p` (its phase, its
 * micro-batch), as the emitter does for forward and backward pieces: the
 * active strategies' piece hooks around it, `activation_bytes` of
 * activations allocated when it starts. */
TaskId emit_piece(Emit *e, const PieceRef *p, double seconds, double flops, TaskTag tag,
                  TaskName name, double activation_bytes);

/* Appends a compute task to the rank's compute stream. It also waits for
 * every task passed to emit_gate since the last task on that stream. */
TaskId emit_compute(Emit *e, double seconds, double flops, TaskTag tag, TaskName name);

/* Appends a task of `seconds` to the rank's `stream` (not the compute
 * stream): work off the GPU, as a data loader's read, that interference
 * does not slow and that waits only for the task before it there. */
TaskId emit_background(Emit *e, Stream stream, double seconds, TaskTag tag, TaskName name);

/* Appends to the rank's `stream` (not the compute stream) a copy of
 * `bytes` between its GPU and its host, up (to the GPU) or down, that the
 * network moves over the host path (net/topology.h), sharing its links
 * with the other copies and the traffic that crosses them; it waits only
 * for the task before it there, and interference does not count it. */
TaskId emit_copy(Emit *e, Stream stream, double bytes, gboolean up, TaskTag tag, TaskName name);

/* The next task on the compute stream (a compute task or a collective)
 * will also wait for `before` (TASK_NONE: no-op). */
void emit_gate(Emit *e, TaskId before);

/* The last compute-stream task of the unit being walked (TASK_NONE if
 * none yet): the compute stream's last, but in a pair of the combined
 * 1F1B overlap (emit_paired), where it is the last of the pair's unit
 * whose piece is being walked. */
TaskId emit_unit_last(const Emit *e);

/* Whether the unit being walked walks in a pair of the combined 1F1B
 * overlap (plan field overlap_moe_expert_parallel_comm): a forward and a
 * backward of other micro-batches together, a piece of one, then a piece
 * of the other, each with its own gates (emit_gate) and last task. */
gboolean emit_paired(const Emit *e);

/* The rank joins its next collective over its group of `kind`, on `stream`.
 * A group of one rank communicates nothing: TASK_NONE, no task. */
TaskId emit_collective(Emit *e, GroupKind kind, Stream stream, CollOp op, double bytes, TaskTag tag,
                       TaskName name);

/* The rank joins its next collective over its group of `kind` on `stream`
 * (not the compute stream), beside the compute: it starts once what the
 * next compute task waits for has ended (the unit's last compute-stream
 * task, emit_unit_last, in a pair the last task of its last whole piece,
 * and the tasks passed to emit_gate since, which stay pending for it). A
 * group of one rank: TASK_NONE, no task. */
TaskId emit_collective_beside(Emit *e, GroupKind kind, Stream stream, CollOp op, double bytes,
                              TaskTag tag, TaskName name);

/* Sends `bytes` of flow `f` to the neighbouring stage in direction `d`, on
 * the rank's pipeline stream, once `after` has ended: the k-th send of a
 * flow toward a stage is that stage's k-th receive of it from this one. */
TaskId emit_send(Emit *e, Direction d, Flow f, double bytes, TaskId after, TaskName name);

/* This rank's next receive of flow `f` that its neighbour sends in
 * direction `d` (from the previous stage for TOWARD_NEXT): the transfer
 * task, for emit_gate. `bytes` and `name` as the sender gives them. */
TaskId emit_recv(Emit *e, Direction d, Flow f, double bytes, TaskName name);

/* The rank, on the first pipeline stage or on stage `other` (> 0), joins
 * its next collective with its peer on the other (same tp and dp
 * coordinates): the two stages that hold the word embedding (a tied one's
 * last stage, or the MTP layers': states_embedding_copy_stage). */
TaskId emit_ends_collective(Emit *e, int other, Stream stream, CollOp op, double bytes,
                            TaskTag tag, TaskName name);

/* `after` also waits for `before`; either may be TASK_NONE (no-op). */
void emit_wait(Emit *e, TaskId before, TaskId after);

/* The last task on the rank's stream so far (TASK_NONE if none). */
TaskId emit_last(const Emit *e, Stream stream);

/* Allocates (bytes > 0) or frees (< 0) memory of `kind` on the rank when
 * `task` starts or ends. */
void emit_mem(Emit *e, TaskId task, MemKind kind, double bytes, gboolean at_end);

/* ---- driving the emitter (app/) --------------------------------------- */

/* The most tasks a step may have, the cap plansim gives emit_step; a
 * bigger step is refused as bad input. */
#define EMIT_MAX_TASKS 50000000

/* The address space a step's graph and its replay map at their peak, per
 * task of the room reserved (measured: 118 bytes a task, 5.6 GB, for
 * GPT-3 175B's 47,579,236 tasks on one rank, counted and reserved to the
 * task; 2.7 GB for 15,860,006 events' step reserved by its estimate):
 * what emit_step asks the system for before building (bigmem_check), so
 * that a step the machine cannot hold, under a limit such as ulimit -v,
 * is refused, not aborted. */
#define EMIT_BYTES_PER_TASK 120

/* What-ifs on compute (app/whatif.h). Every compute task of rank r takes
 * gpu_factor[r] times its cost (a throttled GPU), times exp(sigma Z -
 * sigma^2 / 2) with jitter: Z standard normal, drawn from (seed, r, the
 * task's number among r's compute tasks) alone by a counter-based hash,
 * so the same whichever ranks are emitted and however the replay runs;
 * the noise's mean is 1. */
typedef struct {
    const double *gpu_factor; /* per rank; NULL: all 1 */
    double jitter_sigma;      /* 0: no noise */
    guint64 seed;
} EmitSlowdown;

/* Builds the graph of one step: the programs of the ranks `symmetry`
 * simulates (graph rank i runs on GPU symmetry_simulated[i]), every module,
 * compute slowed by `slow` (NULL: not at all; a slowed rank stands for
 * itself alone: without a symmetry, or in cells around it,
 * symmetry_new_cells; noise only without). With `fold` (NULL: none; from
 * schedule_fold for this step's plan and micro-batches, no noise) it is
 * built short (core/graph.h): the step of fold's micro-batches, each
 * task of a unit in its unit's period, the tasks before the units before
 * the periods and those after them after; the size checks are then that
 * step's. The plan must be resolved and
 * supported (strategy_check). Fails (PS_ERROR_INPUT) for a step of more
 * than `max_tasks` tasks, before building anything: at once when a lower
 * bound of its size is already more (emit_check_size's, or `known_tasks`
 * when that is more: a bound the caller knows, 0 for none;
 * emit_tasks_under); else, when its estimate is over the cap, after
 * counting it (emit_count_tasks), which also sizes the graph exactly; a
 * step the estimate missed is refused as soon as the graph passes the cap
 * (then PS_ERROR_OVER_CAP: the same error, after work). Also fails
 * (PS_ERROR_INPUT) before building when the system would not map the
 * step's EMIT_BYTES_PER_TASK a task. */
Graph *emit_step(const Step *step, const Layout *layout, const Symmetry *symmetry,
                 const EmitSlowdown *slow, const StepFold *fold, gsize max_tasks,
                 double known_tasks, GError **error);

/* Refuses (PS_ERROR_INPUT, FALSE) a step of `plan` whose ranks simulated
 * (`ranks`; at least plan->pp, as many on each stage) cannot fit in
 * `max_tasks` tasks: each runs its markers and optimizer step, and per
 * micro-batch and chunk a forward and a backward (a B and a W when split)
 * of each layer block of its stage, and the forward of its embedding or
 * head, a task each at least; and the step has at least `known_tasks` (0:
 * none known). O(1), before anything is built (emit_step's own check). */
gboolean emit_check_size(const ModelSpec *model, const PlanSpec *plan, int ranks,
                         double known_tasks, gsize max_tasks, GError **error);

/* The fewest tasks a step of `plan` over `ranks` simulated ranks can
 * have, ranks / pp on each stage (the symmetry shifts no stage), each
 * running its two markers and its optimizer step, and for each
 * micro-batch and model chunk of its stage a forward and a backward, or a
 * B and a W: the forward of the embedding and of the head, and every pass
 * of each of TRANSFORMER_BLOCKS blocks a layer (the MTP layers too), at
 * least one compute task each
 * (each has operations in every pass: GEMMs; a piece_compute may cut it,
 * never drop it); and per micro-batch, between each two consecutive model
 * chunks of the pp x virtual_stages, a transfer of activations forward
 * and one of gradients backward (pipeline.c; a task of two ranks of the
 * same stage set: the symmetry shifts no stage). O(1): emit_check_size's
 * bound. */
double emit_tasks_at_least(const ModelSpec *model, const PlanSpec *plan, int ranks);

/* The tasks emit_step builds for the step, to the task: the same walk,
 * counting what it would add to the graph instead of adding it; or more
 * than `max_tasks`, once the count passes it (the walk stops there). Time
 * linear in the tasks, memory in the ranks and groups (tests hold it to
 * the graphs built). */
gsize emit_count_tasks(const Step *step, const Layout *layout, const Symmetry *symmetry,
                       const EmitSlowdown *slow, gsize max_tasks);

/* A lower bound of the tasks of the step built under `sym`, from `built`,
 * the same step built under `built_sym`, whose shifts include sym's (its
 * orbits are unions of sym's); for emit_step's known_tasks. Every rank of
 * an orbit runs the same program, so:
 *   - each simulated rank's own tasks (graph_rank_tasks) stand for its
 *     orbit's, and the ranks of a built_sym orbit are orbit(built_sym) /
 *     orbit(sym) simulated ranks under sym;
 *   - a group's collectives stand for those of each of its images under
 *     built_sym's shifts; sym's shifts map those images onto one another
 *     images(built_sym) / images(sym) orbits of groups, and each such
 *     orbit has a group with a simulated rank, built with its
 *     collectives. */
double emit_tasks_under(const Graph *built, const Symmetry *built_sym, const Symmetry *sym);

/* "params", "grads", ... for reports. */
const char *emit_mem_name(MemKind kind);

/* A stream's name (streams.def): "compute", "comm", "p2p", ... */
const char *emit_stream_name(Stream stream);

/* A collective's purpose (tags.def): "tp", "dp", ...; NULL for the tags
 * of other tasks. */
const char *emit_comm_name(TaskTag tag);

#endif
