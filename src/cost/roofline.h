/* roofline.h: the time of one GPU operation (docs/model.md, "Compute").
 *
 * An operation does `flops` arithmetic and moves `bytes` to and from HBM;
 * it takes max(compute time, bytes / (bandwidth x memory_efficiency)) +
 * the launch cost. The compute time of an operation that is not a matrix
 * multiply is flops / (peak x compute_efficiency). A matrix multiply
 * (`gemm`) runs at the GPU's GEMM efficiency for its arithmetic intensity,
 * flops / bytes (gemm_efficiency_at); when its shape is known and the GPU
 * gives its SM count, its output is cut into tiles of GEMM_TILE x
 * GEMM_TILE, one tile per SM at a time, and it takes whole waves of
 * sm_count tiles (gemm_compute_s), each wave's math, then its epilogue
 * (gemm_epilogue_s). A matrix multiply in fp8 runs at the
 * GPU's FP8 peak, at the efficiency of its own intensity, its bytes
 * counted with 1-byte inputs (docs/model.md, "Precision recipes"). */
#ifndef PLANSIM_COST_ROOFLINE_H
#define PLANSIM_COST_ROOFLINE_H

#include "base/names.h"
#include "spec/gpu.h"

typedef struct {
    const char *name; /* "qkv", "softmax", ... */
    double flops;
    double bytes;
    int gemm; /* a matrix multiply: counted in model FLOPs */
    /* A matrix multiply's shape, `batch` products of an (m x k) matrix by
     * a (k x n) one; all 0 when unknown (the operation then has no tile or
     * wave quantisation). A FlashAttention kernel's: k its QK head width,
     * m its V head width, n its sequence, batch 0. Last, so that {name,
     * flops, bytes, gemm} initialisers leave them 0. */
    double m, n, k, batch;
    Dtype dtype; /* a matrix multiply's input type; DTYPE_BF16 (0) unless set */
    double idle; /* the share of `flops` no kernel does (0 unless set): a causal
                  * FlashAttention's masked half, an imbalanced expert GEMM's rows
                  * beyond the mean; counted in model FLOPs, not hardware FLOPs */
    double wgrad; /* of its backward (twice its forward), the weight gradients',
                   * in forwards: 1 for a GEMM by a weight (dW = X^T dY costs one
                   * forward), 2 for the embedding lookup (its backward is all
                   * weight gradient), 0 for the rest (0 unless set) */
    double backward; /* its backward's time in forwards; 0 (unless set) for 2: a
                      * GEMM's two products, an element-wise kernel's reads and
                      * writes of the gradients beside its inputs. Set where a
                      * backward is cheaper: the loss's (transformer_head_ops) */
} Op;

/* The tile one thread block (CTA) computes: 128 x 128 outputs, one of the
 * tiles of cuBLAS's and CUTLASS's large bf16 GEMMs on A100 and H100
 * (NVIDIA, "Matrix Multiplication Background User's Guide", sections 2.3
 * and 3), between the 256 x 128 ones, which quantise more coarsely, and
 * the smaller ones cuBLAS's heuristics pick for small problems. A
 * dimension shorter than the tile cuts it to the dimension rounded up to
 * GEMM_TILE_MIN. (topologies/SOURCES.md, "Common to all clusters".) */
#define GEMM_TILE     128
#define GEMM_TILE_MIN 64

double roofline_s(const GpuSpec *gpu, const Op *op);

/* The dense peak of `dtype` matrix multiplies (gpu_peak): peak_flops for
 * bf16, peak_fp8_flops for fp8 and mxfp8, peak_fp4_flops for nvfp4. */
double roofline_peak(const GpuSpec *gpu, Dtype dtype);

/* The fraction of the peak a matrix multiply of `flop_per_byte`
 * arithmetic intensity reaches on full waves: the GPU's gemm_efficiency
 * curve, interpolated linearly in log(flop_per_byte) between its points
 * and flat beyond its ends (compute_efficiency when the GPU has no
 * curve), times its gemm_sustained share. */
double gemm_efficiency_at(const GpuSpec *gpu, double flop_per_byte);

/* Waves of tiles of a matrix multiply: ceil(tiles / sm_count); 0 when the
 * shape or the SM count is unknown. */
double gemm_waves(const GpuSpec *gpu, const Op *op);

/* The epilogues of a matrix multiply's waves: after a wave's last k-step,
 * each SM writes its tile's outputs (tile_m x tile_n, bf16, as Transformer
 * Engine's GEMMs return them in every recipe) at its share of the memory
 * bandwidth (x memory_efficiency) before it takes its next tile: waves x
 * sm_count x tile_m x tile_n x 2 bytes over the bandwidth. 0 when it has no
 * waves, and on a GPU that writes a tile's outputs while it computes the
 * next tile's (GpuSpec.gemm_epilogue_overlap). */
double gemm_epilogue_s(const GpuSpec *gpu, const Op *op);

/* A matrix multiply's compute time: waves x the time of one full wave of
 * sm_count tiles (2 x tile_m x tile_n x k FLOPs each) at its dtype's peak
 * times its efficiency, and its epilogues (gemm_epilogue_s); flops /
 * (peak x efficiency) when it has no waves. */
double gemm_compute_s(const GpuSpec *gpu, const Op *op);

#endif
