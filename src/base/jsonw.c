/* jsonw.c: the JSON writer (jsonw.h): layout by container, one escaper,
 * locale-independent numbers. */
#include "base/jsonw.h"

#include <math.h>
#include <string.h>

static void newline(JsonWriter *w, int indent)
{
    g_string_append_c(w->out, '\n');
    for (int i = 0; i < indent; i++)
        g_string_append_c(w->out, ' ');
    w->line_indent = indent;
}

/* The separator and line break before the next member of the innermost
 * container. */
static void next_member(JsonWriter *w)
{
    JsonwFrame *f = &w->open[w->depth - 1];
    if (f->members++ > 0)
        g_string_append(w->out, f->layout == JSONW_INLINE ? ", " : ",");
    if (f->layout >= 0)
        newline(w, f->layout);
}

/* Checks that a value may come now, and writes what goes before it. */
static void before_value(JsonWriter *w)
{
    g_assert(!w->done);
    if (w->depth == 0)
        return;
    if (w->open[w->depth - 1].close == '}') {
        g_assert(w->keyed);
        w->keyed = FALSE;
    } else {
        next_member(w);
    }
}

/* Marks the top-level value complete once nothing is open. */
static void after_value(JsonWriter *w)
{
    if (w->depth == 0)
        w->done = TRUE;
}

static void scalar(JsonWriter *w, const char *text)
{
    before_value(w);
    g_string_append(w->out, text);
    after_value(w);
}

/* The escaper (see jsonw.h), for keys and strings. */
static void escaped(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    const char *end = s + strlen(s);
    while (s < end) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            g_string_append_c(out, '\\');
            g_string_append_c(out, (char)c);
            s++;
        } else if (c < 0x20) {
            g_string_append_printf(out, "\\u%04x", c);
            s++;
        } else if (c < 0x80) {
            g_string_append_c(out, (char)c);
            s++;
        } else if ((gint32)g_utf8_get_char_validated(s, end - s) < 0) {
            g_string_append(out, "\\ufffd"); /* this byte, then on */
            s++;
        } else {
            const char *next = g_utf8_next_char(s);
            g_string_append_len(out, s, next - s);
            s = next;
        }
    }
    g_string_append_c(out, '"');
}

void jsonw_init(JsonWriter *w, GString *out)
{
    *w = (JsonWriter){.out = out};
}

static void begin(JsonWriter *w, char open, char close, int layout)
{
    g_assert(layout >= 0 || layout == JSONW_INLINE || layout == JSONW_COMPACT);
    g_assert(w->depth < JSONW_MAX_DEPTH);
    before_value(w);
    g_string_append_c(w->out, open);
    w->open[w->depth++] =
        (JsonwFrame){.close = close, .layout = layout, .line_indent = w->line_indent, .members = 0};
}

void jsonw_begin_object(JsonWriter *w, int layout)
{
    begin(w, '{', '}', layout);
}

void jsonw_begin_list(JsonWriter *w, int layout)
{
    begin(w, '[', ']', layout);
}

void jsonw_end(JsonWriter *w)
{
    g_assert(w->depth > 0 && !w->keyed);
    const JsonwFrame *f = &w->open[--w->depth];
    if (f->layout >= 0 && f->members > 0)
        newline(w, f->line_indent);
    g_string_append_c(w->out, f->close);
    after_value(w);
}

JsonWriter *jsonw_key(JsonWriter *w, const char *key)
{
    g_assert(w->depth > 0 && w->open[w->depth - 1].close == '}' && !w->keyed);
    next_member(w);
    escaped(w->out, key);
    g_string_append(w->out, ": ");
    w->keyed = TRUE;
    return w;
}

void jsonw_string(JsonWriter *w, const char *s)
{
    if (!s) {
        jsonw_null(w);
        return;
    }
    before_value(w);
    escaped(w->out, s);
    after_value(w);
}

void jsonw_bool(JsonWriter *w, gboolean v)
{
    scalar(w, v ? "true" : "false");
}

void jsonw_null(JsonWriter *w)
{
    scalar(w, "null");
}

/* v in printf's `conversion` ('g' or 'f') at `precision`, whatever the
 * locale; -0 as 0, NaN and infinities as null. */
static void number(JsonWriter *w, double v, char conversion, int precision)
{
    g_assert(precision >= 0 && precision <= 100);
    if (!isfinite(v)) {
        jsonw_null(w);
        return;
    }
    char format[16];
    g_snprintf(format, sizeof format, "%%.%d%c", precision, conversion);
    char text[512]; /* %.100f of DBL_MAX: 309 digits, the point, 100 more */
    scalar(w, g_ascii_formatd(text, sizeof text, format, v == 0 ? 0.0 : v));
}

void jsonw_number(JsonWriter *w, double v)
{
    number(w, v, 'g', 10);
}

void jsonw_int(JsonWriter *w, double v)
{
    number(w, v, 'f', 0);
}

void jsonw_fixed(JsonWriter *w, double v, int decimals)
{
    number(w, v, 'f', decimals);
}

void jsonw_uint64(JsonWriter *w, guint64 v)
{
    char text[24];
    g_snprintf(text, sizeof text, "%" G_GUINT64_FORMAT, v);
    scalar(w, text);
}
