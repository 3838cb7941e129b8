/* metrics.c: step time, utilisation, time split and memory from a replay.
 *
 * The time split walks a rank's compute stream in program order. Each task
 * either computes or communicates (a collective on the compute stream), and
 * the gap before it is charged to why it waited: a collective's gap to the
 * collective itself (its members arrive at different times) unless it
 * waited for a transfer from another stage; another task's gap to the
 * collectives on the chain of critical predecessors (engine.h) that ran
 * in it (charge_chain). Waiting on a send/recv between
 * stages is not the rank's own communication: with the head and tail of the phase that the rank
 * spends idle, it is the pipeline bubble. The collective charged is recorded by purpose and op, so
 * that the comm table's exposed parts add up to exposed_comm_s.
 *
 * A replay that stands for more than it replayed (a steady state built
 * short, engine.h) counts each task as often as the step runs it
 * (replay_weight), a gap before a task with it, and places in the step's
 * time what the forward-backward phase needs (replay_shift_s); the rest
 * is read in the replay's own time, where a task and what it waited for
 * stand as they stand in every copy. */
#include "metrics/metrics.h"

#include "metrics/training.h"

#include <math.h>
#include <string.h>

#include "layout/chunks.h"
#include "strategy/offload.h"

/* The forward-backward phase of the step, as a time window. */
typedef struct {
    double start_s, end_s;
} Window;

typedef struct {
    double compute_s, recompute_s, comm_s; /* comm_s: exposed */
    double in_phase_s;                     /* forward, backward, replay or own comm, in the phase */
    double end_s;                          /* the stream's last task's end */
    double exposed[TAG_KINDS][COLL_N_OPS]; /* comm_s by the collective charged */
} RankSplit;

static double overlap(double a, double b, const Window *ph)
{
    return MAX(0.0, MIN(b, ph->end_s) - MAX(a, ph->start_s));
}

/* How a task of the replay counts in the step: how many times it runs
 * (replay_weight), and how much later (replay_shift_s). */
typedef struct {
    double times, later_s;
} Counted;

static Counted counted(const Replay *r, TaskId id)
{
    return (Counted){.times = replay_weight(r, id), .later_s = replay_shift_s(r, id)};
}

/* Charges the interval [a, b] of the compute stream, counted as `k`, to
 * collective `c`; a send/recv's wait is the bubble, left uncharged. */
static void charge(RankSplit *s, const Task *c, double a, double b, const Window *ph, Counted k)
{
    if (c->op == COLL_SEND_RECV)
        return;
    s->comm_s += k.times * (b - a);
    s->exposed[c->tag][c->op] += k.times * (b - a);
    s->in_phase_s += k.times * overlap(a + k.later_s, b + k.later_s, ph);
}

/* Charges the gap [a, b] before a task of `rank`'s compute stream, walking
 * back from its critical predecessor `why`: each collective on the way is
 * charged the part of the gap it ran in, and the walk goes on from its own
 * critical predecessor, until the gap is covered or the walk meets a
 * transfer from another stage or another rank's compute (time waiting for
 * other stages or ranks: the bubble, if any, not this rank's
 * communication). */
static void charge_chain(const Graph *g, const Replay *r, int rank, TaskId why, double a, double b,
                         const Window *ph, Counted k, RankSplit *s)
{
    const Task *task = graph_arrays(g).task;
    while (why != TASK_NONE && b > a) {
        const Task *t = &task[why];
        if (t->kind == TASK_COLLECTIVE && t->op == COLL_SEND_RECV)
            return;
        if (t->kind != TASK_COLLECTIVE && t->owner != rank)
            return;
        double start = MAX(a, r->task[why].start_s), end = MIN(b, r->task[why].end_s);
        if (t->kind == TASK_COLLECTIVE && end > start)
            charge(s, t, start, end, ph, k);
        b = MIN(b, r->task[why].start_s);
        why = r->task[why].critical;
    }
}

static void split_rank(const Graph *g, const Replay *r, int rank, const Window *ph, RankSplit *s)
{
    *s = (RankSplit){0};
    int n;
    const TaskId *tasks = graph_stream(g, rank, STREAM_COMPUTE, &n);
    const Task *task = graph_arrays(g).task;
    double prev_end = 0, later_s = 0;
    for (int i = 0; i < n; i++) {
        TaskId id = tasks[i];
        const Task *t = &task[id];
        Counted k = counted(r, id);
        double start = r->task[id].start_s, end = r->task[id].end_s;
        TaskId why = r->task[id].critical;
        const Task *cause = why != TASK_NONE ? &task[why] : NULL;
        gboolean transfer = cause && cause->kind == TASK_COLLECTIVE && cause->op == COLL_SEND_RECV;
        if (start > prev_end && t->kind == TASK_COLLECTIVE && !transfer)
            charge(s, t, prev_end, start, ph, k); /* waiting for its other members */
        else if (start > prev_end)
            charge_chain(g, r, rank, why, prev_end, start, ph, k, s);
        if (t->kind == TASK_COMPUTE)
            s->compute_s += k.times * (end - start);
        if (t->kind == TASK_COMPUTE && t->tag != TAG_OPTIMIZER) /* the phase excludes it */
            s->in_phase_s += k.times * overlap(start + k.later_s, end + k.later_s, ph);
        if (t->tag == TAG_RECOMPUTE)
            s->recompute_s += k.times * (end - start);
        if (t->kind == TASK_COLLECTIVE)
            charge(s, t, start, end, ph, k);
        prev_end = end;
        later_s = k.later_s;
    }
    s->end_s = prev_end + later_s;
}

/* From the first forward's start to the last backward's end, any rank;
 * and in *flops the FLOPs of every task, each simulated rank's as many
 * times as the ranks it stands for (symmetry_weight), in one pass over
 * the tasks. */
static Window window_and_flops(const Graph *g, const Replay *r, const Symmetry *sym, double *flops)
{
    Window ph = {.start_s = INFINITY, .end_s = 0};
    const Task *task = graph_arrays(g).task;
    for (gsize id = 0; id < r->tasks; id++) {
        const Task *t = &task[id];
        Counted k = counted(r, (TaskId)id);
        if (t->tag == TAG_FORWARD)
            ph.start_s = MIN(ph.start_s, r->task[id].start_s + k.later_s);
        if (t->tag == TAG_BACKWARD)
            ph.end_s = MAX(ph.end_s, r->task[id].end_s + k.later_s);
        if (t->kind == TASK_COMPUTE) /* the others have none */
            *flops += k.times * t->flops * symmetry_weight(sym, t->owner);
    }
    return ph;
}

/* Counts, bytes and times of the collectives `rank` joins on its streams
 * `first` to `end` - 1 (a send/recv is the sender's). */
static void count_comm(const Graph *g, const Replay *r, int rank, int first, int end,
                       CommStat table[TAG_KINDS][COLL_N_OPS])
{
    memset(table, 0, sizeof(CommStat) * TAG_KINDS * COLL_N_OPS);
    for (int stream = first; stream < end; stream++) {
        int n;
        const TaskId *tasks = graph_stream(g, rank, stream, &n);
        for (int i = 0; i < n; i++) {
            const Task *t = graph_task(g, tasks[i]);
            if (t->kind != TASK_COLLECTIVE)
                continue;
            CommStat *c = &table[t->tag][t->op];
            double times = replay_weight(r, tasks[i]);
            c->count += (int)times;
            c->bytes += times * engine_sent_bytes(r, g, tasks[i], rank);
            c->time_s += times * (r->task[tasks[i]].end_s - r->task[tasks[i]].start_s);
            c->algorithms |= 1u << r->algorithm[tasks[i]];
        }
    }
}

/* The collectives of all of `rank`'s streams, and the exposed parts from
 * its split. */
static void comm_table(const Graph *g, const Replay *r, int rank, const RankSplit *split,
                       CommStat table[TAG_KINDS][COLL_N_OPS])
{
    count_comm(g, r, rank, 0, graph_streams(g), table);
    for (int tag = 0; tag < TAG_KINDS; tag++)
        for (int op = 0; op < COLL_N_OPS; op++)
            table[tag][op].exposed_s = split->exposed[tag][op];
}

static void copy_peak(const Replay *r, int rank, double split[MEM_KINDS])
{
    for (int k = 0; k < MEM_KINDS; k++)
        split[k] = r->peak_split[(gsize)rank * GRAPH_MEM_CATEGORIES + k];
}

/* Whether `a` beats `best` by more than rounding: replays that stand for
 * the same step (full or symmetry-reduced) may differ in the last digits,
 * and ties go to the lower-numbered rank or link. */
static gboolean beats(double a, double best)
{
    return a > best + 1e-9 * fabs(best);
}

/* The stages' figures, from each rank's split (`splits`, per rank). */
static void stage_table(const Graph *g, const Replay *r, const Layout *layout, const Symmetry *sym,
                        const PlanSpec *plan, const Window *ph, const RankSplit *splits,
                        Metrics *out)
{
    out->n_stages = plan->pp;
    out->stages = g_new0(StageStat, plan->pp);
    for (int s = 0; s < plan->pp; s++) {
        StageStat *st = &out->stages[s];
        int rank = symmetry_local(sym, layout_rank(layout, (Coord){.pp = s}));
        const RankSplit *split = &splits[rank];
        CommStat table[TAG_KINDS][COLL_N_OPS]; /* sends: on the p2p stream alone */
        count_comm(g, r, rank, STREAM_P2P, STREAM_P2P + 1, table);
        st->layers = chunks_stage_layers(plan, s);
        st->embedding = s == 0;
        st->head = s == chunks_stage(plan, chunks_count(plan) - 1);
        st->busy_s = split->compute_s;
        double phase_s = ph->end_s - ph->start_s;
        st->bubble_s = metrics_settled(phase_s - split->in_phase_s, phase_s);
        st->peak_bytes = r->peak_bytes[rank];
        copy_peak(r, rank, st->peak_split);
        st->p2p_bytes = table[TAG_PP][COLL_SEND_RECV].bytes;
    }
}

/* The links report: per class the most utilized link, and the hottest
 * links of all (ties: the lower-numbered link). */
static void link_table(const Replay *r, double step_s, Metrics *out)
{
    const Topology *t = engine_topology(r);
    for (int l = 0; l < topology_links(t); l++) {
        double bytes = engine_link_bytes(r, l);
        if (bytes <= 0)
            continue;
        LinkClass link_class = topology_class(t, l);
        double utilization = bytes / (topology_capacity(t, l) * step_s);
        LinkStat *best = &out->busiest[link_class];
        int hot = out->n_hottest;
        while (hot > 0 && beats(utilization, out->hottest[hot - 1].utilization))
            hot--;
        gboolean is_best = !best->name[0] || beats(utilization, best->utilization);
        if (!is_best && hot >= METRICS_HOT_LINKS)
            continue; /* the common case: before building the row */
        LinkStat st = {.link_class = link_class, .bytes = bytes, .utilization = utilization};
        g_autofree char *name = topology_link_name(t, l);
        g_strlcpy(st.name, name, sizeof st.name);
        for (int tag = 0; tag < TAG_KINDS; tag++)
            st.by_tag[tag] = engine_link_tag_bytes(r, l, tag);
        if (is_best)
            *best = st;
        if (hot < METRICS_HOT_LINKS) {
            int last = MIN(out->n_hottest, METRICS_HOT_LINKS - 1);
            memmove(&out->hottest[hot + 1], &out->hottest[hot], sizeof(LinkStat) * (last - hot));
            out->hottest[hot] = st;
            out->n_hottest = MIN(out->n_hottest + 1, METRICS_HOT_LINKS);
        }
    }
}

/* The most host bytes offload keeps on one node: the sum over the node's
 * ranks (rank r on GPU r, node r / gpus_per_node) of each rank's, by its
 * pipeline stage. */
static double host_bytes(const Layout *layout, const Step *step)
{
    const ClusterSpec *cluster = step->cluster;
    const PlanSpec *plan = step->plan;
    if (plan->offload == OFFLOAD_NONE)
        return 0;
    g_autofree double *stage_bytes = g_new(double, plan->pp);
    for (int s = 0; s < plan->pp; s++)
        stage_bytes[s] = offload_host_bytes(step, s);
    double most = 0, node = 0;
    for (int rank = 0; rank < layout_ranks(layout); rank++) {
        if (rank % cluster->gpus_per_node == 0)
            node = 0;
        node += stage_bytes[layout_coord(layout, rank).pp];
        most = MAX(most, node);
    }
    return most;
}

void metrics_compute(const Graph *g, const Replay *r, const Layout *layout, const Symmetry *sym,
                     const Step *step, Metrics *out)
{
    const ModelSpec *model = step->model;
    const ClusterSpec *cluster = step->cluster;
    const PlanSpec *plan = step->plan;
    *out = (Metrics){0};
    int ranks = graph_ranks(g), least = G_MAXINT; /* the fewest ranks one stands for */
    for (int rank = 0; rank < ranks; rank++)
        least = MIN(least, symmetry_weight(sym, rank));
    out->simulated_ranks = ranks;
    g_strlcpy(out->symmetry, symmetry_name(sym), sizeof out->symmetry);
    out->events = r->events;
    out->events_skipped = r->events_skipped;
    out->flows_apart = r->flows_apart;
    out->step_time_s = r->makespan_s;

    Window ph = window_and_flops(g, r, sym, &out->hardware_flops);
    double phase_s = ph.end_s - ph.start_s, bubble_sum = 0, weights = 0, latest_end = -1;
    int critical_local = 0;
    g_autofree RankSplit *splits = g_new(RankSplit, ranks); /* the stages reuse them */
    for (int rank = 0; rank < ranks; rank++) {
        const RankSplit *s = &splits[rank];
        split_rank(g, r, rank, &ph, &splits[rank]);
        double weight = (double)symmetry_weight(sym, rank) / least; /* 1 for all alike */
        weights += weight;
        if (phase_s > 0)
            bubble_sum += weight * metrics_settled(phase_s - s->in_phase_s, phase_s) / phase_s;
        if (rank == 0 || beats(s->end_s, latest_end)) { /* ranks in increasing order */
            latest_end = s->end_s;
            critical_local = rank;
        }
    }
    const RankSplit *critical = &splits[critical_local];
    out->critical_rank = graph_gpu(g, critical_local);
    out->critical_stage = layout_coord(layout, out->critical_rank).pp;
    out->bubble_fraction = bubble_sum / weights; /* over every rank */
    out->compute_s = critical->compute_s;
    out->recompute_s = critical->recompute_s;
    out->exposed_comm_s = critical->comm_s;
    comm_table(g, r, critical_local, critical, out->comm);
    stage_table(g, r, layout, sym, plan, &ph, splits, out);
    if (out->step_time_s > 0)
        link_table(r, out->step_time_s, out);

    double sequences = plan->global_batch_size;
    int mtp = plan->mtp_num_layers;
    out->model_flops = transformer_model_flops(model, sequences) +
                       transformer_mtp_model_flops(model, mtp, sequences, FALSE);
    out->causal_model_flops = transformer_causal_model_flops(model, sequences) +
                              transformer_mtp_model_flops(model, mtp, sequences, TRUE);
    out->peak_flops = gpu_peak(&cluster->gpu, plan->dtype, NULL, NULL);
    out->bf16_peak_flops = cluster->gpu.peak_flops;
    double peak = (double)layout_ranks(layout) * out->peak_flops;
    if (out->step_time_s > 0) {
        out->tokens_per_s = training_tokens_per_s(model, plan, out->step_time_s);
        out->mfu = out->model_flops / (out->step_time_s * peak);
        out->hfu = out->hardware_flops / (out->step_time_s * peak);
    }

    int peak_local = 0;
    for (int rank = 0; rank < ranks; rank++) {
        if (rank == 0 || beats(r->peak_bytes[rank], out->peak_bytes)) {
            out->peak_bytes = r->peak_bytes[rank];
            peak_local = rank;
        }
    }
    out->peak_rank = graph_gpu(g, peak_local);
    copy_peak(r, peak_local, out->peak_split);
    out->capacity_bytes = cluster->gpu.memory_bytes;
    out->host_bytes = host_bytes(layout, step);
    out->host_capacity_bytes = cluster->host_memory_bytes;
    out->fits = metrics_fits(cluster, out->peak_bytes, out->host_bytes);
}

double metrics_settled(double x, double whole)
{
    return x > 1e-12 * fabs(whole) ? x : 0.0;
}

gboolean metrics_fits(const ClusterSpec *cluster, double gpu_bytes, double host_bytes)
{
    return gpu_bytes <= cluster->gpu.memory_bytes &&
           (host_bytes == 0 || host_bytes <= cluster->host_memory_bytes);
}

void metrics_clear(Metrics *m)
{
    g_free(m->stages);
    m->stages = NULL;
    m->n_stages = 0;
}

double metrics_model_tflops_per_gpu(const Metrics *m, int gpus)
{
    return m->step_time_s > 0 && gpus > 0 ? m->causal_model_flops / (m->step_time_s * gpus) / 1e12
                                          : 0;
}
