/* bench.h: what the benchmarks share: loading their inputs. */
#ifndef PLANSIM_BENCH_BENCH_H
#define PLANSIM_BENCH_BENCH_H

#include <stdio.h>
#include <stdlib.h>

#include "spec/spec.h"

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

#endif
