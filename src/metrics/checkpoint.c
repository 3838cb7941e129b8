/* checkpoint.c: the checkpoint's bytes, rank by rank, and its times
 * (checkpoint.h). */
#include "metrics/checkpoint.h"

#include "layout/layout.h"
#include "strategy/states.h"

/* Whether `rank` is the first member of its group of `kind`: the replica
 * that writes what the group holds unsplit. */
static gboolean first_of(const Layout *l, GroupKind kind, int rank)
{
    int n;
    return layout_group(l, kind, layout_group_of(l, kind, rank), &n)[0] == rank;
}

/* Bytes of `params` parameters at `bytes` each, split `shards` ways over
 * a group, that a rank writes: its shard, or with one shard all of them
 * if it is the group's first. */
static double written(double params, double bytes, int shards, gboolean first)
{
    return shards > 1 ? params * bytes / shards : first ? params * bytes : 0;
}

void checkpoint_of_plan(Checkpoint *out, const Step *step)
{
    const ModelSpec *model = step->model;
    const ClusterSpec *cluster = step->cluster;
    const PlanSpec *plan = step->plan;
    *out = (Checkpoint){0};
    g_autoptr(Layout) l = layout_new(plan, cluster);
    const int *shards = step->states.shards, *expert_shards = step->states.expert_shards;
    static const MemKind kinds[] = {MEM_PARAMS, MEM_OPTIMIZER};
    const double bytes[] = {CHECKPOINT_WEIGHT_BYTES,
                            transformer_optimizer_state_bytes(plan->optimizer_states)};
    g_autofree double *params = g_new(double, plan->pp);
    g_autofree double *experts = g_new(double, plan->pp);
    for (int s = 0; s < plan->pp; s++) {
        StageParams p = states_stage_params_of(model, plan, s);
        params[s] = p.params;
        experts[s] = p.experts;
    }
    int ranks = layout_ranks(l), per_node = cluster->gpus_per_node;
    double node = 0;
    for (int r = 0; r < ranks; r++) {
        int s = layout_coord(l, r).pp;
        gboolean dense_first = first_of(l, GROUP_DP_CP, r);
        gboolean expert_first = experts[s] > 0 && first_of(l, GROUP_EDP, r);
        double rank = 0;
        for (gsize k = 0; k < G_N_ELEMENTS(kinds); k++)
            rank += written(params[s] - experts[s], bytes[k], shards[kinds[k]], dense_first) +
                    written(experts[s], bytes[k], expert_shards[kinds[k]], expert_first);
        out->total_bytes += rank;
        out->gpu_bytes = MAX(out->gpu_bytes, rank);
        node += rank;
        if (r % per_node == per_node - 1 || r == ranks - 1) {
            out->node_bytes = MAX(out->node_bytes, node);
            node = 0;
        }
    }
    double write =
        cluster->storage_write_Bps > 0 ? cluster->storage_write_Bps : CHECKPOINT_NODE_Bps;
    double read = cluster->storage_Bps > 0 ? cluster->storage_Bps : CHECKPOINT_NODE_Bps;
    out->save_s = out->node_bytes / write;
    out->load_s = out->node_bytes / read;
    if (cluster->storage_total_write_Bps > 0)
        out->save_s = MAX(out->save_s, out->total_bytes / cluster->storage_total_write_Bps);
    if (cluster->storage_total_read_Bps > 0)
        out->load_s = MAX(out->load_s, out->total_bytes / cluster->storage_total_read_Bps);
    if (cluster->gpu.pcie_Bps > 0)
        out->snapshot_s = out->gpu_bytes / cluster->gpu.pcie_Bps;
}
