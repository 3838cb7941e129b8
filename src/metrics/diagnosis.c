/* diagnosis.c: the checklist (diagnosis.h), one row per check in
 * `checklist`, each row's function reading the figures it needs. */
#include "metrics/diagnosis.h"

#include <math.h>

#include "layout/layout.h"
#include "strategy/data_loader.h"
#include "strategy/strategy.h"
#include "base/units.h"

static const double GiB = UNITS_GIB;

/* What the checks read. */
typedef struct {
    const Metrics *m;
    const Step *step;
    double gpus;
} Checked;

/* 1. The step against the ideal 6ND / (GPUs x peak). */
static void check_compute(DiagCheck *c, const Checked *s)
{
    double ideal = s->m->model_flops / (s->gpus * s->m->peak_flops);
    c->value = s->m->mfu;
    gboolean good = c->value >= c->threshold;
    c->verdict = g_strdup(good ? "compute-efficient" : "below the ideal");
    c->text = g_strdup_printf(
        "the step takes %.4g s against the ideal %.4g s (model FLOPs / (%.0f GPUs x peak)): "
        "%.1f %% of it (MFU)%s",
        s->m->step_time_s, ideal, s->gpus, 100 * c->value,
        good ? "" : "; the checks below say where the rest goes");
}

/* 2. Communication per group, exposed and in all. */
static void check_communication(DiagCheck *c, const Checked *s)
{
    GString *text = g_string_new("exposed of total:");
    const char *sep = " ";
    int worst = -1;
    double worst_s = 0;
    for (int tag = 0; tag < TAG_KINDS; tag++) {
        CommStat sum = {0};
        for (int op = 0; op < COLL_N_OPS; op++) {
            sum.count += s->m->comm[tag][op].count;
            sum.time_s += s->m->comm[tag][op].time_s;
            sum.exposed_s += s->m->comm[tag][op].exposed_s;
        }
        if (sum.count == 0)
            continue;
        g_string_append_printf(text, "%s%s %.4g s of %.4g s (%.1f %% of the step)", sep,
                               emit_comm_name((TaskTag)tag), sum.exposed_s, sum.time_s,
                               100 * sum.exposed_s / s->m->step_time_s);
        sep = ", ";
        if (worst < 0 || sum.exposed_s > worst_s) {
            worst = tag;
            worst_s = sum.exposed_s;
        }
    }
    c->value = worst_s / s->m->step_time_s;
    if (worst < 0) {
        g_string_assign(text, "no collectives: one GPU");
        c->verdict = g_strdup("none");
    } else if (c->value >= c->threshold) {
        const char *group = emit_comm_name((TaskTag)worst);
        g_autofree char *advice =
            strategy_comm_advice((TaskTag)worst, s->step->plan, s->step->cluster);
        c->verdict = g_strdup_printf("bound by %s communication", group);
        g_string_append_printf(text, "; the largest exposed is %s%s%s", group, advice ? ": " : "",
                               advice ? advice : "");
    } else {
        c->verdict = g_strdup("mostly hidden");
        g_string_append_printf(text, "; the largest exposed is %s", emit_comm_name((TaskTag)worst));
    }
    c->text = g_string_free(text, FALSE);
}

/* The busiest stage and the share of the step the others wait for it:
 * its busy time less the stages' mean, over the step. */
static double stage_imbalance(const Metrics *m, int *busiest)
{
    double total = 0;
    *busiest = 0;
    for (int k = 0; k < m->n_stages; k++) {
        total += m->stages[k].busy_s;
        if (m->stages[k].busy_s > m->stages[*busiest].busy_s)
            *busiest = k;
    }
    if (m->n_stages == 0 || !(m->step_time_s > 0))
        return 0;
    return (m->stages[*busiest].busy_s - total / m->n_stages) / m->step_time_s;
}

/* 3. The bubble against 1F1B's (p - 1) / m of the compute (Narayanan et
 * al. 2021; (p - 1) / (v m) with v chunks per stage), which is
 * (p - 1) / (v m + p - 1) of the step: under the threshold t when
 * v m >= (p - 1)(1 - t) / t. When at least half of it is the stages'
 * waiting for the busiest one (its busy time over their mean), it is an
 * imbalance, which more micro-batches do not cure: moving layers does. */
static void check_bubble(DiagCheck *c, const Checked *s)
{
    int p = s->step->plan->pp, v = s->step->plan->virtual_stages, m = s->step->micro_batches;
    c->value = s->m->bubble_fraction;
    if (p == 1) {
        c->verdict = g_strdup("no pipeline");
        c->text = g_strdup_printf("one pipeline stage: no bubble (%.1f %% idle)", 100 * c->value);
        return;
    }
    int busiest;
    double imbalance = stage_imbalance(s->m, &busiest);
    if (c->value >= c->threshold && imbalance >= c->value / 2) {
        const StageStat *st = &s->m->stages[busiest];
        double mean = st->busy_s - imbalance * s->m->step_time_s;
        c->verdict = g_strdup("stage-imbalanced");
        c->text = g_strdup_printf(
            "bubble %.1f %% of the step, %.1f points of it the stages waiting for stage %d, busy "
            "%.4g s against their mean %.4g s (%d layers%s%s): fewer layers there (%s) balance "
            "it, more micro-batches do not",
            100 * c->value, 100 * imbalance, busiest, st->busy_s, mean, st->layers,
            st->embedding ? " + embedding" : "", st->head ? " + head and loss" : "",
            busiest == p - 1 ? "--decoder-last-pipeline-num-layers, "
                               "--account-for-loss-in-pipeline-split or a layout"
            : busiest == 0   ? "--decoder-first-pipeline-num-layers, "
                               "--account-for-embedding-in-pipeline-split or a layout"
                             : "--pipeline-model-parallel-layout");
        return;
    }
    double rule = (p - 1.0) / ((double)v * m);
    double needed = ceil((p - 1.0) * (1 - c->threshold) / c->threshold / v);
    gboolean large = c->value >= c->threshold;
    c->verdict = g_strdup(large ? "bubble-bound" : "small bubble");
    GString *text = g_string_new(NULL);
    g_string_printf(text, "bubble %.1f %% of the step, m = %d micro-batches over p = %d stages",
                    100 * c->value, m, p);
    if (v > 1)
        g_string_append_printf(text, " of v = %d chunks", v);
    g_string_append_printf(text, "; the rule of thumb (p - 1) / %sm gives %.3g of the compute",
                           v > 1 ? "v " : "", rule);
    if (large)
        g_string_append_printf(text,
                               "; %.0f or more micro-batches per replica (a larger global "
                               "batch or a smaller micro-batch) would bring it under %.0f %%%s",
                               needed, 100 * c->threshold,
                               v == 1 ? ", and interleaving (--schedule interleaved "
                                        "--virtual-stages 2) halves it"
                                      : "");
    c->text = g_string_free(text, FALSE);
}

/* 4. Memory headroom, and what ZeRO would save: at stage 2 the gradients
 * (and from stage 0 the optimizer states) split over dp, at stage 3 the
 * parameters too (states.h), each kind then (1 - 1/dp) smaller. */
static void check_memory(DiagCheck *c, const Checked *s)
{
    const Metrics *m = s->m;
    const PlanSpec *p = s->step->plan;
    double share = 1 - 1.0 / p->dp, zero = p->zero_stage;
    double zero2 = ((zero < 2 ? m->peak_split[MEM_GRADS] : 0) +
                    (zero < 1 ? m->peak_split[MEM_OPTIMIZER] : 0)) *
                   share;
    double zero3 = zero2 + (zero < 3 ? m->peak_split[MEM_PARAMS] * share : 0);
    double excess = m->peak_bytes - m->capacity_bytes;
    c->value = m->capacity_bytes > 0 ? m->peak_bytes / m->capacity_bytes : 0;
    if (!m->fits)
        c->verdict =
            g_strdup(zero2 >= excess   ? "does not fit: ZeRO-2 needed"
                     : zero3 >= excess ? "does not fit: ZeRO-3 needed"
                     : p->recompute != RECOMPUTE_FULL && m->peak_split[MEM_ACTIVATIONS] >= excess
                         ? "does not fit: recomputation may be enough"
                         : "does not fit: more tp, pp or GPUs");
    else
        c->verdict = g_strdup(c->value >= c->threshold ? "tight" : "fits");
    c->text = g_strdup_printf(
        "peak %.2f GiB of %.2f GiB (%.1f %%), %s %.2f GiB; activations %.2f GiB (recompute %s), "
        "model states %.2f GiB (ZeRO %d); from here ZeRO-2 would save about %.2f GiB, ZeRO-3 "
        "%.2f GiB%s",
        m->peak_bytes / GiB, m->capacity_bytes / GiB, 100 * c->value,
        m->fits ? "headroom" : "over by", fabs(excess) / GiB, m->peak_split[MEM_ACTIVATIONS] / GiB,
        recompute_names[p->recompute],
        (m->peak_split[MEM_PARAMS] + m->peak_split[MEM_GRADS] + m->peak_split[MEM_OPTIMIZER]) / GiB,
        p->zero_stage, zero2 / GiB, zero3 / GiB,
        m->fits ? "; neither recomputation nor ZeRO-2/3 is needed to fit"
        : p->recompute != RECOMPUTE_FULL
            ? "; full recomputation keeps only each layer's input of the activations"
            : "");
}

/* 5. The data loader's time per step against the first stage's compute
 * (data_loader.h): it stalls the stage when it needs longer; the storage
 * bandwidth and preprocessing rate per node below which it would. */
static void check_data(DiagCheck *c, const Checked *s)
{
    const PlanSpec *p = s->step->plan;
    g_autoptr(Layout) layout = layout_new(p, s->step->cluster);
    int readers = data_loader_readers_per_node(layout, s->step->cluster);
    double compute_s = s->m->stages[0].busy_s;
    double samples = (double)readers * s->step->micro_batches * p->micro_batch_size;
    /* Megatron-LM's pre-tokenized data: uint16 token ids */
    double bytes = p->bytes_per_sample > 0 ? p->bytes_per_sample : 2.0 * s->step->model->seq_length;
    double load_s =
        s->step->micro_batches * data_loader_micro_batch_s(s->step->cluster, p, readers);
    g_autofree char *limits = g_strdup_printf(
        "a node's storage would stall the first stage below %.4g MB/s, its preprocessing below "
        "%.4g samples/s (%d reader%s per node, %.0f samples and %.4g MB per step, %.4g s of "
        "compute)",
        samples * bytes / compute_s / 1e6, samples / compute_s, readers, readers == 1 ? "" : "s",
        samples, samples * bytes / 1e6, compute_s);
    c->value = load_s / compute_s;
    if (p->bytes_per_sample <= 0) {
        c->verdict = g_strdup("not modelled");
        c->text = g_strdup_printf("no bytes_per_sample; at %.0f bytes per sequence (uint16 "
                                  "tokens), %s",
                                  bytes, limits);
        return;
    }
    c->verdict = g_strdup(c->value >= c->threshold ? "bottleneck" : "not a bottleneck");
    c->text = g_strdup_printf("the loader needs %.4g s per step, %.1f %% of the first stage's "
                              "compute; %s",
                              load_s, 100 * c->value, limits);
}

static const struct {
    const char *name, *question;
    double threshold;
    void (*check)(DiagCheck *c, const Checked *s);
} checklist[DIAG_ITEMS] = {
    [DIAG_COMPUTE] = {.name = "compute",
                      .question = "How close is the step to the ideal 6ND / (GPUs x peak)?",
                      .threshold = 0.45,
                      .check = check_compute},
    [DIAG_COMMUNICATION] = {.name = "communication",
                            .question = "How much communication is exposed, per group?",
                            .threshold = 0.10,
                            .check = check_communication},
    [DIAG_BUBBLE] = {.name = "bubble",
                     .question = "How large is the pipeline bubble, for how many micro-batches?",
                     .threshold = 0.10,
                     .check = check_bubble},
    [DIAG_MEMORY] = {.name = "memory",
                     .question = "How much memory headroom is left; are recomputation or "
                                 "ZeRO-2/3 needed?",
                     .threshold = 0.90,
                     .check = check_memory},
    [DIAG_DATA] = {.name = "data",
                   .question = "Is data loading (storage reads, preprocessing) the bottleneck?",
                   .threshold = 1.0,
                   .check = check_data},
};

void diagnosis_compute(Diagnosis *out, const Metrics *m, const Step *step)
{
    Checked s = {.m = m, .step = step, .gpus = (double)plan_spec_gpus(step->plan)};
    for (int i = 0; i < DIAG_ITEMS; i++) {
        DiagCheck *c = &out->item[i];
        *c = (DiagCheck){.name = checklist[i].name,
                         .question = checklist[i].question,
                         .threshold = checklist[i].threshold};
        checklist[i].check(c, &s);
    }
}

void diagnosis_clear(Diagnosis *d)
{
    for (int i = 0; i < DIAG_ITEMS; i++) {
        g_free(d->item[i].verdict);
        g_free(d->item[i].text);
        d->item[i].verdict = d->item[i].text = NULL;
    }
}
