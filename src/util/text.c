/* text.c: nearest-word suggestion (Levenshtein distance) and atomic writes. */
#include "util/text.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

/* Levenshtein distance between a and the first lb bytes of b. */
static gsize edit_distance(const char *a, const char *b, gsize lb)
{
    gsize la = strlen(a);
    g_autofree gsize *row = g_new(gsize, lb + 1);
    for (gsize j = 0; j <= lb; j++)
        row[j] = j;
    for (gsize i = 1; i <= la; i++) {
        gsize diag = row[0];
        row[0] = i;
        for (gsize j = 1; j <= lb; j++) {
            gsize up = row[j];
            gsize cost = g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 1]) ? 0 : 1;
            row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), diag + cost);
            diag = up;
        }
    }
    return row[lb];
}

const char *text_nearest(const char *word, const char *const *candidates)
{
    gsize limit = MAX(2, (strlen(word) + 2) / 3);
    const char *best = NULL;
    gsize best_d = limit + 1;
    gsize len = strlen(word);
    for (const char *const *c = candidates; *c; c++) {
        /* a misspelt word, or a truncated one ("micro_batch" for
         * "micro_batch_size"): its distance to the candidate's prefix */
        gsize lc = strlen(*c);
        gsize d = edit_distance(word, *c, lc);
        if (lc > len + 1)
            d = MIN(d, edit_distance(word, *c, len + 1) + 1);
        if (d < best_d) {
            best_d = d;
            best = *c;
        }
    }
    return best;
}

gboolean text_write_atomic(const char *path, const char *data, gsize len, GError **error)
{
    if (g_strcmp0(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
            g_set_error(error, PS_ERROR, PS_ERROR_IO, "standard output: write failed");
            return FALSE;
        }
        return TRUE;
    }
    /* g_file_set_contents writes a temporary file beside `path` and renames it. */
    GError *local = NULL;
    if (!g_file_set_contents(path, data, (gssize)len, &local)) {
        g_set_error(error, PS_ERROR, PS_ERROR_IO, "%s", local->message);
        g_error_free(local);
        return FALSE;
    }
    return TRUE;
}
