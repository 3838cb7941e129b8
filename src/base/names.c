/* names.c: the name tables of the shared enumerations, and lookups. */
#include "base/names.h"

#include <string.h>

const char *const schedule_names[] = {
#define SCHEDULE(ID, name, row) name,
#include "base/schedules.def"
#undef SCHEDULE
    NULL};
const gboolean schedule_v_shaped[] = {
#define SCHEDULE(ID, name, row) FALSE,
#define SCHEDULE_V(ID, name, row) TRUE,
#include "base/schedules.def"
#undef SCHEDULE_V
#undef SCHEDULE
};
const char *const recompute_names[] = {"none", "selective", "full", NULL};
const char *const recompute_module_names[] = {"core_attn", "layernorm", "mla_up_proj", "moe_act",
                                              NULL};
const char *const attention_names[] = {"flash", "standard", NULL};
const char *const ce_fusion_names[] = {"none", "native", "te", NULL};
const char *const dtype_names[] = {
#define DTYPE(ID, name, ...) name,
#include "base/dtypes.def"
#undef DTYPE
    NULL};
const char *const fp8_recipe_names[] = {"delayed", "tensorwise", NULL};
const char *const offload_names[] = {"none", "optimizer", "activations", NULL};
const char *const grad_accum_dtype_names[] = {"fp32", "bf16", NULL};
const char *const optimizer_states_names[] = {"fp32", "remainders", "bf16", "bf16_moments", NULL};
const char *const rank_order_names[] = {"tp-dp-pp", "tp-pp-dp", "dp-tp-pp", "dp-pp-tp",
                                        "pp-tp-dp", "pp-dp-tp", "cp-tp-dp-pp", "tp-dp-cp-pp",
                                        NULL};
const char *const cp_algorithm_names[] = {"ring", "all_to_all", NULL};
const char *const moe_dispatcher_names[] = {"all_to_all", "all_gather", "flex", NULL};
const char *const collective_algorithm_names[] = {"auto",
#define ALGORITHM(ID, name, forcible) #name,
#include "base/algorithms.def"
#undef ALGORITHM
                                                  NULL};
const char *const collective_algorithm_choices[] = {"auto",
#define ALGORITHM(ID, name, forcible) forcible ? #name : NULL,
#include "base/algorithms.def"
#undef ALGORITHM
                                                    NULL};

const char *const collective_names[] = {"all_reduce", "all_gather", "reduce_scatter",
                                        "all_to_all", "send_recv",  "ring_exchange", NULL};

const char *collective_name(CollOp op)
{
    g_assert(op >= 0 && op < COLL_N_OPS);
    return collective_names[op];
}

const char *collective_algorithm_name(CollAlgorithm a)
{
    g_assert(a >= 0 && a < ALGORITHMS);
    return collective_algorithm_names[a];
}

typedef struct {
    double bytes, block, scale_bytes;
    gboolean amax_pass;
} DtypeRow;

static const DtypeRow *dtype_row(Dtype d)
{
    static const DtypeRow rows[] = {
#define DTYPE(ID, name, bytes_, block_, scale_, amax_, peak)                                       \
    [DTYPE_##ID] = {.bytes = bytes_, .block = block_, .scale_bytes = scale_, .amax_pass = amax_},
#include "base/dtypes.def"
#undef DTYPE
    };
    g_assert(d >= 0 && d < DTYPES);
    return &rows[d];
}

double dtype_bytes(Dtype d)
{
    return dtype_row(d)->bytes;
}

double dtype_scale_bytes(Dtype d)
{
    const DtypeRow *row = dtype_row(d);
    return row->block > 0 ? row->scale_bytes / row->block : 0;
}

gboolean dtype_amax_pass(Dtype d)
{
    return dtype_row(d)->amax_pass;
}

int names_find(const char *const *table, const char *name)
{
    for (int i = 0; name && table[i]; i++)
        if (strcmp(table[i], name) == 0)
            return i;
    return -1;
}

char *names_list(const char *const *table, gboolean quoted)
{
    GString *out = g_string_new(NULL);
    const char *q = quoted ? "\"" : "";
    for (int i = 0; table[i]; i++)
        g_string_append_printf(out, "%s%s%s%s",
                               i == 0                   ? ""
                               : quoted || table[i + 1] ? ", "
                                                        : " or ",
                               q, table[i], q);
    return g_string_free(out, FALSE);
}
