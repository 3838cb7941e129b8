/* training.c: the arithmetic of training.h. */
#include "metrics/training.h"

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"

void training_compute(Training *out, double tokens, double gpu_hour_price, double tokens_per_step,
                      double step_time_s, int gpus)
{
    *out = (Training){0};
    if (!(tokens > 0 && tokens_per_step > 0 && step_time_s > 0 && gpus > 0))
        return;
    out->tokens = tokens;
    out->gpu_hour_price = gpu_hour_price;
    out->steps = ceil(tokens / tokens_per_step);
    out->time_s = out->steps * step_time_s;
    out->days = out->time_s / 86400;
    out->gpu_hours = out->time_s / 3600 * gpus;
    out->cost = out->gpu_hours * gpu_hour_price;
    out->tokens_per_gpu_s = tokens_per_step / (step_time_s * gpus);
}

double training_tokens_per_step(const ModelSpec *model, const PlanSpec *plan)
{
    return (double)plan->global_batch_size * model->seq_length;
}

double training_tokens_per_s(const ModelSpec *model, const PlanSpec *plan, double step_time_s)
{
    return training_tokens_per_step(model, plan) / step_time_s;
}

void training_of_step(Training *out, double tokens, double gpu_hour_price, const ModelSpec *model,
                      const PlanSpec *plan, double step_time_s)
{
    double tokens_per_step = training_tokens_per_step(model, plan);
    long long gpus = plan_spec_gpus(plan);
    training_compute(out, tokens, gpu_hour_price, tokens_per_step, step_time_s,
                     gpus <= G_MAXINT ? (int)gpus : 0);
}

gboolean training_parse_count(const char *flag, const char *text, double *out, GError **error)
{
    double value = 0;
    if (!text_parse_count(text, TEXT_DECIMAL, FALSE, &value) ||
        !(value >= 1 && value <= TRAINING_MAX_TOKENS)) {
        g_autofree char *got = g_strdup_printf("\"%s\"", text);
        ps_error_value(error, flag, got, "tokens from 1 to %g%s", TRAINING_MAX_TOKENS,
                       text_suffixes_help(TEXT_DECIMAL));
        return FALSE;
    }
    *out = value;
    return TRUE;
}
