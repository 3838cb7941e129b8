/* strategy.h: the plug-in interface of parallelism strategies.
 *
 * A strategy is a const table of hooks, registered once in registry.c. The
 * emitter calls every active strategy's hooks, in registry order, at fixed
 * points of each rank's step (emit.h); a hook adds tasks through emit.h
 * only. A hook left NULL does nothing. Per-rank state lives in a zeroed
 * block of `state_size` bytes the emitter provides (cleared for each rank). */
#ifndef PLANSIM_STRATEGY_STRATEGY_H
#define PLANSIM_STRATEGY_STRATEGY_H

#include "strategy/emit.h"
#include "strategy/step.h"

/* The most strategies the registry may hold. */
#define STRATEGY_MAX 16

/* The least seconds a strategy's tasks add to the forward and to the
 * backward of one block (Strategy.block_bound). */
typedef struct {
    double forward_s, backward_s;
} BlockBound;

/* A plan field as a bit of a set of fields (1 << PlanField). */
#define PLAN_BIT(ID) (G_GUINT64_CONSTANT(1) << PLAN_##ID)

typedef struct {
    const char *name;
    /* Whether the plan uses this strategy. */
    gboolean (*active)(const PlanSpec *plan);
    /* Checks the plan fields the strategy owns, against the model (sizes
     * that must divide, ...), whether or not the plan uses the strategy (a
     * field may need it: sequence parallelism needs tp > 1). check_model
     * sees the fields as given, before anything is derived from them (dp
     * may be 0): what a user set wrong is named before its consequences
     * (tp 3 does not divide 32 heads, before dp = 16 / 3 leaves GPUs
     * over); check sees the resolved plan. */
    gboolean (*check_model)(const PlanSpec *plan, const ModelSpec *model, GError **error);
    gboolean (*check)(const PlanSpec *plan, const ModelSpec *model, GError **error);
    /* The plan fields each reads (PLAN_BIT), and none other: a sweep
     * holds a check at the first axis that sets them all, and keeps its
     * verdict by their values (app/space.c), so a check of a strategy is
     * a rule of the sweep's space without a word elsewhere. A check that
     * reads global_batch_size passes while the batch is unresolved (0). */
    guint64 check_model_reads, check_reads;
    /* The most tasks the strategy adds per piece of a step (its
     * collectives, replays, gathers), for the room the emitter reserves
     * before building the step; NULL: none. */
    int (*piece_tasks)(const PlanSpec *plan);
    gsize state_size;
    /* The streams it uses that not every graph has (bits 1 << Stream of
     * streams.def's rows): a graph has the streams up to the highest one.
     * step_streams, where set, says it for the step instead: a stream that
     * only some of the strategy's plans use, which the others' graphs (and
     * traces) then go without. */
    unsigned streams;
    unsigned (*step_streams)(const Step *step);
    /* Changes the plan's rule of its model states (StatesRule, step.h) in
     * what the strategy owns: how a kind is split, or that it is not on
     * the GPU; the emitter allocates them by the rule, and the bounds and
     * the checkpoint size them by it. */
    void (*states)(const PlanSpec *plan, StatesRule *rule);
    /* Before anything of the rank's step: say what its forward pieces
     * keep (emit_keep_activations). */
    void (*step_begin)(Emit *e, void *state);
    /* The order of the rank's units (appends Unit to `units`). The first
     * active strategy that has this hook decides the order. */
    void (*schedule)(Emit *e, GArray *units);
    /* Around each unit; `last` is its last task on the compute stream
     * (a compute task, or a collective that ends it). */
    void (*unit_begin)(Emit *e, void *state, const Unit *u);
    void (*unit_end)(Emit *e, void *state, const Unit *u, TaskId last);
    /* Around each segment of a unit; `last` is the segment's last compute
     * task (on backward, the one that completes its gradients). A strategy
     * may add pieces of its own at the start of a segment (emit_piece: a
     * replay of its forward). */
    void (*segment_begin)(Emit *e, void *state, const Unit *u, const Segment *seg);
    void (*segment_end)(Emit *e, void *state, const Unit *u, const Segment *seg, TaskId last);
    /* Emits the compute of a piece that is not partial in place of the
     * emitter's one task of twice the forward's cost in backward (the
     * first active strategy that has it decides): its parts on the compute
     * stream (emit_compute, each with `tag` and `name`), the strategy's
     * own tasks between them. Sets *first to the first part and returns
     * the last. */
    TaskId (*piece_compute)(Emit *e, void *state, const PieceRef *p, TaskTag tag, TaskName name,
                            TaskId *first);
    /* Around each piece's compute (`task`: its last task), for the pieces
     * whose phase makes one of `piece_passes` (Pass bits; 0: every piece):
     * a strategy whose tasks belong to the forward and the input gradients
     * (a B under a zero-bubble schedule), not to the weight gradients (a
     * W), says so here, once. */
    unsigned piece_passes;
    void (*piece_begin)(Emit *e, void *state, const PieceRef *p);
    void (*piece_end)(Emit *e, void *state, const PieceRef *p, TaskId task);
    /* After the last unit, before the optimizer step (which waits for the
     * rank's communication stream). */
    void (*step_end)(Emit *e, void *state);
    /* After the optimizer step (`optimizer`); the step ends when the
     * communication stream is done too. */
    void (*after_optimizer)(Emit *e, void *state, TaskId optimizer);
    /* Sets the fields the strategy owns whose value changes nothing in the
     * replay of `plan` to the value they behave as (strategy_normalize). */
    void (*normalize)(PlanSpec *plan, const ModelSpec *model);
    /* What to try when the communication of `tag`, one of the strategy's
     * own purposes, is the most exposed of `plan`'s on `cluster`, as
     * flags where one helps ("--tp-comm-overlap"; newly allocated), or
     * NULL for a tag not its own (strategy_comm_advice). */
    char *(*comm_advice)(TaskTag tag, const PlanSpec *plan, const ClusterSpec *cluster);
    /* Its part in the lower bounds of a step (estimate.h), each NULL for
     * none, of an active strategy's: each counts only tasks it surely
     * emits, each for no more than it surely takes, so that the bounds
     * stay admissible.
     *   - block_bound: the least seconds its tasks add on the compute
     *     stream to the forward and to the backward (a full
     *     recomputation's replay included) of one block of kind `block`,
     *     whose forward operations are `ops` (tensor parallelism's waits
     *     for its collectives, expert parallelism's token exchanges);
     *   - segment_comm_bytes: adds the bytes its collectives over the
     *     rank's data-parallel groups move in a step for segment `seg`,
     *     on the communication stream, to bytes[0] (over dp x cp) and
     *     bytes[1] (the routed experts', over expert data parallel), of
     *     collectives that load the links only (netbound_loaded_bytes);
     *   - stream_bound_s: the least seconds its own stream is busy in a
     *     step on a rank of stage `stage`;
     *   - prefetch_s: the least seconds of a transfer that layer
     *     `layer`'s backward waits for, started once the compute before
     *     the next layer's backward ended, both of one model chunk
     *     (offload's copy of the layer's activations up);
     *   - released_bytes: of what a micro-batch's forward of model chunk
     *     `chunk` keeps for its backward, the bytes that leave the GPU as
     *     soon as they may (offload's copies down);
     *   - segment_reduce_bytes: adds, as segment_comm_bytes does, the
     *     bytes of its collectives for segment `seg` that the step's last
     *     micro-batch launches on the communication stream, each once that
     *     micro-batch's backward produced what it moves, and that the
     *     stage's optimizer step waits for (data parallelism's reductions);
     *   - tail_s: the least seconds its tasks take between the stage's
     *     last unit and its optimizer step, which waits for them, begun
     *     no sooner than that unit's compute and the stage's last
     *     reduction ended (offload's host Adam step and the parameters'
     *     copy up). */
    BlockBound (*block_bound)(const Step *step, Block block, const OpList *ops);
    void (*segment_comm_bytes)(const PlanSpec *plan, const Segment *seg, double bytes[2]);
    double (*stream_bound_s)(const Step *step, int stage);
    double (*prefetch_s)(const Step *step, int layer);
    double (*released_bytes)(const Step *step, int chunk);
    void (*segment_reduce_bytes)(const PlanSpec *plan, const Segment *seg, double bytes[2]);
    double (*tail_s)(const Step *step, int stage);
} Strategy;

/* The registered strategies, NULL-terminated. */
extern const Strategy *const strategy_registry[];

/* Fails (PS_ERROR_INPUT) when a strategy's check of the plan (resolved)
 * against the model fails, in registry order, or when the step is too big
 * to build (emit_check_size under EMIT_MAX_TASKS). */
gboolean strategy_check(const PlanSpec *plan, const ModelSpec *model, GError **error);

/* What to try when the communication of `tag` is the most exposed of
 * `plan`'s on `cluster`: the owning strategy's comm_advice, fitting this
 * plan (no --tp-comm-overlap without sequence parallelism, no "keep tp
 * within a node" when it is); NULL when none has any. Newly allocated. */
char *strategy_comm_advice(TaskTag tag, const PlanSpec *plan, const ClusterSpec *cluster);

/* The rule of `plan`'s model states: states_rule's, changed by each
 * active strategy's `states` hook in registry order. */
StatesRule strategy_states_rule(const PlanSpec *plan);

/* The step of a plan resolved by strategy_resolve (step.h). */
Step step_of(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan);

/* Resolves `plan` against the model and cluster as plan_spec_resolve does,
 * after every strategy's check_model of its fields as given, then checks
 * it (strategy_check): the one way from plan fields to a plan to run. */
gboolean strategy_resolve(PlanSpec *plan, const ModelSpec *model, const ClusterSpec *cluster,
                          GError **error);

/* Rewrites `plan` into its normal form: each strategy's fields that change
 * nothing in its replay set to the value they behave as (selective
 * recomputation under FlashAttention is none, say). Two plans with the same
 * normal form emit the same tasks, so their reports differ only in the
 * plan fields they print. */
void strategy_normalize(PlanSpec *plan, const ModelSpec *model);

/* The normal form of `plan` as a key (plan_spec_key): two plans of equal
 * keys emit the same tasks (twins). Newly allocated. */
char *strategy_normal_form(const PlanSpec *plan, const ModelSpec *model);

/* The strategies (one file each). */
#define STRATEGY(name) extern const Strategy strategy_##name;
#include "strategy/strategies.def"
#undef STRATEGY

#endif
