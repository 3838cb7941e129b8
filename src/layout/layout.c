/* layout.c: rank coordinates, placement and communicator groups.
 *
 * Groups of a kind are stored flat: members[kind] holds group 0's members,
 * then group 1's, each group `size[kind]` long. Group index of a rank: its
 * two other coordinates, numbered in rank order. */
#include "layout/layout.h"

struct Layout {
    int size[GROUP_KINDS];   /* t, d, p: members per group of each kind */
    int stride[GROUP_KINDS]; /* rank = sum of coordinate x stride */
    int ranks;
    int *members[GROUP_KINDS]; /* all groups of a kind, flat */
};

/* The kinds of each rank order, fastest first, as RankOrder lists them. */
static const GroupKind orders[][GROUP_KINDS] = {
    [RANK_ORDER_TP_DP_PP] = {GROUP_TP, GROUP_DP, GROUP_PP},
    [RANK_ORDER_TP_PP_DP] = {GROUP_TP, GROUP_PP, GROUP_DP},
    [RANK_ORDER_DP_TP_PP] = {GROUP_DP, GROUP_TP, GROUP_PP},
    [RANK_ORDER_DP_PP_TP] = {GROUP_DP, GROUP_PP, GROUP_TP},
    [RANK_ORDER_PP_TP_DP] = {GROUP_PP, GROUP_TP, GROUP_DP},
    [RANK_ORDER_PP_DP_TP] = {GROUP_PP, GROUP_DP, GROUP_TP},
};

static int *coord_at(Coord *c, GroupKind kind)
{
    return kind == GROUP_TP ? &c->tp : kind == GROUP_DP ? &c->dp : &c->pp;
}

int layout_rank(const Layout *l, Coord c)
{
    return c.tp * l->stride[GROUP_TP] + c.dp * l->stride[GROUP_DP] + c.pp * l->stride[GROUP_PP];
}

Coord layout_coord(const Layout *l, int rank)
{
    g_assert(rank >= 0 && rank < l->ranks);
    Coord c;
    for (int k = 0; k < GROUP_KINDS; k++)
        *coord_at(&c, (GroupKind)k) = rank / l->stride[k] % l->size[k];
    return c;
}

int layout_group_of(const Layout *l, GroupKind kind, int rank)
{
    /* the two other coordinates, the lower kind fastest, number the groups
     * densely */
    Coord c = layout_coord(l, rank);
    int index = 0, scale = 1;
    for (int k = 0; k < GROUP_KINDS; k++) {
        if (k == (int)kind)
            continue;
        index += *coord_at(&c, (GroupKind)k) * scale;
        scale *= l->size[k];
    }
    return index;
}

Layout *layout_new(const PlanSpec *plan, const ClusterSpec *cluster)
{
    Layout *l = g_new0(Layout, 1);
    l->size[GROUP_TP] = plan->tp;
    l->size[GROUP_DP] = plan->dp;
    l->size[GROUP_PP] = plan->pp;
    int stride = 1;
    for (int i = 0; i < GROUP_KINDS; i++) {
        GroupKind k = orders[plan->rank_order][i];
        l->stride[k] = stride;
        stride *= l->size[k];
    }
    l->ranks = stride;
    g_assert(l->ranks > 0 && l->ranks <= cluster_spec_gpus(cluster));
    for (int k = 0; k < GROUP_KINDS; k++) {
        l->members[k] = g_new(int, l->ranks);
        for (int r = 0; r < l->ranks; r++) {
            Coord c = layout_coord(l, r);
            if (*coord_at(&c, (GroupKind)k) != 0)
                continue;
            int *slot = l->members[k] + (gsize)layout_group_of(l, (GroupKind)k, r) * l->size[k];
            for (int i = 0; i < l->size[k]; i++) {
                *coord_at(&c, (GroupKind)k) = i;
                slot[i] = layout_rank(l, c);
            }
        }
    }
    return l;
}

void layout_free(Layout *l)
{
    if (!l)
        return;
    for (int k = 0; k < GROUP_KINDS; k++)
        g_free(l->members[k]);
    g_free(l);
}

int layout_ranks(const Layout *l)
{
    return l->ranks;
}

int layout_size(const Layout *l, GroupKind kind)
{
    return l->size[kind];
}

int layout_stride(const Layout *l, GroupKind kind)
{
    return l->stride[kind];
}

int layout_groups(const Layout *l, GroupKind kind)
{
    return l->ranks / l->size[kind];
}

const int *layout_group(const Layout *l, GroupKind kind, int index, int *n)
{
    g_assert(index >= 0 && index < layout_groups(l, kind));
    *n = l->size[kind];
    return l->members[kind] + (gsize)index * l->size[kind];
}
