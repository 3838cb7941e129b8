/* json.c: cJSON helpers that turn every bad value into one error line.
 *
 * Every file is read through text_read_input (a size cap, regular files
 * only) and checked whole once parsed: no key twice in one object, and UTF-8
 * keys and strings, so that no loader needs to look for either.
 *
 * Invariant: a getter either stores a validated value and returns TRUE, or
 * sets `error` and returns FALSE leaving *out untouched. */
#include "spec/json.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"

/* The longest value an error quotes whole, in bytes. */
#define VALUE_TEXT_MAX 64

char *json_value_text(const cJSON *item)
{
    if (!item)
        return g_strdup("nothing");
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble)) /* cJSON would print null */
        return g_strdup("a number beyond the range of a double (1.8e308)");
    char *printed = cJSON_PrintUnformatted(item);
    if (!printed)
        return g_strdup("?");
    gsize cut = strlen(printed);
    if (cut > VALUE_TEXT_MAX) { /* cut at a character's start, not inside one */
        cut = VALUE_TEXT_MAX;
        while (cut > 0 && (printed[cut] & 0xC0) == 0x80)
            cut--;
    }
    char *text = printed[cut] ? g_strdup_printf("%.*s...", (int)cut, printed) : g_strdup(printed);
    cJSON_free(printed);
    return text;
}

void json_fail(GError **error, const JsonDoc *doc, const char *where, const char *key,
               const cJSON *item, const char *expected_fmt, ...)
{
    va_list ap;
    va_start(ap, expected_fmt);
    g_autofree char *expected = g_strdup_vprintf(expected_fmt, ap);
    va_end(ap);
    g_autofree char *got = json_value_text(item);
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s%s%s: expected %s, got %s", doc->path,
                where, key ? "." : "", key ? key : "", expected, got);
}

/* Line and column (1-based) of byte `offset` in `text`. */
static void line_column(const char *text, gsize offset, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (gsize i = 0; i < offset && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

/* How deeply arrays and objects nest at byte `offset` of `text`. */
static int depth_at(const char *text, gsize offset)
{
    int depth = 0;
    gboolean in_string = FALSE;
    for (gsize i = 0; i < offset && text[i]; i++) {
        char c = text[i];
        if (in_string && c == '\\' && text[i + 1])
            i++;
        else if (c == '"')
            in_string = !in_string;
        else if (!in_string)
            depth += (c == '[' || c == '{') - (c == ']' || c == '}');
    }
    return depth;
}

/* Checks every value under `item`, whose path is `path`: no object gives a
 * key twice (cJSON would keep both and lookups see the first), and every
 * key and string is UTF-8. Recursion is bounded by cJSON's nesting limit. */
static gboolean check_tree(const JsonDoc *doc, const cJSON *item, GString *path, GError **error)
{
    if (cJSON_IsString(item) && !g_utf8_validate(item->valuestring, -1, NULL)) {
        json_fail(error, doc, path->str, NULL, item, "valid UTF-8 text");
        return FALSE;
    }
    if (!item->child)
        return TRUE;
    gboolean object = cJSON_IsObject(item), ok = TRUE;
    g_autoptr(GHashTable) keys =
        object && item->child->next ? g_hash_table_new(g_str_hash, g_str_equal) : NULL;
    gsize at = path->len;
    int index = 0;
    const cJSON *child;
    cJSON_ArrayForEach(child, item)
    {
        if (object && !g_utf8_validate(child->string, -1, NULL)) {
            g_autofree char *got = ps_error_quote(child->string);
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "%s: %s: expected keys of valid UTF-8 text, got %s", doc->path,
                        path->str, got);
            return FALSE;
        }
        if (object)
            g_string_append_printf(path, ".%s", child->string);
        else
            g_string_append_printf(path, "[%d]", index++);
        if (keys && !g_hash_table_add(keys, child->string)) {
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s: key given twice", doc->path,
                        path->str);
            return FALSE;
        }
        ok = check_tree(doc, child, path, error);
        g_string_truncate(path, at);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

/* The offset of the first \u0000 escape in a string of `text`, or -1:
 * cJSON decodes it into a NUL, which would silently cut the string
 * ("x\u0000y" read as "x"). Walks strings and their escapes, so that an
 * escaped backslash before "u0000" is no escape. */
static gssize escaped_nul(const char *text)
{
    gboolean in_string = FALSE;
    for (const char *c = text; *c; c++) {
        if (*c == '"')
            in_string = !in_string;
        else if (in_string && *c == '\\') {
            if (g_str_has_prefix(c + 1, "u0000"))
                return c - text;
            if (c[1])
                c++; /* the escaped character */
        }
    }
    return -1;
}

JsonDoc *json_doc_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!text_read_input(path, &text, &len, error))
        return NULL;
    if (strlen(text) != len) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: not a JSON text (it contains a NUL byte)",
                    path);
        return NULL;
    }
    gssize nul = escaped_nul(text);
    if (nul >= 0) {
        int line, column;
        line_column(text, (gsize)nul, &line, &column);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: line %d, column %d: expected strings without NUL, got \"\\u0000\"",
                    path, line, column);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, TRUE);
    if (!root) {
        int line, column;
        gsize at = end ? (gsize)(end - text) : len;
        line_column(text, at, &line, &column);
        if (depth_at(text, at) >= CJSON_NESTING_LIMIT)
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "%s: line %d, column %d: expected arrays and objects nested at most %d "
                        "deep, got deeper",
                        path, line, column, CJSON_NESTING_LIMIT);
        else
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: line %d, column %d: malformed JSON",
                        path, line, column);
        return NULL;
    }
    g_autoptr(JsonDoc) doc = g_new0(JsonDoc, 1);
    doc->path = g_strdup(path);
    doc->root = root;
    if (!cJSON_IsObject(root)) {
        json_fail(error, doc, "$", NULL, root, "a JSON object");
        return NULL;
    }
    g_autoptr(GString) where = g_string_new("$");
    if (!check_tree(doc, root, where, error))
        return NULL;
    return g_steal_pointer(&doc);
}

void json_doc_free(JsonDoc *doc)
{
    if (!doc)
        return;
    cJSON_Delete(doc->root);
    g_free(doc->path);
    g_free(doc);
}

gboolean json_check_keys(const JsonDoc *doc, const cJSON *obj, const char *where,
                         const char *const *known, GError **error)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, obj)
    {
        gboolean found = FALSE;
        for (const char *const *k = known; *k && !found; k++)
            found = strcmp(*k, item->string) == 0;
        if (!found) {
            const char *near = text_nearest(item->string, known);
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s.%s: unknown key%s%s%s", doc->path,
                        where, item->string, near ? " (did you mean \"" : "", near ? near : "",
                        near ? "\"?)" : "");
            return FALSE;
        }
    }
    return TRUE;
}

const cJSON *json_object(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                         GError **error)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsObject(item)) {
        json_fail(error, doc, where, key, item, "an object");
        return NULL;
    }
    return item;
}

/* Looks up `key`; returns FALSE with an error when it is absent and required.
 * *item is NULL when absent and optional. */
static gboolean lookup(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                       gboolean required, const char *expected, const cJSON **item, GError **error)
{
    *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*item && required) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s.%s: missing (expected %s)", doc->path,
                    where, key, expected);
        return FALSE;
    }
    return TRUE;
}

/* A number in [lo, hi], whole when `integral`; absent: fallback, or an
 * error if required. */
static gboolean read_number(const JsonDoc *doc, const cJSON *obj, const char *where,
                            const char *key, gboolean required, const char *expected, double lo,
                            double hi, gboolean integral, double fallback, double *out,
                            GError **error)
{
    const cJSON *item;
    if (!lookup(doc, obj, where, key, required, expected, &item, error))
        return FALSE;
    if (!item) {
        *out = fallback;
        return TRUE;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!(v >= lo && v <= hi) || (integral && v != floor(v))) {
        json_fail(error, doc, where, key, item, "%s", expected);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean json_int(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                  gboolean required, long long min, long long max, long long fallback,
                  long long *out, GError **error)
{
    g_autofree char *expected = min == 1 && max == G_MAXINT ? g_strdup("a positive integer")
                                : max == G_MAXINT
                                    ? g_strdup_printf("an integer >= %lld", min)
                                    : g_strdup_printf("an integer from %lld to %lld", min, max);
    double v;
    if (!read_number(doc, obj, where, key, required, expected, (double)min, (double)max, TRUE,
                     (double)fallback, &v, error))
        return FALSE;
    *out = (long long)v;
    return TRUE;
}

gboolean json_number(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                     gboolean required, double min, double max, double fallback, double *out,
                     GError **error)
{
    g_autofree char *expected = g_strdup_printf("a number from %g to %g", min, max);
    return read_number(doc, obj, where, key, required, expected, min, max, FALSE, fallback, out,
                       error);
}

gboolean json_bool(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                   gboolean required, gboolean fallback, gboolean *out, GError **error)
{
    const cJSON *item;
    if (!lookup(doc, obj, where, key, required, "true or false", &item, error))
        return FALSE;
    if (!item) {
        *out = fallback;
        return TRUE;
    }
    if (!cJSON_IsBool(item)) {
        json_fail(error, doc, where, key, item, "true or false");
        return FALSE;
    }
    *out = cJSON_IsTrue(item);
    return TRUE;
}

gboolean json_string(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                     gboolean required, const char *fallback, char **out, GError **error)
{
    const cJSON *item;
    if (!lookup(doc, obj, where, key, required, "a non-empty string", &item, error))
        return FALSE;
    if (!item) {
        *out = g_strdup(fallback);
        return TRUE;
    }
    if (!cJSON_IsString(item) || !item->valuestring[0]) {
        json_fail(error, doc, where, key, item, "a non-empty string");
        return FALSE;
    }
    /* a name goes into reports: a newline or an escape would break them */
    for (const char *c = item->valuestring; *c; c++) {
        if ((guchar)*c < 0x20 || *c == 0x7f) {
            json_fail(error, doc, where, key, item, "a string without control characters");
            return FALSE;
        }
    }
    *out = g_strdup(item->valuestring);
    return TRUE;
}
