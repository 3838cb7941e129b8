/* gpu.h: a cluster's GPU as a plain C struct, and the values read off it
 * (gpu.c). cluster.c reads it, from the cluster file's "gpu" or the GPU
 * file that names.
 *
 * Units: sizes are counts; rates are SI (FLOP/s, bytes/s); times seconds;
 * memory bytes. The JSON files use the units their key names say (GBps is
 * 1e9 bytes per second, per GPU per direction; us is microseconds; GiB is
 * 2^30 bytes) and the parser converts. */
#ifndef PLANSIM_SPEC_GPU_H
#define PLANSIM_SPEC_GPU_H

#include <glib.h>

#include "base/names.h"

#define CURVE_POINTS 16 /* most points of a GPU's curve */

/* A curve of a GPU's, y against x: linear in log(x) between its points,
 * flat beyond them (gpu_curve_at). */
typedef struct {
    int n;                  /* points; 0: none */
    double x[CURVE_POINTS]; /* increasing, > 0 */
    double y[CURVE_POINTS];
} Curve;

typedef struct {
    char *name;
    double peak_flops;         /* dense bf16, FLOP/s */
    double peak_fp8_flops;     /* dense fp8, FLOP/s; 0: the GPU has no FP8 */
    double peak_fp4_flops;     /* dense fp4 (NVFP4), FLOP/s; 0: the GPU has no FP4 */
    gboolean mxfp8;            /* its tensor cores take MXFP8's block scales, at the fp8 rate */
    gboolean fp8_any_layout;   /* its FP8 GEMMs take their operands in any layout, so that a
                                * per-tensor-scaled cast writes one copy, no transpose
                                * beside it (Blackwell's; Hopper's take TN only) */
    gboolean gemm_epilogue_overlap; /* its GEMMs write a tile's outputs while they compute
                                     * the next tile's (Blackwell's, the accumulators in
                                     * tensor memory, two of them; A100's, several tiles an
                                     * SM); else after each wave (Hopper's; roofline.h) */
    double pcie_Bps;           /* host link per GPU per direction, achievable; 0: not given */
    double memory_bytes;       /* HBM capacity */
    double reserve_bytes;      /* of it, held outside the model's tensors: CUDA context,
                                * NCCL's buffers, allocator fragmentation; >= 0 */
    double memory_Bps;         /* HBM bandwidth */
    double compute_efficiency; /* fraction of peak of non-GEMM arithmetic, and of
                                * every GEMM when there is no curve, (0, 1] */
    double memory_efficiency;  /* fraction of bandwidth a streaming kernel reaches */
    double launch_s;           /* fixed cost per kernel */
    double comm_interference;  /* compute slows by this fraction while the GPU
                                * runs communication kernels, [0, 0.95] */
    double gemm_sustained;     /* the share of the GEMM curve's efficiency that GEMMs run
                                * back to back in a training step keep (sustained clock at
                                * the power limit), (0, 1]; 0: 1 */
    double attention_forward_efficiency;  /* FlashAttention's forward and backward on the */
    double attention_backward_efficiency; /* work they do, fractions of the peak, (0, 1];
                                           * 0: transformer.h's defaults */
    int sm_count;                         /* streaming multiprocessors; 0: unknown, no waves */
    Curve gemm;                           /* a GEMM's fraction of peak, (0, 1], against its
                                           * arithmetic intensity (FLOP per byte) */
    Curve attention_head_dim;             /* the attention efficiencies' factor against the head
                                           * dimension (1 at the dimension they were measured at);
                                           * none: 1 */
    Curve attention_seq;                  /* and against the sequence length a kernel runs
                                           * (1 at the length they were measured at); none: 1 */
    double gemm_dtype_share[DTYPES];      /* a narrow dtype's GEMMs' fraction of their own peak
                                           * over bf16's at the same intensity (block scales and
                                           * the power limit cost them more), (0, 1]; 0 (and
                                           * bf16's): 1 */
} GpuSpec;

/* FlashAttention's efficiencies when a GPU gives none: FlashAttention-2's
 * on A100 (docs/model.md, "FlashAttention"; cost/transformer.c). */
#define GPU_ATTENTION_FORWARD_EFFICIENCY  0.60
#define GPU_ATTENTION_BACKWARD_EFFICIENCY 0.50

/* The GPU's attention efficiency (forward or backward) and GEMM sustained
 * share, their defaults for 0. */
double gpu_attention_efficiency(const GpuSpec *gpu, gboolean forward);
double gpu_gemm_sustained(const GpuSpec *gpu);
/* gemm_dtype_share of `d`, 1 for 0. */
double gpu_gemm_dtype_share(const GpuSpec *gpu, Dtype d);

/* The peaks a dtype's GEMMs run at (dtypes.def's last column). */
typedef enum { GPU_PEAK_BF16, GPU_PEAK_FP8, GPU_PEAK_MXFP8, GPU_PEAK_FP4 } GpuPeak;

/* The dense peak of `d`'s matrix multiplies on `gpu`, FLOP/s: 0 when the
 * GPU has no such tensor cores. With `key` and `what`, the GPU file's key
 * that gives it ("peak_fp8_tflops") and what it is, for an error. */
double gpu_peak(const GpuSpec *gpu, Dtype d, const char **key, const char **what);

/* A curve's y at x, `none` for a curve without points. */
double gpu_curve_at(const Curve *c, double x, double none);

#endif
