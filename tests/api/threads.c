/* threads.c: libplansim from several threads at once (plansim.h: calls
 * share no mutable state). Two sweeps run at once on two threads give
 * byte for byte the output of the same two run one after the other; a
 * sweep cancelled from another thread, or before it starts, returns
 * PLANSIM_CANCELLED with no output; bad requests are bad input. Uses
 * only the public API, as any user of the library. TAP-like lines, exit
 * status 1 on a failure. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "plansim.h"

static int failures;

static void check(gboolean ok, const char *what, const char *detail)
{
    printf("%s - %s%s%s\n", ok ? "ok" : "not ok", what, ok ? "" : ": ", ok ? "" : detail);
    failures += !ok;
}

/* Two small sweeps over different grids: Llama 3 8B on one DGX H100 node,
 * each on a thread of its own (threads 1: the calls, not their pools,
 * run at once). */
static const char *const requests[2] = {
    "{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", \"nodes\": 1, \"space\": \"grid\", "
    "\"tp\": [1, 2, 4], \"pp\": [1, 2], \"threads\": 1}",
    "{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", \"nodes\": 1, \"space\": \"grid\", "
    "\"tp\": [2, 8], \"recompute\": [\"none\", \"full\"], \"threads\": 1}",
};

typedef struct {
    const char *request;
    plansim_cancel *cancel;
    int status;
    char *output, *log;
} Call;

static gpointer sweep(gpointer data)
{
    Call *c = data;
    c->status = plansim_sweep(c->request, c->cancel, &c->output, &c->log);
    return NULL;
}

static void call_clear(Call *c)
{
    plansim_free(c->output);
    plansim_free(c->log);
}

static void sweeps_at_once(void)
{
    Call alone[2], together[2];
    for (int i = 0; i < 2; i++) {
        alone[i] = (Call){.request = requests[i]};
        sweep(&alone[i]);
        together[i] = (Call){.request = requests[i]};
    }
    GThread *threads[2];
    for (int i = 0; i < 2; i++)
        threads[i] = g_thread_new("sweep", sweep, &together[i]);
    for (int i = 0; i < 2; i++) {
        g_thread_join(threads[i]);
        char what[64];
        g_snprintf(what, sizeof what, "sweep %d at once as alone", i + 1);
        check(alone[i].status == PLANSIM_OK && together[i].status == PLANSIM_OK &&
                  alone[i].output[0] == '[' && strcmp(alone[i].output, together[i].output) == 0,
              what, together[i].log);
        call_clear(&alone[i]);
        call_clear(&together[i]);
    }
}

/* The default space of Llama 3 70B on 64 DGX H100 nodes: thousands of
 * plans, a sweep of seconds, cancelled 50 ms in. */
static void cancel_from_another_thread(void)
{
    Call c = {.request = "{\"model\": \"llama3-70b\", \"cluster\": \"dgx-h100\", \"nodes\": 64, "
                         "\"threads\": 2}",
              .cancel = plansim_cancel_new()};
    GThread *thread = g_thread_new("sweep", sweep, &c);
    g_usleep(50000);
    plansim_cancel_request(c.cancel);
    g_thread_join(thread);
    check(c.status == PLANSIM_CANCELLED && !*c.output, "a sweep cancelled from another thread",
          c.log);
    call_clear(&c);
    c = (Call){.request = requests[0], .cancel = c.cancel};
    sweep(&c);
    check(c.status == PLANSIM_CANCELLED && !*c.output, "a sweep with a cancelled token", c.log);
    call_clear(&c);
    plansim_cancel_free(c.cancel);
}

static void bad_requests(void)
{
    const char *const bad[] = {"[1]", "{\"tp\": {\"a\": 1}}", "{\"tp\": 3", "{\"no-such-flag\": 1}",
                               "{\"help\": true}"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *output, *log;
        int status = plansim_simulate(bad[i], &output, &log);
        /* the error is the log's last line, as the program prints it */
        check(status == PLANSIM_BAD_INPUT && !*output && g_str_has_prefix(log, "plansim: ") &&
                  g_str_has_suffix(log, "\n"),
              bad[i], log);
        plansim_free(output);
        plansim_free(log);
    }
}

int main(void)
{
    check(strcmp(plansim_version(), PACKAGE_VERSION) == 0, "plansim_version", plansim_version());
    sweeps_at_once();
    cancel_from_another_thread();
    bad_requests();
    return failures > 0;
}
