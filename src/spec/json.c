/* json.c: cJSON helpers that turn every bad value into one error line.
 *
 * Invariant: a getter either stores a validated value and returns TRUE, or
 * sets `error` and returns FALSE leaving *out untouched. */
#include "spec/json.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "util/error.h"
#include "util/text.h"

void json_fail(GError **error, const JsonDoc *doc, const char *where, const char *key,
               const cJSON *item, const char *expected_fmt, ...)
{
    va_list ap;
    va_start(ap, expected_fmt);
    g_autofree char *expected = g_strdup_vprintf(expected_fmt, ap);
    va_end(ap);
    g_autofree char *got = item ? cJSON_PrintUnformatted(item) : g_strdup("nothing");
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s%s%s: expected %s, got %s", doc->path,
                where, key ? "." : "", key ? key : "", expected, got ? got : "?");
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

JsonDoc *json_doc_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    GError *local = NULL;
    if (!g_file_get_contents(path, &text, &len, &local)) {
        if (!g_file_test(path, G_FILE_TEST_EXISTS))
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: no such file", path);
        else
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: cannot read: %s", path,
                        local->message);
        g_error_free(local);
        return NULL;
    }
    if (strlen(text) != len) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: not a JSON text (it contains a NUL byte)",
                    path);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, TRUE);
    if (!root) {
        int line, column;
        gsize at = end ? (gsize)(end - text) : len;
        line_column(text, at, &line, &column);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: line %d, column %d: malformed JSON", path,
                    line, column);
        return NULL;
    }
    JsonDoc *doc = g_new0(JsonDoc, 1);
    doc->path = g_strdup(path);
    doc->root = root;
    if (!cJSON_IsObject(root)) {
        json_fail(error, doc, "$", NULL, root, "a JSON object");
        json_doc_free(doc);
        return NULL;
    }
    return doc;
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
    for (const cJSON *item = obj->child; item; item = item->next) {
        gboolean found = FALSE;
        for (const char *const *k = known; *k && !found; k++)
            found = strcmp(*k, item->string) == 0;
        /* the same key twice is as suspicious as an unknown one */
        if (found && cJSON_GetObjectItemCaseSensitive(obj, item->string) != item) {
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s.%s: key given twice", doc->path,
                        where, item->string);
            return FALSE;
        }
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

/* A number in [lo, hi] (lo excluded when `lo_open`), whole when
 * `integral`; absent: fallback, or an error if required. */
static gboolean read_number(const JsonDoc *doc, const cJSON *obj, const char *where,
                            const char *key, gboolean required, const char *expected, double lo,
                            gboolean lo_open, double hi, gboolean integral, double fallback,
                            double *out, GError **error)
{
    const cJSON *item;
    if (!lookup(doc, obj, where, key, required, expected, &item, error))
        return FALSE;
    if (!item) {
        *out = fallback;
        return TRUE;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!((lo_open ? v > lo : v >= lo) && v <= hi) || (integral && v != floor(v))) {
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
    if (!read_number(doc, obj, where, key, required, expected, (double)min, FALSE, (double)max,
                     TRUE, (double)fallback, &v, error))
        return FALSE;
    *out = (long long)v;
    return TRUE;
}

gboolean json_number(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                     gboolean required, gboolean zero_ok, double max, double fallback, double *out,
                     GError **error)
{
    g_autofree char *expected =
        g_strdup_printf("a number %s 0 and <= %g", zero_ok ? ">=" : ">", max);
    return read_number(doc, obj, where, key, required, expected, 0, !zero_ok, max, FALSE, fallback,
                       out, error);
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
    *out = g_strdup(item->valuestring);
    return TRUE;
}
