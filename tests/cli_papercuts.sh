#!/bin/sh
# cli_papercuts.sh: the command-line papercuts of issue 12, one check (or
# a few) each: boolean flags' =false forms, a plan flag pinning a grid
# axis, --seq-length and the Hugging Face warning, Hugging Face names,
# mixtures of experts read from each key, shipped inputs by short name, one default
# plan and batch rule with the plan printed, the GPU-count error, unknown
# flags' did-you-mean, sizes with K, M, G, integer limits, the tied
# embedding's label, the --top table, and Megatron-Core's layout string.
#
# Run by the test harness from the build folder with $top_srcdir (where
# models/, topologies/ and plans/ live) and $PLANSIM (the binary) set.
# Runs in $top_srcdir, so that short names resolve as a user's would there;
# writes only inside a temporary folder that it removes on exit.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

cd "$top_srcdir" || exit 1

# run NAME ARG...: plansim ARG..., stdout into $tmp/NAME.out, stderr into
# $tmp/NAME.err; prints a problem unless it exits 0
run() {
    name=$1
    shift
    "$PLANSIM" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
        printf '; %s: exit status %s: %s' "$name" "$?" "$(one_line "$tmp/$name.err")"
}

# fails_with NAME LINE ARG...: plansim ARG... must exit 2, print nothing on
# stdout and exactly LINE on stderr
fails_with() {
    name=$1
    line=$2
    shift 2
    "$PLANSIM" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    status=$?
    problem=
    [ "$status" -eq 2 ] || problem="$problem; exit status $status, expected 2"
    [ ! -s "$tmp/$name.out" ] || problem="$problem; stdout is not empty"
    [ "$(cat "$tmp/$name.err")" = "$line" ] ||
        problem="$problem; stderr is '$(one_line "$tmp/$name.err")', expected '$line'"
    check "$name" "$problem"
}

# json_value FILE KEY: the value of "KEY" in a report's JSON
json_value() {
    sed -n "s/^ *\"$2\": \\([^,]*\\),\$/\\1/p" "$1" | head -n 1
}

# differs A B: a problem when files A and B differ, the wall time aside
differs() {
    if ! diff "$1" "$2" | grep -v -e '^[<>] simulated ' -e '^---$' -e '^[0-9,]*c[0-9,]*$' |
        grep -q .; then
        return
    fi
    printf '; %s and %s differ: %s' "$1" "$2" "$(diff "$1" "$2" | head -n 4 | tr '\n' '|')"
}

tiny_node="--model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json --nodes 1"

# ---- boolean flags: =false is false, the bare flag true ----------------------
for flag in sequence-parallel overlap-grad-reduce link-contention; do
    key=$(printf '%s' "$flag" | tr - _)
    # shellcheck disable=SC2086
    problem=$(run false simulate $tiny_node --tp 2 --global-batch-size 8 --format json "--$flag=false")
    # shellcheck disable=SC2086
    problem=$problem$(run true simulate $tiny_node --tp 2 --global-batch-size 8 --format json "--$flag")
    [ "$(json_value "$tmp/false.out" "$key")" = false ] ||
        problem="$problem; --$flag=false gives $key $(json_value "$tmp/false.out" "$key")"
    [ "$(json_value "$tmp/true.out" "$key")" = true ] ||
        problem="$problem; --$flag gives $key $(json_value "$tmp/true.out" "$key")"
    check "--$flag=false gives $key false in the JSON report, --$flag true" "$problem"
done

# ---- a plan flag pins its field over the grid file's axis ----------------------
printf '{"tp": [2, 4, 8]}\n' >"$tmp/grid-tp.json"
# shellcheck disable=SC2086
problem=$(run pin sweep $tiny_node --global-batch-size 16 --grid "$tmp/grid-tp.json" --tp 2 \
    --pp 1 --micro-batch-size 1 --zero-stage 0 --recompute none --schedule 1f1b \
    --virtual-stages 1 --sequence-parallel -j 1 -o -)
tps=$(csv_column "$tmp/pin.out" tp | sort -u | tr '\n' ' ')
[ "$tps" = "2 " ] || problem="$problem; the rows have tp $tps, expected 2 only"
grep -F -q "plansim: note: --tp pins tp to 2: $tmp/grid-tp.json's values 2,4,8 are not swept" \
    "$tmp/pin.err" || problem="$problem; no note on stderr: $(one_line "$tmp/pin.err")"
check "sweep --tp 2 over a grid of tp 2, 4, 8 sweeps tp 2 alone, with a note" "$problem"

# ---- --seq-length, and the warning for a Hugging Face config -------------------
hf=models/hf/llama2-7b-config.json
hf_run="--model $hf --cluster topologies/dgx-h200.json --nodes 1 --tp 8 --global-batch-size 8"
# shellcheck disable=SC2086
problem=$(run hf-max simulate $hf_run --format json)
# issue 33: its max_position_embeddings is 4,096, the length it runs at:
# nothing to warn of
[ ! -s "$tmp/hf-max.err" ] || problem="$problem; a warning: $(one_line "$tmp/hf-max.err")"
# shellcheck disable=SC2086
problem=$problem$(run hf-seq simulate $hf_run --format json --seq-length 2048)
[ ! -s "$tmp/hf-seq.err" ] || problem="$problem; a warning with --seq-length"
# tokens/s x step time / sequences per step = tokens per sequence
tokens=$(awk -v t="$(json_value "$tmp/hf-seq.out" tokens_per_s)" \
    -v s="$(json_value "$tmp/hf-seq.out" step_time_s)" 'BEGIN { printf "%.0f", t * s / 8 }')
[ "$tokens" = 2048 ] || problem="$problem; --seq-length 2048 gives $tokens tokens per sequence"
check "--seq-length sets the tokens per sequence; a config's own 4,096 gives no warning" \
    "$problem"
# issue 21: Mistral-NeMo allows 1,024,000 tokens of context; without
# --seq-length plansim runs 4,096 (and says so), not a million
nemo=tests/data/mistral-nemo-base-2407-hf.json
problem=$(run hf-nemo simulate --model "$nemo" --cluster topologies/dgx-h100.json --nodes 1 \
    --tp 8 --global-batch-size 8 --format json)
grep -F -q "plansim: warning: $nemo: sequence length 4096, as the config gives no training length (max_position_embeddings, the longest context the model takes: 1024000)" \
    "$tmp/hf-nemo.err" || problem="$problem; stderr: $(one_line "$tmp/hf-nemo.err")"
tokens=$(awk -v t="$(json_value "$tmp/hf-nemo.out" tokens_per_s)" \
    -v s="$(json_value "$tmp/hf-nemo.out" step_time_s)" 'BEGIN { printf "%.0f", t * s / 8 }')
[ "$tokens" = 4096 ] || problem="$problem; $tokens tokens per sequence"
check "a Hugging Face config of a million-token context runs 4,096 tokens, with a warning" \
    "$problem"
# shellcheck disable=SC2086
problem=$(run sweep-seq sweep $tiny_node --tp 1 --pp 1 --micro-batch-size 1 --zero-stage 0 \
    --recompute none --no-sequence-parallel --schedule 1f1b --virtual-stages 1 --offload none \
    --global-batch-size 8 --seq-length 64 -j 1 -o -)
# shellcheck disable=SC2086
problem=$problem$(run sim-seq simulate $tiny_node --global-batch-size 8 --seq-length 64 \
    --format csv)
[ "$(csv_column "$tmp/sweep-seq.out" tokens_per_s)" = \
    "$(csv_column "$tmp/sim-seq.out" tokens_per_s)" ] ||
    problem="$problem; sweep and simulate differ under --seq-length"
check "sweep takes --seq-length as simulate does" "$problem"
fails_with "--seq-length 0 is refused" \
    'plansim: --seq-length: expected a positive integer (tokens per sequence), optionally with a suffix K, M, G or T (128K = 131072), got "0"' \
    simulate --seq-length 0

# ---- Hugging Face names: _name_or_path, else the folder of a config.json ----------
mkdir -p "$tmp/Llama-2-7b" "$tmp/hub/models--meta-llama--Llama-2-7b-hf/snapshots/0123abc"
grep -v '"_name_or_path"' "$hf" >"$tmp/Llama-2-7b/config.json"
cp "$tmp/Llama-2-7b/config.json" "$tmp/hub/models--meta-llama--Llama-2-7b-hf/snapshots/0123abc/"
problem=$(run named-folder simulate --model "$tmp/Llama-2-7b/config.json" --seq-length 4096 \
    --nodes 1 --tp 8 --global-batch-size 8 --format json)
[ "$(json_value "$tmp/named-folder.out" model)" = '"Llama-2-7b"' ] ||
    problem="$problem; named $(json_value "$tmp/named-folder.out" model)"
problem=$problem$(run named-cache simulate --seq-length 4096 --nodes 1 --tp 8 \
    --model "$tmp/hub/models--meta-llama--Llama-2-7b-hf/snapshots/0123abc/config.json" \
    --global-batch-size 8 --format json)
[ "$(json_value "$tmp/named-cache.out" model)" = '"meta-llama/Llama-2-7b-hf"' ] ||
    problem="$problem; named $(json_value "$tmp/named-cache.out" model) in the cache"
check "a config.json is named after its folder, or its repository in the Hugging Face cache" \
    "$problem"

# ---- mixtures of experts are read from each key (docs/model.md) -----------------
for key in num_local_experts n_routed_experts num_experts; do
    sed "s/^{/{\"$key\": 8,/" "$hf" >"$tmp/moe.json"
    problem=$(run "moe-$key" simulate --model "$tmp/moe.json" --seq-length 4096 --nodes 1 \
        --ep 8 --global-batch-size 8)
    grep -q "^comm ep  *all_to_all" "$tmp/moe-$key.out" ||
        problem="$problem; no comm ep all_to_all line"
    check "a Hugging Face config with $key 8 is a mixture of experts" "$problem"
done
sed 's/^{/{"num_experts": 1,/' "$hf" >"$tmp/one-expert.json"
problem=$(run one-expert simulate --model "$tmp/one-expert.json" --seq-length 4096 --nodes 1 \
    --tp 8 --global-batch-size 8)
check "a config with num_experts 1 is a dense model" "$problem"

# ---- shipped inputs by short name ------------------------------------------------
problem=$(run short simulate --model llama2-70b --cluster dgx-h100 --nodes 8 --tp 8 --pp 2 \
    --global-batch-size 16)
problem=$problem$(run long simulate --model models/llama2-70b.json \
    --cluster topologies/dgx-h100.json --nodes 8 --tp 8 --pp 2 --global-batch-size 16)
problem=$problem$(differs "$tmp/short.out" "$tmp/long.out")
check "--model llama2-70b and --cluster dgx-h100 are the shipped files" "$problem"
# the folders looked in depend on where plansim is built and installed:
# the line's start and end do not; the names are the folder's
problem=
"$PLANSIM" simulate --cluster dgx-h10 >"$tmp/near.out" 2>"$tmp/near.err" && problem="exit 0"
clusters=$(shipped_names topologies)
case $(cat "$tmp/near.err") in
"plansim: --cluster: expected a file or a shipped cluster's name, got \"dgx-h10\" (did you mean \"dgx-h100\"?); looked in topologies, "*"/topologies: the shipped clusters there are $clusters") ;;
*) problem="$problem; stderr is '$(one_line "$tmp/near.err")'" ;;
esac
check "an unknown short name lists the folders, the shipped names and the nearest" "$problem"

# ---- one rule for the default plan and batch; the plan is printed ----------------
problem=$(run default simulate)
problem=$problem$(run default-named simulate --model models/gpt3-175b.json)
problem=$problem$(differs "$tmp/default.out" "$tmp/default-named.out")
# the shipped plans/seed-512.json, every key of it
plan='plan: --tp 8 --pp 8 --dp 8 --micro-batch-size 1 --global-batch-size 512 --schedule 1f1b --zero-stage 1 --sequence-parallel --recompute selective'
[ "$(sed -n 2p "$tmp/default.out")" = "$plan" ] ||
    problem="$problem; the second line is '$(sed -n 2p "$tmp/default.out")'"
check "naming the default model is the default run, whose second line is its plan" "$problem"
# the printed plan's flags give the same run
# shellcheck disable=SC2086
problem=$(run plan-line simulate $tiny_node --pp 2 --zero-stage 2 --recompute full)
flags=$(sed -n 's/^plan: //p' "$tmp/plan-line.out")
# shellcheck disable=SC2086
problem=$problem$(run plan-again simulate $tiny_node $flags)
problem=$problem$(differs "$tmp/plan-line.out" "$tmp/plan-again.out")
check "the plan line's flags run the same plan" "$problem"
# shellcheck disable=SC2086
problem=$(run batch-sim simulate $tiny_node --format json)
# shellcheck disable=SC2086
problem=$problem$(run batch-sweep sweep $tiny_node --tp 1 --pp 1 --micro-batch-size 1 \
    --zero-stage 0 --recompute none --no-sequence-parallel --schedule 1f1b --virtual-stages 1 \
    --offload none -j 1 -o -)
[ "$(json_value "$tmp/batch-sim.out" global_batch_size)" = 1024 ] ||
    problem="$problem; simulate's batch is $(json_value "$tmp/batch-sim.out" global_batch_size)"
batches=$(csv_column "$tmp/batch-sweep.out" global_batch_size | sort -u | tr '\n' ' ')
[ "$batches" = "1024 " ] || problem="$problem; sweep's batch is $batches"
check "simulate and sweep both default to 1024 sequences per step" "$problem"

# ---- too many GPUs: the product and the nodes that hold it ----------------------
# shellcheck disable=SC2086
fails_with "--tp 2 --pp 2 --dp 3 on 8 GPUs names 12 and suggests --nodes 2" \
    'plansim: --dp: expected tp 2 x pp 2 x dp 3 = 12 at most the cluster'"'"'s 8 GPUs (try --nodes 2: 16 GPUs), got 3' \
    simulate $tiny_node --tp 2 --pp 2 --dp 3
# shellcheck disable=SC2086
fails_with "--tp 4 --pp 4 on 8 GPUs suggests --nodes 2 exactly" \
    'plansim: --pp: expected tp 4 x pp 4 = 16 at most the cluster'"'"'s 8 GPUs (try --nodes 2: 16 GPUs), got 4' \
    simulate $tiny_node --tp 4 --pp 4

# ---- unknown flags ----------------------------------------------------------------
fails_with "an unknown flag suggests the nearest" \
    'plansim: simulate: --sequence-paralel: unknown option (did you mean --sequence-parallel?)' \
    simulate --sequence-paralel
fails_with "a plan flag's --no- form is suggested too" \
    'plansim: sweep: --no-overlap-grad: unknown option (did you mean --no-overlap-grad-reduce?)' \
    sweep --no-overlap-grad
fails_with "a flag far from every other gets no suggestion" \
    'plansim: collective: --xyzzy: unknown option' collective --xyzzy=3

# ---- sizes with K, M, G, as nccl-tests reads them (powers of 1024) ---------------
problem=$(run suffix collective --min-bytes 1M --max-bytes 4m --format csv)
problem=$problem$(run bytes collective --min-bytes 1048576 --max-bytes 4194304 --format csv)
problem=$problem$(differs "$tmp/suffix.out" "$tmp/bytes.out")
problem=$problem$(run giga collective --min-bytes 1G --max-bytes 1G --format csv)
[ "$(csv_column "$tmp/giga.out" size_bytes)" = 1073741824 ] ||
    problem="$problem; 1G is $(csv_column "$tmp/giga.out" size_bytes) bytes"
problem=$problem$(run kilo collective --min-bytes 1.5k --max-bytes 1.5K --format csv)
[ "$(csv_column "$tmp/kilo.out" size_bytes)" = 1536 ] ||
    problem="$problem; 1.5k is $(csv_column "$tmp/kilo.out" size_bytes) bytes"
check "--min-bytes and --max-bytes take K, M and G as 2^10, 2^20 and 2^30" "$problem"
fails_with "a size with another suffix is refused" \
    'plansim: --min-bytes: expected a whole number of bytes from 1 to 1e+15, optionally with a suffix K, M, G or T (128K = 131072), got "1P"' \
    collective --min-bytes 1P

# ---- limits print as integers ------------------------------------------------------
fails_with "--nodes 0 gives its limit as an integer" \
    'plansim: --nodes: expected an integer from 1 to 1048576, optionally with a suffix K, M, G or T (128K = 131072), got "0"' \
    simulate --nodes 0

# ---- the tied embedding's gradients have their own label ---------------------------
# gpt3-1.3b ties its embedding; on pp 2 stages 0 and 1 all-reduce its
# gradients once per step, in the type gradients accumulate in (fp32 by
# default, as data parallelism reduces them: Megatron-LM sums main_grad):
# a ring over 2 sends 4 V h / tp = 4 x 51200 x 2048 bytes
problem=$(run tied simulate --model models/gpt3-1.3b.json --nodes 1 --pp 2 --zero-stage 1 \
    --global-batch-size 8 --format csv)
# 419430400 bytes = 0.390625 GiB
[ "$(csv_column "$tmp/tied.out" comm_embedding_gib)" = 0.390625 ] ||
    problem="$problem; comm_embedding_gib $(csv_column "$tmp/tied.out" comm_embedding_gib)"
[ "$(csv_column "$tmp/tied.out" comm_dp_gib)" = 0 ] ||
    problem="$problem; comm_dp_gib $(csv_column "$tmp/tied.out" comm_dp_gib) under ZeRO-1"
check "under ZeRO-1 the tied embedding's all-reduce is comm embedding, not comm dp" "$problem"

# ---- the --top table -------------------------------------------------------------
# shellcheck disable=SC2086
problem=$(run top sweep $tiny_node --global-batch-size 16 --grid "$tmp/grid-tp.json" --pp 1 \
    --micro-batch-size 1 --zero-stage 0 --recompute none --schedule 1f1b --virtual-stages 1 \
    --no-sequence-parallel -j 1 --top 2)
header='rank   tokens/s   step(s) MFU(%) TFLOP/s/GPU peak(GiB)  plan'
[ "$(sed -n 1p "$tmp/top.out")" = "$header" ] ||
    problem="$problem; the first line is '$(sed -n 1p "$tmp/top.out")'"
command=$(sed -n 's/^best: plansim //p' "$tmp/top.out")
[ -n "$command" ] || problem="$problem; no 'best: plansim ...' line"
# shellcheck disable=SC2086
problem=$problem$(run winner $command --format json)
# MFU (%) and TFLOP/s per GPU of row 1: the winner's MFU and its model
# TFLOP/s a GPU (Megatron-Bridge's count)
mfu=$(json_value "$tmp/winner.out" mfu)
tflops=$(json_value "$tmp/winner.out" model_tflops_per_gpu)
expected=$(awk -v m="$mfu" -v t="$tflops" 'BEGIN { printf "%.1f %.1f", 100 * m, t }')
got=$(awk 'NR == 2 { print $4, $5 }' "$tmp/top.out")
[ "$got" = "$expected" ] || problem="$problem; row 1 has MFU, TFLOP/s $got, the winner $expected"
check "the --top table has a header, MFU, TFLOP/s per GPU and the winner's command" "$problem"

# ---- issue 21: the papercuts of a new user -----------------------------------------
# The time split names the whole of the critical rank's step: compute,
# exposed communication and waiting (the rest) add up to 100 % (to the
# rounding of one decimal each), on 2 stages where the rest is not nil.
problem=$(run split simulate --model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json \
    --nodes 1 --tp 2 --pp 2 --global-batch-size 8)
sum=$(sed -n 's/^time split .*(\([0-9.]*\) %).*(\([0-9.]*\) %).*(\([0-9.]*\) %) on rank.*/\1 \2 \3/p' \
    "$tmp/split.out" | awk '{ printf "%.1f", $1 + $2 + $3 }')
awk -v s="$sum" 'BEGIN { exit !(s >= 99.85 && s <= 100.15) }' ||
    problem="$problem; the shares add up to '$sum': $(grep '^time split' "$tmp/split.out")"
grep -q '^time split .*waiting [0-9.e-]* s (' "$tmp/split.out" ||
    problem="$problem; no waiting share"
check "the time split's compute, exposed communication and waiting add up to 100 %" "$problem"

# dp is derived from the GPUs, as Megatron-LM derives it from the world
# size: --tp 4 over the default plan (tp 8 x pp 8 x dp 8 on 512 GPUs)
# runs dp 16, not dp 8 on 256 GPUs; a plan given fewer GPUs than the
# cluster's says so
problem=$(run tp4 simulate --tp 4)
grep -q '^gpt3-175b on dgx-a100-80gb: 512 GPUs = tp 4 x pp 8 x dp 16,' "$tmp/tp4.out" ||
    problem="$problem; $(head -n 1 "$tmp/tp4.out")"
[ ! -s "$tmp/tp4.err" ] || problem="$problem; stderr: $(one_line "$tmp/tp4.err")"
check "--tp 4 over the default plan derives dp 16 from the 512 GPUs" "$problem"
problem=$(run idle simulate --model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json \
    --nodes 2 --tp 2 --pp 2 --dp 2 --global-batch-size 8)
grep -F -q "plansim: warning: the plan runs on 8 of the cluster's 16 GPUs (tp 2 x pp 2 x dp 2); --dp or --nodes sets them" \
    "$tmp/idle.err" || problem="$problem; stderr: $(one_line "$tmp/idle.err")"
check "a plan on 8 of 16 GPUs says so on stderr" "$problem"

# An error names the cause, not a consequence: tp 3 divides neither
# Llama 2 7B's 32 heads nor the 16 GPUs, and the model's rule is named
# before dp (16 / 3) is derived and the batch found not to divide by it.
fails_with "--tp 3 on 16 GPUs names the 32 heads, not the batch" \
    "plansim: --tp: expected a divisor of attention_heads = 32 (Megatron-Core splits the heads over the tensor-parallel group), got 3" \
    simulate --model llama2-7b --nodes 2 --tp 3

# A sweep without -o prints the table of its best plans, not a CSV row for
# each plan (-o - asks for the CSV on stdout); the table lists each plan
# once: recompute none and selective under FlashAttention replay alike,
# one row says so.
printf '{"recompute": ["none", "selective"], "zero_stage": [0, 1]}\n' >"$tmp/grid-twins.json"
twins="sweep $tiny_node --tp 1 --pp 1 --micro-batch-size 1 --global-batch-size 16 --schedule 1f1b
    --virtual-stages 1 --no-sequence-parallel --offload none --no-tp-comm-overlap
    --grid $tmp/grid-twins.json -j 1"
# shellcheck disable=SC2086
problem=$(run twins $twins)
[ "$(sed -n 1p "$tmp/twins.out")" = "$header" ] ||
    problem="$problem; stdout starts '$(sed -n 1p "$tmp/twins.out")', not the table's header"
[ "$(grep -c '^ *[0-9]' "$tmp/twins.out")" = 2 ] ||
    problem="$problem; $(grep -c '^ *[0-9]' "$tmp/twins.out") rows for 2 distinct plans of 4"
[ "$(grep -c 'recompute none, SP off, 1f1b (also --recompute selective)$' "$tmp/twins.out")" = 2 ] ||
    problem="$problem; the twins are not named: $(one_line "$tmp/twins.out")"
# stderr names the space walked, then the plans and the valid ones
[ "$(sed -n 1,2p "$tmp/twins.err" | tr '\n' '|')" = \
    "sweep: zero_stage 0,1 x recompute none,selective|sweep: 4 combinations, 4 valid: 4 simulated (2 replayed), 0 pruned, 0 does_not_fit, 0 invalid|" ] ||
    problem="$problem; stderr: $(one_line "$tmp/twins.err")"
# shellcheck disable=SC2086
problem=$problem$(run twins-csv $twins -o -)
[ "$(grep -c ',simulated,' "$tmp/twins-csv.out")" = 4 ] ||
    problem="$problem; -o - wrote $(grep -c ',simulated,' "$tmp/twins-csv.out") simulated rows, not 4"
check "sweep prints its best plans, each once with its twins named, and its space; -o - writes the CSV" "$problem"

# The fit advice searches deeper than two changes: Llama 2 70B on 8 A100s
# fits with ZeRO-3, the optimizer on the host and full recomputation of
# the fewest layers that fit (61 of 80: 79.09 GiB replayed; every layer
# peaks at 61.35 GiB), where one or two changes do not; and --explain
# advises what fits the plan (sequence parallelism before its overlap).
problem=$(run deep simulate --model llama2-70b --nodes 1)
grep -q '^  --zero-stage 3 --offload optimizer --recompute full --recompute-num-layers 61  *step [0-9.]* s, peak 79.09 GiB$' \
    "$tmp/deep.out" || problem="$problem; advice: $(sed -n '2,4p' "$tmp/deep.out" | tr '\n' '|')"
check "the advice for Llama 2 70B on 8 A100s finds ZeRO-3 + optimizer offload + full recompute" \
    "$problem"
problem=$(run explain simulate --model gpt3-175b --nodes 4 --tp 16 --pp 2 --global-batch-size 64 \
    --explain)
grep -q 'the largest exposed is tp: keep tp within a node (--tp 8 or less' "$tmp/explain.out" ||
    problem="$problem; $(grep 'largest exposed' "$tmp/explain.out")"
problem=$problem$(run explain8 simulate --model llama2-7b --nodes 1 --tp 8 --global-batch-size 64 \
    --explain)
grep -q 'largest exposed is tp: sequence parallelism, its collectives overlapped with the GEMMs (--sequence-parallel --tp-comm-overlap)' \
    "$tmp/explain8.out" ||
    problem="$problem; tp 8 in a node of 8, no SP: $(grep 'largest exposed' "$tmp/explain8.out")"
check "--explain keeps tp within a node only when it spans nodes, and overlaps it with SP" "$problem"

# One parser for counts and sizes (text_parse_count), suffixes in either
# case: token totals in powers of ten (2t = 2T = 2e12), lengths, counts
# and sizes in powers of two (4k = 4096 tokens a sequence, 1k sequences a
# batch); an integer is not written with a fraction (4096.0).
problem=$(run upper simulate --model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json \
    --nodes 1 --seq-length 4096 --global-batch-size 1024 --tokens 2T)
problem=$problem$(run lower simulate --model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json \
    --nodes 1 --seq-length 4k --global-batch-size 1k --tokens 2t)
problem=$problem$(differs "$tmp/upper.out" "$tmp/lower.out")
grep -q '^training         2e+12 tokens' "$tmp/lower.out" ||
    problem="$problem; $(grep '^training' "$tmp/lower.out")"
check "--seq-length 4k, --global-batch-size 1k and --tokens 2t read as 4096, 1024 and 2T" "$problem"
fails_with "--seq-length 4096.0 is refused: an integer" \
    'plansim: --seq-length: expected a positive integer (tokens per sequence), optionally with a suffix K, M, G or T (128K = 131072), got "4096.0"' \
    simulate --seq-length 4096.0

# Flags that change nothing in the plan say so (on stderr; the run goes
# on); a forced algorithm the cluster lacks is refused.
for case in "cp-algorithm all_to_all|ring" "moe-imbalance-percent 150|100" \
    "moe-dispatcher all_gather|all_to_all"; do
    flag=${case%%|*} runs=${case#*|}
    # shellcheck disable=SC2086
    problem=$(run inert simulate --model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json \
        --nodes 1 --$flag)
    grep -F -q "plansim: warning: --$flag changes nothing in this plan, which runs as $runs" \
        "$tmp/inert.err" || problem="$problem; stderr: $(one_line "$tmp/inert.err")"
    check "--$flag on tiny-gpt (dense, cp 1) warns that it changes nothing" "$problem"
done
# ZeRO over one data-parallel rank shards nothing: tp 8 on 8 GPUs
problem=$(run zero-one simulate --model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json \
    --nodes 1 --tp 8 --zero-stage 2 --global-batch-size 8)
grep -F -q "plansim: warning: --zero-stage 2 changes nothing in this plan, which runs as 0" \
    "$tmp/zero-one.err" || problem="$problem; stderr: $(one_line "$tmp/zero-one.err")"
check "--zero-stage 2 with dp 1 warns that it changes nothing" "$problem"
fails_with "--collective-algorithm nvls on A100 is refused, naming the cluster's key" \
    "plansim: topologies/dgx-a100-80gb.json: \$.intra_node.nvls: expected NVLink SHARP in the node's switches for collective_algorithm nvls (--collective-algorithm), got none" \
    simulate --model models/tiny-gpt.json --cluster topologies/dgx-a100-80gb.json --nodes 1 \
    --collective-algorithm nvls

# Part of each node: 128 GPUs of two GB200 NVL72 racks, 64 used in each,
# said in the headline; the sweep's best command keeps the flag.
problem=$(run placed simulate --model models/tiny-gpt.json --cluster topologies/gb200-nvl72.json \
    --nodes 2 --gpus-per-node 64 --tp 2 --global-batch-size 64)
grep -F -q "tiny-gpt on gb200-nvl72: 128 GPUs on 2 nodes of 72, 64 used in each = tp 2 x pp 1 x dp 64," \
    "$tmp/placed.out" || problem="$problem; headline: $(sed -n 1p "$tmp/placed.out")"
check "--gpus-per-node 64 on NVL72 racks of 72 says how the GPUs are laid" "$problem"

# Megatron-Core's layout string: tiny-gpt's 4 layers as a layer a chunk
# on pp 2 is virtual_stages 2, interleaved; the plan line quotes it, and
# pasted back (through a shell) it gives the same step. A bad one is one line.
problem=$(run layout simulate $tiny_node --pp 2 --global-batch-size 16 \
    --pipeline-model-parallel-layout 'Et|t|t|tL')
plan_line=$(sed -n 's/^plan: //p' "$tmp/layout.out")
case $plan_line in
*"--schedule interleaved --virtual-stages 2 --pipeline-model-parallel-layout 'Et|(t|)*2,tL'"*) ;;
*) problem="$problem; plan line: $plan_line" ;;
esac
problem="$problem$(eval "run layout-again simulate $tiny_node $plan_line")"
[ "$(grep '^step time' "$tmp/layout.out")" = "$(grep '^step time' "$tmp/layout-again.out")" ] ||
    problem="$problem; the plan line's step differs"
check "--pipeline-model-parallel-layout sets the chunks, virtual_stages and schedule, written back" \
    "$problem"
fails_with "a layout without the loss is refused in one line" \
    "plansim: --pipeline-model-parallel-layout: expected a Megatron-Core pipeline layout (chunks split by '|', E the embedding, t a transformer layer, m a multi-token-prediction layer, L the loss, x*N and (...)*N repeating, commas ignored): the loss L last in the last chunk, got \"Et|ttt\"" \
    simulate $tiny_node --pp 2 --pipeline-model-parallel-layout 'Et|ttt'

finish
