/* text.h: small string helpers shared by the spec parser and the CLI. */
#ifndef PLANSIM_UTIL_TEXT_H
#define PLANSIM_UTIL_TEXT_H

#include <glib.h>

/* The candidate closest to `word` by edit distance (to the whole candidate,
 * or one more than to its prefix a letter longer than the word, so that a
 * truncated name finds its full form), or NULL when none is within a third
 * of the word's length (rounded up, at least 2 edits).
 * `candidates` is NULL-terminated; the result points into it. */
const char *text_nearest(const char *word, const char *const *candidates);

/* Writes `len` bytes to `path` whole or not at all: a temporary file in the
 * same folder, then rename(2). "-" means standard output; an existing
 * device or pipe (/dev/null) is written directly. */
gboolean text_write_atomic(const char *path, const char *data, gsize len, GError **error);

#endif
