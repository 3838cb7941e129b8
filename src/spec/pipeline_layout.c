/* pipeline_layout.c: reading and writing Megatron-Core's pipeline layout
 * strings (pipeline_layout.h).
 *
 * The reader walks the text once. A character, or a "(...)" run, with its
 * count N is an item; items are applied to the chunks being built: a '|'
 * closes a chunk, "t" and "m" add layers to the open one. A run with no
 * '|' is applied once with its counts times N, so that "t*1000000" costs
 * what "t" costs (a run of both t and m repeated would put a t after an m,
 * and is refused); a run with bars is applied N times, which the chunk
 * limit bounds. */
#include "spec/pipeline_layout.h"

#include <stdarg.h>
#include <string.h>

typedef struct {
    GArray *chunks;   /* int: layers of the chunks closed and the open one */
    long long layers; /* of the whole layout, MTP layers with them */
    long long mtp;    /* its MTP layers */
    int embeddings, losses;
    gboolean started; /* a layer or a bar seen */
    gboolean ended;   /* the loss seen, and nothing may follow */
    char *why;
} Reader;

#define SYNTAX                                                                                     \
    "a Megatron-Core pipeline layout (chunks split by '|', E the embedding, t a transformer "      \
    "layer, m a multi-token-prediction layer, L the loss, x*N and (...)*N repeating, commas "      \
    "ignored)"

static gboolean fail(Reader *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean fail(Reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (!r->why)
        r->why = g_strdup_printf("%s: %s", SYNTAX, what);
    return FALSE;
}

/* Applies character `c` `count` times to the chunks. */
static gboolean apply(Reader *r, char c, long long count)
{
    if (count == 0)
        return TRUE;
    if (r->ended)
        return fail(r, "nothing after the loss L, which ends the last chunk");
    if (c == '|') {
        if ((long long)r->chunks->len + count > PIPELINE_LAYOUT_MAX_CHUNKS)
            return fail(r, "at most %d chunks", PIPELINE_LAYOUT_MAX_CHUNKS);
        for (long long i = 0; i < count; i++)
            g_array_append_val(r->chunks, (int){0});
    } else if (c == 't' || c == 'm') {
        int *open = &g_array_index(r->chunks, int, r->chunks->len - 1);
        if (r->layers + count > G_MAXINT || *open + count > G_MAXINT)
            return fail(r, "at most %d transformer layers", G_MAXINT);
        if (c == 't' && r->mtp > 0)
            return fail(r, "every transformer layer t before the multi-token-prediction layers m");
        if (c == 'm' && r->mtp > *open)
            return fail(r, "the multi-token-prediction layers m all in one chunk");
        *open += (int)count;
        r->layers += count;
        r->mtp += c == 'm' ? count : 0;
    } else if (c == 'E') {
        if (r->started || count > 1)
            return fail(r, "the embedding E once, first in the first chunk");
        r->embeddings++;
    } else if (c == 'L') {
        if (count > 1)
            return fail(r, "the loss L once");
        r->losses++;
        r->ended = TRUE;
        return TRUE;
    } else {
        return fail(r, "a character of E, t, m, L, |, *, ( and ), got '%c'", c);
    }
    r->started = TRUE;
    return TRUE;
}

/* Reads "*N" at `*at`, if there, into `*count` (1 when absent). */
static gboolean count_at(Reader *r, const char **at, long long *count)
{
    *count = 1;
    if (**at != '*')
        return TRUE;
    (*at)++;
    if (!g_ascii_isdigit(**at))
        return fail(r, "a count after '*'");
    *count = 0;
    while (g_ascii_isdigit(**at)) {
        *count = *count * 10 + (**at - '0');
        if (*count > G_MAXINT)
            return fail(r, "a count of at most %d", G_MAXINT);
        (*at)++;
    }
    return TRUE;
}

/* Reads the items of [from, to), characters each with its count, applying
 * each `times` times its count; with `bars`, only adds up the chunks they
 * would close. */
static gboolean items(Reader *r, const char *from, const char *to, long long times, long long *bars)
{
    for (const char *at = from; at < to;) {
        char c = *at++;
        long long count;
        if (c == ',')
            continue;
        if (!count_at(r, &at, &count))
            return FALSE;
        if (bars)
            *bars += c == '|' ? count : 0;
        else if (!apply(r, c, count * times))
            return FALSE;
    }
    return TRUE;
}

/* Reads one "(...)*N" run at `*at`, just past its '('. */
static gboolean run_at(Reader *r, const char **at)
{
    const char *from = *at, *to = strchr(from, ')');
    long long count, bars = 0;
    if (!to)
        return fail(r, "a ')' closing each '('");
    if (memchr(from, '(', (gsize)(to - from)))
        return fail(r, "no '(' inside another");
    *at = to + 1;
    if (**at != '*')
        return fail(r, "a count after each run, \"(...)*N\"");
    if (!count_at(r, at, &count) || !items(r, from, to, 1, &bars))
        return FALSE;
    gboolean mixed = memchr(from, 't', (gsize)(to - from)) && memchr(from, 'm', (gsize)(to - from));
    if (bars == 0 && mixed && count > 1)
        return fail(r, "every transformer layer t before the multi-token-prediction layers m");
    if (bars == 0) /* at once, its counts times N */
        return items(r, from, to, count, NULL);
    for (long long k = 0; k < count; k++) /* the chunk limit stops a large N early */
        if (!items(r, from, to, 1, NULL))
            return FALSE;
    return TRUE;
}

gboolean pipeline_layout_parse(const char *text, int **chunks, int *n, int *mtp, char **why)
{
    Reader r = {.chunks = g_array_new(FALSE, FALSE, sizeof(int))};
    g_array_append_val(r.chunks, (int){0});
    gboolean ok = TRUE;
    for (const char *at = text; *at && ok;) {
        if (*at == '(') {
            at++;
            ok = run_at(&r, &at);
            continue;
        }
        const char *from = at++;
        while (*at == '*' || g_ascii_isdigit(*at)) /* its count, read by items */
            at++;
        ok = items(&r, from, at, 1, NULL);
    }
    if (ok && r.embeddings == 0)
        ok = fail(&r, "the embedding E first in the first chunk");
    if (ok && r.losses == 0)
        ok = fail(&r, "the loss L last in the last chunk");
    if (!ok) {
        g_array_free(r.chunks, TRUE);
        *why = r.why;
        return FALSE;
    }
    *n = (int)r.chunks->len;
    *mtp = (int)r.mtp;
    *chunks = (int *)(void *)g_array_free(r.chunks, FALSE);
    return TRUE;
}

/* Appends `layers` layers of character `c`: "", "t" or "t*N". */
static void append_layers(GString *out, char c, int layers)
{
    if (layers == 1)
        g_string_append_c(out, c);
    else if (layers > 1)
        g_string_append_printf(out, "%c*%d", c, layers);
}

/* The MTP layers of a chunk of `layers` from layer `first` on, the last
 * `mtp` of the layout's `total` being MTP layers. */
static int chunk_mtp(long long first, int layers, long long total, int mtp)
{
    return (int)MAX(0, MIN(first + layers, total) - MAX(first, total - mtp));
}

char *pipeline_layout_text(const int *chunks, int n, int mtp)
{
    long long total = 0, first = 0;
    for (int i = 0; i < n; i++)
        total += chunks[i];
    GString *out = g_string_new("E");
    for (int i = 0; i < n;) {
        /* the middle chunks, each run of equal ones "(t*2|)*29," */
        int m = chunk_mtp(first, chunks[i], total, mtp), run = 1;
        while (i > 0 && i + run < n - 1 && chunks[i + run] == chunks[i] &&
               chunk_mtp(first + (long long)run * chunks[i], chunks[i], total, mtp) == m)
            run++;
        if (run > 1)
            g_string_append_c(out, '(');
        append_layers(out, 't', chunks[i] - m);
        append_layers(out, 'm', m);
        if (i + run < n || run > 1)
            g_string_append_c(out, '|');
        if (run > 1)
            g_string_append_printf(out, ")*%d,", run);
        first += (long long)run * chunks[i];
        i += run;
    }
    g_string_append_c(out, 'L');
    return g_string_free(out, FALSE);
}
