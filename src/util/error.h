/* error.h: plansim's one GError domain.
 *
 * Bad input is reported through GError with this domain; the message is the
 * whole line main.c prints after "plansim: " (file, JSON path, value and what
 * was expected). Bugs are g_assert, never a GError. */
#ifndef PLANSIM_UTIL_ERROR_H
#define PLANSIM_UTIL_ERROR_H

#include <glib.h>

#define PS_ERROR (ps_error_quark())

typedef enum {
    PS_ERROR_INPUT,      /* a spec, plan or flag is invalid, or a file unreadable */
    PS_ERROR_STUCK,      /* the task graph cannot finish (a bug or a bad plan) */
    PS_ERROR_IO,         /* a file could not be written */
    PS_ERROR_INTERRUPTED /* the user stopped it (Ctrl-C) */
} PsErrorCode;

GQuark ps_error_quark(void);

#endif
