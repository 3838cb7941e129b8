/* error.h: plansim's one GError domain.
 *
 * Bad input is reported through GError with this domain; the message is the
 * whole line the command line (app/command.c) prints after "plansim: "
 * (file, JSON path, value and what was expected). Bugs are g_assert, never
 * a GError. */
#ifndef PLANSIM_BASE_ERROR_H
#define PLANSIM_BASE_ERROR_H

#include <glib.h>

#define PS_ERROR (ps_error_quark())

typedef enum {
    PS_ERROR_INPUT,       /* a spec, plan or flag is invalid, or a file unreadable */
    PS_ERROR_STUCK,       /* the task graph cannot finish (a bug or a bad plan) */
    PS_ERROR_IO,          /* a file could not be written */
    PS_ERROR_INTERRUPTED, /* the user stopped it (Ctrl-C) */
    PS_ERROR_ASYMMETRIC,  /* a symmetry-reduced replay met an asymmetry: replay
                           * without it (never reaches the user) */
    PS_ERROR_OVER_CAP,    /* bad input as PS_ERROR_INPUT: a step refused for its
                           * size after part of it was built (work was spent;
                           * refused before, it is PS_ERROR_INPUT) */
    PS_ERROR_NO_FIT,      /* the answer is no: no plan of a sweep fits its GPUs'
                           * memory, or the plan a run is asked for does not */
    PS_ERROR_NO_PERIOD    /* a steady state built short did not repeat in its
                           * replay: replay it whole (never reaches the user) */
} PsErrorCode;

GQuark ps_error_quark(void);

/* `message` as one printable line, newly allocated: a newline becomes \n, a
 * carriage return \r, a tab \t, any other control character \xHH (C1
 * controls \u00HH) and each byte of invalid UTF-8 \xHH; all else, a
 * backslash included, is kept. The command line passes every error
 * through it, so that a value quoted from the input cannot break the
 * one-line rule. */
char *ps_error_escape(const char *message);

/* The longest value an error quotes whole, in bytes. */
#define PS_ERROR_VALUE_MAX 120

/* `value` cut after PS_ERROR_VALUE_MAX bytes, at a character's start,
 * with how long it was ("...  (N bytes)"), newly allocated. */
char *ps_error_cut(const char *value);

/* `value` in double quotes, cut as ps_error_cut cuts it, newly
 * allocated: how every error quotes a value it was given. */
char *ps_error_quote(const char *value);

/* Sets a PS_ERROR_INPUT error about one value: "WHERE: expected EXPECTED,
 * got GOT", GOT cut after PS_ERROR_VALUE_MAX bytes ("...  (N bytes)"),
 * remembering "WHERE: expected EXPECTED" as its reason, so that a sweep can
 * count like errors together. */
void ps_error_value(GError **error, const char *where, const char *got, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* The error's reason: its message without the value it was about (for an
 * error made by ps_error_value), else the whole message. */
const char *ps_error_reason(const GError *error);

#endif
