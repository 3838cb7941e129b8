/* roofline.h: the time of one GPU operation.
 *
 * An operation does `flops` arithmetic and moves `bytes` to and from HBM;
 * it takes max(flops / (peak x compute_efficiency),
 *              bytes / (bandwidth x memory_efficiency)) + the launch cost. */
#ifndef PLANSIM_COST_ROOFLINE_H
#define PLANSIM_COST_ROOFLINE_H

#include "spec/spec.h"

typedef struct {
    const char *name; /* "qkv", "softmax", ... */
    double flops;
    double bytes;
    int gemm; /* a matrix multiply: counted in model FLOPs */
} Op;

double roofline_s(const GpuSpec *gpu, const Op *op);

#endif
