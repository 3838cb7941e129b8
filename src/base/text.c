/* text.c: nearest-word suggestion (Levenshtein distance), capped reads of
 * input files, atomic writes, and standard output and error, which a
 * thread may capture. */
#define _DEFAULT_SOURCE /* realpath */
#include "base/text.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/units.h"

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

/* The length of the run of decimal digits at `s`. */
static gsize digits(const char *s)
{
    return strspn(s, "0123456789");
}

gboolean text_parse_number(const char *text, double *out)
{
    const char *c = text + (text[0] == '-');
    gsize whole = digits(c);
    c += whole;
    gsize fraction = *c == '.' ? digits(c + 1) : 0;
    c += *c == '.' ? 1 + fraction : 0;
    if (whole + fraction == 0)
        return FALSE;
    if (*c == 'e' || *c == 'E') {
        c += 1 + (c[1] == '+' || c[1] == '-');
        gsize exponent = digits(c);
        if (!exponent)
            return FALSE;
        c += exponent;
    }
    if (*c)
        return FALSE;
    double v = g_ascii_strtod(text, NULL);
    if (!isfinite(v))
        return FALSE;
    *out = v;
    return TRUE;
}

gboolean text_parse_count(const char *text, TextSuffixes suffixes, gboolean whole, double *out)
{
    static const struct {
        char letter;
        double decimal, binary; /* 0: not a suffix of that kind */
    } units[] = {{.letter = 'k', .decimal = 1e3, .binary = UNITS_KIB},
                 {.letter = 'm', .decimal = 1e6, .binary = UNITS_MIB},
                 {.letter = 'b', .decimal = 1e9, .binary = 0},
                 {.letter = 'g', .decimal = 1e9, .binary = UNITS_GIB},
                 {.letter = 't', .decimal = 1e12, .binary = UNITS_TIB}};
    gsize len = strlen(text);
    double scale = 1;
    for (gsize i = 0; suffixes != TEXT_PLAIN && len > 1 && i < G_N_ELEMENTS(units); i++)
        if (g_ascii_tolower(text[len - 1]) == units[i].letter)
            scale = suffixes == TEXT_DECIMAL ? units[i].decimal : units[i].binary;
    if (scale == 0)
        return FALSE;
    g_autofree char *number = g_strndup(text, scale == 1 ? len : len - 1);
    double value;
    if (!text_parse_number(number, &value) || !isfinite(value * scale))
        return FALSE;
    value *= scale;
    if (whole && (value != floor(value) || (scale == 1 && strpbrk(number, ".eE"))))
        return FALSE;
    *out = value;
    return TRUE;
}

const char *text_suffixes_help(TextSuffixes suffixes)
{
    switch (suffixes) {
    case TEXT_DECIMAL:
        return ", optionally with a suffix K, M, B or G, T (2T = 2e12)";
    case TEXT_BINARY:
        return ", optionally with a suffix K, M, G or T (128K = 131072)";
    case TEXT_PLAIN:
        break;
    }
    return "";
}

/* The input limit: PLANSIM_MAX_INPUT_BYTES, or the default. */
static gboolean max_input_bytes(gsize *out, GError **error)
{
    const char *env = g_getenv(TEXT_MAX_INPUT_BYTES_ENV);
    guint64 v = TEXT_MAX_INPUT_BYTES_DEFAULT;
    if (env && !g_ascii_string_to_unsigned(env, 10, 1, G_MAXSIZE / 4, &v, NULL)) {
        g_autofree char *got = g_strdup_printf("\"%s\"", env);
        ps_error_value(error, TEXT_MAX_INPUT_BYTES_ENV, got, "a positive number of bytes");
        return FALSE;
    }
    *out = (gsize)v;
    return TRUE;
}

/* What a file that is not a regular one is, for an error. */
static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a folder"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
                            : "a special file";
}

/* Checks what stat(2) says of an input: a regular file within `cap`. */
static gboolean check_input(const char *path, const GStatBuf *st, gsize cap, GError **error)
{
    if (!S_ISREG(st->st_mode)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected a regular file, got %s", path,
                    file_kind(st->st_mode));
        return FALSE;
    }
    if ((guint64)st->st_size > cap) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected at most %" G_GSIZE_FORMAT
                    " bytes (%s sets the limit), got %" G_GUINT64_FORMAT " bytes",
                    path, cap, TEXT_MAX_INPUT_BYTES_ENV, (guint64)st->st_size);
        return FALSE;
    }
    return TRUE;
}

static gboolean cannot_read(const char *path, int err, GError **error)
{
    if (err == ENOENT)
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: no such file", path);
    else
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: cannot read: %s", path, g_strerror(err));
    return FALSE;
}

/* Reads `fd` to its end, or to one byte past `cap`; *size is what was read. */
static char *read_capped(int fd, gsize hint, gsize cap, gsize *size, int *err)
{
    gsize alloc = MIN(hint, cap) + 2, n = 0;
    char *buf = g_malloc(alloc);
    *err = 0;
    while (n <= cap) {
        if (n + 1 == alloc) {
            alloc = MIN(MAX(2 * alloc, 4096), cap + 2);
            buf = g_realloc(buf, alloc);
        }
        ssize_t got = read(fd, buf + n, alloc - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *err = errno;
            break;
        }
        if (got == 0)
            break;
        n += (gsize)got;
    }
    buf[n] = '\0';
    *size = n;
    return buf;
}

gboolean text_read_input(const char *path, char **text, gsize *len, GError **error)
{
    gsize cap;
    GStatBuf st;
    if (!max_input_bytes(&cap, error))
        return FALSE;
    /* a device or a FIFO is refused before it is opened: opening one may
     * block (a FIFO without a writer) or have effects of its own */
    if (g_stat(path, &st) != 0)
        return cannot_read(path, errno, error);
    if (!check_input(path, &st, cap, error))
        return FALSE;
    int fd = g_open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return cannot_read(path, errno, error);
    /* the file may have been replaced since: check what was opened */
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return cannot_read(path, err, error);
    }
    if (!check_input(path, &st, cap, error)) {
        close(fd);
        return FALSE;
    }
    int err;
    gsize n;
    g_autofree char *buf = read_capped(fd, (gsize)st.st_size, cap, &n, &err);
    close(fd);
    if (err)
        return cannot_read(path, err, error);
    if (n > cap) { /* it grew while being read */
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected at most %" G_GSIZE_FORMAT " bytes (%s sets the limit), got more",
                    path, cap, TEXT_MAX_INPUT_BYTES_ENV);
        return FALSE;
    }
    *text = g_steal_pointer(&buf);
    *len = n;
    return TRUE;
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

gboolean text_check_target(const char *path, GError **error)
{
    g_autofree char *folder = g_path_get_dirname(path);
    const char *reason = !g_file_test(folder, G_FILE_TEST_EXISTS) ? "does not exist"
                         : !g_file_test(folder, G_FILE_TEST_IS_DIR) ? "is not a folder"
                                                                     : NULL;
    if (reason)
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: cannot write: its folder %s %s", path,
                    folder, reason);
    return !reason;
}

/* Why GLib's writes fail, by their GFileError code: the reason in words,
 * and whether it makes the target a bad one (a folder that takes no new
 * file: /proc, read-only, not this user's) rather than a failed write. */
static const struct {
    GFileError code;
    const char *reason;
    gboolean bad_target;
} write_failures[] = {
    {.code = G_FILE_ERROR_NOENT, .reason = "its folder takes no new files", .bad_target = TRUE},
    {.code = G_FILE_ERROR_ROFS, .reason = "its folder is read-only", .bad_target = TRUE},
    {.code = G_FILE_ERROR_ACCES, .reason = "its folder is not writable here", .bad_target = TRUE},
    {.code = G_FILE_ERROR_PERM, .reason = "its folder is not writable here", .bad_target = TRUE},
    {.code = G_FILE_ERROR_ISDIR, .reason = "it is a folder", .bad_target = TRUE},
    {.code = G_FILE_ERROR_NAMETOOLONG, .reason = "its name is too long", .bad_target = TRUE},
    {.code = G_FILE_ERROR_NOSPC, .reason = "no space left on the device"},
    {.code = G_FILE_ERROR_IO, .reason = "an input/output error"},
};

/* Sets *error for `path`, which GLib failed to write with `local` (whose
 * message names its temporary file): the target and the real reason. */
static void refuse_write(const char *path, const GError *local, GError **error)
{
    for (gsize i = 0; local->domain == G_FILE_ERROR && i < G_N_ELEMENTS(write_failures); i++)
        if (local->code == (int)write_failures[i].code) {
            g_set_error(error, PS_ERROR,
                        write_failures[i].bad_target ? PS_ERROR_INPUT : PS_ERROR_IO,
                        "%s: cannot write: %s", path, write_failures[i].reason);
            return;
        }
    g_set_error(error, PS_ERROR, PS_ERROR_IO, "%s: cannot write: %s", path, local->message);
}

/* The calling thread's capture (text_capture_start): its two strings, or
 * NULLs. */
static _Thread_local GString *captured_out, *captured_err;

void text_capture_start(GString *out, GString *err)
{
    captured_out = out;
    captured_err = err;
}

void text_capture_stop(void)
{
    captured_out = captured_err = NULL;
}

gboolean text_capturing(void)
{
    return captured_out != NULL;
}

gboolean text_out(const char *data, gsize len)
{
    if (captured_out) {
        g_string_append_len(captured_out, data, (gssize)len);
        return TRUE;
    }
    return fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0;
}

void text_err(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    if (captured_err)
        g_string_append_vprintf(captured_err, format, ap);
    else
        vfprintf(stderr, format, ap);
    va_end(ap);
}

gboolean text_write_atomic(const char *path, const char *data, gsize len, GError **error)
{
    if (path && !*path) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "expected a file name to write (\"-\": standard output), got \"\"");
        return FALSE;
    }
    if (g_strcmp0(path, "-") == 0) {
        if (!text_out(data, len)) {
            g_set_error(error, PS_ERROR, PS_ERROR_IO, "standard output: write failed");
            return FALSE;
        }
        return TRUE;
    }
    /* a device or a pipe (/dev/null, /dev/stdout) is written as it is: a
     * rename would replace it */
    GStatBuf st;
    gboolean exists = g_stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: cannot write: it is a folder", path);
        return FALSE;
    }
    if (exists && !S_ISREG(st.st_mode))
        return write_device(path, data, len, error);
    /* a symbolic link is written through: its target is replaced, the
     * link stays; one to nothing is refused */
    g_autofree char *target = NULL;
    if (g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
        if (!exists || !(target = realpath(path, NULL))) {
            g_set_error(error, PS_ERROR, PS_ERROR_IO,
                        "%s: cannot write: a symbolic link to a file that does not exist", path);
            return FALSE;
        }
        path = target;
    }
    if (!text_check_target(path, error))
        return FALSE;
    /* a temporary file beside `path`, renamed over it once complete (GLib
     * removes it on failure), with the mode of the file it replaces */
    GError *local = NULL;
    int mode = exists ? (int)(st.st_mode & 07777) : 0644;
    if (!g_file_set_contents_full(path, data, (gssize)len, G_FILE_SET_CONTENTS_CONSISTENT, mode,
                                  &local)) {
        refuse_write(path, local, error);
        g_error_free(local);
        return FALSE;
    }
    return TRUE;
}
