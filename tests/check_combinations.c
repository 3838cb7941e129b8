/* check_combinations.c: the strategies in combination. A matrix of plans
 * over pp x schedule (1F1B, interleaved, zb-h1, zb-h2 and DualPipeV, whose
 * V the counts below hold as any: every stage has L / pp layers) x cp x ep
 * x tp (alone, with sequence parallelism, and
 * with tp_comm_overlap) x ZeRO x offload x dtype x recompute, on a small
 * mixture of experts on 16 GPUs; every valid cell is replayed and held to
 * what holds of any combination, derived without the emitter:
 *   - counts by hand on the critical rank, which holds L_s = L / pp layers
 *     (every layer a MoE layer) and runs m micro-batches through v chunks:
 *     ring attention 2 (c - 1) exchanges per layer and micro-batch, and
 *     c - 1 more per full recomputation's replay; Ulysses and the experts'
 *     all-to-all dispatcher 4 all-to-alls, and 2 more per replay (the
 *     forward's again); FP8's amax all-reductions one per forward unit and
 *     one per backward (or B) unit, 2 m v, over dp x cp ranks (none over
 *     one); and their bytes, with s = S / c tokens of a sequence on a rank
 *     and d = H / A = 16 (bf16, 2 bytes): a ring exchange sends K and V,
 *     2 s (A / t) d 2 bytes, and in backward dK and dV too (twice);
 *     Ulysses' all-to-alls carry Q, K and V then the output in forward (Q
 *     s (A / t) d 2 bytes, K and V twice that) and the reverse in
 *     backward, (c - 1) / c of each sent; the experts' (tp 1) carry the s
 *     tokens' K copies of H values, (ep - 1) / ep of them sent;
 *   - the model states by hand, on the peak rank (Rajbhandari et al.
 *     2020's 2 + 4 + 12 bytes a parameter, with fp32 gradients): without
 *     experts split over ep, gradients are 2 and the optimizer 6 times the
 *     parameters' bytes, ZeRO-1 dividing the optimizer by the D = dp x cp
 *     ranks, ZeRO-2 the gradients too, ZeRO-3 all three (so the ratios are
 *     whole again); an offloaded optimizer holds nothing on the GPU;
 *   - a split backward is a whole one: under zb-h1 and zb-h2 every cell
 *     moves, per communication purpose but the pipeline's, the bytes of
 *     the same cell under 1F1B in as many collectives (when the critical
 *     rank is on the same stage; context and expert parallelism and the
 *     amax reductions, equal on every stage, always), and runs the same
 *     model and hardware FLOPs;
 *   - the symmetry reduction is exact: on every fourth valid cell the
 *     --full-fidelity replay gives the same step, FLOPs, peak and bytes;
 *   - skipping the steady state is exact: every valid cell at FOLD_M
 *     micro-batches reports the same, its text byte for byte but for how
 *     it was simulated (wall time, events), with its steady state built
 *     short (engine.h) as replayed whole, and most are built short.
 * (Issue 21: context parallelism under zero-bubble used to exchange again
 * in W.) */
#include <math.h>
#include <string.h>

#include "app/simulate.h"
#include "strategy/schedule.h"
#include "strategy/strategy.h"
#include "testutil.h"

enum {
    L = 4,
    H = 128,
    A = 8,
    V = 512,
    S = 64,
    E = 4,
    K = 2,
    FE = 256,
    GPUS = 16,
    M = 4,
    FOLD_M = 24
};

typedef enum { TP_ONE, TP_TWO, TP_SP, TP_OVERLAP, TP_MODES } TpMode;

typedef struct {
    int pp, cp, ep, zero;
    Schedule schedule;
    CpAlgorithm cp_algorithm;
    TpMode tp;
    Offload offload;
    Dtype dtype;
    Recompute recompute;
    gboolean a2a; /* the combined 1F1B overlap (overlap_moe_expert_parallel_comm) */
} Cell;

static ModelSpec *moe_model(void)
{
    ModelSpec *m = test_moe(L, H, A, V, S, E, K, FE);
    m->tied_embeddings = FALSE;
    return m;
}

static Run cell_run(const Cell *c, gboolean full_fidelity, int micro_batches)
{
    Run run = run_new(moe_model(), test_cluster(2, 8, 300e9, 25e9));
    run.cluster->gpu.peak_fp8_flops = 2 * run.cluster->gpu.peak_flops;
    run.cluster->gpu.pcie_Bps = 50e9; /* for offload */
    run.cluster->host_memory_bytes = 1e12;
    run.cluster->cpu_adam_params_s = 4e9;
    PlanSpec *p = run.plan;
    p->pp = c->pp;
    p->schedule = c->schedule;
    p->virtual_stages =
        c->schedule == SCHEDULE_INTERLEAVED || c->schedule == SCHEDULE_DUALPIPEV ? 2 : 1;
    p->cp = c->cp;
    p->cp_algorithm = c->cp_algorithm;
    p->ep = c->ep;
    p->tp = c->tp == TP_ONE ? 1 : 2;
    p->sequence_parallel = c->tp >= TP_SP;
    p->tp_comm_overlap = c->tp == TP_OVERLAP;
    p->zero_stage = c->zero;
    p->offload = c->offload;
    p->dtype = c->dtype;
    p->recompute = c->recompute;
    p->overlap_moe_expert_parallel_comm = c->a2a;
    p->collective_algorithm = ALGORITHM_RING;
    p->micro_batch_size = 1;
    p->full_fidelity = full_fidelity;
    int dp = GPUS / (p->tp * p->cp * p->pp);
    p->global_batch_size = micro_batches * dp;
    return run;
}

/* Replays the cell; FALSE (and nothing to free) when the plan is invalid.
 * A valid plan that fails to replay fails the test. */
static gboolean replay(const Cell *c, gboolean full_fidelity, Run *out)
{
    *out = cell_run(c, full_fidelity, M);
    GError *error = NULL;
    if (!plan_spec_resolve(out->plan, out->model, out->cluster, &error) ||
        !strategy_check(out->plan, out->model, &error)) {
        g_clear_error(&error);
        run_free(out);
        return FALSE;
    }
    ck_assert_msg(simulate_run(out->model, out->cluster, out->plan, &out->rep, &error), "%s",
                  error->message);
    return TRUE;
}

static const CommStat *stat(const Run *r, TaskTag tag, CollOp op)
{
    return &r->rep.metrics.comm[tag][op];
}

static void counts_by_hand(const Cell *c, const Run *r)
{
    int ls = L / c->pp, v = r->plan->virtual_stages, replay = c->recompute == RECOMPUTE_FULL;
    if (c->cp > 1 && c->cp_algorithm == CP_RING)
        ck_assert_int_eq(stat(r, TAG_CP, COLL_RING_EXCHANGE)->count,
                         M * ls * (c->cp - 1) * (2 + replay));
    if (c->cp > 1 && c->cp_algorithm == CP_ALL_TO_ALL)
        ck_assert_int_eq(stat(r, TAG_CP, COLL_ALL_TO_ALL)->count, M * ls * (4 + 2 * replay));
    ck_assert_int_eq(stat(r, TAG_EP, COLL_ALL_TO_ALL)->count,
                     c->ep > 1 ? M * ls * (4 + 2 * replay) : 0);
    gboolean amax = c->dtype == DTYPE_FP8 && r->plan->dp * c->cp > 1;
    ck_assert_int_eq(stat(r, TAG_AMAX, COLL_ALL_REDUCE)->count, amax ? 2 * M * v : 0);
    int t = r->plan->tp;
    double s = (double)S / c->cp, q = s * A / t * (H / A) * 2, kv = 2 * q;
    if (c->cp > 1 && c->cp_algorithm == CP_RING)
        ck_assert_rel(stat(r, TAG_CP, COLL_RING_EXCHANGE)->bytes,
                      M * ls * (c->cp - 1) * kv * (1 + 2 + replay), 1e-12);
    if (c->cp > 1 && c->cp_algorithm == CP_ALL_TO_ALL)
        ck_assert_rel(stat(r, TAG_CP, COLL_ALL_TO_ALL)->bytes,
                      M * ls * (2 + replay) * (q + kv + q) * (c->cp - 1) / c->cp, 1e-12);
    if (c->ep > 1 && t == 1)
        ck_assert_rel(stat(r, TAG_EP, COLL_ALL_TO_ALL)->bytes,
                      M * ls * (4 + 2 * replay) * s * K * H * 2 * (c->ep - 1) / c->ep, 1e-12);
}

static void states_by_hand(const Cell *c, const Run *r)
{
    const double *split = r->rep.metrics.peak_split;
    double params = split[MEM_PARAMS], d = r->plan->dp * c->cp;
    if (c->offload == OFFLOAD_OPTIMIZER)
        ck_assert_double_eq(split[MEM_OPTIMIZER], 0);
    if (c->ep > 1)
        return; /* experts shard over ep, their states over dp x cp / ep */
    ck_assert_rel(split[MEM_GRADS], 2 * params / (c->zero == 2 ? d : 1), 1e-12);
    if (c->offload != OFFLOAD_OPTIMIZER)
        ck_assert_rel(split[MEM_OPTIMIZER], 6 * params / (c->zero == 1 || c->zero == 2 ? d : 1),
                      1e-12);
}

/* `split` (zb-h1 or zb-h2) against `whole` (the same cell under 1F1B). */
static void same_work(const Run *split, const Run *whole)
{
    const Metrics *a = &split->rep.metrics, *b = &whole->rep.metrics;
    gboolean same_stage = a->critical_stage == b->critical_stage;
    for (int tag = TAG_TP; tag < TAG_KINDS; tag++) {
        if (tag == TAG_PP || (!same_stage && tag != TAG_CP && tag != TAG_EP && tag != TAG_AMAX))
            continue;
        for (int op = 0; op < COLL_N_OPS; op++) {
            ck_assert_msg(a->comm[tag][op].count == b->comm[tag][op].count,
                          "%s %s: %d collectives split, %d whole", emit_comm_name((TaskTag)tag),
                          collective_name((CollOp)op), a->comm[tag][op].count,
                          b->comm[tag][op].count);
            ck_assert_rel(a->comm[tag][op].bytes, b->comm[tag][op].bytes, 1e-12);
        }
    }
    ck_assert_rel(a->model_flops, b->model_flops, 1e-12);
    ck_assert_rel(a->hardware_flops, b->hardware_flops, 1e-9);
}

static void same_replay(const Run *reduced, const Run *full)
{
    const Metrics *a = &reduced->rep.metrics, *b = &full->rep.metrics;
    ck_assert_rel(a->step_time_s, b->step_time_s, 1e-9);
    ck_assert_rel(a->hardware_flops, b->hardware_flops, 1e-9);
    ck_assert_rel(a->peak_bytes, b->peak_bytes, 1e-9);
    for (int tag = 0; tag < TAG_KINDS; tag++)
        for (int op = 0; op < COLL_N_OPS; op++)
            ck_assert_rel(a->comm[tag][op].bytes, b->comm[tag][op].bytes, 1e-9);
}

/* The cell `c` (replayed: `whole`) with the combined 1F1B overlap, where
 * valid (ep > 1, no full recomputation, a 1F1B schedule, interleaved on
 * pp > 1): its pairs reorder the work, not change it, so the counts by
 * hand hold, and it moves the bytes of every purpose but the pipeline's in
 * as many collectives and runs the same FLOPs (under ZeRO-3 but its
 * gathers: a pair walks two units' segments in turn, each gathered for
 * its use, where alone a unit's next segment may be the same layer's);
 * its symmetry reduction is exact (every other such cell at full
 * fidelity). 1 when replayed. */
static int same_paired(const Cell *c, const Run *whole)
{
    static int made;
    Cell a = *c;
    a.a2a = TRUE;
    Run r;
    if (c->ep == 1 || !replay(&a, FALSE, &r))
        return 0;
    counts_by_hand(&a, &r);
    if (c->zero < 3)
        same_work(&r, whole);
    if (made++ % 2 == 0) {
        Run f;
        ck_assert(replay(&a, TRUE, &f));
        same_replay(&r, &f);
        run_free(&f);
    }
    run_free(&r);
    return 1;
}

/* The cell at FOLD_M micro-batches, as text without how it was simulated
 * (wall time, events, why it was replayed whole after all), its steady
 * state skipped or replayed whole; *skipped its events skipped. */
static char *text_at_fold_m(const Cell *c, gboolean whole, guint64 *skipped)
{
    Run r = cell_run(c, FALSE, FOLD_M);
    test_resolve(r.plan, r.model, r.cluster);
    GError *error = NULL;
    gboolean ok = whole ? simulate_run_whole(r.model, r.cluster, r.plan, &r.rep, &error)
                        : simulate_run(r.model, r.cluster, r.plan, &r.rep, &error);
    ck_assert_msg(ok, "%s", error ? error->message : "");
    *skipped = r.rep.metrics.events_skipped;
    r.rep.sim_wall_s = 0;
    r.rep.replayed_whole = NULL;
    r.rep.metrics.events = r.rep.metrics.events_skipped = 0;
    char *text = report_render(&r.rep, FORMAT_TEXT, FALSE);
    run_free(&r);
    return text;
}

/* 1 when the cell's steady state was skipped, its report the whole one's. */
static int same_skipped(const Cell *c)
{
    guint64 skipped, none;
    g_autofree char *a = text_at_fold_m(c, FALSE, &skipped);
    g_autofree char *b = text_at_fold_m(c, TRUE, &none);
    ck_assert_str_eq(a, b);
    ck_assert_uint_eq(none, 0);
    return skipped > 0;
}

START_TEST(matrix)
{
    static const Schedule schedules[] = {SCHEDULE_1F1B, SCHEDULE_INTERLEAVED, SCHEDULE_ZBH1,
                                         SCHEDULE_ZBH2, SCHEDULE_DUALPIPEV};
    static const Offload offloads[] = {OFFLOAD_NONE, OFFLOAD_OPTIMIZER, OFFLOAD_ACTIVATIONS};
    int valid = 0, cells = 0, split = 0, full = 0, paired = 0, folded = 0;
    for (int pp = 1; pp <= 2; pp++)
        for (int cp = 1; cp <= 2; cp++)
            for (int alg = 0; alg < (cp > 1 ? 2 : 1); alg++)
                for (int ep = 1; ep <= 2; ep++)
                    for (int tp = 0; tp < TP_MODES; tp++)
                        for (int zero = 0; zero <= 3; zero++)
                            for (gsize o = 0; o < G_N_ELEMENTS(offloads); o++)
                                for (int fp8 = 0; fp8 < 2; fp8++)
                                    for (int full_rc = 0; full_rc < 2; full_rc++) {
                                        Cell c = {.pp = pp,
                                                  .cp = cp,
                                                  .ep = ep,
                                                  .zero = zero,
                                                  .cp_algorithm = alg ? CP_ALL_TO_ALL : CP_RING,
                                                  .tp = (TpMode)tp,
                                                  .offload = offloads[o],
                                                  .dtype = fp8 ? DTYPE_FP8 : DTYPE_BF16,
                                                  .recompute =
                                                      full_rc ? RECOMPUTE_FULL : RECOMPUTE_NONE};
                                        Run whole = {0};
                                        for (gsize s = 0; s < (pp > 1 ? 5 : 1); s++) {
                                            c.schedule = schedules[s];
                                            cells++;
                                            Run r;
                                            if (!replay(&c, FALSE, &r))
                                                continue;
                                            counts_by_hand(&c, &r);
                                            states_by_hand(&c, &r);
                                            paired += same_paired(&c, &r);
                                            folded += same_skipped(&c);
                                            if (valid++ % 4 == 0) {
                                                Run f;
                                                ck_assert(replay(&c, TRUE, &f));
                                                same_replay(&r, &f);
                                                run_free(&f);
                                                full++;
                                            }
                                            if (s == 0) {
                                                whole = r;
                                                continue;
                                            }
                                            if (schedule_splits_backward(r.plan) ==
                                                    SPLIT_ALL &&
                                                whole.plan) {
                                                same_work(&r, &whole);
                                                split++;
                                            }
                                            run_free(&r);
                                        }
                                        if (whole.plan)
                                            run_free(&whole);
                                    }
    g_print("combinations: %d cells, %d valid, %d split against 1F1B, %d at full fidelity, %d "
            "paired, %d steady states skipped\n",
            cells, valid, split, full, paired, folded);
    /* at FOLD_M micro-batches most steady states repeat (2,019 of the 4,896
     * when written); zb-h1's and DualPipeV's, some of these tiny models'
     * transients and the shortest steps are replayed whole */
    ck_assert_msg(folded >= valid / 4, "only %d of %d steady states skipped", folded, valid);
    /* 1,152 cells on one stage (1F1B) and 5 x 1,152 on two; invalid:
     * recomputation with offloaded activations (Megatron-Core refuses it),
     * offloaded optimizer with ep > 1 and ZeRO: 816 of each 1,152 valid */
    ck_assert_int_eq(cells, 6 * 1152);
    ck_assert_int_eq(valid, 6 * 816);
    ck_assert_int_eq(split, 2 * 816);
    /* of them, with ep 2 and without full recomputation under 1F1B on one
     * stage, interleaved or DualPipeV on two, those valid with the overlap
     * too: 216 of each 816 */
    ck_assert_int_eq(paired, 3 * 216);
}
END_TEST

Suite *suite_combinations(void)
{
    Suite *s = suite_create("combinations");
    TCase *tc = tcase_create("matrix");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, matrix);
    suite_add_tcase(s, tc);
    return s;
}
