/* symmetry.c: finding the shifts that map a plan's cluster onto itself.
 *
 * A candidate shift or rotation is tried as a map of GPUs (rank r runs on
 * GPU r): it maps the cluster onto itself when one node map, one
 * local-index map and one NIC map explain the image of every GPU, and
 * every node is whole (a partly used node breaks every symmetry). Steps
 * are tried from 1 upward among the divisors of the dimension's size (a
 * rotation's: of its window, the shift's step), keeping the first that
 * also maps every communicator group onto one of its kind. The link classes follow
 * from the GPUs' orbits (symmetry.h, symmetry_link_classes).
 *
 * Cells (symmetry_new_cells): a what-if marks orbit coordinates, and each
 * orbit is cut, generator by generator, into its marked values and the
 * rest; a cell's key is a digit per generator (mixed radix), its
 * simulated rank its orbit's lowest shifted to the lowest value of each
 * digit. Why the cells run alike is in symmetry.h; what the links need
 * besides, net.c checks. */
#include "net/symmetry.h"

#include <string.h>

struct Symmetry {
    const Layout *layout;
    SymmetryGenerator gen[2 * GROUP_DIMS];
    unsigned bit[2 * GROUP_DIMS]; /* each generator's SYMMETRY_ bit */
    int n_gen;
    int orbit;
    int *orbit_rep, n_orbits; /* each orbit's lowest rank, increasing */
    int *orbit_local;         /* per rank: its index there, or -1 */
    /* cells (symmetry_new_cells), per generator: each value's cell key digit
     * (the marked values 0, 1, ... in increasing order, then one for all the
     * unmarked), the digit's radix, and the unmarked values, increasing */
    int *digit[2 * GROUP_DIMS];
    int radix[2 * GROUP_DIMS];
    int *unmarked[2 * GROUP_DIMS], n_unmarked[2 * GROUP_DIMS];
    int cells_per_orbit;
    gboolean cells;              /* some value is marked */
    unsigned nic_moving;         /* a bit per generator that moves GPUs between NICs */
    int *simulated, n_simulated; /* each cell's lowest rank, increasing */
    int *local;                  /* per rank */
    int *weight;                 /* per simulated rank: its cell's ranks */
    char name[16];
};

/* Whether generator g maps the cluster onto itself (with `in_nodes`,
 * every node onto itself). */
static gboolean maps_cluster(const Layout *l, const Topology *t, const SymmetryGenerator *g,
                             gboolean in_nodes)
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
    for (int gpu = 0; gpu < gpus; gpu++) {
        int image = symmetry_shift_by(g, gpu, 1);
        if (in_nodes && image / per_node != gpu / per_node)
            return FALSE;
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

/* Whether generator g maps every group of every kind onto a group of its
 * kind: always for the coordinates' groups (ranks that differ in some
 * coordinates only still do when one moves), not for expert-parallel
 * blocks a step cuts across, the only kinds looked at. */
static gboolean maps_groups(const Layout *l, const SymmetryGenerator *g)
{
    if (layout_size(l, GROUP_EP) == 1 && layout_size(l, GROUP_ETP) == layout_size(l, GROUP_TP))
        return TRUE; /* single ranks, dp x cp groups and tp groups */
    for (int kind = GROUP_EP; kind <= GROUP_ETP; kind++) {
        g_autofree int *image = g_new(int, layout_groups(l, kind));
        memset(image, -1, sizeof(int) * (gsize)layout_groups(l, kind));
        for (int r = 0; r < layout_ranks(l); r++) {
            int *to = &image[layout_group_of(l, kind, r)];
            int group = layout_group_of(l, kind, symmetry_shift_by(g, r, 1));
            if (*to >= 0 && *to != group)
                return FALSE;
            *to = group;
        }
    }
    return TRUE;
}

/* The smallest step of `dim` that works in windows of `window` (a
 * turn's: one that keeps every GPU on its node, as a turn that swaps
 * nodes runs the collectives' rings out of order): 0 when none does. */
static int smallest_step(const Layout *l, const Topology *t, GroupKind dim, int window)
{
    gboolean rotation = window < layout_size(l, dim);
    for (int step = 1; step < window; step++) {
        SymmetryGenerator g = {
            .dim = dim, .step = step, .size = window, .stride = layout_stride(l, dim)};
        if (window % step == 0 && maps_cluster(l, t, &g, rotation) && maps_groups(l, &g))
            return step;
    }
    return 0;
}

static void add_generator(Symmetry *sym, SymmetryGenerator g, unsigned bit)
{
    sym->gen[sym->n_gen] = g;
    sym->bit[sym->n_gen++] = bit;
    sym->orbit *= g.size / g.step;
}

/* The shifts and turns `dims` allows that map the cluster onto itself
 * (symmetry.h), and the orbits' lowest ranks. */
static void find_generators(Symmetry *sym, const Topology *t, unsigned dims)
{
    const Layout *layout = sym->layout;
    sym->orbit = 1;
    GString *name = g_string_new(NULL);
    static const GroupKind candidates[] = {GROUP_TP, GROUP_CP, GROUP_DP};
    static const char *const names[GROUP_DIMS] = {
        [GROUP_TP] = "tp", [GROUP_CP] = "cp", [GROUP_DP] = "dp"};
    for (gsize i = 0; i < G_N_ELEMENTS(candidates); i++) {
        GroupKind dim = candidates[i];
        int size = layout_size(layout, dim), stride = layout_stride(layout, dim), had = sym->n_gen;
        if (!(dims & (SYMMETRY_SHIFT(dim) | SYMMETRY_ROTATE(dim))))
            continue;
        int step = smallest_step(layout, t, dim, size);
        if (step > 0 && dims & SYMMETRY_SHIFT(dim))
            add_generator(
                sym, (SymmetryGenerator){.dim = dim, .step = step, .size = size, .stride = stride},
                SYMMETRY_SHIFT(dim));
        /* the turn: in the window dividing the shift's step that gives it
         * the most places, the largest of those that tie (its steps move
         * more ranks at once, as whole expert blocks, which collectives
         * break less often) */
        int window = 0, turn = 0;
        for (int w = 2; w <= step && dims & SYMMETRY_ROTATE(dim); w++) {
            int k = step % w == 0 ? smallest_step(layout, t, dim, w) : 0;
            if (k > 0 && (turn == 0 || w / k >= window / turn)) {
                window = w;
                turn = k;
            }
        }
        if (turn > 0)
            add_generator(
                sym,
                (SymmetryGenerator){.dim = dim, .step = turn, .size = window, .stride = stride},
                SYMMETRY_ROTATE(dim));
        if (sym->n_gen > had)
            g_string_append_printf(name, "%s%s", name->len ? " x " : "", names[dim]);
    }
    g_strlcpy(sym->name, name->len ? name->str : "none", sizeof sym->name);
    g_string_free(name, TRUE);
    int ranks = layout_ranks(layout);
    sym->orbit_local = g_new(int, ranks);
    sym->orbit_rep = g_new(int, ranks / sym->orbit);
    for (int r = 0; r < ranks; r++) {
        gboolean first = TRUE;
        for (int i = 0; i < sym->n_gen; i++)
            first = first && symmetry_coord(&sym->gen[i], r) < sym->gen[i].step;
        sym->orbit_local[r] = first ? sym->n_orbits : -1;
        if (first)
            sym->orbit_rep[sym->n_orbits++] = r;
    }
    g_assert(sym->n_orbits * sym->orbit == ranks);
}

/* Rank `rank`'s orbit coordinate along generator i (symmetry.h). */
static int value(const Symmetry *sym, int i, int rank)
{
    return symmetry_coord(&sym->gen[i], rank) / sym->gen[i].step;
}

/* The cell key of `rank` (a digit per generator of `gens`, the others'
 * 0): its cell among its orbit's. */
static int cell_key(const Symmetry *sym, int rank, unsigned gens)
{
    int key = 0;
    for (int i = sym->n_gen - 1; i >= 0; i--)
        key = key * sym->radix[i] + (gens >> i & 1 ? sym->digit[i][value(sym, i, rank)] : 0);
    return key;
}

/* Whether generator i moves some GPU of `t` to another NIC. */
static gboolean moves_nics(const Symmetry *sym, const Topology *t, int i)
{
    for (int gpu = 0; gpu < topology_gpus(t); gpu++)
        if (topology_nic(t, symmetry_shift_by(&sym->gen[i], gpu, 1)) != topology_nic(t, gpu))
            return TRUE;
    return FALSE;
}

/* Marks the values of `rank` along the generators of `gens` in `marked`
 * (per generator, a flag per value). */
static void mark(const Symmetry *sym, guint8 **marked, int rank, unsigned gens)
{
    for (int i = 0; i < sym->n_gen; i++)
        if (gens >> i & 1)
            marked[i][value(sym, i, rank)] = 1;
}

/* Marks what `m` singles out (symmetry_new_cells). */
static void mark_all(const Symmetry *sym, const Topology *t, const SymmetryMarks *m,
                     guint8 **marked)
{
    unsigned all = (1u << sym->n_gen) - 1;
    for (int gpu = 0; gpu < layout_ranks(sym->layout); gpu++) { /* rank r on GPU r */
        if (m->gpu_factor && m->gpu_factor[gpu] != 1)
            mark(sym, marked, gpu, all);
        for (int dir = 0; m->link_scale && dir < 2; dir++) {
            if (m->link_scale[topology_gpu_link(t, gpu, LINK_NVLINK, dir)] != 1 ||
                m->link_scale[topology_gpu_link(t, gpu, LINK_NIC, dir)] != 1)
                mark(sym, marked, gpu, all);
            if (m->link_scale[topology_gpu_link(t, gpu, LINK_SPINE, dir)] != 1)
                mark(sym, marked, gpu, sym->nic_moving);
        }
    }
    for (int k = 0; k < m->n_roles; k++) {
        unsigned gens = 0;
        for (int i = 0; i < sym->n_gen; i++)
            gens |= (unsigned)((m->roles[k].dims & sym->bit[i]) != 0) << i;
        mark(sym, marked, m->roles[k].rank, gens);
    }
}

/* The cells of the marked values: each generator's digits, and every
 * cell's lowest rank and size, the cells in increasing order of it. */
static void make_cells(Symmetry *sym, guint8 **marked)
{
    sym->cells_per_orbit = 1;
    for (int i = 0; i < sym->n_gen; i++) {
        int m = sym->gen[i].size / sym->gen[i].step, marks = 0;
        sym->digit[i] = g_new(int, m);
        sym->unmarked[i] = g_new(int, m);
        for (int v = 0; v < m; v++)
            if (marked[i][v])
                sym->digit[i][v] = marks++;
            else
                sym->unmarked[i][sym->n_unmarked[i]++] = v;
        for (int v = 0; v < m; v++)
            if (!marked[i][v])
                sym->digit[i][v] = marks;
        sym->radix[i] = marks + (sym->n_unmarked[i] > 0);
        sym->cells = sym->cells || marks > 0;
        sym->cells_per_orbit *= sym->radix[i];
    }
    int cells = sym->n_orbits * sym->cells_per_orbit, ranks = layout_ranks(sym->layout);
    sym->simulated = g_new(int, cells);
    sym->weight = g_new(int, cells);
    sym->local = g_new(int, ranks);
    memset(sym->local, -1, sizeof(int) * (gsize)ranks);
    g_autofree int *size = g_new0(int, ranks); /* per rank: its cell's if it is the lowest */
    for (int o = 0; o < sym->n_orbits; o++)
        for (int key = 0; key < sym->cells_per_orbit; key++) {
            int rank = sym->orbit_rep[o], ranks_in = 1;
            for (int i = 0, rest = key; i < sym->n_gen; rest /= sym->radix[i], i++) {
                int d = rest % sym->radix[i], marks = sym->radix[i] - (sym->n_unmarked[i] > 0);
                int lowest = d < marks ? 0 : sym->unmarked[i][0];
                for (int v = 0; d < marks && v < sym->gen[i].size / sym->gen[i].step; v++)
                    if (marked[i][v] && sym->digit[i][v] == d)
                        lowest = v;
                ranks_in *= d < marks ? 1 : sym->n_unmarked[i];
                rank = symmetry_shift_by(&sym->gen[i], rank, lowest);
            }
            size[rank] = ranks_in;
        }
    for (int r = 0; r < ranks; r++) /* in increasing order */
        if (size[r] > 0) {
            sym->weight[sym->n_simulated] = size[r];
            sym->local[r] = sym->n_simulated;
            sym->simulated[sym->n_simulated++] = r;
        }
    g_assert(sym->n_simulated == cells);
}

Symmetry *symmetry_new_cells(const Layout *layout, const Topology *t, unsigned dims,
                             const SymmetryMarks *marks)
{
    static const SymmetryMarks none = {0};
    const SymmetryMarks *m = marks ? marks : &none;
    Symmetry *sym = g_new0(Symmetry, 1);
    sym->layout = layout;
    find_generators(sym, t, dims);
    guint8 *marked[2 * GROUP_DIMS];
    for (int i = 0; i < sym->n_gen; i++) {
        marked[i] = g_new0(guint8, sym->gen[i].size / sym->gen[i].step);
        sym->nic_moving |= (unsigned)moves_nics(sym, t, i) << i;
    }
    mark_all(sym, t, m, marked);
    make_cells(sym, marked);
    for (int l = 0; m->link_scale && l < topology_links(t) && sym->n_gen > 0; l++)
        sym->cells = sym->cells || m->link_scale[l] != 1; /* a slowed rail that marks nothing */
    for (int i = 0; i < sym->n_gen; i++)
        g_free(marked[i]);
    return sym;
}

Symmetry *symmetry_new(const Layout *layout, const Topology *t, unsigned dims)
{
    return symmetry_new_cells(layout, t, dims, NULL);
}

void symmetry_free(Symmetry *sym)
{
    if (!sym)
        return;
    for (int i = 0; i < sym->n_gen; i++) {
        g_free(sym->digit[i]);
        g_free(sym->unmarked[i]);
    }
    g_free(sym->orbit_rep);
    g_free(sym->orbit_local);
    g_free(sym->local);
    g_free(sym->simulated);
    g_free(sym->weight);
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
    return sym->cells ? 0 : sym->orbit;
}

gboolean symmetry_has_cells(const Symmetry *sym)
{
    return sym->cells;
}

gboolean symmetry_marked(const Symmetry *sym, int i, int rank)
{
    return sym->digit[i][value(sym, i, rank)] < sym->radix[i] - (sym->n_unmarked[i] > 0);
}

int symmetry_weight(const Symmetry *sym, int local)
{
    return sym->weight[local];
}

int symmetry_cells_per_orbit(const Symmetry *sym)
{
    return sym->cells_per_orbit;
}

const char *symmetry_name(const Symmetry *sym)
{
    return sym->name;
}

int symmetry_generators(const Symmetry *sym)
{
    return sym->n_gen;
}

unsigned symmetry_generator_bit(const Symmetry *sym, int i)
{
    return sym->bit[i];
}

int symmetry_shift(const Symmetry *sym, int i, int rank)
{
    return symmetry_shift_by(&sym->gen[i], rank, 1);
}

unsigned symmetry_group_images(const Symmetry *sym, const int *members, int n, double *images,
                               unsigned *invariant)
{
    *images = 1;
    *invariant = 0;
    unsigned broken = 0;
    g_autofree guint8 *in = NULL; /* a bit per rank: the members, when a shift must map them
                                   * onto themselves */
    for (int i = 0; i < sym->n_gen; i++) {
        const SymmetryGenerator *g = &sym->gen[i];
        gboolean window = TRUE; /* the members' coordinates within one window of `step` */
        for (int m = 1; m < n && window; m++)
            window =
                symmetry_coord(g, members[m]) / g->step == symmetry_coord(g, members[0]) / g->step;
        if (window) { /* every shift moves the whole group to another window: size / step
                       * images */
            *images *= g->size / g->step;
            continue;
        }
        if (!in) {
            in = g_new0(guint8, layout_ranks(sym->layout) / 8 + 1);
            for (int m = 0; m < n; m++)
                in[members[m] / 8] |= (guint8)(1u << members[m] % 8);
        }
        gboolean onto_itself = TRUE; /* distinct members onto members */
        for (int m = 0; m < n && onto_itself; m++) {
            int image = symmetry_shift_by(g, members[m], 1);
            onto_itself = in[image / 8] >> image % 8 & 1;
        }
        if (onto_itself)
            *invariant |= 1u << i;
        else
            broken |= 1u << i;
    }
    return broken;
}

const SymmetryGenerator *symmetry_generator_list(const Symmetry *sym, int *n)
{
    *n = sym->n_gen;
    return sym->gen;
}

/* The simulated rank of `rank`'s orbit. */
static int representative(const Symmetry *sym, int rank)
{
    int simulated, same;
    symmetry_canon_by(sym->gen, sym->n_gen, rank, rank, &simulated, &same);
    return simulated;
}

int symmetry_link_classes(const Symmetry *sym, const Topology *t, int *link_class)
{
    int gpus = topology_gpus(t), n = sym->n_orbits, rails = topology_nics(t);
    int per_node = topology_gpus_per_node(t);
    g_assert(gpus == layout_ranks(sym->layout));
    /* per simulated rank: its NIC's class among the NIC classes, and the
     * lowest rail its orbit's GPUs use */
    g_autofree int *nic_class = g_new(int, n), *rail_low = g_new(int, n);
    int nic_classes = 0;
    for (int j = 0; j < n; j++) {
        nic_class[j] = j > 0 && topology_gpu_link(t, sym->orbit_rep[j], LINK_NIC, 0) ==
                                    topology_gpu_link(t, sym->orbit_rep[j - 1], LINK_NIC, 0)
                           ? nic_classes - 1
                           : nic_classes++;
        rail_low[j] = rails;
    }
    for (int gpu = 0; gpu < gpus; gpu++) { /* NVLink ports and NICs */
        int j = sym->orbit_local[representative(sym, gpu)];
        rail_low[j] = MIN(rail_low[j], topology_nic(t, gpu));
        for (int dir = 0; dir < 2; dir++) {
            link_class[topology_gpu_link(t, gpu, LINK_NVLINK, dir)] = 2 * j + dir;
            link_class[topology_gpu_link(t, gpu, LINK_NIC, dir)] = 2 * (n + nic_class[j]) + dir;
        }
    }
    g_autofree int *rail_class = g_new0(int, rails); /* first marked, then numbered */
    for (int j = 0; j < n; j++)
        rail_class[rail_low[j]] = 1;
    int rail_classes = 0;
    for (int r = 0; r < rails; r++)
        rail_class[r] = rail_class[r] ? rail_classes++ : -1;
    for (int gpu = 0; gpu < per_node; gpu++) { /* node 0's GPUs use every rail */
        int first = 2 * (n + nic_classes +
                         rail_class[rail_low[sym->orbit_local[representative(sym, gpu)]]]);
        for (int dir = 0; dir < 2; dir++)
            link_class[topology_gpu_link(t, gpu, LINK_SPINE, dir)] = first + dir;
    }
    return 2 * (n + nic_classes + rail_classes);
}

void symmetry_instances(const Symmetry *sym, const int *members, int n, SymmetryInstances *out)
{
    *out = (SymmetryInstances){.n = 1};
    for (int i = 0; i < sym->n_gen; i++) {
        int v = value(sym, i, members[0]);
        gboolean one = TRUE; /* the members hold one value of it */
        for (int m = 1; m < n && one; m++)
            one = value(sym, i, members[m]) == v;
        if (!one || symmetry_marked(sym, i, members[0]))
            continue; /* every value, or a marked one: itself */
        out->gen[out->moved] = i;
        out->value[out->moved] = v;
        out->values[out->moved++] = sym->n_unmarked[i];
        out->n *= sym->n_unmarked[i];
    }
}

int symmetry_instance_gpu(const Symmetry *sym, const SymmetryInstances *in, int k, int gpu)
{
    for (int j = 0; j < in->moved; k /= in->values[j], j++) {
        int i = in->gen[j], to = sym->unmarked[i][k % in->values[j]];
        gpu = symmetry_shift_by(&sym->gen[i], gpu, to - in->value[j]);
    }
    return gpu;
}

int symmetry_link_units(const Symmetry *sym, const Topology *t, int *unit)
{
    int links = topology_links(t), classes = symmetry_link_classes(sym, t, unit);
    unsigned all = (1u << sym->n_gen) - 1;
    g_autofree int *key = g_new(int, links);
    for (int l = 0; l < links; l++) /* a class's, the cell key added below */
        key[l] = unit[l] * sym->cells_per_orbit;
    for (int gpu = 0; gpu < topology_gpus(t); gpu++)
        for (int dir = 0; dir < 2; dir++) {
            int port = topology_gpu_link(t, gpu, LINK_NVLINK, dir),
                nic = topology_gpu_link(t, gpu, LINK_NIC, dir);
            key[port] = unit[port] * sym->cells_per_orbit + cell_key(sym, gpu, all);
            key[nic] = unit[nic] * sym->cells_per_orbit + cell_key(sym, gpu, all);
        }
    for (int gpu = 0; gpu < topology_gpus_per_node(t); gpu++) /* node 0's use every rail */
        for (int dir = 0; dir < 2; dir++) {
            int rail = topology_gpu_link(t, gpu, LINK_SPINE, dir);
            key[rail] = unit[rail] * sym->cells_per_orbit + cell_key(sym, gpu, sym->nic_moving);
        }
    g_autofree int *number = g_new(int, (gsize)classes * sym->cells_per_orbit);
    memset(number, -1, sizeof(int) * (gsize)classes * sym->cells_per_orbit);
    int units = 0;
    for (int l = 0; l < links; l++) {
        if (number[key[l]] < 0)
            number[key[l]] = units++;
        unit[l] = number[key[l]];
    }
    return units;
}
