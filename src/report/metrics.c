/* metrics.c: step time, utilisation, time split and memory from a replay.
 *
 * The time split walks a rank's compute stream in program order. Each task
 * either computes or communicates (a collective on the compute stream), and
 * the gap before it is charged to why it waited: a collective's gap to the
 * collective itself (its members arrive at different times); another
 * task's to communication when its critical predecessor (engine.h) is a
 * collective, to the pipeline bubble when that collective is a send/recv
 * between stages. The collective
 * charged is also recorded by purpose and op, so that the comm table's
 * exposed parts add up to exposed_comm_s. */
#include "report/metrics.h"

typedef struct {
    double compute_s, recompute_s, comm_s, bubble_s;
    double first_forward_s, last_backward_s; /* the forward-backward span */
    double end_s;                            /* the stream's last task's end */
    double exposed[TAG_KINDS][COLL_N_OPS];   /* comm_s by the collective charged */
} StreamSplit;

/* Charges `s` seconds of the compute stream to collective `c`. */
static void charge(StreamSplit *split, const Task *c, double s)
{
    if (c->op == COLL_SEND_RECV) {
        split->bubble_s += s;
        return;
    }
    split->comm_s += s;
    split->exposed[c->tag][c->op] += s;
}

static void split_stream(const Graph *g, const Replay *r, int rank, StreamSplit *s)
{
    *s = (StreamSplit){0};
    s->first_forward_s = -1;
    int n;
    const TaskId *tasks = graph_stream(g, rank, STREAM_COMPUTE, &n);
    double prev_end = 0;
    for (int i = 0; i < n; i++) {
        TaskId id = tasks[i];
        const Task *t = graph_task(g, id);
        double gap = r->start_s[id] - prev_end;
        TaskId why = r->critical[id];
        if (gap > 0 && t->kind == TASK_COLLECTIVE) /* waiting for its other members */
            charge(s, t, gap);
        else if (gap > 0 && why != TASK_NONE && graph_task(g, why)->kind == TASK_COLLECTIVE)
            charge(s, graph_task(g, why), gap);
        double busy = r->end_s[id] - r->start_s[id];
        if (t->kind == TASK_COMPUTE)
            s->compute_s += busy;
        if (t->tag == TAG_RECOMPUTE)
            s->recompute_s += busy;
        if (t->kind == TASK_COLLECTIVE)
            charge(s, t, busy);
        if (t->tag == TAG_FORWARD && s->first_forward_s < 0)
            s->first_forward_s = r->start_s[id];
        if (t->tag == TAG_BACKWARD)
            s->last_backward_s = r->end_s[id];
        prev_end = r->end_s[id];
    }
    s->end_s = prev_end;
}

/* Counts, bytes and times of the collectives `rank` joins, on any stream;
 * the exposed parts come from its compute stream's split. */
static void comm_table(const Graph *g, const Replay *r, int rank, const StreamSplit *split,
                       Metrics *out)
{
    for (int stream = 0; stream < graph_streams(g); stream++) {
        int n;
        const TaskId *tasks = graph_stream(g, rank, stream, &n);
        for (int i = 0; i < n; i++) {
            const Task *t = graph_task(g, tasks[i]);
            if (t->kind != TASK_COLLECTIVE)
                continue;
            int members;
            graph_group(g, t->owner, &members);
            CommStat *c = &out->comm[t->tag][t->op];
            c->count++;
            c->bytes += collective_sent_bytes((CollOp)t->op, members, t->bytes);
            c->time_s += r->end_s[tasks[i]] - r->start_s[tasks[i]];
        }
    }
    for (int tag = 0; tag < TAG_KINDS; tag++)
        for (int op = 0; op < COLL_N_OPS; op++)
            out->comm[tag][op].exposed_s = split->exposed[tag][op];
}

void metrics_compute(const Graph *g, const Replay *r, const ModelSpec *model,
                     const ClusterSpec *cluster, const PlanSpec *plan, Metrics *out)
{
    *out = (Metrics){0};
    int ranks = graph_ranks(g);
    out->simulated_ranks = ranks;
    out->events = r->events;
    out->step_time_s = r->makespan_s;

    double bubble_sum = 0, latest_end = -1;
    StreamSplit s, critical = {0};
    for (int rank = 0; rank < ranks; rank++) {
        split_stream(g, r, rank, &s);
        double span = s.last_backward_s - s.first_forward_s;
        if (span > 0)
            bubble_sum += s.bubble_s / span;
        if (s.end_s > latest_end) {
            latest_end = s.end_s;
            out->critical_rank = rank;
            critical = s;
        }
    }
    out->bubble_fraction = bubble_sum / ranks;
    out->compute_s = critical.compute_s;
    out->recompute_s = critical.recompute_s;
    out->exposed_comm_s = critical.comm_s;
    comm_table(g, r, out->critical_rank, &critical, out);

    for (gsize id = 0; id < r->tasks; id++)
        out->hardware_flops += graph_task(g, (TaskId)id)->flops;
    double sequences = plan->global_batch_size;
    out->model_flops = tf_model_flops(model, sequences);
    double peak = ranks * cluster->gpu.peak_flops;
    if (out->step_time_s > 0) {
        out->tokens_per_s = sequences * model->seq_length / out->step_time_s;
        out->mfu = out->model_flops / (out->step_time_s * peak);
        out->hfu = out->hardware_flops / (out->step_time_s * peak);
    }

    for (int rank = 0; rank < ranks; rank++) {
        if (r->peak_bytes[rank] > out->peak_bytes || rank == 0) {
            out->peak_bytes = r->peak_bytes[rank];
            out->peak_rank = rank;
        }
    }
    for (int k = 0; k < MEM_KINDS; k++)
        out->peak_split[k] = r->peak_split[(gsize)out->peak_rank * GRAPH_MEM_CATEGORIES + k];
    out->capacity_bytes = cluster->gpu.memory_bytes;
    out->fits = out->peak_bytes <= out->capacity_bytes;
}
