/* roofline.c: compute-bound or memory-bound, whichever is slower; matrix
 * multiplies by their shape (docs/model.md, "Compute"). */
#include "cost/roofline.h"

#include <math.h>

#include <glib.h>

double gemm_efficiency_at(const GpuSpec *gpu, double flop_per_byte)
{
    return gpu_gemm_sustained(gpu) *
           gpu_curve_at(&gpu->gemm, flop_per_byte, gpu->compute_efficiency);
}

static gboolean has_waves(const GpuSpec *gpu, const Op *op)
{
    return gpu->sm_count > 0 && op->m > 0 && op->n > 0 && op->k > 0 && op->batch > 0;
}

/* The side of a tile along a dimension of `size`: `tile`, or the size
 * rounded up to GEMM_TILE_MIN when it is shorter. */
static double tile_side(double tile, double size)
{
    return MIN(tile, ceil(size / GEMM_TILE_MIN) * GEMM_TILE_MIN);
}

typedef struct {
    double waves;
    double wave_flops;     /* of one full wave: sm_count tiles over all of k */
    double wave_out_bytes; /* the outputs one full wave writes, in bf16 */
} Waves;

static Waves waves_of(const GpuSpec *gpu, const Op *op)
{
    double tm = tile_side(GEMM_TILE, op->m), tn = tile_side(GEMM_TILE, op->n);
    double tiles = op->batch * ceil(op->m / tm) * ceil(op->n / tn);
    return (Waves){.waves = ceil(tiles / gpu->sm_count),
                   .wave_flops = gpu->sm_count * 2 * tm * tn * op->k,
                   .wave_out_bytes = gpu->sm_count * tm * tn * 2};
}

/* The waves' epilogues (gemm_epilogue_s). */
static double epilogues_s(const GpuSpec *gpu, Waves w)
{
    if (gpu->gemm_epilogue_overlap)
        return 0;
    return w.waves * w.wave_out_bytes / (gpu->memory_Bps * gpu->memory_efficiency);
}

double gemm_waves(const GpuSpec *gpu, const Op *op)
{
    return has_waves(gpu, op) ? waves_of(gpu, op).waves : 0;
}

double gemm_epilogue_s(const GpuSpec *gpu, const Op *op)
{
    return has_waves(gpu, op) ? epilogues_s(gpu, waves_of(gpu, op)) : 0;
}

double roofline_peak(const GpuSpec *gpu, Dtype dtype)
{
    return gpu_peak(gpu, dtype, NULL, NULL);
}

double gemm_compute_s(const GpuSpec *gpu, const Op *op)
{
    double intensity = op->bytes > 0 ? op->flops / op->bytes : INFINITY;
    double rate = roofline_peak(gpu, op->dtype) * gemm_efficiency_at(gpu, intensity) *
                  gpu_gemm_dtype_share(gpu, op->dtype);
    if (!has_waves(gpu, op))
        return op->flops / rate;
    Waves w = waves_of(gpu, op);
    return w.waves * w.wave_flops / rate + epilogues_s(gpu, w);
}

double roofline_s(const GpuSpec *gpu, const Op *op)
{
    double compute_s = op->gemm ? gemm_compute_s(gpu, op)
                                : op->flops / (gpu->peak_flops * gpu->compute_efficiency);
    double memory_s = op->bytes / (gpu->memory_Bps * gpu->memory_efficiency);
    return MAX(compute_s, memory_s) + gpu->launch_s;
}
