/* layout.c: rank coordinates, placement and communicator groups.
 *
 * Groups of a kind are stored flat: members[kind] holds group 0's members,
 * then group 1's, each group `size[kind]` long. Group index of a rank: its
 * coordinates outside the kind, numbered lower dimension fastest. */
#include "layout/layout.h"

#include "base/bigmem.h"

struct Layout {
    int size[GROUP_KINDS];    /* members per group of each kind */
    int stride[GROUP_DIMS];   /* rank = sum of coordinate x stride */
    int ranks;
    int *members[GROUP_KINDS]; /* all groups of a kind, flat */
    int *group_index[GROUP_KINDS]; /* per rank, for the expert grid's kinds */
};

/* The dimensions each kind of group spans. */
static const unsigned kind_dims[GROUP_KINDS] = {
    [GROUP_TP] = 1u << GROUP_TP,
    [GROUP_DP] = 1u << GROUP_DP,
    [GROUP_PP] = 1u << GROUP_PP,
    [GROUP_CP] = 1u << GROUP_CP,
    [GROUP_DP_CP] = 1u << GROUP_DP | 1u << GROUP_CP,
};

/* The dimensions of each rank order, fastest first, as RankOrder lists
 * them; cp right after tp where the name leaves it out. */
static const GroupKind orders[RANK_ORDERS][GROUP_DIMS] = {
    [RANK_ORDER_TP_DP_PP] = {GROUP_TP, GROUP_CP, GROUP_DP, GROUP_PP},
    [RANK_ORDER_TP_PP_DP] = {GROUP_TP, GROUP_CP, GROUP_PP, GROUP_DP},
    [RANK_ORDER_DP_TP_PP] = {GROUP_DP, GROUP_TP, GROUP_CP, GROUP_PP},
    [RANK_ORDER_DP_PP_TP] = {GROUP_DP, GROUP_PP, GROUP_TP, GROUP_CP},
    [RANK_ORDER_PP_TP_DP] = {GROUP_PP, GROUP_TP, GROUP_CP, GROUP_DP},
    [RANK_ORDER_PP_DP_TP] = {GROUP_PP, GROUP_DP, GROUP_TP, GROUP_CP},
    [RANK_ORDER_CP_TP_DP_PP] = {GROUP_CP, GROUP_TP, GROUP_DP, GROUP_PP},
    [RANK_ORDER_TP_DP_CP_PP] = {GROUP_TP, GROUP_DP, GROUP_CP, GROUP_PP},
};

static int *coord_at(Coord *c, GroupKind dim)
{
    switch (dim) {
    case GROUP_TP:
        return &c->tp;
    case GROUP_DP:
        return &c->dp;
    case GROUP_PP:
        return &c->pp;
    default:
        g_assert(dim == GROUP_CP);
        return &c->cp;
    }
}

int layout_rank(const Layout *l, Coord c)
{
    int rank = 0;
    for (int k = 0; k < GROUP_DIMS; k++)
        rank += *coord_at(&c, (GroupKind)k) * l->stride[k];
    return rank;
}

Coord layout_coord(const Layout *l, int rank)
{
    g_assert(rank >= 0 && rank < l->ranks);
    Coord c;
    for (int k = 0; k < GROUP_DIMS; k++)
        *coord_at(&c, (GroupKind)k) = rank / l->stride[k] % l->size[k];
    return c;
}

int layout_group_of(const Layout *l, GroupKind kind, int rank)
{
    if (l->group_index[kind])
        return l->group_index[kind][rank];
    /* the other coordinates, the lower dimension fastest, number the
     * groups densely */
    Coord c = layout_coord(l, rank);
    int index = 0, scale = 1;
    for (int k = 0; k < GROUP_DIMS; k++) {
        if (kind_dims[kind] >> k & 1)
            continue;
        index += *coord_at(&c, (GroupKind)k) * scale;
        scale *= l->size[k];
    }
    return index;
}

/* Fills the groups of every kind along the coordinates (GROUP_TP ..
 * GROUP_DP_CP) in one pass over the ranks. The coordinates advance like an
 * odometer, the order's fastest dimension first, and with them each
 * kind's slot for the rank: its group (layout_group_of's number: the
 * coordinates outside the kind, the lower dimension fastest) times the
 * group's size, plus its place in the group (the coordinates inside the
 * kind, the order's fastest first: increasing rank order). A coordinate
 * one step up moves the slot by its weight; one wrapping to 0, by 1 - its
 * size times it. */
static void fill_groups(Layout *l, RankOrder order)
{
    int weight[GROUP_EP][GROUP_DIMS], slot[GROUP_EP] = {0}, coord[GROUP_DIMS] = {0};
    for (int kind = 0; kind < GROUP_EP; kind++) {
        for (int k = 0, group = l->size[kind]; k < GROUP_DIMS; k++) {
            if (kind_dims[kind] >> k & 1)
                continue;
            weight[kind][k] = group;
            group *= l->size[k];
        }
        for (int i = 0, place = 1; i < GROUP_DIMS; i++) {
            GroupKind k = orders[order][i];
            if (!(kind_dims[kind] >> k & 1))
                continue;
            weight[kind][k] = place;
            place *= l->size[k];
        }
        l->members[kind] = bigmem_alloc(sizeof(int) * (gsize)l->ranks);
    }
    for (int r = 0; r < l->ranks; r++) {
        for (int kind = 0; kind < GROUP_EP; kind++)
            l->members[kind][slot[kind]] = r;
        for (int i = 0; i < GROUP_DIMS; i++) { /* the next rank's coordinates */
            int k = orders[order][i], step = ++coord[k] < l->size[k] ? 1 : 1 - l->size[k];
            coord[k] %= l->size[k];
            for (int kind = 0; kind < GROUP_EP; kind++)
                slot[kind] += step * weight[kind][k];
            if (step == 1)
                break;
        }
    }
}

/* Cuts every stage's tp x cp x dp ranks into the expert grid's groups
 * (layout.h): rank i of dp x cp group g, whose ranks share tp coordinate
 * t = g % tp and stage p = g / tp, is x = t + tp i of its stage; of x, e =
 * x % etp is its place in its expert tensor-parallel group, q = x / etp
 * that group's number in the stage, q % ep its place in its
 * expert-parallel group and q / ep that group's number among the stage's
 * (e, p) ones. Groups are numbered stage by stage. */
static void carve_expert_groups(Layout *l)
{
    int d = l->size[GROUP_DP_CP], tp = l->size[GROUP_TP], ep = l->size[GROUP_EP];
    int etp = l->size[GROUP_ETP], edp = l->size[GROUP_EDP];
    for (int k = GROUP_EP; k <= GROUP_ETP; k++) {
        l->members[k] = bigmem_alloc(sizeof(int) * (gsize)l->ranks);
        l->group_index[k] = bigmem_alloc(sizeof(int) * (gsize)l->ranks);
    }
    for (int g = 0; g < l->ranks / d; g++) {
        const int *dp_cp = l->members[GROUP_DP_CP] + (gsize)g * d;
        int t = g % tp, p = g / tp;
        for (int i = 0; i < d; i++) {
            int x = t + tp * i, e = x % etp, q = x / etp, r = dp_cp[i];
            int group[3] = {(e + etp * p) * edp + q / ep, (e + etp * p) * ep + q % ep,
                            p * (tp * d / etp) + q};
            int place[3] = {q % ep, q / ep, e};
            for (int k = GROUP_EP; k <= GROUP_ETP; k++) {
                l->members[k][group[k - GROUP_EP] * l->size[k] + place[k - GROUP_EP]] = r;
                l->group_index[k][r] = group[k - GROUP_EP];
            }
        }
    }
}

int layout_plan_size(const PlanSpec *plan, GroupKind kind)
{
    switch (kind) {
    case GROUP_TP:
        return plan->tp;
    case GROUP_CP:
        return plan->cp;
    case GROUP_DP:
        return plan->dp;
    case GROUP_PP:
        return plan->pp;
    case GROUP_DP_CP:
        return plan->dp * plan->cp;
    case GROUP_EP:
        return plan->ep;
    case GROUP_EDP:
        return plan->tp * plan->dp * plan->cp / (layout_plan_size(plan, GROUP_ETP) * plan->ep);
    case GROUP_ETP:
        return plan_field_value(plan, PLAN_ETP);
    case GROUP_KINDS:
        break;
    }
    g_assert_not_reached();
}

int layout_plan_stride(const PlanSpec *plan, GroupKind dim)
{
    g_assert(dim < GROUP_DIMS);
    int stride = 1;
    for (int i = 0; orders[plan->rank_order][i] != dim; i++)
        stride *= layout_plan_size(plan, orders[plan->rank_order][i]);
    return stride;
}

gboolean layout_plan_experts_apart(const PlanSpec *plan)
{
    return plan->ep > 1 || layout_plan_size(plan, GROUP_ETP) != plan->tp;
}

int layout_plan_most_on_a_node(const ClusterSpec *cluster, const PlanSpec *plan, int n,
                               int stride)
{
    int node = cluster->gpus_per_node;
    if (plan->rank_order != RANK_ORDER_TP_DP_PP || node % plan->tp != 0)
        return MIN(n, node);
    return MIN(n, (node + stride - 1) / stride);
}

Layout *layout_new(const PlanSpec *plan, const ClusterSpec *cluster)
{
    Layout *l = g_new0(Layout, 1);
    for (int k = 0; k < GROUP_KINDS; k++)
        l->size[k] = layout_plan_size(plan, (GroupKind)k);
    for (int k = 0; k < GROUP_DIMS; k++)
        l->stride[k] = layout_plan_stride(plan, (GroupKind)k);
    GroupKind slowest = orders[plan->rank_order][GROUP_DIMS - 1];
    l->ranks = l->stride[slowest] * l->size[slowest];
    g_assert(l->ranks > 0 && l->ranks <= cluster_spec_gpus(cluster));
    fill_groups(l, plan->rank_order);
    carve_expert_groups(l);
    return l;
}

void layout_free(Layout *l)
{
    if (!l)
        return;
    for (int k = 0; k < GROUP_KINDS; k++) {
        bigmem_free(l->members[k]);
        bigmem_free(l->group_index[k]);
    }
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
    g_assert(kind < GROUP_DIMS);
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
