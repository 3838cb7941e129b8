/* bench.h: what the benchmarks share: loading their inputs. */
#ifndef PLANSIM_BENCH_BENCH_H
#define PLANSIM_BENCH_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/bigmem.h"
#include "spec/model.h"
#include "spec/cluster.h"

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts `n` timings in increasing order: v[n / 2] is the median. */
static inline void bench_sort(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
}

/* The process's peak resident memory so far, in MiB. */
static inline double bench_peak_rss_mib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0;
}

/* Makes the peak resident memory start again from what the process holds
 * now, with bigmem's spare arrays and the C library's free memory given
 * back (Linux; elsewhere the peak stays the process's). */
static inline void bench_reset_peak_rss(void)
{
    bigmem_release();
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* A shipped file, `folder/name` under $top_srcdir (default "."). */
static inline char *bench_shipped(const char *folder, const char *name)
{
    const char *top = g_getenv("top_srcdir") ? g_getenv("top_srcdir") : ".";
    return g_build_filename(top, folder, name, NULL);
}

/* The model and the cluster (at 128 nodes: 1,024 GPUs) at the given
 * paths; on bad input prints the error for benchmark `who` and exits 2. */
static inline void bench_load(const char *who, const char *model_path, const char *cluster_path,
                              ModelSpec **model, ClusterSpec **cluster)
{
    GError *error = NULL;
    *model = model_spec_load(model_path, &error);
    *cluster = *model ? cluster_spec_load(cluster_path, 128, &error) : NULL;
    if (!*cluster) {
        fprintf(stderr, "%s: %s\n", who, error->message);
        exit(2);
    }
}

/* The shipped model `models/model_file` and cluster `topologies/cluster_file`
 * at `nodes` nodes; on bad input prints the error for benchmark `who` and
 * exits 2. */
static inline void bench_load_shipped(const char *who, const char *model_file,
                                      const char *cluster_file, int nodes, ModelSpec **model,
                                      ClusterSpec **cluster)
{
    char *model_path = bench_shipped("models", model_file);
    char *cluster_path = bench_shipped("topologies", cluster_file);
    GError *error = NULL;
    *model = model_spec_load(model_path, &error);
    *cluster = *model ? cluster_spec_load(cluster_path, nodes, &error) : NULL;
    g_free(model_path);
    g_free(cluster_path);
    if (!*cluster) {
        fprintf(stderr, "%s: %s\n", who, error->message);
        exit(2);
    }
}

#endif
