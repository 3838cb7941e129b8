/* text.c: nearest-word suggestion (Levenshtein distance) and atomic writes. */
#include "util/text.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Writes `len` bytes to an existing device or pipe. */
static gboolean write_device(const char *path, const char *data, gsize len, GError **error)
{
    FILE *f = fopen(path, "w");
    gboolean ok = f && fwrite(data, 1, len, f) == len;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = FALSE;
        saved = errno;
    }
    if (!ok)
        g_set_error(error, PS_ERROR, PS_ERROR_IO, "%s: cannot write: %s", path, g_strerror(saved));
    return ok;
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
    /* a device or a pipe (/dev/null, /dev/stdout) is written as it is: a
     * rename would replace it */
    GStatBuf st;
    if (g_stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return write_device(path, data, len, error);
    /* a temporary file beside `path`, renamed over it once complete */
    g_autofree char *tmp = g_strconcat(path, ".XXXXXX", NULL);
    int fd = g_mkstemp(tmp);
    if (fd < 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_IO, "%s: cannot write: %s", path, g_strerror(errno));
        return FALSE;
    }
    fchmod(fd, 0644); /* mkstemp makes it private; a report is not */
    gsize done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (gsize)n;
    }
    int saved = errno;
    gboolean ok = done == len && close(fd) == 0;
    if (done != len)
        close(fd);
    else if (!ok)
        saved = errno;
    if (ok && rename(tmp, path) != 0) {
        saved = errno;
        ok = FALSE;
    }
    if (!ok) {
        g_unlink(tmp);
        g_set_error(error, PS_ERROR, PS_ERROR_IO, "%s: cannot write: %s", path, g_strerror(saved));
    }
    return ok;
}
