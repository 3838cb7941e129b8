/* progress.c: the progress line (progress.h). A thread waits on a
 * condition until the first showing, then once a second, and rewrites the
 * line in place ("\r"); stopping signals it, joins it and erases the line
 * ("\r", spaces, "\r") if it showed. */
#include "app/progress.h"

#include <stdio.h>
#include <unistd.h>

#include "base/text.h"

struct Progress {
    const char *what;
    gint64 started_us;
    GMutex lock;
    GCond stop;
    gboolean stopping;
    int shown; /* the width of the line shown, 0 if none */
    GThread *thread;
};

static gpointer progress_run(gpointer data)
{
    Progress *p = data;
    gint64 next = p->started_us + PROGRESS_AFTER_S * G_TIME_SPAN_SECOND;
    g_mutex_lock(&p->lock);
    while (!p->stopping) {
        if (!g_cond_wait_until(&p->stop, &p->lock, next) && !p->stopping) {
            double s = (double)(g_get_monotonic_time() - p->started_us) / G_TIME_SPAN_SECOND;
            p->shown = fprintf(stderr, "\rplansim %s: %.0f s", p->what, s) - 1;
            fflush(stderr);
            next += G_TIME_SPAN_SECOND;
        }
    }
    g_mutex_unlock(&p->lock);
    return NULL;
}

gboolean progress_shows(void)
{
    return isatty(STDERR_FILENO) && !g_getenv("CI") && !text_capturing();
}

Progress *progress_start(const char *what)
{
    if (!progress_shows())
        return NULL;
    Progress *p = g_new0(Progress, 1);
    p->what = what;
    p->started_us = g_get_monotonic_time();
    g_mutex_init(&p->lock);
    g_cond_init(&p->stop);
    p->thread = g_thread_new("progress", progress_run, p);
    return p;
}

void progress_stop(Progress *p)
{
    if (!p)
        return;
    g_mutex_lock(&p->lock);
    p->stopping = TRUE;
    g_cond_signal(&p->stop);
    g_mutex_unlock(&p->lock);
    g_thread_join(p->thread);
    if (p->shown > 0) {
        fprintf(stderr, "\r%*s\r", p->shown, "");
        fflush(stderr);
    }
    g_mutex_clear(&p->lock);
    g_cond_clear(&p->stop);
    g_free(p);
}
