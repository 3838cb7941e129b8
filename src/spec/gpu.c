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

double gpu_peak(const GpuSpec *gpu, Dtype d, const char **key, const char **what)
{
    static const GpuPeak peaks[] = {
#define DTYPE(ID, name, bytes, block, scale, amax, peak) [DTYPE_##ID] = peak,
#include "base/dtypes.def"
#undef DTYPE
    };
    static const struct {
        const char *key, *what;
    } keys[] = {
        [GPU_PEAK_BF16] = {"peak_tflops", "the GPU's dense BF16 peak"},
        [GPU_PEAK_FP8] = {"peak_fp8_tflops", "the GPU's dense FP8 peak (a GPU without FP8 has "
                                             "none)"},
        [GPU_PEAK_MXFP8] = {"mxfp8", "tensor cores that take MXFP8's block scales (Blackwell's; "
                                     "earlier GPUs have none)"},
        [GPU_PEAK_FP4] = {"peak_fp4_tflops", "the GPU's dense FP4 peak (Blackwell's; earlier "
                                             "GPUs have none)"},
    };
    g_assert(d >= 0 && d < DTYPES);
    GpuPeak p = peaks[d];
    if (key)
        *key = keys[p].key;
    if (what)
        *what = keys[p].what;
    switch (p) {
    case GPU_PEAK_BF16:
        return gpu->peak_flops;
    case GPU_PEAK_FP8:
        return gpu->peak_fp8_flops;
    case GPU_PEAK_MXFP8:
        return gpu->mxfp8 ? gpu->peak_fp8_flops : 0;
    case GPU_PEAK_FP4:
        return gpu->peak_fp4_flops;
    }
    g_assert_not_reached();
}

double gpu_gemm_sustained(const GpuSpec *gpu)
{
    return gpu->gemm_sustained > 0 ? gpu->gemm_sustained : 1;
}

double gpu_gemm_dtype_share(const GpuSpec *gpu, Dtype d)
{
    g_assert(d >= 0 && d < DTYPES);
    return gpu->gemm_dtype_share[d] > 0 ? gpu->gemm_dtype_share[d] : 1;
}
