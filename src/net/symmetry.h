/* symmetry.h: the ranks of a plan that run alike, so that a replay can
 * simulate one of each kind and let it stand for the others.
 *
 * A symmetry is a shift of the tensor-, context- or data-parallel
 * coordinate of every rank by a step k (modulo the dimension's size): rank
 * (t, c, d, p) goes to (t + k, c, d, p), say; or a rotation inside windows
 * of the coordinate: with windows of w, d = q w + i goes to q w + (i + k
 * mod w), as a dimension spread over several nodes turns inside each node
 * (its shift must move whole nodes). Context-parallel ranks run
 * alike because causal load balancing gives each the same work, and their
 * exchanges are collectives over the whole CP group (a ring exchange, an
 * all-to-all), which a cp shift maps onto itself. It counts only when it
 * maps the cluster onto itself: the GPUs of every node onto the GPUs of
 * one node, the same local GPU index to the same local index on every
 * node, and GPUs that share a NIC onto GPUs that share one (so NICs, rails
 * and the spine map onto themselves, and paths onto paths), and every
 * group of every kind onto a group of its kind (a dp step cutting
 * expert-parallel blocks does not). Such a shift maps every program, every
 * communicator group and every path of the replay onto another, so ranks
 * in one orbit of the shifts run the same tasks at the same times. The
 * host path's PCIe switches and CPUs need no such map when the orbits load
 * them alike, each orbit the same number of GPUs on each switch (CPU) its
 * GPUs use, as a tp shift by one over a node of two CPUs does: every copy
 * of an orbit is alike, so every such switch (CPU) carries the same; where
 * they do not, the shifts must map the GPUs sharing a switch or a CPU onto
 * GPUs sharing one too. For
 * each dimension the smallest working step is kept, and its window is
 * that step: the rotation inside it by the smallest working step too; a
 * dimension without either is not symmetric.
 *
 * The orbits are the simulated ranks' stand-ins: one rank per orbit is
 * simulated, the one with the smallest coordinates, which is also the
 * orbit's lowest-numbered rank. Every orbit has the same size (the shifts
 * move every rank). A communicator group is the set of ranks that differ
 * in some coordinates only; the shifts map it onto `images` distinct groups
 * (symmetry_group_images).
 *
 * A what-if (app/whatif.h) slows one GPU or link, which no shift maps onto
 * itself (the shifts move every rank). symmetry_new_cells keeps them
 * anyway, in cells: each orbit cut around the ranks the what-if singles
 * out, the cells standing for their ranks as orbits do, and each group's
 * collectives for the groups in its orbit under the cells' permutations
 * (symmetry_instances), whose transfers the network replays one by one
 * over the link units (symmetry_link_units) and checks as it goes
 * (net.h). A route may single ranks out too: NCCL's double binary tree
 * gives the roots of its trees, and the rank that is a leaf in both, fewer
 * transfers than the others, so no dp shift maps it onto itself; in cells
 * around those ranks (their values along the shifts the tree breaks) its
 * transfers are replayed one by one and checked, as a what-if's are. */
#ifndef PLANSIM_NET_SYMMETRY_H
#define PLANSIM_NET_SYMMETRY_H

#include <glib.h>

#include "layout/layout.h"
#include "net/topology.h"

typedef struct Symmetry Symmetry;

/* The shifts a symmetry may use: a bit per dimension (GROUP_TP, GROUP_CP,
 * GROUP_DP) for its shift, and one for its rotation inside windows. */
#define SYMMETRY_SHIFT(dim)  (1u << (dim))
#define SYMMETRY_ROTATE(dim) (1u << (GROUP_DIMS + (dim)))
#define SYMMETRY_ALL                                                                               \
    (SYMMETRY_SHIFT(GROUP_TP) | SYMMETRY_SHIFT(GROUP_CP) | SYMMETRY_SHIFT(GROUP_DP) |              \
     SYMMETRY_ROTATE(GROUP_TP) | SYMMETRY_ROTATE(GROUP_CP) | SYMMETRY_ROTATE(GROUP_DP))

/* The symmetry of `layout` on topology `t` among the shifts `dims`
 * allows (SYMMETRY_ bits); dims 0 gives none: every rank is simulated. */
Symmetry *symmetry_new(const Layout *layout, const Topology *t, unsigned dims);

/* A rank a collective's route singles out along some generators
 * (SYMMETRY_ bits): a member whose transfers differ from its images',
 * a tree's root say (net_marks). */
typedef struct {
    int rank;
    unsigned dims;
} SymmetryMark;

/* What cuts the orbits into cells (symmetry_new_cells): a what-if's ranks
 * whose compute runs `gpu_factor[rank]` != 1 times slower (NULL: none)
 * and GPUs of the links of the topology at `link_scale[link]` != 1 of
 * their capacity (NULL: none); and `n_roles` ranks collectives' routes
 * single out (`roles`). */
typedef struct {
    const double *gpu_factor, *link_scale;
    const SymmetryMark *roles;
    int n_roles;
} SymmetryMarks;

/* symmetry_new's, cut into cells around what `marks` singles out
 * (docs/model.md, "What-ifs" and "Trees in cells"; NULL: nothing).
 *
 * Every rank has orbit coordinates, one per generator: y_i = its
 * coordinate along generator i's dimension (its place in the window, for a
 * turn) over the generator's step, from 0 to m_i - 1 (m_i = size / step);
 * a rank is its orbit's simulated rank and its y. A slowed rank marks its
 * y_i along every generator; a GPU on a slowed rail (a spine link) marks
 * only its y_i along the generators that move GPUs between NICs (every GPU
 * of a rail has those); a role marks its rank's y_i along its generators.
 * A cell is an orbit and, along each generator,
 * either one marked value or all the unmarked ones. Its simulated rank is
 * its lowest. The cells are the orbits of K, the permutations of each
 * generator's unmarked values (acting on y_i, one generator at a time):
 * K maps every communicator group onto a group of its kind (a group holds
 * one value of a generator or all of them, so a permutation moves it as
 * the shift that moves that value does) and every rank onto one that runs
 * the same program at the same speed; but it does not map the cluster's
 * links onto links, nor a route's transfers onto its transfers, which
 * net.c checks for instead (net.h). Without marks, the cells are the
 * orbits. */
Symmetry *symmetry_new_cells(const Layout *layout, const Topology *t, unsigned dims,
                             const SymmetryMarks *marks);
void symmetry_free(Symmetry *sym);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Symmetry, symmetry_free)

/* The simulated ranks, in increasing order: *n of them. */
const int *symmetry_simulated(const Symmetry *sym, int *n);

/* A rank's index among the simulated ranks, or -1 when it is not one. */
int symmetry_local(const Symmetry *sym, int rank);

/* Ranks each simulated rank stands for (1 without symmetry), when they
 * all stand for as many (no marks); 0 for cells around marks. */
int symmetry_orbit(const Symmetry *sym);

/* Whether marks cut the orbits into cells (symmetry_new_cells). */
gboolean symmetry_has_cells(const Symmetry *sym);

/* Whether `rank`'s value along generator i is marked (a cell of its own). */
gboolean symmetry_marked(const Symmetry *sym, int i, int rank);

/* The ranks simulated rank `local` stands for: its cell's. */
int symmetry_weight(const Symmetry *sym, int local);

/* The cells one orbit is cut into, as many for every orbit (1 without
 * marks). */
int symmetry_cells_per_orbit(const Symmetry *sym);

/* The symmetric dimensions, as reports say them: "tp x cp x dp", "tp x
 * dp", "tp", "dp", ..., or "none". */
const char *symmetry_name(const Symmetry *sym);

/* The generators: a shift or a rotation per symmetric dimension, and the
 * SYMMETRY_ bit of each (what to leave out of `dims` to do without it);
 * symmetry_shift applies generator i to a rank. */
int symmetry_generators(const Symmetry *sym);
unsigned symmetry_generator_bit(const Symmetry *sym, int i);
int symmetry_shift(const Symmetry *sym, int i, int rank);

/* A generator as the shifts below apply it: the coordinate of dimension
 * `dim`, `stride` apart in a rank's number, moves by `step` modulo `size`
 * (a rotation: `size` is the window, which divides the dimension's size,
 * and the coordinate is the place in the window). The network shifts
 * every transfer of a plan, so these are inline. */
typedef struct {
    GroupKind dim;
    int step, size, stride;
} SymmetryGenerator;

/* The generators, *n of them, in symmetry_shift's numbering. */
const SymmetryGenerator *symmetry_generator_list(const Symmetry *sym, int *n);

/* A rank's coordinate along g's dimension. */
static inline int symmetry_coord(const SymmetryGenerator *g, int rank)
{
    return rank / g->stride % g->size;
}

/* Rank `rank` shifted by `amount` steps of g, |amount x step| < size: its
 * coordinate along g's dimension moves, modulo the size, and nothing
 * else. */
static inline int symmetry_shift_by(const SymmetryGenerator *g, int rank, int amount)
{
    int x = symmetry_coord(g, rank), moved = x + amount * g->step;
    moved += moved < 0 ? g->size : moved >= g->size ? -g->size : 0;
    return rank + (moved - x) * g->stride;
}

/* The canonical form of a transfer from `src` to `dst` under the `n`
 * shifts `gen` (symmetry_generator_list): the shift that takes `src` to its
 * simulated rank, applied to both. */
static inline void symmetry_canon_by(const SymmetryGenerator *gen, int n, int src, int dst,
                                     int *csrc, int *cdst)
{
    for (int i = 0; i < n; i++) {
        int back = symmetry_coord(&gen[i], src) / gen[i].step; /* steps from the simulated rank, */
        src -= back * gen[i].step * gen[i].stride;             /* back x step <= its coordinate */
        dst = symmetry_shift_by(&gen[i], dst, -back);
    }
    *csrc = src;
    *cdst = dst;
}

/* The number of distinct groups the shifts map the group `members` onto,
 * and in `invariant` a bit per generator that maps it onto itself. Each
 * generator must either move the whole group to groups apart from it (its
 * members' coordinates along the generator's dimension lie in one window
 * [k step, (k + 1) step): they share it, or they are an expert-parallel
 * block within it) or map it onto itself; returns a bit per generator
 * that does neither, whose symmetry the group breaks (0: none). A window's
 * shifts are groups of its kind: symmetry_new keeps only steps that map
 * every group of every kind onto one. */
unsigned symmetry_group_images(const Symmetry *sym, const int *members, int n, double *images,
                               unsigned *invariant);

/* The communicator groups a group of `members` stands for under cells:
 * its orbit under K (symmetry_new_cells), n of them, the shifts along the
 * generators whose one value it holds that move that value over the other
 * values of its cell (one instance, itself, for a group that holds a
 * marked value or every value of each generator). Instances are numbered
 * from 0 (mixed radix over those generators), and
 * symmetry_instance_gpu gives the GPU that instance k has in place of the
 * group's `gpu` (a member, or any GPU its collectives' transfers touch:
 * a shift maps the cluster onto itself). The group must break no
 * generator (symmetry_group_images). */
typedef struct {
    int n;                      /* instances */
    int moved;                  /* generators that move them apart */
    int gen[2 * GROUP_DIMS];    /* each one's index */
    int value[2 * GROUP_DIMS];  /* the group's value along it */
    int values[2 * GROUP_DIMS]; /* the values it takes there: its cell's */
} SymmetryInstances;

void symmetry_instances(const Symmetry *sym, const int *members, int n, SymmetryInstances *out);
int symmetry_instance_gpu(const Symmetry *sym, const SymmetryInstances *in, int k, int gpu);

/* The link units of `t` under cells: every link's (room for every link),
 * numbered in order of their lowest link; returns how many. A unit is a
 * link class (symmetry_link_classes) cut by the cells of its GPUs: a
 * port's, a NIC's or a host path link's the cell key of its GPU (of the
 * last, for a link GPUs share: net.c cuts a unit again where flows load
 * its links unequally, and checks the rest), a rail's the marked values of
 * its GPUs along the generators that move GPUs between NICs. The links of
 * a unit have one capacity but for those a what-if slows (net.c splits
 * them off).
 * Without marks, the link classes. */
int symmetry_link_units(const Symmetry *sym, const Topology *t, int *unit);

/* The orbits of the links of `t`, the topology of the layout's GPUs,
 * under the shifts: link_class[link] (room for every link) is its orbit's
 * number, orbits numbered in order of their lowest link; returns how many.
 * Found without following the links' images: a shift maps the link a GPU
 * sends or receives through onto the link of the same kind of the GPU's
 * image (it maps the cluster onto itself). So the class of the links of a
 * kind a GPU uses (its NVLink port, NIC, host link, switch uplink, CPU
 * memory) holds those of the units the GPU's orbit uses, and those of the
 * other orbits that share one of them, transitively; and the class of a
 * GPU's rail is the rails its orbit uses, numbered by the lowest. For a
 * switch or a CPU that a shift need not map (above) such a class is not an
 * orbit of links, but every orbit loads its links alike. Linear in the
 * GPUs. */
int symmetry_link_classes(const Symmetry *sym, const Topology *t, int *link_class);

#endif
