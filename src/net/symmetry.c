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
    gboolean host_maps;          /* the shifts map the GPUs sharing a switch or a CPU onto GPUs
                                  * sharing one (unit_components) */
    int *simulated, n_simulated; /* each cell's lowest rank, increasing */
    int *local;                  /* per rank */
    int *weight;                 /* per simulated rank: its cell's ranks */
    char name[16];
};

/* The classes whose units the GPUs of a node share in order (the NVLink
 * ports and host links are each GPU's own): a shift maps the cluster onto
 * itself only if it maps the GPUs that share a NIC onto GPUs that share
 * one, and, with `host_maps`, those that share a switch or a CPU too
 * (without, symmetry_new_cells checks that the orbits load them alike,
 * unit_components). */
static const LinkClass shared_classes[] = {LINK_NIC, LINK_UPLINK, LINK_MEMORY};
#define MAPS (2 + G_N_ELEMENTS(shared_classes)) /* nodes, local indices, shared units */

/* Whether generator g maps the cluster onto itself (with `in_nodes`,
 * every node onto itself): one map of each of nodes, local indices and
 * the shared classes' units explains the image of every GPU. */
static gboolean maps_cluster(const Layout *l, const Topology *t, const SymmetryGenerator *g,
                             gboolean in_nodes, gboolean host_maps)
{
    int gpus = layout_ranks(l), per_node = topology_gpus_per_node(t);
    if (gpus % per_node != 0)
        return FALSE;
    int size[MAPS] = {gpus / per_node, per_node};
    for (gsize k = 0; k < G_N_ELEMENTS(shared_classes); k++)
        size[2 + k] =
            shared_classes[k] == LINK_NIC || host_maps ? topology_units(t, shared_classes[k]) : 0;
    int *maps[MAPS];
    for (gsize k = 0; k < MAPS; k++)
        maps[k] = memset(g_new(int, MAX(size[k], 1)), -1, sizeof(int) * (gsize)MAX(size[k], 1));
    gboolean ok = TRUE;
    for (int gpu = 0; gpu < gpus && ok; gpu++) {
        int image = symmetry_shift_by(g, gpu, 1);
        int pairs[MAPS][2] = {{gpu / per_node, image / per_node},
                              {gpu % per_node, image % per_node}};
        for (gsize k = 0; k < G_N_ELEMENTS(shared_classes); k++)
            for (int e = 0; e < 2 && size[2 + k] > 0; e++)
                pairs[2 + k][e] = topology_gpu_unit(t, e ? image : gpu, shared_classes[k]);
        ok = !in_nodes || image / per_node == gpu / per_node;
        for (gsize k = 0; k < MAPS && ok; k++) {
            if (size[k] == 0)
                continue; /* a class the cluster lacks, or one not mapped */
            int *to = &maps[k][pairs[k][0]];
            ok = *to < 0 || *to == pairs[k][1];
            *to = pairs[k][1];
        }
    }
    for (gsize k = 0; k < MAPS; k++)
        g_free(maps[k]);
    return ok;
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
static int smallest_step(const Symmetry *sym, const Topology *t, GroupKind dim, int window)
{
    const Layout *l = sym->layout;
    gboolean rotation = window < layout_size(l, dim);
    for (int step = 1; step < window; step++) {
        SymmetryGenerator g = {
            .dim = dim, .step = step, .size = window, .stride = layout_stride(l, dim)};
        if (window % step == 0 && maps_cluster(l, t, &g, rotation, sym->host_maps) &&
            maps_groups(l, &g))
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
    sym->n_gen = sym->n_orbits = 0;
    g_clear_pointer(&sym->orbit_local, g_free);
    g_clear_pointer(&sym->orbit_rep, g_free);
    GString *name = g_string_new(NULL);
    static const GroupKind candidates[] = {GROUP_TP, GROUP_CP, GROUP_DP};
    static const char *const names[GROUP_DIMS] = {
        [GROUP_TP] = "tp", [GROUP_CP] = "cp", [GROUP_DP] = "dp"};
    for (gsize i = 0; i < G_N_ELEMENTS(candidates); i++) {
        GroupKind dim = candidates[i];
        int size = layout_size(layout, dim), stride = layout_stride(layout, dim), had = sym->n_gen;
        if (!(dims & (SYMMETRY_SHIFT(dim) | SYMMETRY_ROTATE(dim))))
            continue;
        int step = smallest_step(sym, t, dim, size);
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
            int k = step % w == 0 ? smallest_step(sym, t, dim, w) : 0;
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
        for (int c = 0; m->link_scale && c < LINK_CLASSES; c++)
            for (int dir = 0; dir < 2; dir++) { /* a rail's GPUs, every GPU of a link else */
                int l = topology_gpu_link(t, gpu, (LinkClass)c, dir);
                if (l >= 0 && m->link_scale[l] != 1)
                    mark(sym, marked, gpu, c == LINK_SPINE ? sym->nic_moving : all);
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

/* The simulated rank of `rank`'s orbit (below). */
static int representative(const Symmetry *sym, int rank);

/* The root of `u` in the union-find `parent`, halving paths. */
static int root(int *parent, int u)
{
    while (parent[u] != u)
        u = parent[u] = parent[parent[u]];
    return u;
}

/* The classes of the units of class `c` (not the spine) under the orbits
 * (`orbit`, per GPU; NULL: found GPU by GPU): comp[u] for every unit
 * (node x units + unit), the components of the units joined by the orbits
 * whose GPUs they serve, numbered in order of their lowest unit; returns
 * how many. A class's links carry the same load when every orbit serves
 * each unit of its component with as many GPUs (all its GPUs alike, by
 * symmetry): -1 when some does not. The shifts that map the units onto
 * units make it so (the classes are then the units' orbits); shifts that
 * do not may too (a tp shift by one inside a node of two CPUs, whose orbit
 * gives each CPU four GPUs). A unit a GPU (an NVLink port, a NIC of its
 * own) is its GPU's orbit's: orbits are numbered by their lowest GPU. */
static int unit_components(const Symmetry *sym, const Topology *t, LinkClass c, const int *orbit,
                           int *comp)
{
    int per_node = topology_gpus_per_node(t), units = topology_units(t, c), gpus = topology_gpus(t);
    int total = gpus / per_node * units, n = sym->n_orbits;
    if (units == per_node && orbit) { /* a unit a GPU, unit u GPU u */
        memcpy(comp, orbit, sizeof(int) * (gsize)total);
        return n;
    }
    if (n == 1) { /* one orbit: one component, its units alike when each serves as many */
        int each = per_node / units;
        gboolean alike = per_node % units == 0;
        for (int gpu = 0; gpu < per_node && alike; gpu++) /* every node's units are node 0's */
            alike = topology_gpu_unit(t, gpu, c) == gpu / each;
        memset(comp, 0, sizeof(int) * (gsize)total);
        return alike ? 1 : -1;
    }
    g_autofree int *first = g_new(int, n), *touched = g_new0(int, n), *count = g_new0(int, n);
    g_autofree int *orbits = g_new(int, per_node + 1), *size = g_new0(int, MAX(total, 1));
    memset(first, -1, sizeof(int) * (gsize)n);
    for (int u = 0; u < total; u++)
        comp[u] = u;
    gboolean alike = TRUE;
    for (int gpu = 0, k = 0, u = 0; gpu < gpus; gpu++) { /* a unit's GPUs are in a row */
        orbits[k++] = orbit ? orbit[gpu] : sym->orbit_local[representative(sym, gpu)];
        int next = gpu + 1 < gpus ? (gpu + 1) / per_node * units + topology_gpu_unit(t, gpu + 1, c)
                                  : total;
        if (next == u)
            continue;
        for (int i = 1; i < k; i++) /* the unit's orbits sorted, few */
            for (int j = i; j > 0 && orbits[j - 1] > orbits[j]; j--) {
                int x = orbits[j];
                orbits[j] = orbits[j - 1];
                orbits[j - 1] = x;
            }
        for (int i = 0, end; i < k; i = end) {
            int o = orbits[i];
            for (end = i; end < k && orbits[end] == o; end++)
                ;
            touched[o]++;
            if (first[o] < 0) {
                first[o] = u;
                count[o] = end - i;
            } else {
                alike = alike && count[o] == end - i;
                comp[root(comp, u)] = root(comp, first[o]);
            }
        }
        k = 0;
        u = next;
    }
    for (int u = 0; u < total; u++) /* each unit straight to its root */
        size[comp[u] = root(comp, u)]++;
    for (int o = 0; o < n && alike; o++)
        alike = touched[o] == size[comp[first[o]]];
    if (!alike)
        return -1;
    g_autofree int *number = memset(g_new(int, MAX(total, 1)), -1, sizeof(int) * MAX(total, 1));
    int components = 0;
    for (int u = 0; u < total; u++) { /* comp[u] is a root, numbered when first met */
        int r = comp[u];
        if (number[r] < 0)
            number[r] = components++;
        comp[u] = number[r];
    }
    return components;
}

/* Whether the orbits serve the units of the switches and CPUs alike
 * (unit_components). */
static gboolean host_alike(const Symmetry *sym, const Topology *t)
{
    static const LinkClass host_shared[] = {LINK_UPLINK, LINK_MEMORY};
    int nodes = topology_gpus(t) / topology_gpus_per_node(t);
    gboolean alike = TRUE;
    for (gsize k = 0; k < G_N_ELEMENTS(host_shared) && alike; k++) {
        int units = nodes * topology_units(t, host_shared[k]);
        g_autofree int *comp = g_new(int, MAX(units, 1));
        alike = units == 0 || unit_components(sym, t, host_shared[k], NULL, comp) >= 0;
    }
    return alike;
}

Symmetry *symmetry_new_cells(const Layout *layout, const Topology *t, unsigned dims,
                             const SymmetryMarks *marks)
{
    static const SymmetryMarks none = {0};
    const SymmetryMarks *m = marks ? marks : &none;
    Symmetry *sym = g_new0(Symmetry, 1);
    sym->layout = layout;
    find_generators(sym, t, dims);
    if (layout_ranks(layout) == topology_gpus(t) && !host_alike(sym, t)) {
        /* some switch or CPU would carry more of an orbit's copies than another
         * of its class: the shifts that map them onto each other */
        sym->host_maps = TRUE;
        find_generators(sym, t, dims);
    }
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

static void gpu_orbits(const Symmetry *sym, int gpus, int *orbit)
{
    for (int gpu = 0; gpu < gpus; gpu++) /* rank r on GPU r */
        orbit[gpu] = sym->orbit_local[representative(sym, gpu)];
}

int symmetry_link_classes(const Symmetry *sym, const Topology *t, int *link_class)
{
    int gpus = topology_gpus(t), n = sym->n_orbits, rails = topology_nics(t);
    int per_node = topology_gpus_per_node(t);
    g_assert(gpus == layout_ranks(sym->layout));
    g_autofree int *orbit = g_new(int, gpus), *rail_low = g_new(int, n);
    g_autofree int *comp = g_new(int, gpus); /* units <= GPUs */
    gpu_orbits(sym, gpus, orbit);
    for (int j = 0; j < n; j++)
        rail_low[j] = rails;
    for (int gpu = 0; gpu < gpus; gpu++) /* the lowest rail of each orbit */
        rail_low[orbit[gpu]] = MIN(rail_low[orbit[gpu]], topology_nic(t, gpu));
    int first = 0; /* the classes of the classes before */
    for (int c = 0; c < LINK_CLASSES; c++) {
        int dirs = topology_directions((LinkClass)c), units = topology_units(t, (LinkClass)c);
        if (units == 0)
            continue;
        if (c == LINK_SPINE) { /* a rail's orbit: the rails of its GPUs' orbits */
            g_autofree int *rail_class = g_new0(int, rails); /* first marked, then numbered */
            for (int j = 0; j < n; j++)
                rail_class[rail_low[j]] = 1;
            int classes = 0;
            for (int r = 0; r < rails; r++)
                rail_class[r] = rail_class[r] ? classes++ : -1;
            for (int gpu = 0; gpu < per_node; gpu++) /* node 0's GPUs use every rail */
                for (int dir = 0; dir < 2; dir++)
                    link_class[topology_gpu_link(t, gpu, LINK_SPINE, dir)] =
                        first + 2 * rail_class[rail_low[orbit[gpu]]] + dir;
            first += 2 * classes;
            continue;
        }
        int classes = unit_components(sym, t, (LinkClass)c, orbit, comp);
        g_assert(classes > 0); /* the shifts map the units onto units, or load them alike */
        for (int u = 0; u < gpus / per_node * units; u++)
            for (int dir = 0; dir < dirs; dir++)
                link_class[topology_unit_link(t, (LinkClass)c, u, dir)] =
                    first + dirs * comp[u] + dir;
        first += dirs * classes;
    }
    return first;
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
        for (int c = 0; c < LINK_CLASSES; c++)
            for (int dir = 0; dir < 2; dir++) {
                /* a rail's GPUs: node 0's (they use every rail), their
                 * values along the generators that move GPUs between NICs */
                gboolean rail = c == LINK_SPINE;
                int l = rail && gpu >= topology_gpus_per_node(t)
                            ? -1
                            : topology_gpu_link(t, gpu, (LinkClass)c, dir);
                if (l >= 0)
                    key[l] = unit[l] * sym->cells_per_orbit +
                             cell_key(sym, gpu, rail ? sym->nic_moving : all);
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
