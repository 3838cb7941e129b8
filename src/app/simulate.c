/* simulate.c: spec -> layout -> strategies -> task graph -> engine -> metrics. */
#include "app/simulate.h"

#include <string.h>

#include "engine/engine.h"
#include "layout/layout.h"
#include "output/trace.h"
#include "base/text.h"
#include "strategy/emit.h"
#include "strategy/strategy.h"

gboolean sim_run(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                 Report *out, GError **error)
{
    return sim_run_traced(model, cluster, plan, NULL, FALSE, out, error);
}

gboolean sim_run_traced(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                        const char *trace_path, gboolean stages_only, Report *out, GError **error)
{
    gint64 started = g_get_monotonic_time();
    if (!strategy_check(plan, model, error))
        return FALSE;
    g_autoptr(Layout) layout = layout_new(plan, cluster);
    g_autoptr(Graph) graph = emit_step(model, cluster, plan, layout, error);
    if (!graph)
        return FALSE;
    EngineNet net = {cluster, plan->collective_algorithm, plan->link_contention, TAG_KINDS,
                     cluster->gpu.comm_interference};
    g_autoptr(Replay) replay = engine_run(graph, &net, error);
    if (!replay)
        return FALSE;
    *out = (Report){
        .model = model->name,
        .cluster = cluster->name,
        .plan = plan,
        .gpus = layout_ranks(layout),
        .parameters = tf_params(model),
        .micro_batches = plan_spec_micro_batches(plan),
    };
    metrics_compute(graph, replay, layout, model, cluster, plan, &out->metrics);
    out->sim_wall_s = (g_get_monotonic_time() - started) / 1e6;
    if (trace_path) {
        g_autofree char *trace = trace_render(graph, replay, layout, stages_only);
        if (!text_write_atomic(trace_path, trace, strlen(trace), error)) {
            report_clear(out);
            return FALSE;
        }
    }
    return TRUE;
}
