/* layout.c: rank coordinates, placement and communicator groups.
 *
 * Groups of a kind are stored flat: members[kind] holds group 0's members,
 * then group 1's, each group `size[kind]` long. Group index of a rank: its
 * two other coordinates, numbered in rank order. */
#include "layout/layout.h"

struct Layout {
    int t, d, p; /* sizes */
    int ranks;
    int *node;                 /* per rank */
    int size[GROUP_KINDS];     /* members per group */
    int *members[GROUP_KINDS]; /* all groups of a kind, flat */
};

static const char *const group_names[GROUP_KINDS] = {"tp", "dp", "pp"};

const char *layout_group_name(GroupKind kind)
{
    return group_names[kind];
}

int layout_rank(const Layout *l, Coord c)
{
    return c.tp + l->t * (c.dp + l->d * c.pp);
}

Coord layout_coord(const Layout *l, int rank)
{
    g_assert(rank >= 0 && rank < l->ranks);
    return (Coord){rank % l->t, (rank / l->t) % l->d, rank / (l->t * l->d)};
}

/* Coordinate `kind` of c, and c with that coordinate replaced by i. */
static int coord_get(Coord c, GroupKind kind)
{
    return kind == GROUP_TP ? c.tp : kind == GROUP_DP ? c.dp : c.pp;
}

static Coord coord_with(Coord c, GroupKind kind, int i)
{
    if (kind == GROUP_TP)
        c.tp = i;
    else if (kind == GROUP_DP)
        c.dp = i;
    else
        c.pp = i;
    return c;
}

int layout_group_of(const Layout *l, GroupKind kind, int rank)
{
    /* the rank of the group's first member, with the grouped coordinate
     * removed, numbers the groups densely */
    Coord c = coord_with(layout_coord(l, rank), kind, 0);
    switch (kind) {
    case GROUP_TP:
        return c.dp + l->d * c.pp;
    case GROUP_DP:
        return c.tp + l->t * c.pp;
    default:
        return c.tp + l->t * c.dp;
    }
}

Layout *layout_new(const PlanSpec *plan, const ClusterSpec *cluster)
{
    Layout *l = g_new0(Layout, 1);
    l->t = plan->tp;
    l->d = plan->dp;
    l->p = plan->pp;
    l->ranks = l->t * l->d * l->p;
    g_assert(l->ranks > 0 && l->ranks <= cluster_spec_gpus(cluster));
    l->node = g_new(int, l->ranks);
    for (int r = 0; r < l->ranks; r++)
        l->node[r] = r / cluster->gpus_per_node;
    l->size[GROUP_TP] = l->t;
    l->size[GROUP_DP] = l->d;
    l->size[GROUP_PP] = l->p;
    for (int k = 0; k < GROUP_KINDS; k++) {
        l->members[k] = g_new(int, l->ranks);
        for (int r = 0; r < l->ranks; r++) {
            Coord c = layout_coord(l, r);
            if (coord_get(c, (GroupKind)k) != 0)
                continue;
            int *slot = l->members[k] + (gsize)layout_group_of(l, (GroupKind)k, r) * l->size[k];
            for (int i = 0; i < l->size[k]; i++)
                slot[i] = layout_rank(l, coord_with(c, (GroupKind)k, i));
        }
    }
    return l;
}

void layout_free(Layout *l)
{
    if (!l)
        return;
    g_free(l->node);
    for (int k = 0; k < GROUP_KINDS; k++)
        g_free(l->members[k]);
    g_free(l);
}

int layout_ranks(const Layout *l)
{
    return l->ranks;
}

int layout_node(const Layout *l, int rank)
{
    return l->node[rank];
}

const int *layout_nodes(const Layout *l)
{
    return l->node;
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
