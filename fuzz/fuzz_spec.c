/* fuzz_spec.c: a libFuzzer harness over plansim's spec loaders.
 *
 * `make fuzz` builds it once per target, FUZZ_TARGET naming the loader:
 *   model    model_spec_load, a plansim model file (or any model file)
 *   hf       model_spec_load on inputs holding "num_hidden_layers", the key
 *            that makes a Hugging Face config.json
 *   cluster  cluster_spec_load
 *   plan     plan_spec_load, then plan_spec_resolve against a small model
 *            and cluster
 *   grid     plan_grid_load, then plan_grid_size
 * Each input is written to a memfd and handed to the real loader by its
 * /proc/self/fd path, as a file named on the command line would be; all
 * the loader returns is freed, so that a leak is a finding as much as a
 * crash or a sanitizer report is. */
#define _GNU_SOURCE /* memfd_create, memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spec/spec.h"
#include "base/error.h"

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET must name the loader: model, hf, cluster, plan or grid"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int input_fd = -1;
static char input_path[64];
static ModelSpec *model;     /* the plan target's */
static ClusterSpec *cluster; /* the plan target's */

/* tiny-gpt on two 8-GPU nodes: a plan small enough to resolve quickly */
static const char model_json[] =
    "{\"name\": \"tiny-gpt\", \"layers\": 4, \"hidden_size\": 256, \"attention_heads\": 8,"
    " \"kv_heads\": 8, \"ffn_hidden_size\": 1024, \"vocab_size\": 1024, \"seq_length\": 128}";
static const char cluster_json[] =
    "{\"name\": \"small\", \"nodes\": 2, \"gpus_per_node\": 8,"
    " \"gpu\": {\"peak_tflops\": 312, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2039},"
    " \"intra_node\": {\"bandwidth_GBps\": 300}, \"inter_node\": {\"bandwidth_GBps\": 25}}";

/* Makes the memfd hold exactly `size` bytes of `data`. */
static void set_input(const void *data, size_t size)
{
    if (ftruncate(input_fd, 0) != 0 || (size && pwrite(input_fd, data, size, 0) != (ssize_t)size))
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    input_fd = memfd_create("plansim-fuzz-input", 0);
    if (input_fd < 0)
        abort();
    g_snprintf(input_path, sizeof input_path, "/proc/self/fd/%d", input_fd);
    if (strcmp(FUZZ_TARGET, "plan") == 0) {
        set_input(model_json, strlen(model_json));
        model = model_spec_load(input_path, NULL);
        set_input(cluster_json, strlen(cluster_json));
        cluster = cluster_spec_load(input_path, 0, NULL);
        if (!model || !cluster)
            abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char hf_key[] = "num_hidden_layers";
    const char *target = FUZZ_TARGET;
    GError *error = NULL;
    if (strcmp(target, "hf") == 0 && !memmem(data, size, hf_key, sizeof hf_key - 1))
        return -1; /* not a Hugging Face config: keep it out of the corpus */
    set_input(data, size);
    if (strcmp(target, "model") == 0 || strcmp(target, "hf") == 0) {
        model_spec_free(model_spec_load(input_path, &error));
    } else if (strcmp(target, "cluster") == 0) {
        cluster_spec_free(cluster_spec_load(input_path, 0, &error));
    } else if (strcmp(target, "plan") == 0) {
        PlanSpec *plan = plan_spec_new();
        if (plan_spec_load(plan, input_path, &error))
            plan_spec_resolve(plan, model, cluster, &error);
        plan_spec_free(plan);
    } else if (strcmp(target, "grid") == 0) {
        PlanGrid *grid = plan_grid_new();
        if (plan_grid_load(grid, input_path, &error))
            (void)plan_grid_size(grid);
        plan_grid_free(grid);
    } else {
        abort();
    }
    /* bad input is an input error with a message, never anything else */
    if (error && (!g_error_matches(error, PS_ERROR, PS_ERROR_INPUT) || !error->message[0]))
        abort();
    g_clear_error(&error);
    return 0;
}
