/* layout.h: where every rank of a plan sits and which groups it talks in.
 *
 * A rank has coordinates (tp, dp, pp) in the plan's grid. Ranks are
 * numbered in the plan's rank_order, fastest-varying coordinate first like
 * Megatron-LM's order strings; the default, tp-dp-pp, gives
 * rank = tp + t (dp + d pp). Rank r runs on GPU r of the cluster, and GPU g
 * sits on node g / gpus_per_node, so by default a tensor-parallel group of
 * a node's GPUs or fewer (dividing them) shares one node, and pipeline
 * stages land on different nodes. A group gathers the ranks that differ
 * only in one coordinate: the tensor-, data- or pipeline-parallel group. */
#ifndef PLANSIM_LAYOUT_LAYOUT_H
#define PLANSIM_LAYOUT_LAYOUT_H

#include <glib.h>

#include "spec/spec.h"

typedef enum { GROUP_TP, GROUP_DP, GROUP_PP, GROUP_KINDS } GroupKind;

typedef struct {
    int tp, dp, pp;
} Coord;

typedef struct Layout Layout;

/* The layout of a resolved plan on a cluster. */
Layout *layout_new(const PlanSpec *plan, const ClusterSpec *cluster);
void layout_free(Layout *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Layout, layout_free)

int layout_ranks(const Layout *l);
/* The plan's size along a dimension (tp, dp or pp), and how far apart
 * ranks one step apart along it are numbered: rank = sum of coordinate x
 * stride. */
int layout_size(const Layout *l, GroupKind kind);
int layout_stride(const Layout *l, GroupKind kind);
Coord layout_coord(const Layout *l, int rank);
int layout_rank(const Layout *l, Coord c);

/* Groups of one kind are numbered 0 .. layout_groups(kind) - 1. */
int layout_groups(const Layout *l, GroupKind kind);
/* The group of `kind` that `rank` belongs to. */
int layout_group_of(const Layout *l, GroupKind kind, int rank);
/* Members of group `index` of `kind`, in coordinate order: *n entries. */
const int *layout_group(const Layout *l, GroupKind kind, int index, int *n);

#endif
