/* plan.c: the parallelism plan, from a plan file and command-line flags.
 *
 * Every field is described once in `fields` (its name, kind, range or
 * choices); JSON values and flag strings both go through set_field, so a
 * field is validated the same way wherever it comes from. Later sources
 * override earlier ones: defaults, then the file, then flags. */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "spec/json.h"
#include "spec/spec.h"
#include "util/error.h"

typedef enum { FIELD_INT, FIELD_BOOL, FIELD_CHOICE, FIELD_LIST } FieldKind;

typedef struct {
    const char *name;
    FieldKind kind;
    int min, max;               /* FIELD_INT, and each entry of a FIELD_LIST */
    const char *const *choices; /* FIELD_CHOICE, indexed by the enum value */
    size_t offset;              /* of the int-sized member in PlanSpec (not FIELD_LIST) */
    const char *alias;          /* FIELD_INT: a word that means `max`, or NULL */
} FieldDesc;

static const char *const schedules[] = {"naive", "gpipe", "1f1b", "interleaved", NULL};
static const char *const recomputes[] = {"none", "selective", "full", NULL};
static const char *const dtypes[] = {"bf16", NULL};
static const char *const algorithms[] = {"auto", "ring", "tree", "hierarchical", NULL};
static const char *const rank_orders[] = {"tp-dp-pp", "tp-pp-dp", "dp-tp-pp", "dp-pp-tp",
                                          "pp-tp-dp", "pp-dp-tp", NULL};

#define INT_FIELD(n, lo, hi, m)                                                                    \
    {                                                                                              \
        .name = n, .kind = FIELD_INT, .min = lo, .max = hi, .offset = offsetof(PlanSpec, m)        \
    }
#define BOOL_FIELD(n, m)                                                                           \
    {                                                                                              \
        .name = n, .kind = FIELD_BOOL, .max = 1, .offset = offsetof(PlanSpec, m)                   \
    }
#define CHOICE_FIELD(n, list, m)                                                                   \
    {                                                                                              \
        .name = n, .kind = FIELD_CHOICE, .choices = list, .offset = offsetof(PlanSpec, m)          \
    }

static const FieldDesc fields[PLAN_N_FIELDS] = {
    [PLAN_TP] = INT_FIELD("tp", 1, 1 << 20, tp),
    [PLAN_PP] = INT_FIELD("pp", 1, 1 << 20, pp),
    [PLAN_DP] = INT_FIELD("dp", 1, 1 << 20, dp),
    [PLAN_MICRO_BATCH_SIZE] = INT_FIELD("micro_batch_size", 1, G_MAXINT, micro_batch_size),
    [PLAN_GLOBAL_BATCH_SIZE] = INT_FIELD("global_batch_size", 1, G_MAXINT, global_batch_size),
    [PLAN_SCHEDULE] = CHOICE_FIELD("schedule", schedules, schedule),
    [PLAN_VIRTUAL_STAGES] = INT_FIELD("virtual_stages", 1, 1 << 20, virtual_stages),
    [PLAN_LAYERS_PER_STAGE] = {.name = "layers_per_stage",
                               .kind = FIELD_LIST,
                               .min = 1,
                               .max = G_MAXINT},
    [PLAN_RANK_ORDER] = CHOICE_FIELD("rank_order", rank_orders, rank_order),
    /* PyTorch's FSDP is ZeRO stage 3 */
    [PLAN_ZERO_STAGE] = {.name = "zero_stage",
                         .kind = FIELD_INT,
                         .max = 3,
                         .offset = offsetof(PlanSpec, zero_stage),
                         .alias = "fsdp"},
    [PLAN_SEQUENCE_PARALLEL] = BOOL_FIELD("sequence_parallel", sequence_parallel),
    [PLAN_RECOMPUTE] = CHOICE_FIELD("recompute", recomputes, recompute),
    [PLAN_OVERLAP_GRAD_REDUCE] = BOOL_FIELD("overlap_grad_reduce", overlap_grad_reduce),
    [PLAN_DDP_BUCKET_SIZE] = INT_FIELD("ddp_bucket_size", 1, G_MAXINT, ddp_bucket_size),
    [PLAN_DTYPE] = CHOICE_FIELD("dtype", dtypes, dtype),
    [PLAN_COLLECTIVE_ALGORITHM] = CHOICE_FIELD("collective_algorithm", algorithms, algorithm),
    [PLAN_LINK_CONTENTION] = BOOL_FIELD("link_contention", link_contention),
};

static int *member(PlanSpec *plan, PlanField f)
{
    return (int *)((char *)plan + fields[f].offset);
}

static int value(const PlanSpec *plan, PlanField f)
{
    return *(const int *)((const char *)plan + fields[f].offset);
}

PlanSpec *plan_spec_new(void)
{
    PlanSpec *plan = g_new0(PlanSpec, 1);
    plan->tp = 1;
    plan->pp = 1;
    plan->dp = 0; /* resolved: GPUs / (tp * pp) */
    plan->micro_batch_size = 1;
    plan->global_batch_size = 0; /* resolved: micro_batch_size * dp */
    plan->schedule = SCHEDULE_1F1B;
    plan->virtual_stages = 1;
    plan->overlap_grad_reduce = TRUE;
    plan->ddp_bucket_size = 40000000; /* Megatron-LM's default bucket, in parameters */
    plan->dtype = DTYPE_BF16;
    plan->algorithm = ALGORITHM_AUTO; /* the cluster's choice */
    plan->link_contention = TRUE;
    return plan;
}

PlanSpec *plan_spec_copy(const PlanSpec *plan)
{
    PlanSpec *copy = g_new(PlanSpec, 1);
    *copy = *plan;
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        copy->origin[f] = g_strdup(plan->origin[f]);
    if (plan->layers_per_stage) {
        copy->layers_per_stage = g_new(int, (gsize)plan->n_layers_per_stage);
        memcpy(copy->layers_per_stage, plan->layers_per_stage,
               sizeof(int) * (gsize)plan->n_layers_per_stage);
    }
    return copy;
}

void plan_spec_free(PlanSpec *plan)
{
    if (!plan)
        return;
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        g_free(plan->origin[f]);
    g_free(plan->layers_per_stage);
    g_free(plan);
}

const char *collective_algorithm_name(CollAlgorithm a)
{
    g_assert(a >= 0 && a < ALGORITHMS);
    return a == ALGORITHM_DIRECT ? "direct" : algorithms[a];
}

const char *plan_field_name(PlanField field)
{
    return fields[field].name;
}

const char *plan_field_origin(const PlanSpec *plan, PlanField field)
{
    return plan->origin[field] ? plan->origin[field] : fields[field].name;
}

gboolean plan_field_is_word(PlanField field)
{
    return fields[field].kind == FIELD_CHOICE;
}

gboolean plan_field_is_list(PlanField field)
{
    return fields[field].kind == FIELD_LIST;
}

char *plan_field_text(const PlanSpec *plan, PlanField field)
{
    const FieldDesc *d = &fields[field];
    if (d->kind == FIELD_LIST) { /* only layers_per_stage is a list */
        GString *text = g_string_new(NULL);
        for (int i = 0; i < plan->n_layers_per_stage; i++)
            g_string_append_printf(text, "%s%d", i ? "," : "", plan->layers_per_stage[i]);
        return g_string_free(text, FALSE);
    }
    int v = value(plan, field);
    if (d->kind == FIELD_BOOL)
        return g_strdup(v ? "true" : "false");
    if (d->kind == FIELD_CHOICE)
        return g_strdup(d->choices[v]);
    return g_strdup_printf("%d", v);
}

static char *expected_text(const FieldDesc *d)
{
    switch (d->kind) {
    case FIELD_BOOL:
        return g_strdup("true or false");
    case FIELD_CHOICE: {
        g_autofree char *list = g_strjoinv("\", \"", (char **)d->choices);
        return g_strdup_printf("one of \"%s\"", list);
    }
    case FIELD_LIST:
        return g_strdup("a list of positive integers");
    case FIELD_INT:
        break;
    }
    if (d->min == 1 && d->max == G_MAXINT)
        return g_strdup("a positive integer");
    if (d->alias)
        return g_strdup_printf("an integer from %d to %d or \"%s\"", d->min, d->max, d->alias);
    return g_strdup_printf("an integer from %d to %d", d->min, d->max);
}

static gboolean reject(PlanSpec *plan, PlanField f, const char *got, GError **error)
{
    g_autofree char *expected = expected_text(&fields[f]);
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected %s, got %s",
                plan_field_origin(plan, f), expected, got);
    return FALSE;
}

/* Stores `n` values into the list field (layers_per_stage). */
static gboolean set_list(PlanSpec *plan, PlanField f, const double *values, int n, const char *got,
                         GError **error)
{
    const FieldDesc *d = &fields[f];
    if (n <= 0)
        return reject(plan, f, got, error);
    for (int i = 0; i < n; i++)
        if (!(values[i] >= d->min && values[i] <= d->max) || values[i] != (double)(int)values[i])
            return reject(plan, f, got, error);
    g_free(plan->layers_per_stage);
    plan->layers_per_stage = g_new(int, (gsize)n);
    plan->n_layers_per_stage = n;
    for (int i = 0; i < n; i++)
        plan->layers_per_stage[i] = (int)values[i];
    return TRUE;
}

/* A flag's comma-separated list, "12,12,10". */
static gboolean set_list_text(PlanSpec *plan, PlanField f, const char *text, const char *got,
                              GError **error)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    int n = (int)g_strv_length(parts);
    g_autofree double *values = g_new(double, MAX(n, 1));
    for (int i = 0; i < n; i++) {
        char *end = NULL;
        values[i] = parts[i][0] ? g_ascii_strtod(parts[i], &end) : -1;
        if (end && *end)
            return reject(plan, f, got, error);
    }
    return set_list(plan, f, values, n, got, error);
}

/* Stores `text` (a flag's string or a JSON string) or `number` (a JSON
 * number, when text is NULL) into field f; `got` is the value as the user
 * wrote it, for the error. */
static gboolean set_field(PlanSpec *plan, PlanField f, const char *text, double number,
                          const char *got, GError **error)
{
    const FieldDesc *d = &fields[f];
    if (d->kind == FIELD_LIST)
        return set_list_text(plan, f, text, got, error);
    if (d->kind == FIELD_CHOICE) {
        for (int i = 0; text && d->choices[i]; i++) {
            if (strcmp(text, d->choices[i]) == 0) {
                *member(plan, f) = i;
                return TRUE;
            }
        }
        return reject(plan, f, got, error);
    }
    if (text) { /* a flag: parse the number or boolean */
        char *end = NULL;
        if (d->alias && strcmp(text, d->alias) == 0) {
            number = d->max;
        } else if (d->kind == FIELD_BOOL &&
                   (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)) {
            number = strcmp(text, "true") == 0;
        } else {
            number = text[0] ? g_ascii_strtod(text, &end) : -1;
            if (end && *end)
                return reject(plan, f, got, error);
        }
    }
    if (!(number >= d->min && number <= d->max) || number != (double)(long long)number)
        return reject(plan, f, got, error);
    *member(plan, f) = (int)number;
    return TRUE;
}

gboolean plan_spec_set(PlanSpec *plan, PlanField field, const char *value_text, const char *flag,
                       GError **error)
{
    g_free(plan->origin[field]);
    plan->origin[field] = g_strdup(flag);
    if (!value_text) /* a bare boolean flag */
        return set_field(plan, field, "true", 0, "nothing", error);
    g_autofree char *got = g_strdup_printf("\"%s\"", value_text);
    return set_field(plan, field, value_text, 0, got, error);
}

/* A JSON boolean goes through the flag path as "true"/"false"; any other
 * type meets the field's own check and is printed as JSON in the error. */
static gboolean set_from_json(PlanSpec *plan, PlanField f, const cJSON *item, GError **error)
{
    g_autofree char *got = cJSON_PrintUnformatted(item);
    const FieldDesc *d = &fields[f];
    if (d->kind == FIELD_LIST) {
        int n = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 0;
        g_autofree double *values = g_new(double, MAX(n, 1));
        for (int i = 0; i < n; i++) {
            const cJSON *v = cJSON_GetArrayItem(item, i);
            values[i] = cJSON_IsNumber(v) ? v->valuedouble : -1;
        }
        return set_list(plan, f, values, n, got, error);
    }
    gboolean word = cJSON_IsString(item) && (d->kind == FIELD_CHOICE || d->alias);
    gboolean right_type = d->kind == FIELD_BOOL
                              ? cJSON_IsBool(item)
                              : word || (d->kind == FIELD_INT && cJSON_IsNumber(item));
    if (!right_type)
        return reject(plan, f, got, error);
    if (d->kind == FIELD_BOOL)
        return set_field(plan, f, cJSON_IsTrue(item) ? "true" : "false", 0, got, error);
    if (word)
        return set_field(plan, f, item->valuestring, 0, got, error);
    return set_field(plan, f, NULL, item->valuedouble, got, error);
}

const char *const *plan_field_names(void)
{
    static const char *names[PLAN_N_FIELDS + 1];
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        names[f] = fields[f].name;
    return names;
}

gboolean plan_spec_load(PlanSpec *plan, const char *path, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    if (!doc || !json_check_keys(doc, doc->root, "$", plan_field_names(), error))
        return FALSE;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(doc->root, fields[f].name);
        if (!item)
            continue;
        g_free(plan->origin[f]);
        plan->origin[f] = g_strdup_printf("%s: $.%s", path, fields[f].name);
        if (!set_from_json(plan, (PlanField)f, item, error))
            return FALSE;
    }
    return TRUE;
}

static gboolean fail(GError **error, const PlanSpec *plan, PlanField f, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* "ORIGIN: expected ..., got VALUE" for a resolved field that breaks a rule. */
static gboolean fail(GError **error, const PlanSpec *plan, PlanField f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *expected = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *got = plan_field_text(plan, f);
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected %s, got %s",
                plan_field_origin(plan, f), expected, got);
    return FALSE;
}

/* The pipeline's rules: the schedule, and the layers of each model chunk
 * (an even split unless given). */
static gboolean resolve_pipeline(PlanSpec *plan, const ModelSpec *model, GError **error)
{
    if (plan->virtual_stages > 1 && plan->schedule != SCHEDULE_INTERLEAVED)
        return fail(error, plan, PLAN_VIRTUAL_STAGES, "1 unless schedule is \"interleaved\"");
    if (plan->schedule == SCHEDULE_INTERLEAVED && plan->pp < 2)
        return fail(error, plan, PLAN_SCHEDULE,
                    "a schedule other than \"interleaved\" when pp = %d "
                    "(it interleaves model chunks over pipeline stages)",
                    plan->pp);
    if (plan->schedule == SCHEDULE_INTERLEAVED && plan->virtual_stages < 2)
        return fail(error, plan, PLAN_VIRTUAL_STAGES,
                    "at least 2 model chunks per stage with the \"interleaved\" schedule");
    int m = plan_spec_micro_batches(plan);
    if (plan->schedule == SCHEDULE_INTERLEAVED && m % plan->pp != 0)
        return fail(error, plan, PLAN_GLOBAL_BATCH_SIZE,
                    "micro-batches per step, global_batch_size / (micro_batch_size x dp) = %d, "
                    "a multiple of pp = %d for the \"interleaved\" schedule",
                    m, plan->pp);
    long long chunks = (long long)plan->pp * plan->virtual_stages;
    if (plan->layers_per_stage) {
        long long sum = 0;
        for (int i = 0; i < plan->n_layers_per_stage; i++)
            sum += plan->layers_per_stage[i];
        if (plan->n_layers_per_stage != chunks)
            return fail(error, plan, PLAN_LAYERS_PER_STAGE,
                        "pp x virtual_stages = %lld layer counts", chunks);
        if (sum != model->layers)
            return fail(error, plan, PLAN_LAYERS_PER_STAGE,
                        "layer counts that add up to the model's %d layers", model->layers);
        return TRUE;
    }
    if (chunks > model->layers || model->layers % chunks != 0)
        return fail(error, plan, PLAN_PP,
                    "pp x virtual_stages dividing the model's %d layers, or a layers_per_stage "
                    "list (pp x virtual_stages = %lld)",
                    model->layers, chunks);
    plan->n_layers_per_stage = (int)chunks;
    plan->layers_per_stage = g_new(int, (gsize)chunks);
    for (long long i = 0; i < chunks; i++)
        plan->layers_per_stage[i] = (int)(model->layers / chunks);
    return TRUE;
}

gboolean plan_spec_resolve(PlanSpec *plan, const ModelSpec *model, const ClusterSpec *cluster,
                           GError **error)
{
    long long gpus = cluster_spec_gpus(cluster);
    long long tp_pp = (long long)plan->tp * plan->pp;
    if (tp_pp > gpus)
        return fail(error, plan, PLAN_PP, "tp x pp <= the cluster's %lld GPUs (tp = %d)", gpus,
                    plan->tp);
    if (plan->dp == 0)
        plan->dp = (int)(gpus / tp_pp);
    if (tp_pp * plan->dp > gpus)
        return fail(error, plan, PLAN_DP,
                    "tp x pp x dp <= the cluster's %lld GPUs (tp x pp = %lld)", gpus, tp_pp);
    long long per_step = (long long)plan->micro_batch_size * plan->dp;
    if (plan->global_batch_size == 0) {
        if (per_step > G_MAXINT)
            return fail(error, plan, PLAN_MICRO_BATCH_SIZE, "micro_batch_size x dp <= %d sequences",
                        G_MAXINT);
        plan->global_batch_size = (int)per_step;
    }
    if (plan->global_batch_size % per_step != 0)
        return fail(error, plan, PLAN_GLOBAL_BATCH_SIZE,
                    "a multiple of micro_batch_size x dp = %d x %d = %lld", plan->micro_batch_size,
                    plan->dp, per_step);
    if (plan->sequence_parallel && plan->tp == 1)
        return fail(error, plan, PLAN_SEQUENCE_PARALLEL,
                    "false when tp = 1 (it splits the "
                    "sequence over the tensor-parallel group)");
    return resolve_pipeline(plan, model, error);
}

int plan_spec_micro_batches(const PlanSpec *plan)
{
    g_assert(plan->dp > 0 && plan->global_batch_size > 0);
    return (int)(plan->global_batch_size / ((long long)plan->micro_batch_size * plan->dp));
}
