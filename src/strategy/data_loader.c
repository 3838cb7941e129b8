/* data_loader.c: the data loader, a prefetching producer (data_loader.h).
 *
 * Active when the plan reads its samples (bytes_per_sample > 0). On a rank
 * of the first pipeline stage, before the forward of a micro-batch's first
 * model chunk, it appends that micro-batch's read to the rank's loader
 * stream and gates the forward on it. The reads wait only for each other,
 * so they run back to back from the step's start, ahead of the compute: a
 * fast loader costs the step only its first read, a slow one stalls every
 * forward. Every rank of the stage runs the same reads, so a rank and its
 * images under the symmetry reduction run alike. */
#include "strategy/data_loader.h"

#include "strategy/strategy.h"

typedef struct {
    double load_s; /* one micro-batch's read; 0: none */
} LoaderState;

int data_loader_readers_per_node(const Layout *layout, const ClusterSpec *cluster)
{
    /* the readers' ranks grow with their dp coordinate, so a node's are
     * consecutive */
    int most = 0, run = 0, node = -1;
    for (int d = 0; d < layout_size(layout, GROUP_DP); d++) {
        int at = layout_rank(layout, (Coord){.dp = d}) / cluster->gpus_per_node;
        run = at == node ? run + 1 : 1;
        node = at;
        most = MAX(most, run);
    }
    return most;
}

double data_loader_micro_batch_s(const ClusterSpec *cluster, const PlanSpec *plan, int readers)
{
    if (plan->bytes_per_sample <= 0)
        return 0;
    double read = cluster->storage_Bps > 0 ? plan->bytes_per_sample / cluster->storage_Bps : 0;
    double prep = cluster->preprocess_samples_s > 0 ? 1 / cluster->preprocess_samples_s : 0;
    return (double)readers * plan->micro_batch_size * MAX(read, prep);
}

static gboolean active(const PlanSpec *plan)
{
    return plan->bytes_per_sample > 0;
}

static void step_begin(Emit *e, void *state)
{
    LoaderState *st = state;
    const ClusterSpec *cluster = emit_cluster(e);
    int readers = data_loader_readers_per_node(emit_layout(e), cluster);
    st->load_s = data_loader_micro_batch_s(cluster, emit_plan(e), readers);
}

static void unit_begin(Emit *e, void *state, const Unit *u)
{
    const LoaderState *st = state;
    if (!u->forward || u->chunk != 0 || emit_stage(e) != 0 || st->load_s <= 0)
        return;
    TaskName name = {.fmt = "load mb%d", .a = u->micro_batch};
    emit_gate(e, emit_background(e, STREAM_LOADER, st->load_s, TAG_LOAD, name));
}

const Strategy strategy_data_loader = {
    .name = "data_loader",
    .active = active,
    .state_size = sizeof(LoaderState),
    .streams = 1u << STREAM_LOADER,
    .step_begin = step_begin,
    .unit_begin = unit_begin,
};
