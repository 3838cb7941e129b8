/* fuzz_inputs.c: a libFuzzer harness over every parser of a user's file or
 * flag.
 *
 * `make fuzz` builds it once per target, FUZZ_TARGET naming the parser:
 *   model    model_spec_load, a plansim model file (or any model file)
 *   hf       model_spec_load on inputs holding "num_hidden_layers", the key
 *            that makes a Hugging Face config.json
 *   cluster  cluster_spec_load
 *   plan     plan_spec_load, then plan_spec_resolve and strategy_check
 *            against a small dense model and cluster
 *   planmoe  the same against a small mixture of experts, so that ep and
 *            the expert fields are resolved too
 *   grid     plan_grid_load, then plan_grid_size
 *   nccl     calib_nccl_load, nccl-tests output (the file's name says
 *            all_reduce, as a user's would)
 *   gemm     calib_gemm_load, then calib_gemm_check and, for rows that
 *            pass, calib_run's GEMM fit against a small GPU
 *   runs     calib_runs_load, measured runs (every model cell names the
 *            small dense model), then calib_runs_check against the small
 *            cluster for one parameter
 *   megatron megatron_line_read on the input as a launch line's text
 *            (as --megatron-args gives it); its model when it gives one
 *            (megatron_line_model), else the small dense one, checked
 *            against the line; the line applied to a plan, resolved on the
 *            small cluster, checked, and written back as Megatron-LM and
 *            Megatron-Bridge arguments
 *   whatif   whatif_parse on the input's lines, each a flag's value by its
 *            first character: g --slow-gpu, l --slow-link, j --jitter,
 *            s --seed (the rest of the line); then whatif_check on the small
 *            cluster; and runplan_parse_every on each line starting with c
 *            (--checkpoint-every)
 * A file's input is handed to the real loader as the input file
 * (fuzz_common.h; through a symbolic link with the file name the nccl
 * reader needs); all the parser returns is freed, so that a leak is a
 * finding as much as a crash or a sanitizer report is. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"

#include "app/calibrate.h"
#include "app/calibruns.h"
#include "app/whatif.h"
#include "metrics/runplan.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"
#include "spec/grid.h"
#include "spec/megatron.h"
#include "strategy/strategy.h"
#include "base/error.h"

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET must name the parser (fuzz_inputs.c's header lists them)"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *nccl_path;      /* a link named x_all_reduce.txt to the input file */
static char *model_path;     /* the runs target's model file */
static ModelSpec *model;     /* the plan targets' */
static ClusterSpec *cluster; /* the plan, gemm and whatif targets' */

/* tiny-gpt on two 8-GPU nodes: a plan small enough to resolve quickly */
static const char model_json[] =
    "{\"name\": \"tiny-gpt\", \"layers\": 4, \"hidden_size\": 256, \"attention_heads\": 8,"
    " \"kv_heads\": 8, \"ffn_hidden_size\": 1024, \"vocab_size\": 1024, \"seq_length\": 128}";
/* the same with 8 experts of which each token takes 2, after a dense layer */
static const char moe_json[] =
    "{\"name\": \"tiny-moe\", \"layers\": 4, \"hidden_size\": 256, \"attention_heads\": 8,"
    " \"kv_heads\": 8, \"ffn_hidden_size\": 1024, \"vocab_size\": 1024, \"seq_length\": 128,"
    " \"experts\": 8, \"experts_per_token\": 2, \"moe_ffn_hidden_size\": 512,"
    " \"first_dense_layers\": 1}";
static const char cluster_json[] =
    "{\"name\": \"small\", \"nodes\": 2, \"gpus_per_node\": 8,"
    " \"gpu\": {\"peak_tflops\": 312, \"peak_fp8_tflops\": 624, \"memory_GiB\": 80,"
    " \"memory_bandwidth_GBps\": 2039, \"sm_count\": 108},"
    " \"intra_node\": {\"bandwidth_GBps\": 300}, \"inter_node\": {\"bandwidth_GBps\": 25}}";

static gboolean is(const char *target)
{
    return strcmp(FUZZ_TARGET, target) == 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (is("plan") || is("planmoe") || is("megatron")) {
        const char *json = is("planmoe") ? moe_json : model_json;
        if (!(model = model_spec_load(fuzz_file_set(json, strlen(json)), NULL)))
            abort();
    }
    if (is("runs")) {
        char *dir = g_dir_make_tmp("plansim-fuzz-XXXXXX", NULL);
        model_path = dir ? g_build_filename(dir, "model.json", NULL) : NULL;
        if (!model_path || !g_file_set_contents(model_path, model_json, -1, NULL))
            abort();
        g_free(dir);
    }
    if (is("plan") || is("planmoe") || is("gemm") || is("whatif") || is("runs") ||
        is("megatron")) {
        if (!(cluster = cluster_spec_load(fuzz_file_set(cluster_json, strlen(cluster_json)), 0,
                                          NULL)))
            abort();
    }
    if (is("nccl")) {
        char *dir = g_dir_make_tmp("plansim-fuzz-XXXXXX", NULL);
        nccl_path = dir ? g_build_filename(dir, "x_all_reduce.txt", NULL) : NULL;
        if (!nccl_path || symlink(fuzz_file_path(), nccl_path) != 0)
            abort();
        g_free(dir);
    }
    return 0;
}

static void fuzz_plan(const char *path, GError **error)
{
    PlanSpec *plan = plan_spec_new();
    if (plan_spec_load(plan, path, error) && plan_spec_resolve(plan, model, cluster, error))
        strategy_check(plan, model, error);
    plan_spec_free(plan);
}

static void fuzz_megatron(const uint8_t *data, size_t size, GError **error)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    if (text[0] == '@')
        return; /* a file's name: the files are the other targets' */
    MegatronLine *line = megatron_line_read(text, error);
    if (!line)
        return;
    ModelSpec *own = megatron_line_has_model(line) ? megatron_line_model(line, "fuzz", error)
                                                   : NULL;
    const ModelSpec *m = own ? own : model;
    PlanSpec *plan = plan_spec_new();
    if ((own || (!*error && megatron_line_check_model(line, m, "--model", error))) &&
        megatron_line_apply(line, plan, m, error) && strategy_resolve(plan, m, cluster, error)) {
        for (int style = MEGATRON_LM; style <= MEGATRON_BRIDGE; style++) {
            char *unsaid = NULL;
            g_free(megatron_plan_text(plan, m, (MegatronStyle)style, &unsaid));
            g_free(unsaid);
        }
    }
    plan_spec_free(plan);
    model_spec_free(own);
    megatron_line_free(line);
}

static void fuzz_gemm(const char *path, GError **error)
{
    CalibGemm *gemm = calib_gemm_load(path, error);
    if (gemm && calib_gemm_check(&cluster->gpu, gemm, error))
        calib_free(calib_run(cluster, NULL, 0, gemm));
    calib_gemm_free(gemm);
}

/* Every run's model: the small dense one. */
static char *runs_model(const char *cell, GError **error)
{
    (void)cell;
    (void)error;
    return g_strdup(model_path);
}

static void fuzz_runs(const char *path, GError **error)
{
    CalibRuns *runs = calib_runs_load(path, runs_model, error);
    if (runs)
        calib_runs_check(cluster, runs, 1, error);
    calib_runs_free(runs);
}

static void fuzz_whatif(const uint8_t *data, size_t size, GError **error)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GPtrArray *gpus = g_ptr_array_new(), *links = g_ptr_array_new();
    const char *jitter = NULL, *seed = NULL;
    for (char **l = lines; *l; l++) {
        if (**l == 'g')
            g_ptr_array_add(gpus, *l + 1);
        else if (**l == 'l')
            g_ptr_array_add(links, *l + 1);
        else if (**l == 'j')
            jitter = *l + 1;
        else if (**l == 's')
            seed = *l + 1;
        else if (**l == 'c') {
            RunChoice choice;
            runplan_choice_init(&choice);
            GError *every = NULL;
            runplan_parse_every(*l + 1, &choice, &every);
            g_clear_error(&every);
        }
    }
    g_ptr_array_add(gpus, NULL);
    g_ptr_array_add(links, NULL);
    WhatIf *w = whatif_new();
    if (whatif_parse(w, (char **)gpus->pdata, (char **)links->pdata, jitter, seed, error))
        whatif_check(w, cluster, cluster_spec_gpus(cluster), error);
    whatif_free(w);
    g_ptr_array_free(gpus, TRUE);
    g_ptr_array_free(links, TRUE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char hf_key[] = "num_hidden_layers";
    GError *error = NULL;
    if (is("hf") && !memmem(data, size, hf_key, sizeof hf_key - 1))
        return -1; /* not a Hugging Face config: keep it out of the corpus */
    const char *input_path = fuzz_file_set(data, size);
    if (is("model") || is("hf")) {
        model_spec_free(model_spec_load(input_path, &error));
    } else if (is("cluster")) {
        cluster_spec_free(cluster_spec_load(input_path, 0, &error));
    } else if (is("plan") || is("planmoe")) {
        fuzz_plan(input_path, &error);
    } else if (is("grid")) {
        PlanGrid *grid = plan_grid_new();
        if (plan_grid_load(grid, input_path, &error))
            (void)plan_grid_size(grid);
        plan_grid_free(grid);
    } else if (is("nccl")) {
        calib_nccl_free(calib_nccl_load(nccl_path, &error));
    } else if (is("gemm")) {
        fuzz_gemm(input_path, &error);
    } else if (is("whatif")) {
        fuzz_whatif(data, size, &error);
    } else if (is("megatron")) {
        fuzz_megatron(data, size, &error);
    } else if (is("runs")) {
        fuzz_runs(input_path, &error);
    } else {
        abort();
    }
    fuzz_check_error(&error, 0);
    return 0;
}
