/* training.h: a training run's totals from one simulated step.
 *
 * A run is many identical steps (the steady state: no evaluation,
 * checkpointing, restarts or failures). For T tokens, a step of
 * tokens_per_step = global_batch_size x seq_length tokens taking t seconds
 * on G GPUs:
 *     steps            = ceil(T / tokens_per_step)
 *     time_s           = steps x t             (days = time_s / 86400)
 *     gpu_hours        = time_s / 3600 x G
 *     cost             = gpu_hours x price     (when a price is given)
 *     tokens_per_gpu_s = tokens_per_step / (t x G) */
#ifndef PLANSIM_METRICS_TRAINING_H
#define PLANSIM_METRICS_TRAINING_H

#include <glib.h>

#include "spec/model.h"
#include "spec/plan.h"

typedef struct {
    double tokens;         /* to train on; 0: no totals (the rest is 0) */
    double gpu_hour_price; /* per GPU-hour, any currency; 0: no cost */
    double steps;
    double time_s;
    double days;
    double gpu_hours;
    double cost; /* 0 without a price */
    double tokens_per_gpu_s;
} Training;

/* The totals above into *out; all 0 when `tokens` is 0 or the step is not
 * known (step_time_s or gpus not positive). */
void training_compute(Training *out, double tokens, double gpu_hour_price, double tokens_per_step,
                      double step_time_s, int gpus);

/* The tokens of one step of `plan` (resolved) of `model`:
 * global_batch_size x seq_length; the one home of a step's tokens, and of
 * the throughput, those tokens over the step's seconds. */
double training_tokens_per_step(const ModelSpec *model, const PlanSpec *plan);
double training_tokens_per_s(const ModelSpec *model, const PlanSpec *plan, double step_time_s);

/* training_compute for a step of `plan` (resolved) of `model` taking
 * step_time_s: global_batch_size x seq_length tokens on tp x pp x dp GPUs. */
void training_of_step(Training *out, double tokens, double gpu_hour_price, const ModelSpec *model,
                      const PlanSpec *plan, double step_time_s);

/* The most tokens a run may train on: a million times the largest
 * published pretraining runs (tens of trillions), so that no count of
 * steps overflows what the reports print. */
#define TRAINING_MAX_TOKENS 1e18

/* A count of tokens from the flag `flag`: a decimal number from 1 to
 * TRAINING_MAX_TOKENS, optionally followed by one of the decimal suffixes
 * K (1e3), M (1e6), B or G (1e9), T (1e12), either case, as "2T" or "1.5b"
 * (text_parse_count). Fails (PS_ERROR_INPUT) with one line naming the flag
 * and the text. */
gboolean training_parse_count(const char *flag, const char *text, double *out, GError **error);

#endif
