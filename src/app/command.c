/* command.c: what the commands share (command.h): the runner and its exit
 * statuses, the interrupt flag, the training totals' and a whole run's
 * flags, the warnings on a plan that ran. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "app/command.h"
#include "metrics/training.h"
#include "spec/megatron.h"
#include "strategy/strategy.h"
#include "base/error.h"
#include "base/text.h"

/* Set by SIGINT or SIGTERM while caught, to the signal's number: a sweep
 * stops and writes nothing. */
static volatile gint interrupted;

/* The calling thread's flag in place of the signals' (command_interrupts_take),
 * or NULL. */
static _Thread_local volatile gint *taken;

void command_interrupts_take(volatile gint *stop)
{
    taken = stop;
}

static void on_interrupt(int sig)
{
    interrupted = sig;
}

volatile gint *command_interrupts_catch(void)
{
    if (taken)
        return taken;
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    return &interrupted;
}

void command_interrupts_release(void)
{
    if (taken)
        return;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

/* Prints `error` as one line, frees it and returns its exit status. */
static int fail(GError *error)
{
    /* one line whatever the input held: control characters escaped */
    g_autofree char *line = ps_error_escape(error->message);
    text_err("plansim: %s\n", line);
    /* a failed write is not bad input, nor is a "no" to a plan that fits;
     * everything else is */
    int status = g_error_matches(error, PS_ERROR, PS_ERROR_IO)       ? 1
                 : g_error_matches(error, PS_ERROR, PS_ERROR_NO_FIT) ? 3
                                                                     : 2;
    g_error_free(error);
    return status;
}

int command_main(int argc, char **argv, const char *summary, GOptionEntry *entries, CliInputs *in,
                 gboolean (*body)(void *args, GError **error), void *args)
{
    GOptionContext *ctx = g_option_context_new(summary);
    g_option_context_set_description(ctx, COMMAND_EXIT_STATUSES);
    /* --help prints and exits: the program's, never a captured run's */
    g_option_context_set_help_enabled(ctx, !text_capturing());
    if (in)
        cli_inputs_entries(in, ctx);
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *error = NULL;
    gboolean ok = cli_parse(ctx, argc, argv, &error) && body(args, &error);
    g_option_context_free(ctx);
    for (GOptionEntry *e = entries; e->long_name; e++)
        if (e->arg == G_OPTION_ARG_FILENAME)
            g_free(*(char **)e->arg_data);
    if (in)
        cli_inputs_clear(in);
    if (ok)
        return 0;
    return g_error_matches(error, PS_ERROR, PS_ERROR_INTERRUPTED)
               ? (g_error_free(error), 128 + (taken ? *taken : interrupted))
               : fail(error);
}

gboolean command_parse_training(const CommandTraining *t, const ClusterSpec *cluster,
                                double *tokens, double *price, GError **error)
{
    *tokens = 0;
    if (t->price && !t->tokens) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--gpu-hour-price: expected --tokens too (the cost is of a run), got none");
        return FALSE;
    }
    return (!t->tokens || training_parse_count("--tokens", t->tokens, tokens, error)) &&
           cli_parse_number("--gpu-hour-price", t->price, 0, 1e6, FALSE,
                            cluster ? cluster->gpu_hour_price : 0, price, error);
}

gboolean command_parse_run(const CliInputs *in, const CommandRunFlags *r, RunChoice *c,
                           GError **error)
{
    runplan_choice_init(c);
    double trials;
    static const char *const yes_no[] = {"no", "yes", NULL};
    if (!cli_parse_number("--trials", r->trials, 1, 100000, TRUE, RUNPLAN_TRIALS, &trials, error) ||
        (r->every && !runplan_parse_every(r->every, c, error)) ||
        !cli_parse_number("--failure-rate", r->failure_rate, 0, 1e9, FALSE, -1,
                          &c->failures_per_1000_node_days, error) ||
        !cli_parse_number("--restart", r->restart, 0, 1e9, FALSE, -1, &c->restart_s, error) ||
        (r->hot_spares &&
         !cli_parse_choice("--hot-spares", r->hot_spares, yes_no, &c->hot_spares, error)))
        return FALSE;
    if (in->seed && !g_ascii_string_to_unsigned(in->seed, 10, 0, G_MAXUINT64, &c->seed, NULL)) {
        g_autofree char *got = g_strdup_printf("\"%s\"", in->seed);
        ps_error_value(error, "--seed", got, "an integer from 0 to 18446744073709551615");
        return FALSE;
    }
    c->trials = (int)trials;
    c->async = r->async;
    return TRUE;
}

/* The shortest sequence a step is more than latency at: under it the
 * GEMMs are a few rows tall, and launches and the collectives' alpha make
 * the step (pretraining runs 2,048 to 8,192 tokens). */
#define LATENCY_MIN_SEQ_LENGTH 128

/* Warns of a step that is all latency: sequences under
 * LATENCY_MIN_SEQ_LENGTH tokens, or micro-batches of under one token per
 * GPU of the tensor- and context-parallel group that splits them. */
static void warn_latency(const PlanSpec *plan, const ModelSpec *model)
{
    double tokens_per_gpu =
        (double)plan->micro_batch_size * model->seq_length / ((double)plan->tp * plan->cp);
    if (model->seq_length < LATENCY_MIN_SEQ_LENGTH)
        text_err("plansim: warning: sequences of %d token%s, under %d: the step is mostly launch "
                 "and communication latency, and its MFU says little of a real run "
                 "(--seq-length sets it)\n",
                 model->seq_length, model->seq_length == 1 ? "" : "s", LATENCY_MIN_SEQ_LENGTH);
    else if (tokens_per_gpu < 1)
        text_err("plansim: warning: a micro-batch of %d x %d tokens over tp x cp = %d GPUs is "
                 "under one token per GPU: the step is all latency (--micro-batch-size sets it)\n",
                 plan->micro_batch_size, model->seq_length, plan->tp * plan->cp);
}

void command_warn_plan(const CliInputs *in, const PlanSpec *plan, const ModelSpec *model,
                       const ClusterSpec *cluster)
{
    warn_latency(plan, model);
    long long used = plan_spec_gpus(plan), gpus = cluster_spec_gpus(cluster);
    if (used < gpus) {
        g_autofree char *shape = plan_spec_shape(plan, TRUE);
        text_err("plansim: warning: the plan runs on %lld of the cluster's %lld GPUs (%s); "
                 "--dp or --nodes sets them\n",
                 used, gpus, shape);
    }
    g_autoptr(PlanSpec) normal = plan_spec_copy(plan);
    strategy_normalize(normal, model);
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        if (!in->flag_text[f])
            continue;
        g_autofree char *given = plan_field_text(plan, (PlanField)f);
        g_autofree char *runs = plan_field_text(normal, (PlanField)f);
        if (strcmp(given, runs) != 0)
            text_err("plansim: warning: %s%s %s changes nothing in this plan, which runs as "
                     "%s\n",
                     in->flag_name[f], plan_fields[f].flag, given, runs);
    }
}

gboolean command_parse_print(const char *print, const char *trace, int *style, GError **error)
{
    *style = -1;
    if (!cli_parse_choice("--print", print, megatron_style_names, style, error))
        return FALSE;
    if (print && trace) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--print: expected no --trace beside it (it prints the plan, replaying "
                    "nothing), got --trace");
        return FALSE;
    }
    return TRUE;
}

gboolean command_print_plan(int style, const PlanSpec *plan, const ModelSpec *model,
                            const char *output, GError **error)
{
    g_autofree char *unsaid = NULL;
    g_autofree char *text = megatron_plan_text(plan, model, (MegatronStyle)style, &unsaid);
    if (unsaid)
        text_err("plansim: note: --print %s: plansim's own, not said: %s\n",
                 megatron_style_names[style], unsaid);
    return text_write_atomic(output ? output : "-", text, strlen(text), error);
}
