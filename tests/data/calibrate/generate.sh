#!/bin/sh
# generate.sh PLANSIM: writes this folder's synthetic measurements from
# truth.json (README.md says how and why). Run from this folder:
#   sh generate.sh /path/to/plansim
set -eu
plansim=$1

# noise SEED: awk code for a multiplicative noise of at most +-2 %: a
# Park-Miller generator (x = 16807 x mod 2^31 - 1, exact in doubles), one
# draw per row, the same in every awk
noise='function noise() { x = (16807 * x) % 2147483647; return 1 + 0.04 * (x / 2147483647 - 0.5) }'

# nccl OP PROGRAM RANKS HOSTS SEED FILE: plansim collective's times, with
# noise, printed as nccl-tests prints them
nccl() {
    "$plansim" collective --cluster truth.json --op "$1" --ranks "$3" --min-bytes 1024 \
        --max-bytes 1073741824 --format csv |
        awk -F, -v program="$2" -v ranks="$3" -v hosts="$4" -v x="$5" "$noise"'
        NR == 1 {
            printf "# nccl-tests version 2.13.10 nccl-headers=21903 nccl-library=21903\n"
            printf "# Collective test starting: %s\n", program
            printf "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
            for (r = 0; r < ranks; r++)
                printf "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] NVIDIA A100-SXM4-80GB\n", r, 4000 + r, sprintf("node%d", int(r / (ranks / hosts))), r % (ranks / hosts), 16 * (r % (ranks / hosts)) + 7
            printf "#\n#                                                              out-of-place                       in-place          \n"
            printf "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
            printf "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
            next
        }
        {
            t1 = $4 * noise(); t2 = $4 * noise()
            factor = $5 > 0 ? $6 / $5 : 1
            redop = program ~ /reduce/ ? "sum" : "none"
            printf "%12d  %12d  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6d  %7.2f  %6.2f  %6.2f  %6d\n", $3, $3 / 4, "float", redop, -1, t1, $3 / t1 / 1e3, factor * $3 / t1 / 1e3, 0, t2, $3 / t2 / 1e3, factor * $3 / t2 / 1e3, 0
        }
        END { printf "# Out of bounds values : 0 OK\n#\n" }' >"$6"
}

nccl all_reduce all_reduce_perf 8 1 11 all_reduce_perf-8.txt
nccl all_gather all_gather_perf 8 1 12 all_gather_perf-8.txt
nccl all_reduce all_reduce_perf 16 2 13 all_reduce_perf-16.txt
nccl reduce_scatter reduce_scatter_perf 16 2 14 reduce_scatter_perf-16.txt

# gemm.csv: roofline.h's GEMM time on truth.json's GPU, computed here from
# its documented formula (tiles of 128 x 128, cut to the dimension rounded
# up to 64; waves of 108 SMs; the efficiency interpolated in
# log(intensity) between [102, 0.5] and [788, 0.8], flat beyond; bf16
# operands; the memory bound at 2039 GB/s x 0.85; 2 us of launch), with noise
awk -v x=15 "$noise"'
function side(s) { t = 64 * int((s + 63) / 64); return t < 128 ? t : 128 }
function efficiency(i) {
    if (i <= 102) return 0.5
    if (i >= 788) return 0.8
    return 0.5 + (0.8 - 0.5) * log(i / 102) / log(788 / 102)
}
BEGIN {
    print "m,n,k,dtype,seconds"
    split("512 2048 8192", ms, " "); split("512 2048 8192", ns, " "); split("512 4096", ks, " ")
    for (a = 1; a <= 3; a++) for (b = 1; b <= 3; b++) for (c = 1; c <= 2; c++) {
        m = ms[a]; n = ns[b]; k = ks[c]
        flops = 2 * m * n * k; bytes = 2 * (m * k + k * n + m * n)
        tm = side(m); tn = side(n)
        tiles = int((m + tm - 1) / tm) * int((n + tn - 1) / tn)
        waves = int((tiles + 107) / 108)
        compute = waves * 108 * 2 * tm * tn * k / (312e12 * efficiency(flops / bytes))
        memory = bytes / (2039e9 * 0.85)
        printf "%d,%d,%d,bf16,%.6e\n", m, n, k, ((compute > memory ? compute : memory) + 2e-6) * noise()
    }
}' >gemm.csv
