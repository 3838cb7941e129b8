/* layout.h: where every rank of a plan sits and which groups it talks in.
 *
 * A rank has coordinates (tp, cp, dp, pp) in the plan's grid. Ranks are
 * numbered in the plan's rank_order, fastest-varying coordinate first like
 * Megatron-LM's order strings; the default, tp-dp-pp (with cp right after
 * tp, Megatron-Core's tp-cp-dp-pp), gives rank = tp + t (cp + c (dp + d pp)).
 * Rank r runs on GPU r of the cluster, and GPU g sits on node g /
 * gpus_per_node, so by default a tensor-parallel group of a node's GPUs or
 * fewer (dividing them) shares one node, and pipeline stages land on
 * different nodes. A group gathers the ranks that differ only in one
 * coordinate: the tensor-, context-, data- or pipeline-parallel group; or in
 * two: the data-parallel group "with context parallel" (Megatron-Core's),
 * the dp x cp ranks that hold the same parameters and reduce their
 * gradients together.
 *
 * The routed experts have a grid of their own over the same ranks, as
 * Megatron-Core's (parallel_state.py's expert RankGenerator, "tp-ep-dp-pp"):
 * a stage's tp x cp x dp ranks, taken tp fastest (x = tp coordinate + tp x
 * the rank's place in its dp x cp group: with the default numbering, the
 * rank within its stage), are cut into expert tensor-parallel groups of
 * etp consecutive ranks, expert-parallel groups of ep ranks etp apart, and
 * expert data-parallel groups of the rest, etp x ep apart. With etp = tp
 * an expert-parallel group is ep consecutive ranks of a dp x cp group. */
#ifndef PLANSIM_LAYOUT_LAYOUT_H
#define PLANSIM_LAYOUT_LAYOUT_H

#include <glib.h>

#include "spec/cluster.h"
#include "spec/plan.h"

/* The kinds of group: the coordinates first (GROUP_DIMS of them), then
 * the groups over several coordinates. */
typedef enum {
    GROUP_TP,
    GROUP_DP,
    GROUP_PP,
    GROUP_CP,
    GROUP_DP_CP,
    GROUP_EP,  /* expert parallel: ep ranks of a stage that split the routed experts */
    GROUP_EDP, /* expert data parallel: the ranks of a stage that hold the same experts */
    GROUP_ETP, /* expert tensor parallel: the ranks of a stage that split each expert */
    GROUP_KINDS
} GroupKind;
#define GROUP_DIMS GROUP_DP_CP

typedef struct {
    int tp, dp, pp, cp; /* cp last: a Coord written without it has cp 0 */
} Coord;

typedef struct Layout Layout;

/* The ranks of one group of `kind` under the resolved `plan`, as
 * layout_new forms them, without a layout: along a dimension its size;
 * dp x cp for GROUP_DP_CP; ep for GROUP_EP; etp for GROUP_ETP (tp);
 * tp x cp x dp / (etp x ep) for GROUP_EDP. The one home of each group's
 * width. */
int layout_plan_size(const PlanSpec *plan, GroupKind kind);

/* How many ranks apart two ranks one step apart along dimension `dim`
 * (GROUP_TP, GROUP_DP, GROUP_PP or GROUP_CP) lie under the resolved
 * `plan`, as layout_new numbers them: the sizes of the dimensions its rank
 * order runs faster, multiplied. */
int layout_plan_stride(const PlanSpec *plan, GroupKind dim);

/* Whether the routed experts' gradients reduce in groups of their own,
 * not over dp x cp with the rest: ep > 1, or etp other than tp. */
gboolean layout_plan_experts_apart(const PlanSpec *plan);

/* The most members of a group of `n` ranks one `stride` apart in a
 * stage's tp x cp x dp ranks, taken tp fastest (tp for dp x cp's, etp for
 * an expert-parallel group's, etp x ep for an expert data-parallel one's),
 * on one node of `cluster`, at most: a node's GPUs; with the default
 * numbering (tp-dp-pp) and tp dividing them, those are the ranks of the
 * stage in order, node / stride of them at most, rounded up. For the
 * bounds of what must cross the nodes' NICs. */
int layout_plan_most_on_a_node(const ClusterSpec *cluster, const PlanSpec *plan, int n,
                               int stride);

/* The layout of a resolved plan on a cluster. */
Layout *layout_new(const PlanSpec *plan, const ClusterSpec *cluster);
void layout_free(Layout *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Layout, layout_free)

int layout_ranks(const Layout *l);
/* The ranks of one group of `kind` (along a dimension: its size), and
 * how far apart ranks one step apart along a dimension (kind < GROUP_DIMS)
 * are numbered: rank = sum of coordinate x stride. */
int layout_size(const Layout *l, GroupKind kind);
int layout_stride(const Layout *l, GroupKind kind);
Coord layout_coord(const Layout *l, int rank);
int layout_rank(const Layout *l, Coord c);

/* Groups of one kind are numbered 0 .. layout_groups(kind) - 1. */
int layout_groups(const Layout *l, GroupKind kind);
/* The group of `kind` that `rank` belongs to. */
int layout_group_of(const Layout *l, GroupKind kind, int rank);
/* Members of group `index` of `kind`, in increasing rank (along one
 * dimension: coordinate) order, an expert group's in its grid's order
 * (increasing x): *n entries. */
const int *layout_group(const Layout *l, GroupKind kind, int index, int *n);

#endif
