/* symmetry.c: finding the shifts that map a plan's cluster onto itself.
 *
 * A candidate shift is tried as a map of GPUs (rank r runs on GPU r): it
 * maps the cluster onto itself when one node map, one local-index map and
 * one NIC map explain the image of every GPU, and every node is whole (a
 * partly used node breaks every symmetry). Steps are tried from 1 upward
 * among the divisors of the dimension's size. */
#include "net/symmetry.h"

#include <string.h>

typedef struct {
    GroupKind dim;
    int step, size; /* shift by `step` modulo `size` */
    int stride;     /* of the dimension's coordinate in a rank's number */
} Generator;

struct Symmetry {
    const Layout *layout;
    Generator gen[GROUP_DIMS];
    int n_gen;
    int orbit;
    int *simulated, n_simulated;
    int *local; /* per rank */
    char name[16];
};

/* A generator's coordinate of a rank. */
static int coord(const Generator *g, int rank)
{
    return rank / g->stride % g->size;
}

/* Rank `rank` shifted by `amount` steps of generator g: its coordinate
 * along g's dimension moves, modulo the size, and nothing else. */
static int shift_by(const Generator *g, int rank, int amount)
{
    int x = coord(g, rank);
    int moved = ((x + amount * g->step) % g->size + g->size) % g->size;
    return rank + (moved - x) * g->stride;
}

/* Whether shifting `dim` by `step` maps the cluster onto itself. */
static gboolean maps_cluster(const Layout *l, const Topology *t, GroupKind dim, int step)
{
    int gpus = layout_ranks(l), per_node = topology_gpus_per_node(t);
    if (gpus % per_node != 0)
        return FALSE;
    int nodes = gpus / per_node, nics = topology_nics(t);
    g_autofree int *node_map = g_new(int, nodes);
    g_autofree int *local_map = g_new(int, per_node);
    g_autofree int *nic_map = g_new(int, nics);
    memset(node_map, -1, sizeof(int) * (gsize)nodes);
    memset(local_map, -1, sizeof(int) * (gsize)per_node);
    memset(nic_map, -1, sizeof(int) * (gsize)nics);
    Generator g = {dim, step, layout_size(l, dim), layout_stride(l, dim)};
    for (int gpu = 0; gpu < gpus; gpu++) {
        int image = shift_by(&g, gpu, 1);
        int pairs[3][2] = {{gpu / per_node, image / per_node},
                           {gpu % per_node, image % per_node},
                           {topology_nic(t, gpu), topology_nic(t, image)}};
        int *maps[3] = {node_map, local_map, nic_map};
        for (int k = 0; k < 3; k++) {
            int *to = &maps[k][pairs[k][0]];
            if (*to >= 0 && *to != pairs[k][1])
                return FALSE;
            *to = pairs[k][1];
        }
    }
    return TRUE;
}

Symmetry *symmetry_new(const Layout *layout, const Topology *t, unsigned dims)
{
    Symmetry *sym = g_new0(Symmetry, 1);
    sym->layout = layout;
    sym->orbit = 1;
    GString *name = g_string_new(NULL);
    static const GroupKind candidates[] = {GROUP_TP, GROUP_CP, GROUP_DP};
    static const char *const names[GROUP_DIMS] = {
        [GROUP_TP] = "tp", [GROUP_CP] = "cp", [GROUP_DP] = "dp"};
    for (gsize i = 0; i < G_N_ELEMENTS(candidates); i++) {
        GroupKind dim = candidates[i];
        int size = layout_size(layout, dim);
        if (!(dims & 1u << dim))
            continue;
        for (int step = 1; step < size; step++) {
            if (size % step != 0 || !maps_cluster(layout, t, dim, step))
                continue;
            sym->gen[sym->n_gen++] = (Generator){dim, step, size, layout_stride(layout, dim)};
            sym->orbit *= size / step;
            g_string_append_printf(name, "%s%s", name->len ? " x " : "", names[dim]);
            break;
        }
    }
    g_strlcpy(sym->name, name->len ? name->str : "none", sizeof sym->name);
    g_string_free(name, TRUE);
    int ranks = layout_ranks(layout);
    sym->local = g_new(int, ranks);
    sym->simulated = g_new(int, ranks / sym->orbit);
    for (int r = 0; r < ranks; r++) {
        gboolean first = TRUE;
        for (int i = 0; i < sym->n_gen; i++)
            first = first && coord(&sym->gen[i], r) < sym->gen[i].step;
        sym->local[r] = first ? sym->n_simulated : -1;
        if (first)
            sym->simulated[sym->n_simulated++] = r;
    }
    g_assert(sym->n_simulated * sym->orbit == ranks);
    return sym;
}

void symmetry_free(Symmetry *sym)
{
    if (!sym)
        return;
    g_free(sym->local);
    g_free(sym->simulated);
    g_free(sym);
}

const int *symmetry_simulated(const Symmetry *sym, int *n)
{
    *n = sym->n_simulated;
    return sym->simulated;
}

int symmetry_local(const Symmetry *sym, int rank)
{
    return sym->local[rank];
}

int symmetry_orbit(const Symmetry *sym)
{
    return sym->orbit;
}

const char *symmetry_name(const Symmetry *sym)
{
    return sym->name;
}

int symmetry_generators(const Symmetry *sym)
{
    return sym->n_gen;
}

GroupKind symmetry_generator_dim(const Symmetry *sym, int i)
{
    return sym->gen[i].dim;
}

int symmetry_shift(const Symmetry *sym, int i, int rank)
{
    return shift_by(&sym->gen[i], rank, 1);
}

gboolean symmetry_group_images(const Symmetry *sym, const int *members, int n, double *images,
                               unsigned *invariant)
{
    *images = 1;
    *invariant = 0;
    g_autoptr(GHashTable) in = NULL; /* the members, when a shift must map them onto themselves */
    for (int i = 0; i < sym->n_gen; i++) {
        const Generator *g = &sym->gen[i];
        gboolean shared = TRUE;
        for (int m = 1; m < n && shared; m++)
            shared = coord(g, members[m]) == coord(g, members[0]);
        if (shared) { /* every shift moves the whole group: size / step images */
            *images *= g->size / g->step;
            continue;
        }
        if (!in) {
            in = g_hash_table_new(g_direct_hash, g_direct_equal);
            for (int m = 0; m < n; m++)
                g_hash_table_add(in, GINT_TO_POINTER(members[m] + 1));
        }
        for (int m = 0; m < n; m++) /* distinct members onto members: onto itself */
            if (!g_hash_table_contains(in, GINT_TO_POINTER(shift_by(g, members[m], 1) + 1)))
                return FALSE;
        *invariant |= 1u << i;
    }
    return TRUE;
}

void symmetry_canon(const Symmetry *sym, int src, int dst, int *csrc, int *cdst)
{
    *csrc = src;
    *cdst = dst;
    for (int i = 0; i < sym->n_gen; i++) {
        const Generator *g = &sym->gen[i];
        int back = coord(g, *csrc) / g->step; /* steps from the simulated rank */
        *csrc = shift_by(g, *csrc, -back);
        *cdst = shift_by(g, *cdst, -back);
    }
}
