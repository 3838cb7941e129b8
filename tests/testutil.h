/* testutil.h: what the Check suites share.
 *
 * Every tests/check_<module>.c builds one suite, suite_<module>();
 * tests/check_main.c runs them all in one program, tests/check_plansim. */
#ifndef PLANSIM_TESTS_TESTUTIL_H
#define PLANSIM_TESTS_TESTUTIL_H

#include <check.h>
#include <glib.h>

#include "app/simulate.h"
#include "engine/engine.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"

/* The suites, one per module (suites.def lists them). */
#define SUITE(name) Suite *suite_##name(void);
#include "suites.def"
#undef SUITE

/* Writes `text` to a new temporary file; returns its path (caller frees
 * and removes it with test_remove). */
char *test_write_tmp(const char *text);
void test_remove(char *path);

/* The path of a shipped file, e.g. ("topologies", "dgx-h100.json"), under
 * $top_srcdir (the test harness sets it) or the current folder. */
char *test_shipped(const char *folder, const char *file);

/* The names of the .json files of a shipped folder ("topologies"), under
 * $top_srcdir or the current folder, sorted; the array owns them. */
GPtrArray *test_shipped_files(const char *folder);

/* A shipped cluster file loaded, with `nodes` > 0 replacing its nodes;
 * fails the test on error. */
ClusterSpec *test_shipped_cluster(const char *file, int nodes);

/* A shipped model file loaded, e.g. ("models", "llama2-7b.json"); fails
 * the test on error. */
ModelSpec *test_shipped_model(const char *folder, const char *file);

/* A Llama-style model (SwiGLU, untied embeddings) by value; its name is
 * a literal, not to be freed. */
ModelSpec test_llama(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab, int seq);

/* A GPT-style model (GeLU, f = 4h, tied embeddings), built in code. */
ModelSpec *test_gpt(int layers, int hidden, int heads, int vocab, int seq);

/* test_gpt's model with SwiGLU and every layer a mixture of `experts`
 * experts of width `expert_ffn`, `k` per token. */
ModelSpec *test_moe(int layers, int hidden, int heads, int vocab, int seq, int experts, int k,
                    int expert_ffn);

/* A cluster built in code: `nodes` x `per_node` GPUs, zero kernel launch
 * cost, zero link latency, the given bandwidths in bytes/s. */
ClusterSpec *test_cluster(int nodes, int per_node, double intra_Bps, double inter_Bps);

/* Replays hand-built graph `g` on two ranks on one node, NVLink at 100
 * GB/s, no latency (the replay's network copies what it needs of the
 * cluster). */
Replay *test_replay_on_two_ranks(const Graph *g, GError **error);

/* Resolves `plan` for model and cluster, failing the test on error. */
void test_resolve(PlanSpec *plan, const ModelSpec *m, const ClusterSpec *c);

/* A simulation to set up, run and free: owns its specs and report. */
typedef struct {
    ModelSpec *model;
    ClusterSpec *cluster;
    PlanSpec *plan; /* defaults, for the test to set */
    Report rep;
} Run;

Run run_new(ModelSpec *model, ClusterSpec *cluster);
/* Resolves the plan and simulates it, failing the test on error. */
void run_simulate(Run *run);
void run_free(Run *run);

/* |a - b| <= rel * |b| */
#define ck_assert_rel(a, b, rel)                                                                   \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        ck_assert_msg(fabs(a_ - b_) <= (rel)*fabs(b_), "%s = %.17g, expected %.17g", #a, a_, b_);  \
    } while (0)

#endif
