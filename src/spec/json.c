/* json.c: cJSON helpers that turn every bad value into one error line.
 *
 * Every file is read through text_read_input (a size cap, regular files
 * only) and checked whole once parsed: no key twice in one object, and UTF-8
 * keys and strings, so that no loader needs to look for either.
 *
 * A file that names others (a base, a part: json_doc_load_kind) has their
 * values merged into its tree, each remembered with the file it came from
 * and the path of that file's root in the tree, so that an error names the
 * file and the path where the user wrote the value.
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

/* Where a value merged in from another file came from: the file, and the
 * JSON path in the tree of that file's root ("$.gpu" for a GPU file). */
typedef struct {
    char *path;
    char *mount;
} JsonFrom;

static void from_free(gpointer p)
{
    JsonFrom *f = p;
    g_free(f->path);
    g_free(f->mount);
    g_free(f);
}

/* The node at JSON path `where` ("$", "$.gpu") of the tree, or NULL. */
static const cJSON *node_at(const cJSON *root, const char *where)
{
    g_auto(GStrv) parts = g_strsplit(where, ".", -1);
    const cJSON *node = root;
    for (char **part = parts + 1; node && *part; part++)
        node = cJSON_GetObjectItemCaseSensitive(node, *part);
    return node;
}

/* The file and the JSON path in it of `item` at `where`, or when `item`
 * is NULL of the object at `where`: the file it came from (doc's own when
 * it came from none), its path there; `*at` newly allocated. */
static const char *origin(const JsonDoc *doc, const char *where, const cJSON *item, char **at)
{
    const JsonFrom *f = NULL;
    if (doc->from)
        f = g_hash_table_lookup(doc->from, item ? item : node_at(doc->root, where));
    gsize n = f ? strlen(f->mount) : 0;
    if (f && g_str_has_prefix(where, f->mount) && (!where[n] || where[n] == '.')) {
        *at = g_strconcat("$", where + n, NULL);
        return f->path;
    }
    *at = g_strdup(where);
    return doc->path;
}

void json_fail(GError **error, const JsonDoc *doc, const char *where, const char *key,
               const cJSON *item, const char *expected_fmt, ...)
{
    va_list ap;
    va_start(ap, expected_fmt);
    g_autofree char *expected = g_strdup_vprintf(expected_fmt, ap);
    va_end(ap);
    g_autofree char *got = json_value_text(item);
    g_autofree char *at = NULL;
    const char *file = origin(doc, where, item, &at);
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s%s%s: expected %s, got %s", file, at,
                key ? "." : "", key ? key : "", expected, got);
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
    return json_doc_parse(path, text, len, error);
}

JsonDoc *json_doc_parse(const char *path, const char *text, gsize len, GError **error)
{
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
    if (doc->from)
        g_hash_table_destroy(doc->from);
    g_free(doc);
}

/* The files being read, outermost first: as named, and made absolute (for
 * a file met again), with their kinds (to count a chain's bases). */
typedef struct {
    GPtrArray *shown, *absolute;
    GPtrArray *kinds; /* const JsonKind * */
} Chain;

static JsonDoc *load_kind(const char *path, const JsonKind *kind, Chain *chain, GError **error);

/* Records in `doc` where every node of the subtree `node`, moved from
 * `src` into `doc` under the JSON path `mount`, came from. */
static void adopt(JsonDoc *doc, const JsonDoc *src, const cJSON *node, const char *mount)
{
    const JsonFrom *f = src->from ? g_hash_table_lookup(src->from, node) : NULL;
    JsonFrom *to = g_new(JsonFrom, 1);
    to->path = g_strdup(f ? f->path : src->path);
    to->mount = g_strconcat(mount, f ? f->mount + 1 : "", NULL);
    if (!doc->from)
        doc->from = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, from_free);
    g_hash_table_insert(doc->from, (gpointer)node, to);
    for (const cJSON *child = node->child; child; child = child->next)
        adopt(doc, src, child, mount);
}

/* Merges the object `over` (of `doc`) over `base` (of `src`, at `mount`),
 * into `over`: a member `over` lacks moves in; nested objects merge, but
 * for `whole`, a part that named a file of its own; else `over`'s stays. */
static void merge(JsonDoc *doc, cJSON *over, const JsonDoc *src, cJSON *base, const char *mount,
                  const cJSON *whole)
{
    for (cJSON *item = base->child, *next; item; item = next) {
        next = item->next;
        cJSON *mine = cJSON_GetObjectItemCaseSensitive(over, item->string);
        if (!mine) {
            adopt(doc, src, cJSON_DetachItemViaPointer(base, item), mount);
            cJSON_AddItemToObject(over, item->string, item);
        } else if (cJSON_IsObject(mine) && cJSON_IsObject(item) && mine != whole) {
            merge(doc, mine, src, item, mount, NULL);
        }
    }
}

/* The file that `item`, the value of `key` in the object at `where` of
 * `doc`, names as a file of `kind`, read with its own bases and parts; NULL
 * with an error naming `doc`'s file, the path and the value for a name of
 * no file, a file already in the chain, one base too many. */
static JsonDoc *load_named(const JsonDoc *doc, const char *where, const char *key,
                           const cJSON *item, const JsonKind *kind, Chain *chain, GError **error)
{
    const char *name = cJSON_GetStringValue(item);
    if (!name || !*name) {
        json_fail(error, doc, where, key, item, "a file or a shipped %s's name", kind->files->what);
        return NULL;
    }
    g_autofree char *folder = g_path_get_dirname(doc->path);
    g_autofree char *beside = g_path_is_absolute(name) || strcmp(folder, ".") == 0
                                  ? g_strdup(name)
                                  : g_build_filename(folder, name, NULL);
    gboolean path = g_file_test(beside, G_FILE_TEST_EXISTS) || strchr(name, G_DIR_SEPARATOR);
    g_autofree char *file = path ? g_strdup(beside) : shipped_named(kind->files, name);
    if (!file) {
        g_autofree char *at = g_strdup_printf("%s: %s.%s", doc->path, where, key);
        shipped_refuse(error, kind->files, at, name);
        return NULL;
    }
    if (!g_file_test(file, G_FILE_TEST_EXISTS)) {
        json_fail(error, doc, where, key, item, "a file that exists (%s)", file);
        return NULL;
    }
    g_autofree char *absolute = g_canonicalize_filename(file, NULL);
    guint bases = 0;
    for (guint i = 0; i < chain->absolute->len; i++) {
        bases += chain->kinds->pdata[i] == kind;
        if (strcmp(chain->absolute->pdata[i], absolute) != 0)
            continue;
        g_ptr_array_add(chain->shown, NULL);
        g_autofree char *files = g_strjoinv(", ", (char **)chain->shown->pdata);
        g_ptr_array_remove_index(chain->shown, chain->shown->len - 1);
        json_fail(error, doc, where, key, item, "a file not already in its chain (%s)", files);
        return NULL;
    }
    if (bases > JSON_MAX_BASES) {
        json_fail(error, doc, where, key, item, "at most %d bases in a chain (from %s)",
                  JSON_MAX_BASES, (const char *)chain->shown->pdata[0]);
        return NULL;
    }
    return load_kind(file, kind, chain, error);
}

/* Merges `obj` (at `where` of `doc`) over the file its "base" names, if
 * it names one, and drops the "base"; `whole` as merge's. */
static gboolean inherit(JsonDoc *doc, cJSON *obj, const char *where, const JsonKind *kind,
                        const cJSON *whole, Chain *chain, GError **error)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "base");
    if (!name)
        return TRUE;
    g_autoptr(JsonDoc) base = load_named(doc, where, "base", name, kind, chain, error);
    if (!base)
        return FALSE;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "base");
    merge(doc, obj, base, base->root, where, whole);
    return TRUE;
}

/* Resolves `doc`'s part, if its kind has one that names a file: a string
 * becomes that file's object, an object with a "base" is merged over its
 * base. Sets *whole to the part then, NULL otherwise. */
static gboolean read_part(JsonDoc *doc, const JsonKind *kind, const cJSON **whole, Chain *chain,
                          GError **error)
{
    cJSON *part = kind->part ? cJSON_GetObjectItemCaseSensitive(doc->root, kind->part) : NULL;
    g_autofree char *where = kind->part ? g_strconcat("$.", kind->part, NULL) : NULL;
    *whole = NULL;
    if (cJSON_IsString(part)) {
        g_autoptr(JsonDoc) file = load_named(doc, "$", kind->part, part, kind->part_kind, chain,
                                             error);
        if (!file)
            return FALSE;
        cJSON *object = file->root;
        file->root = NULL;
        adopt(doc, file, object, where);
        cJSON_ReplaceItemInObjectCaseSensitive(doc->root, kind->part, object);
        *whole = object;
        return TRUE;
    }
    if (!cJSON_IsObject(part) || !cJSON_GetObjectItemCaseSensitive(part, "base"))
        return TRUE;
    *whole = part;
    return inherit(doc, part, where, kind->part_kind, NULL, chain, error);
}

static JsonDoc *load_kind(const char *path, const JsonKind *kind, Chain *chain, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    if (!doc)
        return NULL;
    g_ptr_array_add(chain->shown, g_strdup(path));
    g_ptr_array_add(chain->absolute, g_canonicalize_filename(path, NULL));
    g_ptr_array_add(chain->kinds, (gpointer)kind);
    const cJSON *whole;
    gboolean ok = read_part(doc, kind, &whole, chain, error) &&
                  inherit(doc, doc->root, "$", kind, whole, chain, error);
    g_ptr_array_set_size(chain->shown, chain->shown->len - 1);
    g_ptr_array_set_size(chain->absolute, chain->absolute->len - 1);
    g_ptr_array_set_size(chain->kinds, chain->kinds->len - 1);
    return ok ? g_steal_pointer(&doc) : NULL;
}

JsonDoc *json_doc_load_kind(const char *path, const JsonKind *kind, GError **error)
{
    Chain chain = {.shown = g_ptr_array_new_with_free_func(g_free),
                   .absolute = g_ptr_array_new_with_free_func(g_free),
                   .kinds = g_ptr_array_new()};
    JsonDoc *doc = load_kind(path, kind, &chain, error);
    g_ptr_array_unref(chain.shown);
    g_ptr_array_unref(chain.absolute);
    g_ptr_array_unref(chain.kinds);
    return doc;
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
            g_autofree char *at = NULL;
            const char *file = origin(doc, where, item, &at);
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s.%s: unknown key%s%s%s", file, at,
                        item->string, near ? " (did you mean \"" : "", near ? near : "",
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
        g_autofree char *at = NULL;
        const char *file = origin(doc, where, NULL, &at);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: %s.%s: missing (expected %s)", file, at,
                    key, expected);
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
