/* gpu.c: what the costs read off a GPU beyond its members: a curve's value
 * between its points, and the efficiencies whose 0 stands for a default. */
#include <math.h>

#include "spec/gpu.h"

double gpu_curve_at(const Curve *c, double x, double none)
{
    if (c->n == 0)
        return none;
    if (!(x > c->x[0])) /* also NaN */
        return c->y[0];
    for (int i = 0; i + 1 < c->n; i++)
        if (x < c->x[i + 1]) {
            double f = log(x / c->x[i]) / log(c->x[i + 1] / c->x[i]);
            return c->y[i] + f * (c->y[i + 1] - c->y[i]);
        }
    return c->y[c->n - 1];
}

double gpu_attention_efficiency(const GpuSpec *gpu, gboolean forward)
{
    double e = forward ? gpu->attention_forward_efficiency : gpu->attention_backward_efficiency;
    return e > 0     ? e
           : forward ? GPU_ATTENTION_FORWARD_EFFICIENCY
                     : GPU_ATTENTION_BACKWARD_EFFICIENCY;
}

double gpu_gemm_sustained(const GpuSpec *gpu)
{
    return gpu->gemm_sustained > 0 ? gpu->gemm_sustained : 1;
}
