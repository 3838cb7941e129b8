/* progress.h: the line a long command shows on a terminal while it works.
 *
 * A command wraps its long part (a replay, a fit) in progress_start and
 * progress_stop. Once that part has run PROGRESS_AFTER_S seconds, and only
 * when standard error is a terminal and CI is not set, a line on stderr
 * says what it is doing and for how long, rewritten each second from a
 * thread of its own, and erased when it stops: nothing of it stays on the
 * screen, and nothing reaches a file or a pipe, nor a capture (the
 * library's, base/text.h). A sweep shows its own. */
#ifndef PLANSIM_APP_PROGRESS_H
#define PLANSIM_APP_PROGRESS_H

#include <glib.h>

/* Seconds of work before the line shows. */
#define PROGRESS_AFTER_S 2

typedef struct Progress Progress;

/* Whether a progress line may show: standard error is a terminal, CI is
 * not set and the calling thread's output is not captured. */
gboolean progress_shows(void);

/* Starts timing `what` ("simulate: replaying the step"), a string that
 * outlives the Progress; NULL (nothing to stop) when no line could show. */
Progress *progress_start(const char *what);

/* Stops the line and erases it if it showed; frees `p`. NULL is a no-op. */
void progress_stop(Progress *p);

#endif
