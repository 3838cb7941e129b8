/* shipped.c: the shipped inputs found by name (shipped.h), under the
 * current folder, the installed data folder and the source tree. */
#include "base/shipped.h"

#include <string.h>

#include "base/error.h"
#include "base/text.h"

const ShippedKind shipped_models = {.what = "model", .folders = {"models", "models/hf"}};
const ShippedKind shipped_clusters = {.what = "cluster", .folders = {"topologies"}};
const ShippedKind shipped_gpus = {.what = "GPU", .folders = {"topologies/gpus"}};
const ShippedKind shipped_plans = {.what = "plan", .folders = {"plans"}};

/* The roots, first to last: the current folder (""), the installed data
 * folder, and the source tree configure ran in. */
static const char *const roots[] = {"", PLANSIM_DATADIR, PLANSIM_SRCDIR, NULL};

/* `file` under root `root`, newly allocated. */
static char *under_root(const char *root, const char *file)
{
    return *root ? g_build_filename(root, file, NULL) : g_strdup(file);
}

char *shipped_find(const char *file)
{
    for (const char *const *root = roots; *root; root++) {
        char *path = under_root(*root, file);
        if (g_file_test(path, G_FILE_TEST_EXISTS))
            return path;
        g_free(path);
    }
    return NULL;
}

char *shipped_path(const char *file)
{
    char *path = shipped_find(file);
    return path ? path : under_root(PLANSIM_DATADIR, file);
}

/* `name` without a ".json" at its end, newly allocated. */
static char *stem_of(const char *name)
{
    return g_str_has_suffix(name, ".json") ? g_strndup(name, strlen(name) - 5) : g_strdup(name);
}

char *shipped_named(const ShippedKind *kind, const char *name)
{
    g_autofree char *stem = stem_of(name);
    for (const char *const *folder = kind->folders; *folder; folder++) {
        g_autofree char *file = g_strdup_printf("%s/%s.json", *folder, stem);
        char *path = shipped_find(file);
        if (path && g_file_test(path, G_FILE_TEST_IS_REGULAR))
            return path;
        g_free(path);
    }
    return NULL;
}

static int compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void shipped_names(const ShippedKind *kind, GPtrArray *folders, GPtrArray *names)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (const char *const *folder = kind->folders; *folder; folder++)
        for (const char *const *root = roots; *root; root++) {
            char *path = under_root(*root, *folder);
            g_ptr_array_add(folders, path);
            g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
            for (const char *file; dir && (file = g_dir_read_name(dir));) {
                char *name = g_strndup(file, strlen(file) - MIN(strlen(file), 5));
                if (g_str_has_suffix(file, ".json") && !g_hash_table_contains(seen, name)) {
                    g_hash_table_add(seen, name);
                    g_ptr_array_add(names, name);
                } else {
                    g_free(name);
                }
            }
        }
    g_ptr_array_sort(names, compare_names);
}

char *shipped_held(const ShippedKind *kind, GPtrArray *names)
{
    if (names->len == 0)
        return g_strdup_printf("no shipped %s is there (install plansim, or give a file)",
                               kind->what);
    GString *held = g_string_new(NULL);
    g_string_printf(held, "the shipped %ss there are ", kind->what);
    for (guint i = 0; i < names->len; i++)
        g_string_append_printf(held, "%s%s", i ? ", " : "", (const char *)names->pdata[i]);
    return g_string_free(held, FALSE);
}

void shipped_refuse(GError **error, const ShippedKind *kind, const char *where, const char *given)
{
    g_autoptr(GPtrArray) folders = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    shipped_names(kind, folders, names);
    g_autofree char *held = shipped_held(kind, names);
    g_ptr_array_add(folders, NULL);
    g_ptr_array_add(names, NULL);
    g_autofree char *looked = g_strjoinv(", ", (char **)folders->pdata);
    g_autofree char *stem = stem_of(given);
    const char *near = text_nearest(stem, (const char *const *)names->pdata);
    g_autofree char *hint = near ? g_strdup_printf(" (did you mean \"%s\"?)", near) : g_strdup("");
    g_autofree char *got = ps_error_quote(given);
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                "%s: expected a file or a shipped %s's name, got %s%s; looked in %s: %s", where,
                kind->what, got, hint, looked, held);
}
