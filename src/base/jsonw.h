/* jsonw.h: the JSON writer; every JSON plansim prints goes through it.
 *
 * A JsonWriter appends one JSON value to a GString, as a stream of calls:
 * open a container, write its members (in an object, a key, then its
 * value), close it. Its one string escaper writes keys and strings alike:
 * '"' and '\\' get a backslash, every control character below 0x20 becomes
 * \u00XX (lower-case hex), each byte that is not part of valid UTF-8
 * becomes \ufffd, and everything else, valid multi-byte UTF-8 included,
 * passes through.
 *
 * Layout is chosen per container, when it is opened:
 *   indent >= 0    each member on its own line after `indent` spaces,
 *                  members separated by ","; the closing bracket on a line
 *                  of its own, indented as the line the container opened
 *                  on; an empty container is "{}" or "[]";
 *   JSONW_INLINE   on one line, members separated by ", ";
 *   JSONW_COMPACT  on one line, members separated by ",".
 * A key is followed by ": ". The writer writes no newline after the value:
 * the caller adds one if it wants.
 *
 * Misuse (a value without its key in an object, a key outside one, closing
 * nothing, nesting deeper than JSONW_MAX_DEPTH, a second top-level value)
 * is a programming error and aborts. */
#ifndef PLANSIM_BASE_JSONW_H
#define PLANSIM_BASE_JSONW_H

#include <glib.h>

#define JSONW_INLINE    (-1)
#define JSONW_COMPACT   (-2)
#define JSONW_MAX_DEPTH 16

/* An open container; the writer's own. */
typedef struct {
    char close;      /* '}' or ']' */
    int layout;      /* an indent >= 0, JSONW_INLINE or JSONW_COMPACT */
    int line_indent; /* of the line the container opened on */
    int members;     /* written so far */
} JsonwFrame;

/* The writer's state, on the caller's stack; no resources to free. */
typedef struct {
    GString *out;
    int depth;       /* containers open */
    gboolean keyed;  /* a key was written and awaits its value */
    gboolean done;   /* the top-level value is complete */
    int line_indent; /* of the line being written */
    JsonwFrame open[JSONW_MAX_DEPTH];
} JsonWriter;

/* Starts a writer appending to `out` (not owned), whose current line is
 * taken to have no indentation. */
void jsonw_init(JsonWriter *w, GString *out);

/* Opens an object or a list laid out as `layout` (see above). */
void jsonw_begin_object(JsonWriter *w, int layout);
void jsonw_begin_list(JsonWriter *w, int layout);

/* Closes the innermost open container. */
void jsonw_end(JsonWriter *w);

/* Writes a member's key (escaped) in the innermost open object; the next
 * call writes its value. Returns w, so that a member fits one line:
 * jsonw_int(jsonw_key(w, "count"), n). */
JsonWriter *jsonw_key(JsonWriter *w, const char *key);

/* Values. */
void jsonw_string(JsonWriter *w, const char *s); /* escaped; NULL writes null */
void jsonw_bool(JsonWriter *w, gboolean v);      /* true or false */
void jsonw_null(JsonWriter *w);

/* Numbers, with -0 written as 0 (so that equal results never differ in
 * sign) and NaN or an infinity, which JSON cannot hold, written as null:
 *   jsonw_number  10 significant digits, shortest form ("%.10g");
 *   jsonw_int     a whole number with every digit ("%.0f"), for counts and
 *                 byte sizes held in doubles;
 *   jsonw_fixed   `decimals` digits after the point ("%.*f"). */
void jsonw_number(JsonWriter *w, double v);
void jsonw_int(JsonWriter *w, double v);
void jsonw_fixed(JsonWriter *w, double v, int decimals);
/* An unsigned 64-bit integer with every digit (a seed). */
void jsonw_uint64(JsonWriter *w, guint64 v);

#endif
