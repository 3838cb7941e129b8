/* grid.c: plan grids, the spaces of plans a sweep walks.
 *
 * A grid is a list of axes, each a plan field and the values (as flag
 * strings) to try; an axis set again replaces the earlier one. Grid files
 * name plan fields as plan files do, each with a list of values. */
#include "spec/json.h"
#include "spec/spec.h"

PlanGrid *plan_grid_new(void)
{
    PlanGrid *grid = g_new0(PlanGrid, 1);
    grid->axes = g_array_new(FALSE, FALSE, sizeof(GridAxis));
    return grid;
}

void plan_grid_free(PlanGrid *grid)
{
    if (!grid)
        return;
    for (guint i = 0; i < grid->axes->len; i++)
        g_ptr_array_free(g_array_index(grid->axes, GridAxis, i).values, TRUE);
    g_array_free(grid->axes, TRUE);
    g_free(grid);
}

/* The axis of `field`, added empty if missing. */
static GridAxis *axis(PlanGrid *grid, PlanField field)
{
    for (guint i = 0; i < grid->axes->len; i++) {
        GridAxis *a = &g_array_index(grid->axes, GridAxis, i);
        if (a->field == field) {
            g_ptr_array_set_size(a->values, 0);
            return a;
        }
    }
    GridAxis a = {field, g_ptr_array_new_with_free_func(g_free)};
    g_array_append_val(grid->axes, a);
    return &g_array_index(grid->axes, GridAxis, grid->axes->len - 1);
}

void plan_grid_set(PlanGrid *grid, PlanField field, const char *const *values)
{
    GridAxis *a = axis(grid, field);
    for (; *values; values++)
        g_ptr_array_add(a->values, g_strdup(*values));
}

void plan_grid_remove(PlanGrid *grid, PlanField field)
{
    for (guint i = 0; i < grid->axes->len; i++) {
        GridAxis *a = &g_array_index(grid->axes, GridAxis, i);
        if (a->field == field) {
            g_ptr_array_free(a->values, TRUE);
            g_array_remove_index(grid->axes, i);
            return;
        }
    }
}

/* A grid value as a flag would give it. */
static char *grid_value(const cJSON *item)
{
    if (cJSON_IsBool(item))
        return g_strdup(cJSON_IsTrue(item) ? "true" : "false");
    if (cJSON_IsString(item))
        return g_strdup(item->valuestring);
    if (cJSON_IsNumber(item))
        return g_strdup_printf("%.17g", item->valuedouble);
    return NULL;
}

gboolean plan_grid_load(PlanGrid *grid, const char *path, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    if (!doc || !json_check_keys(doc, doc->root, "$", plan_field_names(), error))
        return FALSE;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        const cJSON *list =
            cJSON_GetObjectItemCaseSensitive(doc->root, plan_field_name((PlanField)f));
        if (!list)
            continue;
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
            json_fail(error, doc, "$", plan_field_name((PlanField)f), list,
                      "a non-empty list of values");
            return FALSE;
        }
        GridAxis *a = axis(grid, (PlanField)f);
        for (const cJSON *item = list->child; item; item = item->next) {
            char *value = grid_value(item);
            if (!value) {
                json_fail(error, doc, "$", plan_field_name((PlanField)f), item,
                          "numbers, strings or booleans in the list");
                return FALSE;
            }
            g_ptr_array_add(a->values, value);
        }
    }
    return TRUE;
}

gint64 plan_grid_size(const PlanGrid *grid)
{
    gint64 n = 1;
    for (guint i = 0; i < grid->axes->len; i++) {
        n *= g_array_index(grid->axes, GridAxis, i).values->len;
        if (n > G_MAXINT32)
            return -1;
    }
    return n;
}
