/* plan.c: the parallelism plan, from a plan file and command-line flags.
 *
 * Every field is declared once, in plan_fields.def, which this file turns
 * into the table `plan_fields`; JSON values and flag strings both go
 * through `parse` (or set_list), so a field is validated the same way
 * wherever it comes from. Later sources override earlier ones: defaults,
 * then the file, then flags. */
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spec/json.h"
#include "spec/pipeline_layout.h"
#include "spec/plan.h"
#include "base/error.h"
#include "base/text.h"

#define PLAN_FIELD(ID, member, kind, ctype, flag, lo, hi, choices, alias, fallback, axis, values,  \
                   help)                                                                           \
    [PLAN_##ID] = {#member, FIELD_##kind, flag,        lo,     hi,   choices,                      \
                   alias,   fallback,     AXIS_##axis, values, help, offsetof(PlanSpec, member)},
const PlanFieldInfo plan_fields[PLAN_N_FIELDS] = {
#include "spec/plan_fields.def"
};
#undef PLAN_FIELD

gboolean plan_field_is_list(PlanField f)
{
    return plan_fields[f].kind == FIELD_LIST || plan_fields[f].kind == FIELD_LAYOUT;
}

gboolean plan_field_takes_commas(PlanField f)
{
    return plan_fields[f].kind == FIELD_LIST || plan_fields[f].kind == FIELD_SET;
}

static int *member(PlanSpec *plan, PlanField f)
{
    g_assert(!plan_field_is_list(f));
    return (int *)((char *)plan + plan_fields[f].offset);
}

static PlanList *list_member(PlanSpec *plan, PlanField f)
{
    g_assert(plan_field_is_list(f));
    return (PlanList *)((char *)plan + plan_fields[f].offset);
}

int plan_field_get(const PlanSpec *plan, PlanField f)
{
    return *member((PlanSpec *)plan, f);
}

void plan_field_put(PlanSpec *plan, PlanField f, int value, const char *origin)
{
    *member(plan, f) = value;
    if (origin)
        plan->origin[f] = origin;
}

PlanSpec *plan_spec_new(void)
{
    PlanSpec *plan = g_new0(PlanSpec, 1);
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        if (!plan_field_is_list((PlanField)f))
            *member(plan, (PlanField)f) = plan_fields[f].fallback;
    return plan;
}

PlanSpec *plan_spec_copy(const PlanSpec *plan)
{
    PlanSpec *copy = g_new(PlanSpec, 1);
    *copy = *plan;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        if (plan_field_is_list((PlanField)f)) {
            PlanList *list = list_member(copy, (PlanField)f);
            list->v = g_memdup2(list->v, sizeof(int) * (gsize)list->n);
        }
    }
    return copy;
}

void plan_spec_free(PlanSpec *plan)
{
    if (!plan)
        return;
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        if (plan_field_is_list((PlanField)f))
            g_free(list_member(plan, (PlanField)f)->v);
    g_free(plan);
}

const char *plan_field_origin(const PlanSpec *plan, PlanField field)
{
    return plan->origin[field] ? plan->origin[field] : plan_fields[field].name;
}

char *plan_field_text(const PlanSpec *plan, PlanField field)
{
    const PlanFieldInfo *d = &plan_fields[field];
    if (d->kind == FIELD_LAYOUT) {
        const PlanList *list = list_member((PlanSpec *)plan, field);
        return list->n ? pipeline_layout_text(list->v, list->n, list->mtp) : g_strdup("");
    }
    if (d->kind == FIELD_LIST) {
        const PlanList *list = list_member((PlanSpec *)plan, field);
        GString *text = g_string_new(NULL);
        for (int i = 0; i < list->n; i++)
            g_string_append_printf(text, "%s%d", i ? "," : "", list->v[i]);
        return g_string_free(text, FALSE);
    }
    int v = plan_field_get(plan, field);
    if (d->kind == FIELD_BOOL)
        return g_strdup(v ? "true" : "false");
    if (d->kind == FIELD_CHOICE)
        return g_strdup(d->choices[v]);
    if (d->kind == FIELD_SET) {
        GString *text = g_string_new(NULL);
        for (int i = 0; d->choices[i]; i++)
            if (v & (1 << i))
                g_string_append_printf(text, "%s%s", text->len ? "," : "", d->choices[i]);
        return g_string_free(text, FALSE);
    }
    return g_strdup_printf("%d", v);
}

static char *expected_text(const PlanFieldInfo *d)
{
    switch (d->kind) {
    case FIELD_BOOL:
        return g_strdup("true or false");
    case FIELD_CHOICE: {
        g_autofree char *list = names_list(d->choices, TRUE);
        return g_strdup_printf("one of %s", list);
    }
    case FIELD_SET: {
        g_autofree char *list = names_list(d->choices, TRUE);
        return g_strdup_printf("a list of %s, separated by commas or spaces", list);
    }
    case FIELD_LIST:
        return g_strdup(d->min == 0 ? "a list of integers from 0" : "a list of positive integers");
    case FIELD_LAYOUT:
        return g_strdup("a Megatron-Core pipeline layout string");
    case FIELD_INT:
        break;
    }
    if (d->min == 1 && d->max == G_MAXINT)
        return g_strdup("a positive integer");
    if (d->alias)
        return g_strdup_printf("an integer from %d to %d or \"%s\"", d->min, d->max, d->alias);
    return g_strdup_printf("an integer from %d to %d", d->min, d->max);
}

static gboolean reject(PlanField f, const char *origin, const char *got, GError **error)
{
    g_autofree char *expected = expected_text(&plan_fields[f]);
    ps_error_value(error, origin, got, "%s", expected);
    return FALSE;
}

/* Whether `number` is a whole number in the field's range. */
static gboolean in_range(const PlanFieldInfo *d, double number)
{
    return number >= d->min && number <= d->max && number == (double)(long long)number;
}

/* A whole number written as text, the whole of it (text_parse_count: 4k
 * is 4096); NaN when it is not one. */
static double number_of(const char *text)
{
    double number = NAN;
    text_parse_count(text, TEXT_BINARY, TRUE, &number);
    return number;
}

static const char *const booleans[] = {"false", "true", NULL};

/* A SET's words, "a,b" or "a b" (Megatron's command line), as its bits;
 * -1 unless each is one of its choices (or with none). */
static double set_of(const PlanFieldInfo *d, const char *text)
{
    g_auto(GStrv) words = g_strsplit_set(text, ", ", -1);
    int bits = 0;
    for (char **w = words; *w; w++) {
        if (**w == '\0') /* between ", " */
            continue;
        int i = names_find(d->choices, *w);
        if (i < 0)
            return -1;
        bits |= 1 << i;
    }
    return bits ? bits : -1;
}

/* Parses `text` into a scalar field's value; `got` is the value as the
 * user wrote it, for the error. */
static gboolean parse(PlanField f, const char *text, const char *origin, const char *got,
                      int *value, GError **error)
{
    const PlanFieldInfo *d = &plan_fields[f];
    g_assert(!plan_field_is_list(f));
    double number;
    if (d->kind == FIELD_CHOICE)
        number = names_find(d->choices, text);
    else if (d->kind == FIELD_SET)
        number = set_of(d, text);
    else if (d->kind == FIELD_BOOL)
        number = names_find(booleans, text);
    else if (d->alias && strcmp(text, d->alias) == 0)
        number = d->max;
    else
        number = number_of(text);
    if (d->kind == FIELD_INT ? !in_range(d, number) : number < 0)
        return reject(f, origin, got, error);
    *value = (int)number;
    return TRUE;
}

gboolean plan_field_parse(PlanField field, const char *text, const char *origin, int *value,
                          GError **error)
{
    g_autofree char *got = g_strdup_printf("\"%s\"", text);
    return parse(field, text, origin, got, value, error);
}

/* Stores `n` values into a list field. */
static gboolean set_list(PlanSpec *plan, PlanField f, const double *values, int n, const char *got,
                         GError **error)
{
    const PlanFieldInfo *d = &plan_fields[f];
    for (int i = 0; i < n; i++)
        if (!in_range(d, values[i]))
            n = 0;
    if (n <= 0)
        return reject(f, plan_field_origin(plan, f), got, error);
    PlanList *list = list_member(plan, f);
    g_free(list->v);
    list->v = g_new(int, (gsize)n);
    list->n = n;
    for (int i = 0; i < n; i++)
        list->v[i] = (int)values[i];
    return TRUE;
}

/* Stores the layout `text` into a LAYOUT field. */
static gboolean set_layout(PlanSpec *plan, PlanField f, const char *text, const char *got,
                           GError **error)
{
    int *chunks, n, mtp;
    g_autofree char *why = NULL;
    if (!pipeline_layout_parse(text, &chunks, &n, &mtp, &why)) {
        ps_error_value(error, plan_field_origin(plan, f), got, "%s", why);
        return FALSE;
    }
    PlanList *list = list_member(plan, f);
    g_free(list->v);
    *list = (PlanList){.v = chunks, .n = n, .mtp = mtp};
    return TRUE;
}

gboolean plan_spec_set(PlanSpec *plan, PlanField field, const char *text, const char *origin,
                       GError **error)
{
    return plan_spec_set_kept(plan, field, text, g_intern_string(origin), error);
}

gboolean plan_spec_set_kept(PlanSpec *plan, PlanField field, const char *text, const char *origin,
                            GError **error)
{
    plan->origin[field] = origin;
    g_autofree char *got = g_strdup_printf("\"%s\"", text);
    if (plan_fields[field].kind == FIELD_LAYOUT)
        return set_layout(plan, field, text, got, error);
    if (plan_fields[field].kind == FIELD_LIST) { /* a flag's "12,12,10" */
        g_auto(GStrv) parts = g_strsplit(text, ",", -1);
        int n = (int)g_strv_length(parts);
        g_autofree double *values = g_new(double, MAX(n, 1));
        for (int i = 0; i < n; i++)
            values[i] = number_of(parts[i]);
        return set_list(plan, field, values, n, got, error);
    }
    return parse(field, text, origin, got, member(plan, field), error);
}

/* A JSON value: a boolean, a word (a choice or an alias) or a number, each
 * only where the field takes it; printed as JSON in the error. */
static gboolean set_from_json(PlanSpec *plan, PlanField f, const cJSON *item, GError **error)
{
    g_autofree char *got = cJSON_PrintUnformatted(item);
    const PlanFieldInfo *d = &plan_fields[f];
    const char *origin = plan_field_origin(plan, f);
    if (d->kind == FIELD_LAYOUT)
        return cJSON_IsString(item) ? set_layout(plan, f, item->valuestring, got, error)
                                    : reject(f, origin, got, error);
    if (d->kind == FIELD_LIST) {  /* linear in the list's length */
        if (!cJSON_IsArray(item)) /* an object has children too */
            return reject(f, origin, got, error);
        int n = cJSON_GetArraySize(item), i = 0;
        g_autofree double *values = g_new(double, MAX(n, 1));
        const cJSON *v;
        cJSON_ArrayForEach(v, item) values[i++] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        return set_list(plan, f, values, n, got, error);
    }
    if (d->kind == FIELD_SET && cJSON_IsArray(item)) { /* ["a", "b"]: as "a,b" */
        g_autoptr(GString) words = g_string_new(NULL);
        const cJSON *v;
        cJSON_ArrayForEach(v, item)
        {
            if (!cJSON_IsString(v) || strchr(v->valuestring, ','))
                return reject(f, origin, got, error);
            g_string_append_printf(words, "%s%s", words->len ? "," : "", v->valuestring);
        }
        return parse(f, words->str, origin, got, member(plan, f), error);
    }
    if (d->kind == FIELD_BOOL && cJSON_IsBool(item))
        *member(plan, f) = cJSON_IsTrue(item);
    else if (cJSON_IsString(item) && (d->kind == FIELD_CHOICE || d->kind == FIELD_SET || d->alias))
        return parse(f, item->valuestring, origin, got, member(plan, f), error);
    else if (d->kind == FIELD_INT && cJSON_IsNumber(item) && in_range(d, item->valuedouble))
        *member(plan, f) = (int)item->valuedouble;
    else
        return reject(f, origin, got, error);
    return TRUE;
}

/* Appends field `f` of `plan` as its flag, after a blank: "--tp 8",
 * "--sequence-parallel", "--no-sequence-parallel" or, quoted for a shell,
 * "--pipeline-model-parallel-layout 'E|(t|)*8,L'". */
static void append_flag(GString *out, const PlanSpec *plan, PlanField f)
{
    const PlanFieldInfo *d = &plan_fields[f];
    if (d->kind == FIELD_BOOL) {
        g_string_append_printf(out, " --%s%s", plan_field_get(plan, f) ? "" : "no-", d->flag);
    } else {
        g_autofree char *text = plan_field_text(plan, f);
        const char *quote = d->kind == FIELD_LAYOUT ? "'" : "";
        g_string_append_printf(out, " --%s %s%s%s", d->flag, quote, text, quote);
    }
}

/* `out` without its first blank, as a string. */
static char *flags_text(GString *out)
{
    if (out->len)
        g_string_erase(out, 0, 1);
    return g_string_free(out, FALSE);
}

int plan_field_value(const PlanSpec *plan, PlanField field)
{
    int value = plan_field_get(plan, field);
    return field == PLAN_ETP && value == 0 ? plan->tp : value;
}

gboolean plan_spec_split_unsaid(const PlanSpec *plan)
{
    static const PlanField says[] = {PLAN_LAYERS_PER_STAGE, PLAN_LAYOUT, PLAN_FIRST_STAGE_LAYERS,
                                     PLAN_LAST_STAGE_LAYERS, PLAN_EMBEDDING_AS_LAYER,
                                     PLAN_LOSS_AS_LAYER};
    for (gsize i = 0; i < G_N_ELEMENTS(says); i++)
        if (plan->origin[says[i]] || (!plan_field_is_list(says[i]) &&
                                      plan_field_get(plan, says[i]) != plan_fields[says[i]].fallback))
            return FALSE;
    const PlanList *split = &plan->layers_per_stage;
    for (int g = 1; g < split->n; g++)
        if (split->v[g] - (g == split->n - 1 ? plan->mtp_num_layers : 0) != split->v[0])
            return TRUE;
    return FALSE;
}

char *plan_spec_flags(const PlanSpec *plan)
{
    GString *out = g_string_new(NULL);
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        const PlanFieldInfo *d = &plan_fields[f];
        gboolean list = plan_field_is_list((PlanField)f);
        int value = list ? 0 : plan_field_get(plan, (PlanField)f);
        /* the shape (the table's first rows, tp .. global_batch_size) always */
        if (plan->origin[f] || f <= PLAN_GLOBAL_BATCH_SIZE || (!list && value != d->fallback))
            append_flag(out, plan, (PlanField)f);
    }
    /* an uneven split as the flag that makes it, so that Megatron-Core
     * runs the plan as plansim did */
    if (plan_spec_split_unsaid(plan)) {
        g_autofree char *layout =
            pipeline_layout_text(plan->layers_per_stage.v, plan->layers_per_stage.n,
                                 plan->mtp_num_layers);
        g_string_append_printf(out, " --%s '%s'", plan_fields[PLAN_LAYOUT].flag, layout);
    }
    return flags_text(out);
}

/* Writes `v` at `out`: one character, '0' + v, for 0 <= v < 64, else '~'
 * and six of '0' + 6 bits each (32 bits), a prefix code; returns the end. */
static char *key_int(char *out, int v)
{
    if (v >= 0 && v < 64) {
        *out++ = (char)('0' + v);
        return out;
    }
    *out++ = '~';
    for (int i = 0; i < 6; i++)
        *out++ = (char)('0' + ((guint32)v >> (6 * i) & 63));
    return out;
}

char *plan_spec_key(const PlanSpec *plan)
{
    gsize values = PLAN_N_FIELDS;
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        if (plan_field_is_list((PlanField)f))
            values += (gsize)list_member((PlanSpec *)plan, (PlanField)f)->n + 1;
    char *key = g_malloc(7 * values + 1), *at = key;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        if (!plan_field_is_list((PlanField)f)) {
            at = key_int(at, plan_field_get(plan, (PlanField)f));
            continue;
        }
        const PlanList *list = list_member((PlanSpec *)plan, (PlanField)f);
        at = key_int(at, list->n);
        at = key_int(at, list->mtp);
        for (int i = 0; i < list->n; i++)
            at = key_int(at, list->v[i]);
    }
    *at = '\0';
    return key;
}

char *plan_spec_change_flags(const PlanSpec *from, const PlanSpec *to)
{
    GString *out = g_string_new(NULL);
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        g_autofree char *was = plan_field_text(from, (PlanField)f);
        g_autofree char *now = plan_field_text(to, (PlanField)f);
        if (strcmp(was, now) != 0 && f != PLAN_LAYERS_PER_STAGE &&
            (f != PLAN_DP || from->origin[f]))
            append_flag(out, to, (PlanField)f);
    }
    return flags_text(out);
}

const char *const *plan_field_names(void)
{
    static const char *names[PLAN_N_FIELDS + 1];
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        names[f] = plan_fields[f].name;
    return names;
}

gboolean plan_spec_load(PlanSpec *plan, const char *path, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    if (!doc || !json_check_keys(doc, doc->root, "$", plan_field_names(), error))
        return FALSE;
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(doc->root, plan_fields[f].name);
        if (!item)
            continue;
        g_autofree char *origin = g_strdup_printf("%s: $.%s", path, plan_fields[f].name);
        plan->origin[f] = g_intern_string(origin);
        if (!set_from_json(plan, (PlanField)f, item, error))
            return FALSE;
    }
    return TRUE;
}

gboolean plan_field_fail(GError **error, const PlanSpec *plan, PlanField f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *expected = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *got = plan_field_text(plan, f);
    ps_error_value(error, plan_field_origin(plan, f), got, "%s", expected);
    return FALSE;
}

/* Megatron-Core's split with the first or the last stage's layers given
 * (its get_transformer_layer_offset): the other stages share the rest
 * evenly, each stage's layers evenly over its virtual_stages chunks. Into
 * `layers` (per chunk, c x pp + stage), or NULL: only checked. */
static gboolean split_uneven(const PlanSpec *plan, const ModelSpec *model, int *layers,
                             GError **error)
{
    int pp = plan->pp, vp = plan->virtual_stages;
    int first = plan->decoder_first_pipeline_num_layers;
    int last = plan->decoder_last_pipeline_num_layers;
    PlanField given = first ? PLAN_FIRST_STAGE_LAYERS : PLAN_LAST_STAGE_LAYERS;
    if (plan->account_for_embedding_in_pipeline_split || plan->account_for_loss_in_pipeline_split)
        return plan_field_fail(error, plan, given,
                               "not set with account_for_embedding_in_pipeline_split or "
                               "account_for_loss_in_pipeline_split (Megatron-Core takes one "
                               "or the other)");
    int middle_stages = pp - (first > 0) - (last > 0);
    if (pp < 2)
        return plan_field_fail(error, plan, given, "set only with pp at least 2 (pp = %d)", pp);
    long long middle = (long long)model->layers - first - last;
    if (middle < 0 || (middle_stages == 0 && middle > 0) ||
        (middle_stages > 0 && middle % middle_stages != 0))
        return plan_field_fail(error, plan, given,
                               "first and last stage layers that leave the rest of the model's "
                               "%d layers (%lld) an equal share on each of the %d other stages",
                               model->layers, middle, middle_stages);
    int per_middle = middle_stages > 0 ? (int)(middle / middle_stages) : 0;
    int stage_layers[3] = {first, per_middle, last}; /* the first, a middle and the last stage */
    static const char *const where[3] = {"first", "middle", "last"};
    for (int k = 0; k < 3; k++)
        if (stage_layers[k] % vp != 0)
            return plan_field_fail(error, plan,
                                   k == 0   ? PLAN_FIRST_STAGE_LAYERS
                                   : k == 2 ? PLAN_LAST_STAGE_LAYERS
                                            : PLAN_VIRTUAL_STAGES,
                                   "a number of layers at the %s stage (%d) divisible by "
                                   "virtual_stages %d (Megatron-Core's rule)",
                                   where[k], stage_layers[k], vp);
    for (int g = 0; layers && g < pp * vp; g++) {
        int stage = g % pp;
        int k = stage == 0 && first ? 0 : stage == pp - 1 && last ? 2 : 1;
        layers[g] = stage_layers[k] / vp;
    }
    return TRUE;
}

/* Megatron-Core's even split with the embedding and the loss counted as a
 * layer each (account_for_embedding_in_pipeline_split,
 * account_for_loss_in_pipeline_split): layers + 1 + 1 split evenly over
 * the chunks, the first chunk's one fewer for the embedding, the last
 * chunk's for the loss. Into `layers`, or NULL: only checked. */
static gboolean split_accounted(const PlanSpec *plan, const ModelSpec *model, int *layers,
                                GError **error)
{
    int embedding = plan->account_for_embedding_in_pipeline_split,
        loss = plan->account_for_loss_in_pipeline_split;
    long long chunks = (long long)plan->pp * plan->virtual_stages;
    long long counted = (long long)model->layers + embedding + loss;
    if (counted % chunks != 0)
        return plan_field_fail(error, plan, PLAN_PP,
                               "pp x virtual_stages dividing the %lld layers counted (the "
                               "model's %d, with the embedding and the loss as counted), as "
                               "Megatron-Core requires (pp x virtual_stages = %lld)",
                               counted, model->layers, chunks);
    int each = (int)(counted / chunks);
    for (long long g = 0; layers && g < chunks; g++)
        layers[g] = each - (g == 0 ? embedding : 0) - (g == chunks - 1 ? loss : 0);
    return TRUE;
}

/* As even a split as can be: the chunks that hold more are the middle
 * ones, from the first on, so that the first and the last chunk, which
 * carry the embedding and the head, hold fewer (Llama 3 405B: 126 layers
 * on 16 stages as 7 + 14 x 8 + 7); the first chunk takes one more only
 * when every other one has. Into `layers`, or NULL: only checked. */
static gboolean split_even(const PlanSpec *plan, const ModelSpec *model, int *layers,
                           GError **error)
{
    long long chunks = (long long)plan->pp * plan->virtual_stages;
    if (chunks > model->layers)
        return plan_field_fail(error, plan, PLAN_PP,
                               "pp x virtual_stages at most the model's %d layers, or the "
                               "embedding and the loss counted as layers "
                               "(--account-for-embedding-in-pipeline-split, "
                               "--account-for-loss-in-pipeline-split), or a layers_per_stage "
                               "list (pp x virtual_stages = %lld)",
                               model->layers, chunks);
    int base = (int)(model->layers / chunks), extra = (int)(model->layers % chunks);
    for (long long i = 0; layers && i < chunks; i++) {
        gboolean end = i == 0 || i == chunks - 1;
        int middle_rank = (int)i - 1; /* 0 for the second chunk */
        gboolean more = end ? (i == 0 && extra > 0 && extra == chunks - 1) : middle_rank < extra;
        layers[i] = base + (more ? 1 : 0);
    }
    return TRUE;
}

/* The layers of each model chunk when no list is given, by the plan's
 * rule: Megatron-Core's uneven first and last stages, its embedding and
 * loss counted as layers (with pp > 1, as Megatron-Core counts them), or
 * as even a split as can be. Into `layers`, or NULL: only checked. */
static gboolean split_layers(const PlanSpec *plan, const ModelSpec *model, int *layers,
                             GError **error)
{
    if (plan->decoder_first_pipeline_num_layers || plan->decoder_last_pipeline_num_layers)
        return split_uneven(plan, model, layers, error);
    if (plan->pp > 1 &&
        (plan->account_for_embedding_in_pipeline_split || plan->account_for_loss_in_pipeline_split))
        return split_accounted(plan, model, layers, error);
    return split_even(plan, model, layers, error);
}

/* A pipeline layout against the rest of the plan and the model, as
 * Megatron-Core's PipelineParallelLayerLayout checks it: no other split
 * given beside it, pp x v chunks (v, virtual_stages, is its chunks / pp:
 * the value given, if any), the model's layers and the plan's MTP layers
 * (validate_layer_layout). */
static gboolean check_layout(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    const PlanList *layout = &plan->pipeline_model_parallel_layout;
    static const PlanField splits[] = {PLAN_LAYERS_PER_STAGE, PLAN_FIRST_STAGE_LAYERS,
                                       PLAN_LAST_STAGE_LAYERS, PLAN_EMBEDDING_AS_LAYER,
                                       PLAN_LOSS_AS_LAYER};
    for (gsize i = 0; i < G_N_ELEMENTS(splits); i++) {
        PlanField f = splits[i];
        gboolean set = plan_field_is_list(f) ? plan->layers_per_stage.v != NULL
                                             : plan_field_get(plan, f) != plan_fields[f].fallback;
        if (plan->origin[f] && set)
            return plan_field_fail(error, plan, f,
                                   "not set with pipeline_model_parallel_layout, which places "
                                   "every layer");
    }
    if (layout->n % plan->pp != 0)
        return plan_field_fail(error, plan, PLAN_LAYOUT,
                               "a number of chunks divisible by pp = %d (Megatron-Core's rule; "
                               "it has %d)",
                               plan->pp, layout->n);
    int vp = layout->n / plan->pp;
    const char *vp_origin = plan->origin[PLAN_VIRTUAL_STAGES];
    if (vp_origin && vp_origin != plan->origin[PLAN_LAYOUT] && plan->virtual_stages != vp)
        return plan_field_fail(error, plan, PLAN_VIRTUAL_STAGES,
                               "the layout's chunks over pp, %d / %d = %d", layout->n, plan->pp,
                               vp);
    long long layers = -layout->mtp;
    for (int i = 0; i < layout->n; i++)
        layers += layout->v[i];
    if (layers != model->layers)
        return plan_field_fail(error, plan, PLAN_LAYOUT,
                               "the model's %d transformer layers t (Megatron-Core's rule; it has "
                               "%lld)",
                               model->layers, layers);
    if (layout->mtp != plan->mtp_num_layers)
        return plan_field_fail(error, plan, PLAN_LAYOUT,
                               "mtp_num_layers = %d multi-token-prediction layers m (Megatron-Core's "
                               "rule; it has %d)",
                               plan->mtp_num_layers, layout->mtp);
    return TRUE;
}

/* Where the plan's MTP layers, the last mtp_num_layers of its chunks'
 * layers, sit: in one chunk (Megatron-Core's rule), the last of its stage
 * (its rule: "MTP should be always in the last virtual pipeline stage of
 * that rank"); for a tied model, on a stage that holds the word
 * embedding, the first or the last (plansim's: its one copy on a pipeline
 * is the last stage's, Megatron-Core's embedding group the first's and the
 * last's). */
static gboolean check_mtp_chunk(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    int mtp = plan->mtp_num_layers, pp = plan->pp;
    if (mtp == 0)
        return TRUE;
    PlanField f = plan->pipeline_model_parallel_layout.v ? PLAN_LAYOUT : PLAN_LAYERS_PER_STAGE;
    const PlanList *l = &plan->layers_per_stage;
    long long first = 0;
    int g = 0;
    while (first + l->v[g] <= model->layers)
        first += l->v[g++];
    if (first + l->v[g] < (long long)model->layers + mtp)
        return plan_field_fail(error, plan, f,
                               "the %d multi-token-prediction layers, the last, in one chunk "
                               "(Megatron-Core's rule)",
                               mtp);
    if (g / pp != plan->virtual_stages - 1)
        return plan_field_fail(error, plan, f,
                               "the multi-token-prediction layers in the last chunk of their "
                               "stage (Megatron-Core's rule; chunk %d is stage %d's chunk %d of %d)",
                               g, g % pp, g / pp + 1, plan->virtual_stages);
    if (model->tied_embeddings && g % pp != 0 && g % pp != pp - 1)
        return plan_field_fail(error, plan, f,
                               "a tied model's multi-token-prediction layers on the first or the "
                               "last stage, which hold its word embedding (they are on stage %d)",
                               g % pp);
    return TRUE;
}

gboolean plan_spec_check_chunks(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    if (plan->pipeline_model_parallel_layout.v)
        return check_layout(plan, model, error);
    return plan->layers_per_stage.v || split_layers(plan, model, NULL, error);
}

/* A layout's split: its chunks' layers, virtual_stages its chunks / pp
 * and, where more than one chunk a stage and no schedule is given, the
 * interleaved schedule, as Megatron-Core runs it; each from the layout. */
static gboolean resolve_layout(PlanSpec *plan, const ModelSpec *model, GError **error)
{
    const PlanList *layout = &plan->pipeline_model_parallel_layout;
    if (!layout->v)
        return TRUE;
    if (!check_layout(plan, model, error))
        return FALSE;
    const char *origin = plan_field_origin(plan, PLAN_LAYOUT);
    plan_field_put(plan, PLAN_VIRTUAL_STAGES, layout->n / plan->pp, origin);
    if (plan->virtual_stages > 1 && !plan->origin[PLAN_SCHEDULE])
        plan_field_put(plan, PLAN_SCHEDULE, SCHEDULE_INTERLEAVED, origin);
    if (!plan->layers_per_stage.v)
        plan->layers_per_stage =
            (PlanList){.v = g_memdup2(layout->v, sizeof(int) * (gsize)layout->n), .n = layout->n};
    return TRUE;
}

static gboolean resolve_layers(PlanSpec *plan, const ModelSpec *model, GError **error)
{
    long long chunks = (long long)plan->pp * plan->virtual_stages;
    if (plan->layers_per_stage.v) {
        long long sum = 0;
        for (int i = 0; i < plan->layers_per_stage.n; i++)
            sum += plan->layers_per_stage.v[i];
        if (plan->layers_per_stage.n != chunks)
            return plan_field_fail(error, plan, PLAN_LAYERS_PER_STAGE,
                                   "pp x virtual_stages = %lld layer counts", chunks);
        if (sum != (long long)model->layers + plan->mtp_num_layers)
            return plan_field_fail(error, plan, PLAN_LAYERS_PER_STAGE,
                                   "layer counts that add up to the model's %d layers%s",
                                   model->layers,
                                   plan->mtp_num_layers ? " and the plan's multi-token-prediction "
                                                          "layers (mtp_num_layers)"
                                                        : "");
        return check_mtp_chunk(plan, model, error);
    }
    if (!split_layers(plan, model, NULL, error))
        return FALSE;
    plan->layers_per_stage.n = (int)chunks;
    plan->layers_per_stage.v = g_new(int, (gsize)chunks);
    if (!split_layers(plan, model, plan->layers_per_stage.v, error))
        return FALSE;
    /* Megatron-Core's default: the MTP layers on the last stage's last chunk */
    plan->layers_per_stage.v[chunks - 1] += plan->mtp_num_layers;
    return TRUE;
}

/* Fails on `field` for a plan of `product` GPUs (`sizes`: "tp x pp x dp
 * = 2 x 2 x 3") on a cluster of fewer, suggesting the nodes that would
 * hold it. */
static gboolean too_many_gpus(GError **error, const PlanSpec *plan, PlanField field,
                              const char *sizes, long long product, const ClusterSpec *cluster)
{
    long long per_node = cluster->gpus_per_node, nodes = (product + per_node - 1) / per_node;
    g_autofree char *hint =
        nodes * per_node <= CLUSTER_MAX_GPUS
            ? g_strdup_printf(" (try --nodes %lld: %lld GPUs)", nodes, nodes * per_node)
            : g_strdup("");
    return plan_field_fail(error, plan, field, "%s = %lld at most the cluster's %d GPUs%s", sizes,
                           product, cluster_spec_gpus(cluster), hint);
}

char *plan_spec_shape(const PlanSpec *plan, gboolean with_dp)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, "tp %d", plan->tp);
    if (plan->cp > 1)
        g_string_append_printf(text, " x cp %d", plan->cp);
    g_string_append_printf(text, " x pp %d", plan->pp);
    if (with_dp) {
        g_string_append_printf(text, " x dp %d", plan->dp);
        int etp = plan_field_value(plan, PLAN_ETP);
        if (plan->ep > 1 || etp != plan->tp)
            g_string_append_printf(text, " (ep %d", plan->ep);
        if (etp != plan->tp)
            g_string_append_printf(text, ", etp %d", etp);
        if (plan->ep > 1 || etp != plan->tp)
            g_string_append_c(text, ')');
    }
    return g_string_free(text, FALSE);
}

gboolean plan_spec_derive_dp(PlanSpec *plan, long long gpus, const ClusterSpec *cluster,
                             GError **error)
{
    long long model_ranks =
        (long long)plan->tp * plan->cp * plan->pp; /* one data-parallel replica */
    if (model_ranks > gpus) {
        g_autofree char *sizes = plan_spec_shape(plan, FALSE);
        return too_many_gpus(error, plan, plan->cp > 1 ? PLAN_CP : PLAN_PP, sizes, model_ranks,
                             cluster);
    }
    /* dp left out is derived here, and only here, as Megatron-LM derives it
     * from the world size: the GPUs over one replica's, which must divide
     * them (the field blamed is the first of tp, cp and pp that does not
     * divide them, else pp) */
    if (plan->dp == 0 && gpus % model_ranks != 0) {
        PlanField field = gpus % plan->tp != 0                           ? PLAN_TP
                          : gpus % ((long long)plan->tp * plan->cp) != 0 ? PLAN_CP
                                                                         : PLAN_PP;
        return plan_field_fail(error, plan, field,
                               "a size for which %s divides the %s %lld GPUs (dp is the "
                               "GPUs over them)",
                               plan->cp > 1 ? "tp x cp x pp" : "tp x pp",
                               gpus == cluster_spec_gpus(cluster) ? "cluster's" : "sweep's", gpus);
    }
    if (plan->dp == 0)
        plan->dp = (int)(gpus / model_ranks);
    if (model_ranks * plan->dp > gpus) {
        g_autofree char *sizes = plan_spec_shape(plan, TRUE);
        return too_many_gpus(error, plan, PLAN_DP, sizes, model_ranks * plan->dp, cluster);
    }
    return TRUE;
}

gboolean plan_spec_check_batch(const PlanSpec *plan, GError **error)
{
    long long per_step = (long long)plan->micro_batch_size * plan->dp;
    if (plan->global_batch_size == 0 || plan->global_batch_size % per_step == 0)
        return TRUE;
    return plan_field_fail(error, plan, PLAN_GLOBAL_BATCH_SIZE,
                           "a multiple of micro_batch_size x dp = %d x %d = %lld",
                           plan->micro_batch_size, plan->dp, per_step);
}

/* Fails for a key the value of `plan`'s `field` needs and the cluster
 * lacks (`value` 0), naming the file, the key, the field and its origin. */
static gboolean need(const ClusterSpec *c, const PlanSpec *plan, PlanField field, double value,
                     const char *key, const char *what, GError **error)
{
    if (value > 0)
        return TRUE;
    g_autofree char *where = g_strdup_printf("%s: %s", c->path ? c->path : c->name, key);
    g_autofree char *text = plan_field_text(plan, field);
    ps_error_value(error, where, "none", "%s for %s %s (%s)", what, plan_fields[field].name, text,
                   plan_field_origin(plan, field));
    return FALSE;
}

gboolean plan_spec_check_cluster(const PlanSpec *plan, const ClusterSpec *c, GError **error)
{
    gboolean offload = plan->offload != OFFLOAD_NONE;
    const char *peak_key, *peak_what;
    double peak = gpu_peak(&c->gpu, plan->dtype, &peak_key, &peak_what);
    g_autofree char *peak_path = g_strconcat("$.gpu.", peak_key, NULL);
    return need(c, plan, PLAN_DTYPE, peak, peak_path, peak_what, error) &&
           (!offload || need(c, plan, PLAN_OFFLOAD, c->gpu.pcie_Bps, "$.gpu.pcie_GBps",
                             "the GPU's PCIe bandwidth", error)) &&
           (!offload || need(c, plan, PLAN_OFFLOAD, c->host_memory_bytes, "$.host_memory_GiB",
                             "the host memory per node", error)) &&
           (plan->offload != OFFLOAD_OPTIMIZER ||
            need(c, plan, PLAN_OFFLOAD, c->cpu_adam_params_s, "$.cpu_adam_params_per_s",
                 "the CPU Adam throughput per node", error)) &&
           (plan->collective_algorithm != ALGORITHM_NVLS ||
            need(c, plan, PLAN_COLLECTIVE_ALGORITHM, c->nvls, "$.intra_node.nvls",
                 "NVLink SHARP in the node's switches", error));
}

gboolean plan_spec_resolve(PlanSpec *plan, const ModelSpec *model, const ClusterSpec *cluster,
                           GError **error)
{
    if (!plan_spec_derive_dp(plan, cluster_spec_gpus(cluster), cluster, error))
        return FALSE;
    long long per_step = (long long)plan->micro_batch_size * plan->dp;
    if (plan->global_batch_size == 0) {
        if (per_step > G_MAXINT)
            return plan_field_fail(error, plan, PLAN_MICRO_BATCH_SIZE,
                                   "micro_batch_size x dp <= %d sequences", G_MAXINT);
        plan->global_batch_size = (int)per_step;
    }
    /* a V is two model chunks a stage (DualPipeV's), unless said otherwise */
    if (schedule_v_shaped[plan->schedule] && !plan->origin[PLAN_VIRTUAL_STAGES] &&
        !plan->pipeline_model_parallel_layout.v)
        plan_field_put(plan, PLAN_VIRTUAL_STAGES, 2, plan_field_origin(plan, PLAN_SCHEDULE));
    return plan_spec_check_batch(plan, error) && plan_spec_check_cluster(plan, cluster, error) &&
           resolve_layout(plan, model, error) && resolve_layers(plan, model, error);
}

long long plan_spec_gpus(const PlanSpec *plan)
{
    return (long long)plan->tp * plan->cp * plan->pp * plan->dp;
}

int plan_spec_micro_batches(const PlanSpec *plan)
{
    g_assert(plan->dp > 0 && plan->global_batch_size > 0);
    return (int)(plan->global_batch_size / ((long long)plan->micro_batch_size * plan->dp));
}

GpuSpec plan_spec_run_gpu(const PlanSpec *plan, const GpuSpec *gpu)
{
    GpuSpec g = *gpu;
    if (plan->cuda_graphs)
        g.launch_s = 0;
    return g;
}
