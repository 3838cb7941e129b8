/* tensor_parallel.c: Megatron-LM tensor parallelism, with or without
 * sequence parallelism (Shoeybi et al. 2019; Korthikanti et al. 2022), and
 * with or without Transformer Engine's overlap of its collectives with the
 * GEMMs (`tp_comm_overlap`, Megatron-LM's --tp-comm-overlap).
 *
 * Each GPU of a group of t computes 1/t of every GEMM (QKV and MLP up by
 * column, projection and MLP down by row) and holds 1/t of the weights;
 * the embedding and the logits are split by vocabulary (transformer.c has
 * the shares). The module emits the compute of every whole piece itself,
 * split at the tensor-parallel operations, its collectives between the
 * parts on the rank's tp stream, each of b s h bf16 elements over the t
 * ranks (latent attention's gather before its up-projections, and the sum
 * of their input gradients, of its latents: column_width) (docs/model.md,
 * "Strategies"):
 *   - forward: the column-parallel GEMM's input is all-gathered before it
 *     (sequence parallelism), the row-parallel GEMM's output (the
 *     embedding lookup's) summed after it: all-reduced, or reduce-scattered
 *     with sequence parallelism; the compute waits for both;
 *   - backward: the mirror all-gather of the output gradient before the
 *     row-parallel GEMM's backward (sequence parallelism); then, as
 *     Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication does
 *     for the column-parallel GEMM, the all-gather of its sharded input
 *     again (sequence parallelism) runs while its input gradient computes,
 *     and the sum of that gradient (all-reduce, or reduce-scatter) while
 *     its weight gradient computes; what comes before the GEMM (the norm)
 *     waits for the sum;
 *   - with tp_comm_overlap the forward's all-gather runs in t - 1 steps
 *     beside the column GEMM cut in t parts (Transformer Engine's ring
 *     exchange: the part of the local shard first, part i once step i has
 *     brought its rows), its reduce-scatter in TP_OVERLAP_SPLITS pieces
 *     each after its part of the row GEMM (TE's pipelined overlap), and
 *     backward's all-gather of the output gradient in steps beside the row
 *     GEMM's input gradient; the GPU's comm_compute_interference slows the
 *     parts that run beside a collective (engine.c).
 * So per layer per micro-batch: 4 all-reduces without sequence
 * parallelism, 4 reduce-scatters and 6 all-gathers with it; a full
 * recomputation's replay is a forward, with its collectives.
 *
 * Under a zero-bubble schedule a backward is B, the input gradients, or W,
 * the weight gradients, each span's share of it as unit_work has it.
 * The backward's collectives belong to B, but the all-gather of the column
 * GEMM's sharded input again (sequence parallelism), which only its weight
 * gradient needs and W runs. */
#include "strategy/tensor_parallel.h"

#include <string.h>

#include "strategy/schedule.h"
#include "strategy/states.h"
#include "net/netbound.h"
#include "strategy/strategy.h"

#include "base/error.h"

/* Transformer Engine's pipelined GEMM + reduce-scatter overlap cuts both
 * in 4 (num_splits of its default userbuffers configuration for
 * proj_fprop and fc2_fprop, transformer_engine/pytorch/module/base.py,
 * initialize_ub). */
#define TP_OVERLAP_SPLITS 4

/* The spans of a piece's forward operations around its tensor-parallel
 * operations: before the column-parallel GEMM, the GEMM, between it and
 * the operation whose output the group sums, that operation, after it. */
typedef enum { SPAN_PRE, SPAN_COLUMN, SPAN_MIDDLE, SPAN_ROW, SPAN_POST, SPANS } SpanKind;

typedef struct {
    OpsWork work; /* forward, and its backward's weight gradients */
    int ops;
    Dtype gemm_dtype; /* its GEMM's inputs' (bf16 without one) */
    double width;     /* the elements a token its collectives move, over h: the
                       * column span's, its GEMMs' inputs' (column_width); 1 else */
} Span;

/* One kind of piece (the embedding, the head, an MTP module's own
 * operations, a layer's attention or MLP block), cut into spans. An MTP
 * module's projection is column-parallel; the all-gather of its output
 * (gather_from_tensor_model_parallel_region, b s h bf16) is left out. */
typedef struct {
    Span span[SPANS];
    gboolean row_gemm; /* the summed output is a GEMM's (not the lookup's) */
} PieceSpans;

enum { KIND_EMBEDDING, KIND_HEAD, KIND_MTP, KIND_BLOCK, KINDS = KIND_BLOCK + TRANSFORMER_BLOCK_KINDS };

typedef struct {
    PieceSpans kind[KINDS];
    double layer_bytes; /* b (s/c) h in bf16, what the group's collectives move whole */
} TpState;

/* The column-parallel GEMMs (Megatron-LM's ColumnParallelLinear; latent
 * attention's up-projections, consecutive) and the operations whose output
 * the group sums (RowParallelLinear, and VocabParallelEmbedding's lookup),
 * by transformer.c's names. */
static const char *const column_ops[] = {"qkv",  "mlp_up", "logits", "mtp_logits", "q_up",
                                         "q_proj", "kv_up", "eh_proj", "in_proj"};
static const char *const summed_ops[] = {"out_proj", "mlp_down", "embedding"};

static gboolean named(const Op *op, const char *const *names, gsize n)
{
    for (gsize i = 0; i < n; i++)
        if (strcmp(op->name, names[i]) == 0)
            return TRUE;
    return FALSE;
}

/* Whether `ops` has an operation of `names` (n of them). */
static gboolean has_named(const OpList *ops, const char *const *names, gsize n)
{
    for (int i = 0; i < ops->n; i++)
        if (named(&ops->ops[i], names, n))
            return TRUE;
    return FALSE;
}

/* What a sequence-parallel all-gather of an input of GEMMs in `d` moves,
 * over bf16's bytes: Transformer Engine quantizes the GEMM's input (the
 * norm's output forward, the output gradient backward) on this GPU's rows
 * and gathers the quantized copy (module/layernorm_linear.py and
 * linear.py, gather_along_first_dim with the quantizer), q bytes an
 * element with its scales'; bf16's 2 for a bf16 GEMM (the head's logits). */
static double gathered_share(Dtype d)
{
    return (dtype_bytes(d) + dtype_scale_bytes(d)) / dtype_bytes(DTYPE_BF16);
}

/* What a token's inputs of the column-parallel GEMMs of `ops` hold, over
 * h (`hidden`): the all-gather before them moves these inputs (sequence
 * parallelism), and the sum of their input gradients after them; the sum
 * of their widths (Op.k, times the GEMMs of a grouped one), h for a QKV
 * or an MLP's up (1), the latents for latent attention's up-projections,
 * q_lora_rank + kv_lora_rank (Megatron-Core's MLA gathers the latents, not
 * the layer's input: its down-projections are replicated; the shared
 * rotary key's r columns, gathered apart in bf16, are left out), 2h for an
 * MTP module's projection, h more for each MTP layer's logits; 1 when
 * there is none. */
static double column_width(const OpList *ops, double hidden)
{
    double k = 0;
    for (int i = 0; i < ops->n; i++)
        if (named(&ops->ops[i], column_ops, G_N_ELEMENTS(column_ops)))
            k += ops->ops[i].k * ops->ops[i].batch;
    return k > 0 ? k / hidden : 1;
}

/* The shares of tp_layer_bytes the tensor-parallel collectives that the
 * forward of a piece of operations `ops` waits for move, its compute
 * stopped, into `shares`; returns how many: the sum of the row-parallel
 * output (an all-reduce, or a reduce-scatter with sequence parallelism),
 * whole, and with sequence parallelism the all-gather of the
 * column-parallel GEMMs' inputs, at their quantized bytes (gathered_share)
 * and width (column_width). None with tp 1, or with tp_comm_overlap,
 * whose collectives run beside the GEMM's parts. */
static int forward_waits(const PlanSpec *plan, const OpList *ops, double hidden, double shares[2])
{
    int n = 0;
    if (plan->tp == 1 || plan->tp_comm_overlap)
        return 0;
    if (has_named(ops, summed_ops, G_N_ELEMENTS(summed_ops)))
        shares[n++] = 1;
    for (int i = 0; plan->sequence_parallel && i < ops->n; i++)
        if (named(&ops->ops[i], column_ops, G_N_ELEMENTS(column_ops))) {
            shares[n++] = gathered_share(ops->ops[i].dtype) * column_width(ops, hidden);
            break;
        }
    return n;
}

double tp_layer_bytes(const ModelSpec *model, const PlanSpec *plan)
{
    return states_tensor_bytes(plan, TENSOR_ACTIVATION) *
           transformer_tokens(model, transformer_shard(plan)) * model->hidden_size;
}

static gboolean active(const PlanSpec *plan)
{
    return plan->tp > 1;
}

/* Tasks beyond the piece's one: a backward with sequence parallelism has 5
 * parts and 3 collectives; with overlap a forward has t parts and t - 1
 * steps of its gather, TP_OVERLAP_SPLITS parts and scatters, 2 spans
 * besides (the most: a backward has fewer). */
static int piece_tasks(const PlanSpec *plan)
{
    return plan->tp_comm_overlap ? 2 * plan->tp + 2 * TP_OVERLAP_SPLITS : 7;
}

/* Refuses a tp that does not divide `size`, `what` of the model, naming
 * `rule`: why Megatron-Core splits it over the tensor-parallel group. */
static gboolean divides(const PlanSpec *plan, int size, const char *what, const char *rule,
                        GError **error)
{
    if (size % plan->tp == 0)
        return TRUE;
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected a divisor of %s = %d (%s), got %d",
                plan_field_origin(plan, PLAN_TP), what, size, rule, plan->tp);
    return FALSE;
}

/* Megatron-Core's attention splits heads and query groups alike
 * (megatron/core/transformer/attention.py: num_attention_heads_per_partition
 * and num_query_groups_per_partition, each a divide() that asserts), and
 * its MLP the FFN's columns: tp divides all three; and its Mamba mixer
 * its heads and its groups (ssm/mamba_mixer.py: nheads_local_tp and
 * ngroups_local_tp, asserted whole). */
static gboolean check_model(const PlanSpec *plan, const ModelSpec *m, GError **error)
{
    return divides(plan, m->attention_heads, "attention_heads",
                   "Megatron-Core splits the heads over the tensor-parallel group", error) &&
           divides(plan, m->kv_heads, "kv_heads",
                   "the KV heads, Megatron-Core's query groups, are split over the "
                   "tensor-parallel group, never replicated",
                   error) &&
           divides(plan, m->ffn_hidden_size, "ffn_hidden_size",
                   "Megatron-Core splits the MLP's columns over the tensor-parallel group",
                   error) &&
           (transformer_block_layers(m, BLOCK_MAMBA) == 0 ||
            (divides(plan, m->mamba_heads, "mamba_num_heads",
                     "Megatron-Core splits the Mamba heads over the tensor-parallel group",
                     error) &&
             divides(plan, m->mamba_groups, "n_groups",
                     "Megatron-Core splits the Mamba groups over the tensor-parallel group",
                     error)));
}

static gboolean check(const PlanSpec *plan, const ModelSpec *m, GError **error)
{
    (void)m;
    if (plan->sequence_parallel && plan->tp == 1)
        return plan_field_fail(error, plan, PLAN_SEQUENCE_PARALLEL,
                               "false when tp = 1 (it splits the sequence over the "
                               "tensor-parallel group)");
    /* Megatron-LM asserts it: the overlapped collectives are the
     * all-gathers and reduce-scatters of sequence parallelism */
    if (plan->tp_comm_overlap && !plan->sequence_parallel)
        return plan_field_fail(error, plan, PLAN_TP_COMM_OVERLAP,
                               "false without sequence_parallel (Megatron-LM's "
                               "--tp-comm-overlap needs --sequence-parallel)");
    return TRUE;
}

/* Exposed tensor-parallel communication: across nodes, keep the group
 * inside one; else overlap it with its GEMMs (which needs sequence
 * parallelism); else less of it. */
static char *comm_advice(TaskTag tag, const PlanSpec *plan, const ClusterSpec *cluster)
{
    if (tag != TAG_TP)
        return NULL;
    if (plan->tp > cluster->gpus_per_node)
        return g_strdup_printf(
            "keep tp within a node (--tp %d or less: tp %d spans nodes of %d GPUs)",
            cluster->gpus_per_node, plan->tp, cluster->gpus_per_node);
    if (!plan->sequence_parallel)
        return g_strdup("sequence parallelism, its collectives overlapped with the GEMMs "
                        "(--sequence-parallel --tp-comm-overlap)");
    if (!plan->tp_comm_overlap)
        return g_strdup("overlap its collectives with the GEMMs (--tp-comm-overlap)");
    return g_strdup_printf("less tensor parallelism (--tp %d), more pipeline or data parallelism",
                           MAX(plan->tp / 2, 1));
}

/* Cuts forward operations into spans, costing each operation as the
 * emitter costs a list (transformer_ops_work); `hidden` is h. */
static PieceSpans cut(const GpuSpec *gpu, const OpList *ops, double hidden)
{
    PieceSpans p = {0};
    for (int k = 0; k < SPANS; k++)
        p.span[k].width = k == SPAN_COLUMN ? column_width(ops, hidden) : 1;
    SpanKind at = SPAN_PRE;
    for (int i = 0; i < ops->n; i++) {
        const Op *op = &ops->ops[i];
        if (named(op, column_ops, G_N_ELEMENTS(column_ops)))
            at = SPAN_COLUMN;
        else if (named(op, summed_ops, G_N_ELEMENTS(summed_ops))) {
            at = SPAN_ROW;
            p.row_gemm = op->gemm;
        } else if (at == SPAN_COLUMN || at == SPAN_ROW)
            at++;
        OpList one = {.ops = {*op}, .n = 1};
        OpsWork w = transformer_ops_work(gpu, &one), *sum = &p.span[at].work;
        if (op->gemm)
            p.span[at].gemm_dtype = op->dtype;
        sum->seconds += w.seconds;
        sum->flops += w.flops;
        sum->backward_seconds += w.backward_seconds;
        sum->backward_flops += w.backward_flops;
        sum->wgrad_seconds += w.wgrad_seconds;
        sum->wgrad_flops += w.wgrad_flops;
        p.span[at].ops++;
    }
    return p;
}

static void step_begin(Emit *e, void *state)
{
    TpState *st = state;
    const ModelSpec *m = emit_model(e);
    const GpuSpec *gpu = emit_gpu(e);
    Shard sh = emit_shard(e);
    OpList ops;
    transformer_embedding_ops(m, sh, &ops);
    st->kind[KIND_EMBEDDING] = cut(gpu, &ops, m->hidden_size);
    transformer_head_ops(m, sh, &ops);
    st->kind[KIND_HEAD] = cut(gpu, &ops, m->hidden_size);
    transformer_mtp_ops(m, sh, &ops);
    st->kind[KIND_MTP] = cut(gpu, &ops, m->hidden_size);
    int layers[TRANSFORMER_BLOCK_KINDS];
    transformer_block_counts(m, layers);
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++) {
        if (layers[b] == 0)
            continue;
        transformer_block_ops(m, (Block)b, sh, &ops);
        st->kind[KIND_BLOCK + b] = cut(gpu, &ops, m->hidden_size);
    }
    st->layer_bytes = tp_layer_bytes(m, emit_plan(e));
}

/* A piece's compute being emitted: the work not yet in a task, and the
 * tasks so far. */
typedef struct {
    Emit *e;
    const TpState *st;
    const PieceRef *p;
    const PieceSpans *k; /* the piece's spans */
    TaskTag tag;
    TaskName name;
    double seconds, flops; /* pending */
    int ops;
    int from, to;    /* the spans of the pending work (a range, in either order) */
    unsigned passes; /* and its passes (Pass bits) */
    TaskId first, last;
} Parts;

/* A part's name by the spans of its work, first to last in span order
 * (part_names[lo][hi]), in Megatron-LM's terms: a block's norm, its
 * column-parallel linear (QKV, the MLP's up), its core (attention, the
 * activation), its row-parallel linear (the output projection, the MLP's
 * down; the embedding's vocabulary-parallel lookup) and the residual. */
static const char *const part_names[SPANS][SPANS] = {
    {"norm", "norm, column-parallel", "norm to core", "norm to row-parallel", NULL},
    {NULL, "column-parallel", "column-parallel, core", "column- to row-parallel",
     "column-parallel to residual"},
    {NULL, NULL, "core", "core, row-parallel", "core to residual"},
    {NULL, NULL, NULL, "row-parallel", "row-parallel, residual"},
    {NULL, NULL, NULL, NULL, "residual"},
};
/* A span's weight gradients alone, beside the input gradients' sum. */
static const char *const weight_part_names[SPANS] = {"norm weights", "column-parallel weights",
                                                     "core weights", "row-parallel weights",
                                                     "residual weights"};

/* `share` of the span's work in `passes` (Pass bits), to the pending work;
 * none (no pass: a B's weight gradients, a W's input gradients) adds no
 * task either. */
static void add(Parts *q, const Span *s, unsigned passes, double share)
{
    if (passes == 0)
        return;
    PassWork w = unit_work(passes, &s->work, share);
    q->seconds += w.seconds;
    q->flops += w.flops;
    if (s->ops && !q->ops)
        q->from = (int)(s - q->k->span);
    if (s->ops)
        q->to = (int)(s - q->k->span);
    q->passes = q->ops ? q->passes | passes : passes;
    q->ops += s->ops;
}

/* The pending work as one compute task (none if nothing is pending). */
static void flush(Parts *q)
{
    if (q->ops == 0)
        return;
    TaskName name = q->name;
    name.part = q->passes == PASS_WEIGHT_GRAD && q->from == q->to
                    ? weight_part_names[q->from]
                    : part_names[MIN(q->from, q->to)][MAX(q->from, q->to)];
    q->last = emit_compute(q->e, q->seconds, q->flops, q->tag, name);
    if (q->first == TASK_NONE)
        q->first = q->last;
    q->seconds = q->flops = 0;
    q->ops = 0;
}

/* A collective over the tp group of `share` of b s h bf16 values (s/c
 * tokens of each sequence with context parallelism: TpState.layer_bytes),
 * on the tp stream, after the pending work (which it needs) is done; an
 * all-gather's share is of the bytes gathered_share says it moves. */
static TaskId collective(Parts *q, CollOp op, double share)
{
    static const char *const names[COLL_N_OPS] = {
        [COLL_ALL_REDUCE] = "tp all_reduce mb%d L%d",
        [COLL_ALL_GATHER] = "tp all_gather mb%d L%d",
        [COLL_REDUCE_SCATTER] = "tp reduce_scatter mb%d L%d",
    };
    double bytes = share * q->st->layer_bytes;
    if (emit_plan(q->e)->tp == 1)
        return TASK_NONE; /* a group of one: nothing to wait for */
    flush(q);
    TaskId c = emit_collective(
        q->e, GROUP_TP, STREAM_TP, op, bytes, TAG_TP,
        (TaskName){.fmt = names[op], .a = q->p->micro_batch, .b = q->p->segment->layer});
    emit_wait(q->e, q->last, c);
    return c;
}

/* The group's sum: an all-reduce, or with sequence parallelism a
 * reduce-scatter. */
static CollOp sum_op(const Emit *e)
{
    return emit_plan(e)->sequence_parallel ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
}

/* An all-gather the GEMM `s` (its work in `passes`) needs, before it: at
 * once, or with overlap as a ring exchange of t - 1 steps beside the GEMM
 * cut in t parts, part 0 on the local shard, part i after step i. */
static void gather_into(Parts *q, const Span *s, unsigned passes, gboolean overlap)
{
    int t = emit_plan(q->e)->tp;
    double bytes = gathered_share(s->gemm_dtype) * s->width;
    if (!overlap) {
        emit_gate(q->e, collective(q, COLL_ALL_GATHER, bytes));
        add(q, s, passes, 1);
        return;
    }
    TaskId step = collective(q, COLL_ALL_GATHER, bytes / (t - 1));
    for (int i = 0; i < t; i++) {
        TaskId next =
            i + 1 < t - 1 ? collective(q, COLL_ALL_GATHER, bytes / (t - 1)) : TASK_NONE;
        add(q, s, passes, 1.0 / t);
        flush(q);
        if (i < t - 1)
            emit_gate(q->e, step);
        step = next;
    }
}

/* The GEMM `s` then the sum of its output, the compute after waiting for
 * it: at once, or with overlap as TP_OVERLAP_SPLITS reduce-scatters, each
 * after its part of the GEMM. */
static void sum_after(Parts *q, const Span *s, gboolean overlap)
{
    int k = overlap ? TP_OVERLAP_SPLITS : 1;
    TaskId sum = TASK_NONE;
    for (int i = 0; i < k; i++) {
        add(q, s, PASS_FORWARD, 1.0 / k);
        sum = collective(q, sum_op(q->e), 1.0 / k);
    }
    emit_gate(q->e, sum);
}

static void forward(Parts *q, const PieceSpans *k, gboolean sp, gboolean overlap)
{
    add(q, &k->span[SPAN_PRE], PASS_FORWARD, 1);
    if (k->span[SPAN_COLUMN].ops && sp)
        gather_into(q, &k->span[SPAN_COLUMN], PASS_FORWARD, overlap);
    else
        add(q, &k->span[SPAN_COLUMN], PASS_FORWARD, 1);
    add(q, &k->span[SPAN_MIDDLE], PASS_FORWARD, 1);
    if (k->span[SPAN_ROW].ops)
        sum_after(q, &k->span[SPAN_ROW], overlap && k->row_gemm);
    add(q, &k->span[SPAN_POST], PASS_FORWARD, 1);
}

/* Backward, in `passes` (the input gradients, the weight gradients, or
 * both), runs the spans in reverse. The row span's input gradient needs
 * the output gradient all-gathered (sequence parallelism; with overlap in
 * steps beside it); the column span's input gradient is summed over the
 * group beside its weight gradient, which needs the GEMM's sharded input
 * all-gathered again (beside the input gradient, or first in a W). */
static void backward(Parts *q, const PieceSpans *k, gboolean sp, gboolean overlap, unsigned passes)
{
    unsigned in = passes & PASS_INPUT_GRAD, w = passes & PASS_WEIGHT_GRAD;
    add(q, &k->span[SPAN_POST], passes, 1);
    const Span *row = &k->span[SPAN_ROW];
    if (in && row->ops && sp && overlap && k->row_gemm) {
        gather_into(q, row, in, TRUE);
        add(q, row, w, 1);
    } else if (in && row->ops && sp) {
        gather_into(q, row, passes, FALSE);
    } else {
        add(q, row, passes, 1);
    }
    add(q, &k->span[SPAN_MIDDLE], passes, 1);
    const Span *column = &k->span[SPAN_COLUMN];
    if (column->ops && in) {
        TaskId input = sp && w ? collective(q, COLL_ALL_GATHER,
                                            gathered_share(column->gemm_dtype) * column->width)
                               : TASK_NONE;
        add(q, column, in, 1); /* beside the gather */
        TaskId sum = collective(q, sum_op(q->e), column->width);
        emit_gate(q->e, input);
        add(q, column, w, 1); /* beside the sum */
        flush(q);
        emit_gate(q->e, sum);
    } else if (column->ops && sp) {
        gather_into(q, column, w, FALSE);
    } else {
        add(q, column, w, 1);
    }
    add(q, &k->span[SPAN_PRE], passes, 1);
}

static TaskId piece_compute(Emit *e, void *state, const PieceRef *p, TaskTag tag, TaskName name,
                            TaskId *first)
{
    const TpState *st = state;
    const PlanSpec *plan = emit_plan(e);
    static const int kinds[] = {[SEGMENT_EMBEDDING] = KIND_EMBEDDING,
                                [SEGMENT_MTP] = KIND_MTP,
                                [SEGMENT_HEAD] = KIND_HEAD};
    int kind =
        p->segment->kind == SEGMENT_LAYER ? KIND_BLOCK + (int)p->block : kinds[p->segment->kind];
    Parts q = {.e = e,
               .st = st,
               .p = p,
               .k = &st->kind[kind],
               .tag = tag,
               .name = name,
               .first = TASK_NONE,
               .last = TASK_NONE};
    unsigned passes = unit_passes(p->phase);
    if (passes == PASS_FORWARD) /* a forward, or full recomputation's replay of one */
        forward(&q, &st->kind[kind], plan->sequence_parallel, plan->tp_comm_overlap);
    else
        backward(&q, &st->kind[kind], plan->sequence_parallel, plan->tp_comm_overlap, passes);
    flush(&q);
    *first = q.first;
    return q.last;
}

/* The waits of a forward for the collectives that stop its compute.
 * Without tp_comm_overlap the sum of a row-parallel output, and with
 * sequence parallelism the gather of a column-parallel input, each has
 * the next compute wait for it (forward_waits lists them): each such
 * span holds no compute task and lasts at least a collective's bound over
 * the tp group (netbound_exchange_s) at the bytes it moves. A backward's
 * collectives may overlap its weight gradients: they count nothing. */
static BlockBound block_bound(const Step *step, Block block, const OpList *ops)
{
    (void)block;
    const PlanSpec *plan = step->plan;
    double shares[2], bytes = tp_layer_bytes(step->model, plan), wait_s = 0;
    for (int i = 0, n = forward_waits(plan, ops, step->model->hidden_size, shares); i < n; i++)
        wait_s += netbound_exchange_s(step->cluster, shares[i] * bytes, plan->tp);
    return (BlockBound){.forward_s = wait_s};
}

const Strategy strategy_tensor_parallel = {
    .name = "tensor_parallel",
    .active = active,
    .check_model = check_model,
    .check = check,
    .check_model_reads = PLAN_BIT(TP),
    .check_reads = PLAN_BIT(TP) | PLAN_BIT(SEQUENCE_PARALLEL) | PLAN_BIT(TP_COMM_OVERLAP),
    .comm_advice = comm_advice,
    .piece_tasks = piece_tasks,
    .state_size = sizeof(TpState),
    .step_begin = step_begin,
    .piece_compute = piece_compute,
    .block_bound = block_bound,
};
