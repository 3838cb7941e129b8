/* grid.c: plan grids, the spaces of plans a sweep walks.
 *
 * A grid is a list of axes, each a scalar plan field and the values to try,
 * parsed once when the grid is made (the same rules as plan files and
 * flags); an axis set again replaces the earlier one. Grid files name plan
 * fields as plan files do, each with a list of values. The default grid
 * comes from the axis columns of plan_fields.def. */
#include "spec/json.h"
#include "spec/grid.h"

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
        g_array_free(g_array_index(grid->axes, GridAxis, i).values, TRUE);
    g_array_free(grid->axes, TRUE);
    g_free(grid);
}

/* The axis of `field`, emptied, or added empty if missing. */
static GArray *axis(PlanGrid *grid, PlanField field)
{
    for (guint i = 0; i < grid->axes->len; i++) {
        GridAxis *a = &g_array_index(grid->axes, GridAxis, i);
        if (a->field == field) {
            g_array_set_size(a->values, 0);
            return a->values;
        }
    }
    GridAxis a = {field, g_array_new(FALSE, FALSE, sizeof(int))};
    g_array_append_val(grid->axes, a);
    return a.values;
}

void plan_grid_remove(PlanGrid *grid, PlanField field)
{
    for (guint i = 0; i < grid->axes->len; i++) {
        GridAxis *a = &g_array_index(grid->axes, GridAxis, i);
        if (a->field == field) {
            g_array_free(a->values, TRUE);
            g_array_remove_index(grid->axes, i);
            return;
        }
    }
}

/* The divisors of n up to `most`. */
static void add_divisors(GArray *values, int n, int most)
{
    for (int d = 1; d <= MIN(n, most); d++)
        if (n % d == 0)
            g_array_append_val(values, d);
}

static void add_range(GArray *values, int from, int to)
{
    for (int v = from; v <= to; v++)
        g_array_append_val(values, v);
}

/* The values of field f's default axis (plan_fields.def) into `values`. */
static void default_values(PlanField f, const ModelSpec *model, const ClusterSpec *cluster,
                           GArray *values)
{
    const PlanFieldInfo *d = &plan_fields[f];
    int gpus = cluster_spec_gpus(cluster);
    switch (d->axis) {
    case AXIS_NONE:
        break;
    case AXIS_VALUES: {
        g_auto(GStrv) words = g_strsplit(d->axis_values, ",", -1);
        for (char **w = words; *w; w++) {
            int v;
            gboolean ok = plan_field_parse(f, *w, d->name, &v, NULL);
            g_assert(ok); /* the table's own values */
            g_array_append_val(values, v);
        }
        break;
    }
    case AXIS_EXPERT_ALL:
        if (model->experts <= 1)
            break;
        /* every value, for a mixture of experts: */
        /* fall through */
    case AXIS_ALL: {
        int last = d->kind == FIELD_BOOL ? TRUE : d->max;
        if (d->choices)
            for (last = 0; d->choices[last + 1]; last++)
                ;
        add_range(values, d->choices || d->kind == FIELD_BOOL ? 0 : d->min, last);
        break;
    }
    case AXIS_HEAD_DIVISORS:
        add_divisors(values, model->attention_heads, cluster->gpus_per_node);
        break;
    case AXIS_UP_TO_LAYERS:
        add_range(values, 1, MIN(model->layers, gpus));
        break;
    case AXIS_CP_SIZES:
        for (int cp = 1; cp <= gpus && (cp == 1 || model->seq_length / cp >= CP_MIN_TOKENS);
             cp *= 2)
            g_array_append_val(values, cp);
        break;
    case AXIS_CP_ALGORITHMS: /* the cp sizes', then the algorithms if there are several */
        default_values(PLAN_CP, model, cluster, values);
        gboolean swept = values->len > 1;
        g_array_set_size(values, 0);
        if (swept)
            add_range(values, CP_RING, CP_ALL_TO_ALL);
        break;
    case AXIS_EXPERT_TP:
        if (model->experts > 1)
            add_divisors(values, model->attention_heads, cluster->gpus_per_node);
        break;
    case AXIS_EXPERT_DIVISORS:
        add_divisors(values, MAX(model->experts, 1), gpus);
        break;
    }
}

PlanGrid *plan_grid_default(const ModelSpec *model, const ClusterSpec *cluster)
{
    PlanGrid *grid = plan_grid_new();
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(int));
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        g_array_set_size(values, 0);
        default_values((PlanField)f, model, cluster, values);
        if (values->len > 1) /* one value is no axis: the plan's default */
            g_array_append_vals(axis(grid, (PlanField)f), values->data, values->len);
    }
    return grid;
}

gboolean plan_grid_load(PlanGrid *grid, const char *path, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    if (!doc || !json_check_keys(doc, doc->root, "$", plan_field_names(), error))
        return FALSE;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        const char *name = plan_fields[f].name;
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc->root, name);
        if (!list)
            continue;
        if (!cJSON_IsArray(list) || !list->child || plan_field_is_list((PlanField)f)) {
            json_fail(error, doc, "$", name, list, "a non-empty list of values");
            return FALSE;
        }
        GArray *values = axis(grid, (PlanField)f);
        const cJSON *item;
        cJSON_ArrayForEach(item, list)
        {
            /* a value as a flag would give it */
            g_autofree char *text =
                cJSON_IsBool(item)     ? g_strdup(cJSON_IsTrue(item) ? "true" : "false")
                : cJSON_IsString(item) ? g_strdup(item->valuestring)
                : cJSON_IsNumber(item) ? g_strdup_printf("%.17g", item->valuedouble)
                                       : NULL;
            g_autofree char *where = g_strdup_printf("%s: $.%s", path, name);
            int v;
            if (!text) {
                json_fail(error, doc, "$", name, item, "numbers, strings or booleans in the list");
                return FALSE;
            }
            if (!plan_field_parse((PlanField)f, text, where, &v, error))
                return FALSE;
            g_array_append_val(values, v);
        }
    }
    return TRUE;
}

void plan_grid_merge(PlanGrid *into, const PlanGrid *from)
{
    for (guint i = 0; i < from->axes->len; i++) {
        const GridAxis *a = &g_array_index(from->axes, GridAxis, i);
        g_array_append_vals(axis(into, a->field), a->values->data, a->values->len);
    }
}

gboolean plan_grid_parse_axis(PlanGrid *grid, PlanField field, const char *text,
                              const char *origin, GError **error)
{
    g_assert(!plan_field_is_list(field));
    g_auto(GStrv) words = g_strsplit(text, ",", -1);
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(int));
    for (char **w = words; *w; w++) {
        int v;
        if (!plan_field_parse(field, *w, origin, &v, error))
            return FALSE;
        g_array_append_val(values, v);
    }
    GArray *into = axis(grid, field);
    g_array_append_vals(into, values->data, values->len);
    return TRUE;
}

gint64 plan_grid_size(const PlanGrid *grid)
{
    gint64 n = 1;
    for (guint i = 0; i < grid->axes->len; i++) {
        guint len = g_array_index(grid->axes, GridAxis, i).values->len;
        if (n > GRID_MAX_COMBINATIONS / len)
            return -1;
        n *= len;
    }
    return n;
}

/* The combinations one value of axis `axis` spans: the later axes'. */
static gint64 stride(const PlanGrid *grid, guint axis)
{
    gint64 n = 1;
    for (guint k = axis + 1; k < grid->axes->len; k++)
        n *= g_array_index(grid->axes, GridAxis, k).values->len;
    return n;
}

guint plan_grid_index(const PlanGrid *grid, gint64 combo, guint axis)
{
    return (guint)(combo / stride(grid, axis) %
                   g_array_index(grid->axes, GridAxis, axis).values->len);
}

gint64 plan_grid_with(const PlanGrid *grid, gint64 combo, guint axis, guint index)
{
    return combo + ((gint64)index - plan_grid_index(grid, combo, axis)) * stride(grid, axis);
}

void plan_grid_apply(const PlanGrid *grid, gint64 combo, PlanSpec *plan)
{
    for (int a = (int)grid->axes->len - 1; a >= 0; a--) {
        const GridAxis *axis = &g_array_index(grid->axes, GridAxis, a);
        guint n = axis->values->len;
        int v = g_array_index(axis->values, int, combo % n);
        combo /= n;
        plan_field_put(plan, axis->field, v, plan_fields[axis->field].name);
    }
}
