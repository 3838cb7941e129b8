/* check_cluster_files.c: clusters that name their GPU's file and inherit
 * from a base (spec/json.c's json_doc_load_kind, spec/cluster.c).
 *
 * A GPU file named by a cluster, by path and by shipped name; a base
 * overridden key by key, nested objects merged, arrays and a named GPU
 * replaced; bases that lead back to themselves, chains too long, names of
 * no file, and errors inside a base or a GPU file, each one line naming
 * the file, the JSON path and the value; and every shipped cluster read as
 * the code read it before GPU files and bases (tests/data/clusters). */
#include <string.h>

#include <glib/gstdio.h>

#include "testutil.h"
#include "base/error.h"

/* A GPU and the links, as a cluster file's members. */
#define GPU_KEYS                                                                                   \
    "\"peak_tflops\": 100, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000, \"sm_count\": 64, " \
    "\"gemm_efficiency\": [[100, 0.5], [800, 0.9]]"
#define LINKS                                                                                      \
    "\"intra_node\": {\"bandwidth_GBps\": 300, \"latency_us\": 3}, "                               \
    "\"inter_node\": {\"bandwidth_GBps\": 25, \"latency_us\": 8}"
#define CLUSTER_KEYS "\"name\": \"base\", \"nodes\": 2, \"gpus_per_node\": 4, " LINKS

/* The most bases a chain may have: spec/json.h's JSON_MAX_BASES, as
 * docs/inputs.md gives it. */
#define MAX_BASES 8

/* A temporary folder for the files of one test. */
typedef struct {
    char *dir;
    GPtrArray *files;
} Folder;

static Folder folder_new(void)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("plansim-test-XXXXXX", &error);
    ck_assert_msg(dir, "temporary folder: %s", error ? error->message : "?");
    return (Folder){.dir = dir, .files = g_ptr_array_new_with_free_func(g_free)};
}

/* Writes `text` as `name` in the folder (a subfolder of it made as
 * needed); returns the file's path, which the folder owns. */
static const char *folder_write(Folder *f, const char *name, const char *text)
{
    char *path = g_build_filename(f->dir, name, NULL);
    g_autofree char *parent = g_path_get_dirname(path);
    ck_assert_int_eq(g_mkdir_with_parents(parent, 0700), 0);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    g_ptr_array_add(f->files, path);
    return path;
}

static void folder_free(Folder *f)
{
    for (guint i = f->files->len; i-- > 0;) {
        const char *path = f->files->pdata[i];
        g_unlink(path);
        g_autofree char *parent = g_path_get_dirname(path);
        while (strcmp(parent, f->dir) != 0 && g_rmdir(parent) == 0) {
            char *up = g_path_get_dirname(parent);
            g_free(parent);
            parent = up;
        }
    }
    g_rmdir(f->dir);
    g_ptr_array_unref(f->files);
    g_free(f->dir);
}

static ClusterSpec *load_ok(const char *path)
{
    GError *error = NULL;
    ClusterSpec *c = cluster_spec_load(path, 0, &error);
    ck_assert_msg(c, "%s: %s", path, error ? error->message : "?");
    return c;
}

/* Loading `path` fails in one line that starts with `file` and holds each
 * of `expect` (NULL-terminated). */
static void load_fails(const char *path, const char *file, const char *const *expect)
{
    GError *error = NULL;
    ClusterSpec *c = cluster_spec_load(path, 0, &error);
    ck_assert_msg(!c, "%s accepted", path);
    ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_INPUT));
    ck_assert_ptr_null(strchr(error->message, '\n'));
    g_autofree char *start = g_strconcat(file, ": ", NULL);
    ck_assert_msg(g_str_has_prefix(error->message, start), "\"%s\" does not start with %s",
                  error->message, start);
    for (const char *const *e = expect; *e; e++)
        ck_assert_msg(strstr(error->message, *e), "\"%s\" lacks \"%s\"", error->message, *e);
    g_error_free(error);
}

/* "gpu" names a GPU file: beside the cluster, in a folder of it, or a
 * shipped GPU by name, which is the GPU the shipped cluster has. */
START_TEST(gpu_file_named)
{
    Folder f = folder_new();
    folder_write(&f, "gpus/g.json", "{\"name\": \"G\", " GPU_KEYS "}");
    const char *by_path =
        folder_write(&f, "c.json", "{" CLUSTER_KEYS ", \"gpu\": \"gpus/g.json\"}");
    g_autoptr(ClusterSpec) c = load_ok(by_path);
    ck_assert_str_eq(c->gpu.name, "G");
    ck_assert_double_eq(c->gpu.peak_flops, 100e12);
    ck_assert_int_eq(c->gpu.sm_count, 64);
    ck_assert_int_eq(c->gpu.gemm.n, 2);
    /* the same GPU inline: the same cluster */
    const char *inline_gpu =
        folder_write(&f, "i.json", "{" CLUSTER_KEYS ", \"gpu\": {\"name\": \"G\", " GPU_KEYS "}}");
    g_autoptr(ClusterSpec) i = load_ok(inline_gpu);
    g_autofree char *a = cluster_spec_json(c), *b = cluster_spec_json(i);
    ck_assert_str_eq(a, b);
    /* a shipped GPU by name */
    const char *shipped = folder_write(&f, "s.json", "{" CLUSTER_KEYS ", \"gpu\": \"h100-sxm\"}");
    g_autoptr(ClusterSpec) s = load_ok(shipped);
    g_autoptr(ClusterSpec) h100 = test_shipped_cluster("dgx-h100.json", 0);
    ck_assert_str_eq(s->gpu.name, h100->gpu.name);
    ck_assert_int_eq(memcmp(&s->gpu.peak_flops, &h100->gpu.peak_flops,
                            sizeof s->gpu - G_STRUCT_OFFSET(GpuSpec, peak_flops)),
                     0);
    folder_free(&f);
}
END_TEST

/* A base overridden: a scalar replaced, a nested object merged key by key
 * (the GPU's memory replaced, its peak kept; intra_node's bandwidth
 * replaced, its latency kept), an array replaced whole, the rest
 * inherited; a named GPU, or a GPU object with a base of its own, replaces
 * the base's GPU whole (its sm_count gone). */
START_TEST(base_overridden_and_merged)
{
    Folder f = folder_new();
    folder_write(&f, "base.json", "{" CLUSTER_KEYS ", \"host_memory_GiB\": 512, "
                                  "\"gpu\": {\"name\": \"G\", " GPU_KEYS "}}");
    const char *derived = folder_write(
        &f, "sub/derived.json",
        "{\"base\": \"../base.json\", \"name\": \"derived\", \"nodes\": 3, "
        "\"gpu\": {\"memory_GiB\": 40, \"gemm_efficiency\": [[200, 0.7]]}, "
        "\"intra_node\": {\"bandwidth_GBps\": 900}}");
    g_autoptr(ClusterSpec) d = load_ok(derived);
    ck_assert_str_eq(d->name, "derived");
    ck_assert_int_eq(d->nodes, 3);
    ck_assert_int_eq(d->gpus_per_node, 4);
    ck_assert_double_eq(d->host_memory_bytes, 512.0 * 1073741824.0);
    ck_assert_str_eq(d->gpu.name, "G");
    ck_assert_double_eq(d->gpu.memory_bytes, 40.0 * 1073741824.0);
    ck_assert_double_eq(d->gpu.peak_flops, 100e12);
    ck_assert_int_eq(d->gpu.sm_count, 64);
    ck_assert_int_eq(d->gpu.gemm.n, 1);
    ck_assert_double_eq(d->gpu.gemm.x[0], 200);
    ck_assert_double_eq(d->intra.bandwidth_Bps, 900e9);
    ck_assert_double_eq(d->intra.latency_s, 3e-6);
    ck_assert_double_eq(d->inter.bandwidth_Bps, 25e9);
    /* a base of a base: the chain merges from the far end */
    const char *again =
        folder_write(&f, "again.json", "{\"base\": \"sub/derived.json\", \"nodes\": 5}");
    g_autoptr(ClusterSpec) a = load_ok(again);
    ck_assert_int_eq(a->nodes, 5);
    ck_assert_double_eq(a->gpu.memory_bytes, 40.0 * 1073741824.0);
    ck_assert_double_eq(a->intra.bandwidth_Bps, 900e9);
    /* a GPU named anew replaces the base's whole */
    folder_write(&f, "small.json",
                 "{\"name\": \"S\", \"peak_tflops\": 10, \"memory_GiB\": 8, "
                 "\"memory_bandwidth_GBps\": 500}");
    const char *named =
        folder_write(&f, "named.json", "{\"base\": \"base.json\", \"gpu\": \"small.json\"}");
    const char *based = folder_write(
        &f, "based.json",
        "{\"base\": \"base.json\", \"gpu\": {\"base\": \"small.json\", \"memory_GiB\": 16}}");
    g_autoptr(ClusterSpec) n = load_ok(named);
    g_autoptr(ClusterSpec) b = load_ok(based);
    ck_assert_str_eq(n->gpu.name, "S");
    ck_assert_int_eq(n->gpu.sm_count, 0);
    ck_assert_int_eq(n->gpu.gemm.n, 0);
    ck_assert_double_eq(b->gpu.memory_bytes, 16.0 * 1073741824.0);
    ck_assert_double_eq(b->gpu.peak_flops, 10e12);
    ck_assert_int_eq(b->gpu.sm_count, 0);
    ck_assert_double_eq(n->host_memory_bytes, 512.0 * 1073741824.0);
    folder_free(&f);
}
END_TEST

/* A file that leads back to itself, directly or through another, is
 * refused naming the file whose base closes the circle, the chain and the
 * value. */
START_TEST(cycle_refused)
{
    Folder f = folder_new();
    const char *a = folder_write(&f, "a.json", "{\"base\": \"b.json\", \"name\": \"a\"}");
    const char *b = folder_write(&f, "b.json", "{\"base\": \"a.json\"}");
    load_fails(a, b,
               (const char *const[]){"$.base", "expected a file not already in its chain",
                                     "got \"a.json\"", NULL});
    const char *self = folder_write(&f, "self.json", "{\"base\": \"self.json\"}");
    load_fails(self, self, (const char *const[]){"$.base", "got \"self.json\"", NULL});
    /* a GPU file whose base is itself */
    const char *gpu = folder_write(&f, "gpu.json", "{\"base\": \"gpu.json\"}");
    const char *c = folder_write(&f, "c.json", "{" CLUSTER_KEYS ", \"gpu\": \"gpu.json\"}");
    load_fails(c, gpu, (const char *const[]){"$.base", "not already in its chain", NULL});
    folder_free(&f);
}
END_TEST

/* A chain of MAX_BASES bases loads; one more is refused. */
START_TEST(depth_limited)
{
    Folder f = folder_new();
    const char *last = NULL, *top = NULL;
    for (int i = MAX_BASES + 1; i >= 0; i--) {
        g_autofree char *name = g_strdup_printf("x%d.json", i);
        g_autofree char *text =
            i == MAX_BASES + 1
                ? g_strdup("{" CLUSTER_KEYS ", \"gpu\": {" GPU_KEYS "}}")
                : g_strdup_printf("{\"base\": \"x%d.json\", \"nodes\": %d}", i + 1, i + 1);
        top = folder_write(&f, name, text);
        last = i == MAX_BASES ? top : last;
    }
    g_autofree char *one = g_build_filename(f.dir, "x1.json", NULL);
    g_autoptr(ClusterSpec) c = load_ok(one); /* x1's 8 bases: x2 .. x9 */
    ck_assert_int_eq(c->nodes, 2);
    g_autofree char *limit = g_strdup_printf("expected at most %d bases in a chain", MAX_BASES);
    load_fails(top, last, (const char *const[]){"$.base", limit, "got \"x9.json\"", NULL});
    folder_free(&f);
}
END_TEST

/* A base or a GPU that names no file: a name with the shipped names and
 * the nearest, a path with the file looked for. */
START_TEST(missing_base_refused)
{
    Folder f = folder_new();
    const char *name = folder_write(&f, "n.json", "{\"base\": \"dgx-h10\"}");
    load_fails(name, name,
               (const char *const[]){"$.base: expected a file or a shipped cluster's name",
                                     "got \"dgx-h10\" (did you mean \"dgx-h100\"?)",
                                     "the shipped clusters there are", NULL});
    const char *path = folder_write(&f, "p.json", "{\"base\": \"../nowhere/x.json\"}");
    load_fails(path, path,
               (const char *const[]){"$.base: expected a file that exists",
                                     "got \"../nowhere/x.json\"", NULL});
    const char *gpu = folder_write(&f, "g.json", "{" CLUSTER_KEYS ", \"gpu\": \"h100-sx\"}");
    load_fails(gpu, gpu,
               (const char *const[]){"$.gpu: expected a file or a shipped GPU's name",
                                     "(did you mean \"h100-sxm\"?)", NULL});
    const char *number = folder_write(&f, "k.json", "{\"base\": 7}");
    load_fails(number, number, (const char *const[]){"$.base", "got 7", NULL});
    folder_free(&f);
}
END_TEST

/* An error inside a base, or inside a GPU file, names that file and the
 * path in it; the deriving file's own values are its own. */
START_TEST(errors_name_their_file)
{
    Folder f = folder_new();
    const char *base = folder_write(
        &f, "base.json", "{" CLUSTER_KEYS ", \"gpu\": {\"peak_tflops\": -1, \"memory_GiB\": 80, "
                         "\"memory_bandwidth_GBps\": 2000}}");
    const char *derived = folder_write(&f, "d.json", "{\"base\": \"base.json\", \"nodes\": 2}");
    load_fails(derived, base, (const char *const[]){"$.gpu.peak_tflops", "got -1", NULL});
    const char *gpu = folder_write(&f, "gpu.json", "{\"peak_tflops\": 10, \"memory_GiB\": 8, "
                                                   "\"memory_bandwidth_GBps\": 500, \"sm\": 1}");
    const char *c = folder_write(&f, "c.json", "{" CLUSTER_KEYS ", \"gpu\": \"gpu.json\"}");
    load_fails(c, gpu, (const char *const[]){"$.sm: unknown key", "\"sm_count\"", NULL});
    const char *partial = folder_write(&f, "partial.json", "{\"memory_GiB\": 8}");
    const char *p = folder_write(&f, "p.json", "{" CLUSTER_KEYS ", \"gpu\": \"partial.json\"}");
    load_fails(p, partial, (const char *const[]){"$.peak_tflops: missing", NULL});
    const char *own = folder_write(&f, "own.json",
                                   "{\"base\": \"d.json\", \"gpu\": {\"peak_tflops\": \"x\"}}");
    load_fails(own, own, (const char *const[]){"$.gpu.peak_tflops", "got \"x\"", NULL});
    const char *broken = folder_write(&f, "broken.json", "{\"name\": ");
    const char *on_broken = folder_write(&f, "on-broken.json", "{\"base\": \"broken.json\"}");
    load_fails(on_broken, broken, (const char *const[]){"malformed JSON", NULL});
    folder_free(&f);
}
END_TEST

/* Every shipped cluster reads as the code of 342c213 read it, before GPU
 * files and bases (tests/data/clusters/README.md): its JSON byte for byte,
 * and its values bit for bit against the snapshot read back. */
static void holds_to_snapshot(const char *under, const char *file)
{
    g_autofree char *shipped_folder = g_build_filename("topologies", under, NULL);
    g_autofree char *snapshot_folder = g_build_filename("tests/data/clusters", under, NULL);
    g_autofree char *path = test_shipped(shipped_folder, file);
    g_autofree char *snapshot = test_shipped(snapshot_folder, file);
    g_autofree char *expected = NULL;
    ck_assert(g_file_get_contents(snapshot, &expected, NULL, NULL));
    g_autoptr(ClusterSpec) now = load_ok(path);
    g_autofree char *json = cluster_spec_json(now);
    ck_assert_msg(strcmp(json, expected) == 0, "%s differs from %s:\n%s", path, snapshot, json);
    g_autoptr(ClusterSpec) before = load_ok(snapshot);
    ClusterSpec a = *now, b = *before;
    a.name = b.name;
    a.gpu.name = b.gpu.name;
    a.path = b.path;
    ck_assert_ptr_null(a.calibration);
    ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s: values differ from %s", path, snapshot);
}

START_TEST(shipped_clusters_as_before)
{
    static const char *const folders[] = {"", "runs"};
    guint held = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(folders); i++) {
        g_autofree char *snapshots = g_build_filename("tests/data/clusters", folders[i], NULL);
        g_autoptr(GPtrArray) files = test_shipped_files(snapshots);
        for (guint k = 0; k < files->len; k++, held++)
            holds_to_snapshot(folders[i], files->pdata[k]);
    }
    ck_assert_uint_eq(held, 7); /* the five clusters and calibrate's two bases */
}
END_TEST

/* Part of each node (cluster_spec_use_gpus_per_node): GB200 NVL72 racks of
 * 72 GPUs with 64 used in each, as Slurm's block scheduling places a job
 * in segments of 16 trays of 4: each node is 64 GPUs, the node's 72 kept
 * for the report, the host's 16,090 GiB shared as 64/72 of it (the rack's
 * 36 Grace CPUs, one for two GPUs); all of a node, or nothing, changes
 * nothing; more than a node's GPUs, or part of a node whose GPUs share
 * NICs, is refused naming the setting. */
START_TEST(part_of_each_node)
{
    g_autoptr(ClusterSpec) c = test_shipped_cluster("gb200-nvl72.json", 2);
    double host = c->host_memory_bytes;
    ck_assert_int_eq(c->gpus_per_node, 72);
    ck_assert(cluster_spec_use_gpus_per_node(c, 0, "--gpus-per-node", NULL));
    ck_assert(cluster_spec_use_gpus_per_node(c, 72, "--gpus-per-node", NULL));
    ck_assert_int_eq(c->node_gpus, 0);
    ck_assert(cluster_spec_use_gpus_per_node(c, 64, "--gpus-per-node", NULL));
    ck_assert_int_eq(c->gpus_per_node, 64);
    ck_assert_int_eq(c->node_gpus, 72);
    ck_assert_int_eq(cluster_spec_gpus(c), 128);
    ck_assert_double_eq(host, 16090 * 1073741824.0);
    ck_assert_rel(c->host_memory_bytes, host * 64 / 72, 1e-15);
    g_autoptr(ClusterSpec) whole = test_shipped_cluster("gb200-nvl72.json", 2);
    GError *error = NULL;
    ck_assert(!cluster_spec_use_gpus_per_node(whole, 73, "--gpus-per-node", &error));
    ck_assert_str_eq(error->message, "--gpus-per-node: expected at most the 72 GPUs of a node of "
                                     "gb200-nvl72, got 73");
    g_clear_error(&error);
    whole->nics_per_node = 18; /* four GPUs to a NIC */
    ck_assert(!cluster_spec_use_gpus_per_node(whole, 64, "--gpus-per-node", &error));
    ck_assert_ptr_nonnull(strstr(error->message, "share its 18 NICs"));
    g_clear_error(&error);
}
END_TEST

/* Every shipped GPU file makes a cluster, named by its shipped name. */
START_TEST(shipped_gpus_load)
{
    g_autoptr(GPtrArray) gpus = test_shipped_files("topologies/gpus");
    ck_assert_uint_ge(gpus->len, 1);
    for (guint i = 0; i < gpus->len; i++) {
        g_autofree char *stem = g_strndup(gpus->pdata[i], strlen(gpus->pdata[i]) - 5);
        g_autofree char *text = g_strdup_printf("{" CLUSTER_KEYS ", \"gpu\": \"%s\"}", stem);
        char *path = test_write_tmp(text);
        ClusterSpec *c = load_ok(path);
        ck_assert(c->gpu.peak_flops > 0);
        cluster_spec_free(c);
        test_remove(path);
    }
}
END_TEST

Suite *suite_cluster_files(void)
{
    Suite *s = suite_create("cluster_files");
    TCase *tc = tcase_create("cluster_files");
    tcase_add_test(tc, gpu_file_named);
    tcase_add_test(tc, base_overridden_and_merged);
    tcase_add_test(tc, cycle_refused);
    tcase_add_test(tc, depth_limited);
    tcase_add_test(tc, missing_base_refused);
    tcase_add_test(tc, errors_name_their_file);
    tcase_add_test(tc, shipped_clusters_as_before);
    tcase_add_test(tc, shipped_gpus_load);
    tcase_add_test(tc, part_of_each_node);
    suite_add_tcase(s, tc);
    return s;
}
