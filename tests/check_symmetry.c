/* check_symmetry.c: the symmetry-reduced replay gives the full replay's
 * report.
 *
 * Random valid plans on random clusters (1 to 64 nodes of 1 to 8 GPUs, 1
 * to 8 NICs a node, an oversubscribed spine or not, interference or not,
 * host paths with switches and CPUs shared or not, NICs behind the host
 * links or not),
 * dense or mixtures of experts with their expert parallelism (under every
 * ZeRO stage too), capacity, imbalance and dispatcher,
 * with every schedule, ZeRO stage, recomputation, rank order and forced
 * algorithm, contention on and off, are replayed twice: reduced (one rank
 * per orbit of the tp, cp and dp shifts and rotations inside nodes that
 * map the cluster onto itself) and
 * at full fidelity. Their JSON reports must agree on every field within
 * 1e-9 relative, apart from what says how the replay ran: sim_wall_s,
 * events, simulated_ranks, symmetry and the plan's full_fidelity. So are
 * they under random what-ifs (slowed GPUs and links), replayed in the
 * cells around them. The generator is seeded, so every run tries the
 * same plans. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/whatif.h"
#include "base/error.h"
#include "cost/transformer.h"
#include "net/symmetry.h"
#include "strategy/emit.h"
#include "strategy/strategy.h"
#include "testrandom.h"

#define PLANS 200

static const char *const skipped[] = {"sim_wall_s", "events",        "simulated_ranks",
                                      "symmetry",   "full_fidelity", NULL};

/* The first difference between a reduced report and a full one, or NULL. */
static char *difference(const cJSON *a, const cJSON *b, const char *path)
{
    return random_difference(a, b, path, skipped, 1e-9);
}

/* The report of `plan` as parsed JSON, replayed in full or not. */
static cJSON *report(const ModelSpec *m, const ClusterSpec *c, PlanSpec *plan, gboolean full,
                     int *simulated)
{
    plan->full_fidelity = full;
    Report rep;
    GError *error = NULL;
    ck_assert_msg(simulate_run(m, c, plan, &rep, &error), "%s", error ? error->message : "");
    *simulated = rep.metrics.simulated_ranks;
    g_autofree char *json = report_render(&rep, FORMAT_JSON, FALSE);
    report_clear(&rep);
    cJSON *doc = cJSON_Parse(json);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

/* The ranks a replay would simulate with the shifts alone, no rotations. */
static int shifted_ranks(const PlanSpec *plan, const ClusterSpec *c)
{
    g_autoptr(Layout) l = layout_new(plan, c);
    Topology *t = topology_new(c, c->nodes);
    g_autoptr(Symmetry) sym = symmetry_new(
        l, t, SYMMETRY_SHIFT(GROUP_TP) | SYMMETRY_SHIFT(GROUP_CP) | SYMMETRY_SHIFT(GROUP_DP));
    topology_free(t);
    int n;
    symmetry_simulated(sym, &n);
    return n;
}

START_TEST(reduced_replay_reports_what_the_full_one_does)
{
    GRand *rng = g_rand_new_with_seed(20261130);
    int tried = 0, compared = 0, reduced = 0, zero_ep = 0, rotated = 0, folded = 0, hosted = 0;
    while (compared < PLANS) {
        RandomStep s = random_step(rng, FALSE, &tried, 20 * PLANS);
        const ModelSpec *m = s.m;
        const ClusterSpec *c = s.c;
        PlanSpec *plan = s.plan;
        int simulated, all;
        cJSON *fast = report(m, c, plan, FALSE, &simulated);
        cJSON *full = report(m, c, plan, TRUE, &all);
        g_autofree char *why = difference(fast, full, "$");
        ck_assert_msg(!why, "plan %d (tp %d cp %d pp %d dp %d on %d x %d GPUs, %d NICs): %s",
                      compared, plan->tp, plan->cp, plan->pp, plan->dp, c->nodes,
                      c->gpus_per_node, c->nics_per_node, why);
        ck_assert_int_eq(all, plan_spec_gpus(plan));
        reduced += simulated < all;
        rotated += simulated < shifted_ranks(plan, c);
        zero_ep += plan->ep > 1 && plan->zero_stage > 0;
        folded += plan->ep > 1 && plan_field_value(plan, PLAN_ETP) < plan->tp;
        hosted += plan->offload != OFFLOAD_NONE && simulated < all &&
                  c->host_path.shared[HOST_SWITCH].gpus + c->host_path.shared[HOST_CPU].gpus > 2;
        compared++;
        cJSON_Delete(fast);
        cJSON_Delete(full);
        random_step_clear(&s);
    }
    /* most plans fill their nodes and have a symmetry to use */
    ck_assert_msg(reduced >= PLANS / 3, "only %d of %d plans were reduced", reduced, PLANS);
    /* ZeRO's states and collectives split between the data-parallel and
     * the expert-data-parallel groups (zero.c) */
    /* and some use rotations inside nodes, which shifts alone cannot */
    ck_assert_msg(rotated >= PLANS / 20, "only %d of %d plans were rotated", rotated, PLANS);
    ck_assert_msg(zero_ep >= PLANS / 20, "only %d of %d plans had ZeRO with ep > 1", zero_ep,
                  PLANS);
    /* and some fold their expert groups over tp (etp < tp) */
    ck_assert_msg(folded >= PLANS / 20, "only %d of %d plans folded ep over tp", folded, PLANS);
    /* and some offload, reduced, over switches or CPUs GPUs share */
    ck_assert_msg(hosted >= PLANS / 20, "only %d of %d plans offloaded over shared host paths",
                  hosted, PLANS);
    g_rand_free(rng);
}
END_TEST

/* The shipped clusters' host paths (topologies/SOURCES.md): offload over
 * DGX A100's shared PCIe switches and CPUs, DGX H100's NICs behind the
 * host links and GB200's Grace memory shared by two GPUs, with traffic
 * between nodes, replayed reduced and in full: the same report. */
START_TEST(offload_over_shipped_host_paths)
{
    static const char *const clusters[] = {"dgx-a100-80gb.json", "dgx-h100.json",
                                           "gb200-nvl72.json"};
    ModelSpec *m = test_gpt(4, 256, 8, 512, 128);
    for (gsize i = 0; i < G_N_ELEMENTS(clusters); i++)
        for (int o = OFFLOAD_OPTIMIZER; o <= OFFLOAD_ACTIVATIONS; o++) {
            ClusterSpec *c = test_shipped_cluster(clusters[i], 2);
            if (i == 2) /* two racks of 4 GPUs */
                ck_assert(cluster_spec_use_gpus_per_node(c, 4, "test", NULL));
            c->cpu_adam_params_s = 4e9;
            PlanSpec *plan = plan_spec_new();
            plan->tp = 2;
            plan->pp = 2;
            plan->offload = (Offload)o;
            plan->global_batch_size = 4 * c->gpus_per_node;
            test_resolve(plan, m, c);
            int simulated, all;
            cJSON *fast = report(m, c, plan, FALSE, &simulated);
            cJSON *full = report(m, c, plan, TRUE, &all);
            g_autofree char *why = difference(fast, full, "$");
            ck_assert_msg(!why, "%s, offload %d: %s", clusters[i], o, why);
            ck_assert_int_lt(simulated, all);
            cJSON_Delete(fast);
            cJSON_Delete(full);
            plan_spec_free(plan);
            cluster_spec_free(c);
        }
    model_spec_free(m);
}
END_TEST

/* A step of many micro-batches whose build at every shift is already a
 * 50th of the cap is first probed at 2 pp micro-batches (simulate.h,
 * simulate_run_within), which finds the shifts the step breaks: the step,
 * replayed at once with the rest, reports what the full replay does, at
 * the symmetry the step finds without a probe (under the default cap,
 * which these small steps are far from: no probe). Random steps (those of
 * the tests above) of 16 pp or 32 pp micro-batches; some break a shift. A
 * step the cap refuses is refused before it is built (PS_ERROR_INPUT). */
START_TEST(a_probed_step_reports_what_the_full_one_does)
{
    enum { PROBED = 40 };
    GRand *rng = g_rand_new_with_seed(202612031);
    int tried = 0, compared = 0, broken = 0, refused = 0;
    while (compared < PROBED) {
        RandomStep s = random_step(rng, FALSE, &tried, 20 * PLANS);
        PlanSpec *plan = s.plan;
        plan->global_batch_size =
            (gint64)plan->micro_batch_size * plan->dp * 2 * plan->pp * PICK(rng, 8, 16);
        g_autoptr(Layout) layout = layout_new(plan, s.c);
        int gpus = layout_ranks(layout), simulated, unprobed, all;
        Topology *topo = topology_new(s.c, (gpus + s.c->gpus_per_node - 1) / s.c->gpus_per_node);
        g_autoptr(Symmetry) every = symmetry_new(layout, topo, SYMMETRY_ALL);
        topology_free(topo);
        symmetry_simulated(every, &simulated);
        gsize cap = (gsize)(emit_tasks_at_least(s.m, plan, simulated) * 50);
        Report rep;
        GError *error = NULL;
        if (!simulate_run_within(s.m, s.c, plan, cap, &rep, &error)) {
            ck_assert_msg(g_error_matches(error, PS_ERROR, PS_ERROR_INPUT), "%s", error->message);
            g_clear_error(&error);
            refused++;
            random_step_clear(&s);
            continue;
        }
        g_autofree char *json = report_render(&rep, FORMAT_JSON, FALSE);
        g_autofree char *symmetry = g_strdup(rep.metrics.symmetry);
        broken += rep.metrics.simulated_ranks > simulated;
        report_clear(&rep);
        cJSON *probed = cJSON_Parse(json);
        cJSON *plain = report(s.m, s.c, plan, FALSE, &unprobed);
        cJSON *full = report(s.m, s.c, plan, TRUE, &all);
        g_autofree char *why = difference(probed, full, "$");
        ck_assert_msg(!why, "plan %d (tp %d cp %d pp %d dp %d): %s", compared, plan->tp, plan->cp,
                      plan->pp, plan->dp, why);
        const char *want = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(plain, "symmetry"));
        ck_assert_str_eq(symmetry, want);
        compared++;
        cJSON_Delete(probed);
        cJSON_Delete(plain);
        cJSON_Delete(full);
        random_step_clear(&s);
    }
    ck_assert_msg(broken >= 2, "only %d of %d probed steps broke a shift", broken, compared);
    ck_assert_msg(refused <= compared, "%d refused, %d compared", refused, compared);
    g_rand_free(rng);
}
END_TEST

/* ---- trees in cells --------------------------------------------------------- */

/* NCCL's double binary tree breaks the dp shift: its roots, and the rank
 * that is a leaf in both trees, send and receive less than the others
 * (algorithm.h). The replay keeps the shift in cells around them
 * (net_marks, symmetry_new_cells) and checks as it goes that the cells
 * stand for the full replay, or drops the shift. Random steps (those of
 * the tests above) with every collective forced to the tree report what
 * the full replay does; in many the tree keeps its cells, and some drop
 * them where the cells' loads came out unequal. */
START_TEST(tree_cells_report_what_the_full_replay_does)
{
    enum { TREES = 120 };
    GRand *rng = g_rand_new_with_seed(20261204);
    int tried = 0, compared = 0, fewer = 0;
    while (compared < TREES) {
        RandomStep s = random_step(rng, FALSE, &tried, 20 * PLANS);
        PlanSpec *plan = s.plan;
        plan->collective_algorithm = ALGORITHM_TREE;
        plan->link_contention = TRUE;
        int simulated, all;
        cJSON *fast = report(s.m, s.c, plan, FALSE, &simulated);
        cJSON *full = report(s.m, s.c, plan, TRUE, &all);
        const char *symmetry =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fast, "symmetry"));
        gboolean cells = strstr(symmetry, "around the trees") != NULL;
        g_autofree char *why = difference(fast, full, "$");
        ck_assert_msg(!why, "plan %d (tp %d cp %d pp %d dp %d on %d x %d GPUs, %d NICs): %s",
                      compared, plan->tp, plan->cp, plan->pp, plan->dp, s.c->nodes,
                      s.c->gpus_per_node, s.c->nics_per_node, why);
        fewer += cells && simulated < all;
        compared++;
        cJSON_Delete(fast);
        cJSON_Delete(full);
        random_step_clear(&s);
    }
    /* these clusters are small (up to 64 nodes), and a tree over a few
     * ranks has few that play one part: 6 of the 120 keep cells */
    ck_assert_msg(fewer >= 3, "only %d of %d trees in cells replayed fewer ranks", fewer, TREES);
    g_rand_free(rng);
}
END_TEST

/* By hand: a dp all-reduce over n nodes of one GPU, NCCL's double binary
 * tree (algorithm.c, binary_trees: tree 1 a heap over ranks 0..n-1, tree
 * 2 the heap over them in reverse, each edge S/2 up and down).
 * - n = 25: tree 1's inner ranks are 0..11 (rank i has children 2i + 1
 *   and 2i + 2 <= 24), its leaves 12..24; tree 2's inner ranks are those
 *   whose reversed place 24 - i <= 11, 13..24. Every rank sends and
 *   receives 4 halves but rank 0 (tree 1's root, a leaf of tree 2: 3),
 *   rank 24 (tree 2's root: 3) and rank 12 (a leaf in both: 2): 4 cells,
 *   3 ranks of their own and one for the other 22.
 * - n = 24: tree 1's inner ranks are 0..11, rank 11 with one child (23);
 *   tree 2's 12..23, rank 12 with one. Ranks 0, 11, 12 and 23 send 3
 *   halves, the others 4: 5 cells.
 * Either replays that many ranks, not n, and reports what the full
 * replay does. */
static void tree_over_nodes(int n, int want)
{
    ModelSpec *m = test_gpt(2, 256, 8, 512, 128);
    ClusterSpec *c = test_cluster(n, 1, 300e9, 25e9);
    PlanSpec *plan = plan_spec_new();
    plan->dp = n;
    plan->global_batch_size = n;
    plan->collective_algorithm = ALGORITHM_TREE;
    GError *error = NULL;
    ck_assert_msg(plan_spec_resolve(plan, m, c, &error), "%s", error ? error->message : "");
    int simulated, all;
    cJSON *fast = report(m, c, plan, FALSE, &simulated);
    cJSON *full = report(m, c, plan, TRUE, &all);
    const char *symmetry = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fast, "symmetry"));
    ck_assert_str_eq(symmetry, "dp around the trees");
    ck_assert_int_eq(simulated, want);
    ck_assert_int_eq(all, n);
    g_autofree char *why = difference(fast, full, "$");
    ck_assert_msg(!why, "dp %d: %s", n, why);
    cJSON_Delete(fast);
    cJSON_Delete(full);
    plan_spec_free(plan);
    cluster_spec_free(c);
    model_spec_free(m);
}

START_TEST(a_tree_keeps_the_dp_shift_in_cells_around_its_roots)
{
    tree_over_nodes(25, 4);
    tree_over_nodes(24, 5);
}
END_TEST

/* ---- what-ifs ------------------------------------------------------------ */

/* A random what-if on `c`'s GPUs for a plan of `gpus`: one or two slowed
 * GPUs, a slowed link (a port, a NIC, a rail's spine link or a link of the
 * host path, one direction or both), or a GPU and a link, each 1.05 to 4
 * times slower. */
static WhatIf *random_whatif(GRand *rng, const ClusterSpec *c, int gpus)
{
    Topology *t = topology_new(c, (gpus + c->gpus_per_node - 1) / c->gpus_per_node);
    char *gpu[3] = {NULL}, *link[2] = {NULL};
    int kind = g_rand_int_range(rng, 0, 4), n_gpu = MIN(gpus, kind == 0   ? 1
                                                              : kind == 1 ? 2
                                                                          : kind == 3);
    int first = g_rand_int_range(rng, 0, gpus); /* two distinct GPUs when there are two */
    for (int i = 0; i < n_gpu; i++)
        gpu[i] =
            g_strdup_printf("%d:%.3g", (first + i * g_rand_int_range(rng, 1, MAX(gpus, 2))) % gpus,
                            g_rand_double_range(rng, 1.05, 4));
    if (kind >= 2) {
        g_autofree char *name = topology_link_name(t, g_rand_int_range(rng, 0, topology_links(t)));
        if (g_rand_boolean(rng)) /* both directions */
            *strrchr(name, ' ') = 0;
        link[0] = g_strdup_printf("%s:%.3g", name, g_rand_double_range(rng, 1.05, 4));
    }
    topology_free(t);
    WhatIf *w = whatif_new();
    GError *error = NULL;
    ck_assert_msg(whatif_parse(w, n_gpu ? gpu : NULL, link[0] ? link : NULL, NULL, NULL, &error),
                  "%s", error ? error->message : "");
    for (int i = 0; i < n_gpu; i++)
        g_free(gpu[i]);
    g_free(link[0]);
    return w;
}

/* The report of `plan` under `w` as parsed JSON, replayed in full or not;
 * *symmetry its symmetry field. */
static cJSON *whatif_report(const ModelSpec *m, const ClusterSpec *c, PlanSpec *plan,
                            const WhatIf *w, gboolean full, int *simulated, char **symmetry)
{
    plan->full_fidelity = full;
    Report rep;
    GError *error = NULL;
    ck_assert_msg(simulate_run_whatif(m, c, plan, w, NULL, FALSE, &rep, &error), "%s",
                  error ? error->message : "");
    *simulated = rep.metrics.simulated_ranks;
    *symmetry = g_strdup(rep.metrics.symmetry);
    g_autofree char *json = report_render(&rep, FORMAT_JSON, FALSE);
    report_clear(&rep);
    cJSON *doc = cJSON_Parse(json);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

/* Under a slowed GPU or link, the replay in cells around it
 * (symmetry_new_cells; every rank when they do not stand for it) reports
 * what the full replay does, on every field, for random plans (those of
 * the test above) and random what-ifs. */
START_TEST(whatif_cells_report_what_the_full_replay_does)
{
    GRand *rng = g_rand_new_with_seed(20261203);
    int tried = 0, compared = 0, reduced = 0, unequal = 0;
    while (compared < PLANS) {
        RandomStep s = random_step(rng, FALSE, &tried, 20 * PLANS);
        const ModelSpec *m = s.m;
        const ClusterSpec *c = s.c;
        PlanSpec *plan = s.plan;
        int simulated, all, gpus = plan_spec_gpus(plan);
        g_autofree char *symmetry = NULL, *none = NULL;
        g_autoptr(WhatIf) w = random_whatif(rng, c, gpus);
        cJSON *fast = whatif_report(m, c, plan, w, FALSE, &simulated, &symmetry);
        cJSON *full = whatif_report(m, c, plan, w, TRUE, &all, &none);
        g_autofree char *why = difference(fast, full, "$");
        ck_assert_msg(
            !why, "plan %d (tp %d cp %d pp %d dp %d ep %d on %d x %d GPUs, %d NICs), %s: %s",
            compared, plan->tp, plan->cp, plan->pp, plan->dp, plan->ep, c->nodes, c->gpus_per_node,
            c->nics_per_node, w->text, why);
        ck_assert_int_eq(all, gpus);
        reduced += simulated < all;
        unequal += strstr(symmetry, "unequal") != NULL;
        compared++;
        cJSON_Delete(fast);
        cJSON_Delete(full);
        random_step_clear(&s);
    }
    /* most plans have a symmetry whose cells stand for their what-if (90
     * of the 200), and some what-ifs break it (8): the full replay's
     * fall-back is compared too */
    ck_assert_msg(reduced >= PLANS / 3, "only %d of %d what-ifs were reduced", reduced, PLANS);
    ck_assert_msg(unequal > 0, "no what-if was replayed in full for unequal cells");
    g_rand_free(rng);
}
END_TEST

/* The ranks simulated for `plan` (freed) on cluster `c` (freed) with
 * `dims`. */
static int simulated_on(ClusterSpec *c, PlanSpec *plan, unsigned dims)
{
    Layout *l = layout_new(plan, c);
    Topology *t = topology_new(c, c->nodes);
    Symmetry *sym = symmetry_new(l, t, dims);
    int n;
    symmetry_simulated(sym, &n);
    symmetry_free(sym);
    topology_free(t);
    layout_free(l);
    plan_spec_free(plan);
    cluster_spec_free(c);
    return n;
}

/* The ranks simulated for tp x dp (ep) on 8 nodes of 8 GPUs with `dims`. */
static int simulated_of(int tp, int dp, int ep, unsigned dims)
{
    PlanSpec *plan = plan_spec_new();
    plan->tp = tp;
    plan->dp = dp;
    plan->ep = ep;
    return simulated_on(test_cluster(8, 8, 1e9, 1e9), plan, dims);
}

/* By hand, 64 GPUs on 8 nodes (rank = GPU): a dp shift must move whole
 * nodes and whole expert-parallel blocks, a turn must keep every GPU on
 * its node and every block whole, in the window (dividing the shift's
 * step) where it has the most places.
 * - tp 1, dp 64, ep 8: shift 8 (a node, a block), turn 1 in windows of 8:
 *   1 rank; with the shift alone, 8 (a node's);
 * - ep 4: shift 8, turn 1 in windows of 4 (a block; turning by 4 in
 *   windows of 8 has 2 places, not 4): 2 ranks;
 * - ep 16: shift 16 (two nodes, a block), turn 1 in windows of 8 (a node):
 *   2 ranks, one a node;
 * - tp 2, dp 32, ep 8: tp shift 1, dp shift 8 (two nodes), turn 1 in
 *   windows of 4 (a node's dp ranks): 2 ranks. */
START_TEST(expert_blocks_and_turns_inside_nodes)
{
    ck_assert_int_eq(simulated_of(1, 64, 8, SYMMETRY_ALL), 1);
    ck_assert_int_eq(simulated_of(1, 64, 8, SYMMETRY_SHIFT(GROUP_DP)), 8);
    ck_assert_int_eq(simulated_of(1, 64, 4, SYMMETRY_ALL), 2);
    ck_assert_int_eq(simulated_of(1, 64, 16, SYMMETRY_ALL), 2);
    ck_assert_int_eq(simulated_of(2, 32, 8, SYMMETRY_ALL), 2);
}
END_TEST

/* The ranks simulated for tp 8 on one node of 8 GPUs whose CPUs serve
 * `per_cpu` GPUs each, in order. */
static int simulated_with_cpus(int per_cpu)
{
    ClusterSpec *c = test_cluster(1, 8, 1e9, 1e9);
    c->gpu.pcie_Bps = 1e9;
    c->host_path.shared[HOST_CPU] = (HostResource){.gpus = per_cpu, .bandwidth_Bps = 1e9};
    PlanSpec *plan = plan_spec_new();
    plan->tp = 8;
    plan->dp = 1;
    return simulated_on(c, plan, SYMMETRY_ALL);
}

/* By hand, the host path's CPUs (docs/model.md, "The host path"): the tp
 * shift by one inside a node of 8 moves GPU 3 to the second of two CPUs of
 * 4 and GPU 0 within the first, no map of CPUs; but its orbit, the node,
 * gives each CPU 4 GPUs, so every copy of the orbit loads the two
 * memories alike and the shift is kept: 1 rank. With CPUs of 3 (GPUs 0 to
 * 2, 3 to 5, and 6 and 7) the node would load them 3, 3 and 2: the shifts
 * must map CPUs onto CPUs, and none but the identity does (the last CPU
 * is the only one of 2): 8 ranks. */
START_TEST(cpus_keep_the_shifts_that_load_them_alike)
{
    ck_assert_int_eq(simulated_with_cpus(4), 1);
    ck_assert_int_eq(simulated_with_cpus(8), 1);
    ck_assert_int_eq(simulated_with_cpus(3), 8);
}
END_TEST

/* ---- link classes ---------------------------------------------------------- */

typedef struct {
    const Symmetry *sym;
    int generator;
} Shift;

static int shift_gpu(void *ctx, int gpu)
{
    const Shift *s = ctx;
    return symmetry_shift(s->sym, s->generator, gpu);
}

static int find_root(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x];
    return x;
}

/* The oracle: the orbits of the links, by joining every link with its
 * image under every generator (topology_link_image), numbered in order of
 * their lowest link; returns how many. */
static int orbits_by_images(const Symmetry *sym, const Topology *t, int *link_class)
{
    int links = topology_links(t);
    g_autofree int *parent = g_new(int, links);
    for (int l = 0; l < links; l++)
        parent[l] = l;
    for (int i = 0; i < symmetry_generators(sym); i++) {
        Shift shift = {sym, i};
        for (int l = 0; l < links; l++) {
            int a = find_root(parent, l),
                b = find_root(parent, topology_link_image(t, l, shift_gpu, &shift));
            parent[MAX(a, b)] = MIN(a, b);
        }
    }
    int classes = 0;
    for (int l = 0; l < links; l++) /* a root is its orbit's lowest link */
        link_class[l] = find_root(parent, l) == l ? classes++ : link_class[find_root(parent, l)];
    return classes;
}

/* symmetry_link_classes, which reasons from the orbits of the GPUs, finds
 * the orbits that following every link's images finds, for every rank
 * order and every mix of tp, cp, dp, pp and ep on nodes of 1 to 8 GPUs and 1
 * to 8 NICs (GPUs sharing NICs or not): every plan that fills its nodes. */
START_TEST(link_classes_are_the_orbits_of_the_links)
{
    int checked = 0, with_shifts = 0;
    for (int per_node = 1; per_node <= 8; per_node *= 2)
        for (int nics = 1; nics <= 8; nics *= 2)
            for (int order = 0; order < RANK_ORDERS; order++)
                for (int tp = 1; tp <= 4; tp *= 2)
                    for (int cp = 1; cp <= 2; cp *= 2)
                        for (int dp = 1; dp <= 8; dp *= 2)
                            for (int pp = 1; pp <= 4; pp *= 2)
                                for (int ep = 1; ep <= 4; ep *= 4) {
                                    int ranks = tp * cp * dp * pp;
                                    if (ranks % per_node != 0 || dp * cp % ep != 0)
                                        continue;
                                    ClusterSpec *c =
                                        test_cluster(ranks / per_node, per_node, 1e9, 1e9);
                                    c->nics_per_node = nics;
                                    PlanSpec *plan = plan_spec_new();
                                    plan->tp = tp;
                                    plan->cp = cp;
                                    plan->dp = dp;
                                    plan->pp = pp;
                                    plan->ep = ep;
                                    plan->rank_order = (RankOrder)order;
                                    Layout *l = layout_new(plan, c);
                                    Topology *t = topology_new(c, c->nodes);
                                    Symmetry *sym = symmetry_new(l, t, SYMMETRY_ALL);
                                    int links = topology_links(t);
                                    g_autofree int *got = g_new(int, links);
                                    g_autofree int *want = g_new(int, links);
                                    ck_assert_int_eq(symmetry_link_classes(sym, t, got),
                                                     orbits_by_images(sym, t, want));
                                    for (int k = 0; k < links; k++)
                                        ck_assert_msg(got[k] == want[k],
                                                      "tp %d cp %d dp %d pp %d ep %d order %d, %d "
                                                      "GPUs a node, %d NICs: link %d in class %d, "
                                                      "not %d",
                                                      tp, cp, dp, pp, ep, order, per_node, nics, k,
                                                      got[k], want[k]);
                                    checked++;
                                    with_shifts += symmetry_generators(sym) > 0;
                                    symmetry_free(sym);
                                    topology_free(t);
                                    layout_free(l);
                                    plan_spec_free(plan);
                                    cluster_spec_free(c);
                                }
    ck_assert_int_ge(checked, 1000);
    ck_assert_int_ge(with_shifts, checked / 2);
}
END_TEST

Suite *suite_symmetry(void)
{
    Suite *s = suite_create("symmetry");
    TCase *tc = tcase_create("random plans");
    tcase_add_test(tc, reduced_replay_reports_what_the_full_one_does);
    tcase_add_test(tc, expert_blocks_and_turns_inside_nodes);
    tcase_add_test(tc, offload_over_shipped_host_paths);
    tcase_add_test(tc, cpus_keep_the_shifts_that_load_them_alike);
    tcase_add_test(tc, a_probed_step_reports_what_the_full_one_does);
    tcase_add_test(tc, tree_cells_report_what_the_full_replay_does);
    tcase_add_test(tc, a_tree_keeps_the_dp_shift_in_cells_around_its_roots);
    suite_add_tcase(s, tc);
    TCase *whatifs = tcase_create("what-ifs");
    tcase_set_timeout(whatifs, 300);
    tcase_add_test(whatifs, whatif_cells_report_what_the_full_replay_does);
    suite_add_tcase(s, whatifs);
    TCase *links = tcase_create("link classes");
    tcase_add_test(links, link_classes_are_the_orbits_of_the_links);
    suite_add_tcase(s, links);
    return s;
}
