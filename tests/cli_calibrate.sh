#!/bin/sh
# cli_calibrate.sh: plansim calibrate on the synthetic measurements of
# tests/data/calibrate/: a fit writes a cluster that simulate accepts and
# prints its residuals; each bad input exits with 2, prints one line
# "plansim: FILE:LINE: ..." on stderr and nothing on stdout, and writes
# nothing (no output file, no temporary file beside it).
#
# Run by the test harness with $top_srcdir and $PLANSIM set.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

data=$top_srcdir/tests/data/calibrate

# ---- a fit ------------------------------------------------------------------

mkdir "$tmp/fit"
"$PLANSIM" calibrate --cluster "$data/start.json" \
    --nccl-tests "$data/all_reduce_perf-8.txt" --nccl-tests "$data/all_gather_perf-8.txt" \
    --gemm "$data/gemm.csv" -o "$tmp/fit/cluster.json" >"$tmp/report" 2>"$tmp/stderr"
status=$?
problem=
[ "$status" -eq 0 ] || problem="exit status $status: $(one_line "$tmp/stderr")"
[ -s "$tmp/fit/cluster.json" ] || problem="$problem; no cluster written"
# a summary per file: 21 sizes each, 18 GEMMs
for line in "all_reduce over 8 ranks on 1 host: 21 points" \
    "all_gather over 8 ranks on 1 host: 21 points" "gemm.csv: GEMMs: 18 points" \
    "intra_node.efficiency"; do
    grep -F -q -e "$line" "$tmp/report" || problem="$problem; the report lacks '$line'"
done
check "calibrate writes a cluster and prints its residuals" "$problem"

# the two parameters no point depends on (one host: inter_node's are
# constant), one warning line each
problem=
for key in inter_node.efficiency inter_node.tree_efficiency; do
    grep -q "^plansim: warning: $key: no point depends on it" "$tmp/stderr" ||
        problem="$problem; stderr lacks the warning of $key"
done
grep -v -q '^plansim: warning: ' "$tmp/stderr" && problem="$problem; stderr holds other lines"
check "calibrate warns of each parameter it keeps" "$problem"

problem=
"$PLANSIM" simulate --cluster "$tmp/fit/cluster.json" --model "$tiny" --tp 2 --pp 2 \
    -o "$tmp/step.txt" 2>"$tmp/stderr" || problem="simulate refused it: $(one_line "$tmp/stderr")"
check "simulate accepts the calibrated cluster" "$problem"

# a realistic small-GEMM curve on the shipped A100 profile (512^3 bf16 in
# 3 us, 16,384^3 at 82 % of 312 TFLOP/s: 2 x 16384^3 / (0.82 x 312e12) =
# 34.4 ms): taken, fitted, the misfit at 512^3 warned of, gemm_sustained
# the profile's 0.843
printf 'm,n,k,dtype,seconds\n512,512,512,bf16,3e-6\n16384,16384,16384,bf16,0.0344\n' >"$tmp/real.csv"
"$PLANSIM" calibrate --cluster "$top_srcdir/topologies/dgx-a100-80gb.json" --gemm "$tmp/real.csv" \
    -o "$tmp/fit/gemm.json" >"$tmp/report" 2>"$tmp/stderr"
status=$?
problem=
[ "$status" -eq 0 ] || problem="exit status $status: $(one_line "$tmp/stderr")"
grep -q '^plansim: warning: gpu.gemm_efficiency at 102 flop/byte: fitted to 1, the upper end' \
    "$tmp/stderr" || problem="$problem; no warning of the curve's point on its bound"
grep -q "^plansim: warning: $tmp/real.csv: mean |error| .* at line 2 (over 15 %)" "$tmp/stderr" ||
    problem="$problem; no warning of the errors"
grep -q '"gemm_sustained": 0.843,' "$tmp/fit/gemm.json" || problem="$problem; gemm_sustained changed"
check "calibrate --gemm takes a realistic curve, keeps gemm_sustained and warns" "$problem"

# ---- bad input --------------------------------------------------------------

# bad NAME PATTERN ARG...: plansim calibrate ARG... -o FILE must fail as the
# header says, its one line holding PATTERN
bad() {
    name=$1
    pattern=$2
    shift 2
    rm -rf "$tmp/o"
    mkdir "$tmp/o"
    "$PLANSIM" calibrate --cluster "$data/start.json" "$@" -o "$tmp/o/cluster.json" >"$tmp/stdout" 2>"$tmp/stderr"
    status=$?
    problem=
    [ "$status" -eq 2 ] || problem="exit status $status, expected 2"
    [ "$(awk 'END { print NR }' "$tmp/stderr")" -eq 1 ] || problem="$problem; stderr is not one line"
    grep -F -q -e "plansim: $pattern" "$tmp/stderr" || problem="$problem; stderr lacks '$pattern'"
    [ -s "$tmp/stdout" ] && problem="$problem; stdout is not empty"
    [ -z "$(ls -A "$tmp/o")" ] || problem="$problem; left behind: $(ls -A "$tmp/o" | tr '\n' ' ')"
    [ -z "$problem" ] || problem="$problem; stderr: $(one_line "$tmp/stderr")"
    check "$name" "$problem"
}

good=$data/all_reduce_perf-8.txt
awk 'NR == 30 { $6 = "fast" } 1' "$good" >"$tmp/bad-time_all_reduce.txt"
bad "a row's time that is not a number" "$tmp/bad-time_all_reduce.txt:30: expected a row" \
    --nccl-tests "$good" --nccl-tests "$tmp/bad-time_all_reduce.txt"
sed 's/\(Rank 15 .* on  *\)node1/\1node2/' "$data/all_reduce_perf-16.txt" >"$tmp/uneven_all_reduce.txt"
bad "hosts of different rank counts" \
    "$tmp/uneven_all_reduce.txt:14: expected the same number of ranks on every host" \
    --nccl-tests "$tmp/uneven_all_reduce.txt"
grep -v '^#  *size' "$good" >"$tmp/headless_all_reduce.txt"
bad "rows before the header line" "$tmp/headless_all_reduce.txt:17: expected the header line" \
    --nccl-tests "$tmp/headless_all_reduce.txt"
grep -v 'Collective test starting' "$good" >"$tmp/unknown.txt"
bad "a file that says not what it ran" "$tmp/unknown.txt: expected a line" \
    --nccl-tests "$tmp/unknown.txt"
sed '3s/bf16/fp64/' "$data/gemm.csv" >"$tmp/gemm.csv"
bad "a GEMM row of an unknown dtype" "$tmp/gemm.csv:3: expected a row m,n,k,dtype,seconds" \
    --gemm "$tmp/gemm.csv"
bad "a missing file" "$tmp/none.txt" --nccl-tests "$tmp/none.txt"

# hostile files (issue 19): a rank line cut short read past its tokens
printf '#Rank' >"$tmp/x_all_reduce.txt"
bad "a bare '#Rank'" "$tmp/x_all_reduce.txt:1: expected rank line 0" \
    --nccl-tests "$tmp/x_all_reduce.txt"
awk 'BEGIN { for (r = 0; r <= 16384; r++)
    printf "#  Rank %d Group 0 Pid 1 on h%d device %d [0] H100\n", r, r / 8, r % 8 }' \
    >"$tmp/huge_all_reduce.txt"
bad "16,385 ranks" "$tmp/huge_all_reduce.txt:16385: expected at most 16384 ranks" \
    --nccl-tests "$tmp/huge_all_reduce.txt"
# an all-to-all has n (n - 1) transfers, at most 2^24 in a plan: 4,096 ranks
awk 'BEGIN { print "# Collective test starting: alltoall_perf"
    for (r = 0; r < 4104; r++)
        printf "#  Rank %d Group 0 Pid 1 on h%d device %d [0] H100\n", r, r / 8, r % 8
    print "#  size  count  type  redop  root  time  algbw  busbw  #wrong"
    print "  1048576  262144  float  none  -1  900.0  0  0  0" }' >"$tmp/a2a.txt"
bad "an all-to-all over more ranks than a plan holds" \
    "$tmp/a2a.txt: all_to_all over 4104 ranks: expected at most 4096 for all_to_all" \
    --nccl-tests "$tmp/a2a.txt"
printf '512,512,512,bf16,1000\n' >"$tmp/slow.csv"
bad "a GEMM time in microseconds" "$tmp/slow.csv:1: expected a time in seconds from" \
    --gemm "$tmp/slow.csv"
# 2 x 512^3 FLOPs at start.json's 312 TFLOP/s: 0.86 us, the roofline
printf '512,512,512,bf16,5e-7\n' >"$tmp/fast.csv"
bad "a GEMM faster than the roofline" "$tmp/fast.csv:1: expected a time in seconds from 8.6e-07" \
    --gemm "$tmp/fast.csv"
printf '512,512,512,fp8,1e-4\n' >"$tmp/fp8.csv"
bad "an fp8 GEMM on a GPU without FP8" "$tmp/fp8.csv:1: expected a dtype the GPU" \
    --gemm "$tmp/fp8.csv"
printf '512,512,512,bf16,0x1p-16\n' >"$tmp/hex.csv"
bad "GEMM seconds in hexadecimal" "$tmp/hex.csv:1: expected a row m,n,k,dtype,seconds" \
    --gemm "$tmp/hex.csv"
cp "$data/gemm.csv" "$tmp/in.csv"
"$PLANSIM" calibrate --cluster "$data/start.json" --gemm "$tmp/in.csv" -o "$tmp/in.csv" \
    >"$tmp/stdout" 2>"$tmp/stderr"
status=$?
problem=
[ "$status" -eq 2 ] || problem="exit status $status, expected 2"
grep -F -q -e "plansim: -o: expected a file that is not an input" "$tmp/stderr" ||
    problem="$problem; stderr: $(one_line "$tmp/stderr")"
cmp -s "$data/gemm.csv" "$tmp/in.csv" || problem="$problem; the input was overwritten"
check "-o naming the --gemm input is refused" "$problem"
bad "no measurements" "calibrate: expected -o FILE and at least one of"

# ---- measured runs (--runs) ----------------------------------------------------

model=$top_srcdir/topologies/runs/mcore-gpt-1.7b.json
printf 'name,model,gpus,tp,micro_batch_size,global_batch_size,step_s\n' >"$tmp/runs.csv"
printf 'a,%s,8,1,1,16,0.5\nb,%s,8,2,1,16,0.4\n' "$model" "$model" >>"$tmp/runs.csv"
mkdir "$tmp/runfit"
"$PLANSIM" calibrate --runs "$tmp/runs.csv" --fit gemm_sustained \
    --cluster "$top_srcdir/topologies/dgx-h100.json" -o "$tmp/runfit/cluster.json" >"$tmp/report" 2>"$tmp/stderr"
status=$?
problem=
[ "$status" -eq 0 ] || problem="exit status $status: $(one_line "$tmp/stderr")"
[ -s "$tmp/runfit/cluster.json" ] || problem="$problem; no cluster written"
grep -q '^gemm_sustained ' "$tmp/report" || problem="$problem; the report lacks the parameter"
grep -q 'leave-one-out: mean' "$tmp/report" || problem="$problem; the report lacks leave-one-out"
check "calibrate --runs writes a cluster and prints its residuals" "$problem"

# DeepSeek-V3's published rows (topologies/runs/deepseek-v3-*.csv), one
# file a system: every row resolves, fits and is predicted on the shipped
# profile, none over its GPUs' memory
problem=
for system in h100:dgx-h100:1 b200:dgx-b200:7 gb200:gb200-nvl72:11; do
    file=${system%%:*} rest=${system#*:}
    "$PLANSIM" calibrate --runs "$top_srcdir/topologies/runs/deepseek-v3-$file.csv" \
        --cluster "${rest%%:*}" --fit "" -o "$tmp/deepseek.json" >"$tmp/deepseek.out" 2>"$tmp/deepseek.err" ||
        problem="$problem; $file: $(one_line "$tmp/deepseek.err")"
    grep -q ": ${rest#*:} runs, base" "$tmp/deepseek.out" || problem="$problem; $file: not ${rest#*:} runs"
    grep -q "do not fit" "$tmp/deepseek.err" && problem="$problem; $file: $(one_line "$tmp/deepseek.err")"
done
check "DeepSeek-V3's published rows run on the shipped profiles" "$problem"

bad "more parameters than runs" "$tmp/runs.csv: expected at least as many runs as parameters" \
    --runs "$tmp/runs.csv" --fit gemm_sustained,kernel_launch_us,memory_efficiency
bad "an unknown parameter" "--fit: expected at most 5 of" --runs "$tmp/runs.csv" --fit peak_tflops
bad "--runs with --gemm" "calibrate: expected --runs alone" --runs "$tmp/runs.csv" \
    --gemm "$data/gemm.csv"
sed '1s/step_s/seconds/' "$tmp/runs.csv" >"$tmp/runs-col.csv"
bad "an unknown column" "$tmp/runs-col.csv:1: expected a column name" --runs "$tmp/runs-col.csv"
sed '2s/,0.5$/,/' "$tmp/runs.csv" >"$tmp/runs-none.csv"
bad "a run with no measure" "$tmp/runs-none.csv:2: expected a row that fills one of" \
    --runs "$tmp/runs-none.csv"
sed '3s/,2,1,16,/,3,1,16,/' "$tmp/runs.csv" >"$tmp/runs-tp.csv"
bad "a run whose plan is invalid" "$tmp/runs-tp.csv:3: " --runs "$tmp/runs-tp.csv"
sed '2s/,8,1,/,12,1,/' "$tmp/runs.csv" >"$tmp/runs-gpus.csv"
bad "GPUs that are no whole nodes" "$tmp/runs-gpus.csv:2: expected fewer GPUs than a node's" \
    --runs "$tmp/runs-gpus.csv"

finish
