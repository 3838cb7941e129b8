/* roofline.c: compute-bound or memory-bound, whichever is slower. */
#include "cost/roofline.h"

#include <glib.h>

double roofline_s(const GpuSpec *gpu, const Op *op)
{
    double compute_s = op->flops / (gpu->peak_flops * gpu->compute_efficiency);
    double memory_s = op->bytes / (gpu->memory_Bps * gpu->memory_efficiency);
    return MAX(compute_s, memory_s) + gpu->launch_s;
}
