/* runplan.c: a plan's run model, and the run simulated (runplan.h). */
#include "metrics/runplan.h"

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "metrics/training.h"

void runplan_choice_init(RunChoice *c)
{
    *c = (RunChoice){.trials = RUNPLAN_TRIALS,
                     .seed = 1,
                     .failures_per_1000_node_days = -1,
                     .restart_s = -1,
                     .hot_spares = -1};
}

gboolean runplan_parse_every(const char *text, RunChoice *c, GError **error)
{
    static const struct {
        const char *unit;
        double s;
    } units[] = {{.unit = "s", .s = 1}, {.unit = "min", .s = 60}, {.unit = "h", .s = 3600}};
    c->every_steps = c->every_s = 0;
    if (strcmp(text, "auto") == 0)
        return TRUE;
    double v;
    if (text_parse_count(text, TEXT_PLAIN, TRUE, &v) && v >= 1 && v <= 1e15) {
        c->every_steps = v;
        return TRUE;
    }
    for (gsize i = 0; i < G_N_ELEMENTS(units); i++) {
        gsize n = strlen(text), u = strlen(units[i].unit);
        if (n <= u || strcmp(text + n - u, units[i].unit) != 0)
            continue;
        g_autofree char *number = g_strndup(text, n - u);
        if (text_parse_number(number, &v) && v > 0 && v * units[i].s <= 1e12) {
            c->every_s = v * units[i].s;
            return TRUE;
        }
    }
    g_autofree char *got = g_strdup_printf("\"%s\"", text);
    ps_error_value(error, "--checkpoint-every", got,
                   "auto, a whole number of steps (500) or a time with a unit s, min or h (30min)");
    return FALSE;
}

gboolean runplan_check(const ClusterSpec *cluster, const RunChoice *choice, GError **error)
{
    if (choice->async && !(cluster->gpu.pcie_Bps > 0)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--async-save: expected the cluster's $.gpu.pcie_GBps (the snapshot's copy to "
                    "host memory), got none in %s",
                    cluster->path ? cluster->path : cluster->name);
        return FALSE;
    }
    return TRUE;
}

/* The run model of the plan's step, checkpoint and cluster. */
static gboolean model_of(const ClusterSpec *cluster, const RunChoice *choice, RunPlan *p,
                         GError **error)
{
    const ReliabilitySpec *r = &cluster->reliability;
    RunModel *m = &p->model;
    double rate = 0;
    for (int k = 0; k < FAILURE_KINDS; k++)
        rate += r->per_node_hour[k];
    for (int k = 0; k < FAILURE_KINDS; k++) {
        double per_node_hour = r->per_node_hour[k];
        if (choice->failures_per_1000_node_days >= 0) /* the total, in the cluster's shares */
            per_node_hour =
                rate > 0 ? choice->failures_per_1000_node_days / 24000 * r->per_node_hour[k] / rate
                : k == FAILURE_NODE ? choice->failures_per_1000_node_days / 24000
                                    : 0;
        m->rate_per_s[k] = per_node_hour * p->nodes / 3600;
    }
    gboolean spares = choice->hot_spares >= 0 ? choice->hot_spares : r->hot_spares;
    m->restart_s = (choice->restart_s >= 0 ? choice->restart_s : r->detect_s + r->restart_s) +
                   (spares ? 0 : r->replace_s) + p->checkpoint.load_s + r->warmup_steps * p->step_s;
    if (!runplan_check(cluster, choice, error))
        return FALSE;
    if (choice->async) {
        m->pause_s = p->checkpoint.snapshot_s;
        m->write_s = p->checkpoint.save_s;
    } else {
        m->pause_s = p->checkpoint.save_s;
    }
    m->trials = choice->trials;
    m->seed = choice->seed;
    return TRUE;
}

gboolean runplan_compute(const Step *step, double step_s, double tokens, const RunChoice *choice,
                         gboolean best, RunPlan *out, GError **error)
{
    const ClusterSpec *cluster = step->cluster;
    const PlanSpec *plan = step->plan;
    memset(out, 0, sizeof *out);
    out->gpus = (int)plan_spec_gpus(plan);
    out->nodes = (out->gpus + cluster->gpus_per_node - 1) / cluster->gpus_per_node;
    out->tokens = tokens;
    out->step_s = step_s;
    checkpoint_of_plan(&out->checkpoint, step);
    RunModel *m = &out->model;
    m->step_s = step_s;
    m->steps = ceil(tokens / training_tokens_per_step(step->model, plan));
    if (!model_of(cluster, choice, out, error))
        return FALSE;
    double rate = run_rate_per_s(m);
    out->mtbf_s = rate > 0 ? 1 / rate : INFINITY;
    out->young_s = run_young_s(m->pause_s, out->mtbf_s);
    out->daly_s = run_daly_s(m->pause_s, m->restart_s, out->mtbf_s);
    out->saxena_s = run_saxena_s(m->pause_s, m->restart_s, out->mtbf_s);
    double every = choice->every_steps > 0 ? choice->every_steps
                   : choice->every_s > 0   ? MAX(1, round(choice->every_s / step_s))
                                           : 0;
    if (every == 0 || best) {
        RunStats at_best;
        if (!run_best_interval(m, &out->best_every, error) ||
            !run_trials(m, out->best_every, &at_best, error))
            return FALSE;
        out->best_wall_s = at_best.mean.wall_s;
        if (every == 0) {
            out->stats = at_best;
            out->expected_failures = rate * out->stats.mean.wall_s;
            return TRUE;
        }
    }
    every = CLAMP(every, 1, m->steps);
    if (!run_trials(m, every, &out->stats, error))
        return FALSE;
    out->expected_failures = rate * out->stats.mean.wall_s;
    return TRUE;
}
