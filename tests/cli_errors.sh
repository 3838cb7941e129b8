#!/bin/sh
# cli_errors.sh: every kind of bad input makes plansim exit with status 2,
# print exactly one line "plansim: ..." on stderr naming the offending field
# (JSON path or flag) and the bad value, print nothing on stdout, and, when
# given -o FILE, leave no FILE (nor a temporary file beside it) behind.
#
# Run by the test harness from the build folder with $top_srcdir (where
# models/, topologies/ and plans/ live) and $PLANSIM (the binary) set.
# Writes only inside a temporary folder that it removes on exit.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

# check_run LABEL ARG...: runs plansim with ARG... and prints what is wrong
# with the outcome (nothing when all is right). The expected fragments of
# the error line are in $tmp/patterns, one a line.
check_run() {
    label=$1
    shift
    "$PLANSIM" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    status=$?
    problems=
    if [ "$status" -ne 2 ]; then
        problems="$problems; exit status $status, expected 2"
    fi
    # exactly one newline-terminated line: wc counts newlines, awk counts
    # lines including an unterminated last one
    nl=$(wc -l <"$tmp/stderr" | tr -d ' ')
    lines=$(awk 'END { print NR }' "$tmp/stderr")
    if [ "$lines" -ne 1 ]; then
        problems="$problems; stderr has $lines lines, expected exactly 1"
    elif [ "$nl" -ne 1 ]; then
        problems="$problems; stderr's line does not end with a newline"
    fi
    first=$(head -n 1 "$tmp/stderr")
    case $first in
    "plansim: "*) ;;
    *) problems="$problems; stderr does not start with \"plansim: \"" ;;
    esac
    while IFS= read -r pattern; do
        if ! grep -F -q -e "$pattern" "$tmp/stderr"; then
            problems="$problems; stderr lacks '$pattern'"
        fi
    done <"$tmp/patterns"
    if [ -s "$tmp/stdout" ]; then
        problems="$problems; stdout is not empty ($(wc -c <"$tmp/stdout" | tr -d ' ') bytes)"
    fi
    if [ -n "$problems" ]; then
        printf '%s%s; stderr: %s' "$label" "$problems" "$(one_line "$tmp/stderr")"
    fi
}

# expect_fail NAME PATTERN... -- ARG...: runs plansim with ARG... twice,
# once as given and once with -o FILE added, and checks both outcomes.
expect_fail() {
    name=$1
    shift
    : >"$tmp/patterns"
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        printf '%s\n' "$1" >>"$tmp/patterns"
        shift
    done
    if [ $# -eq 0 ]; then
        not_ok "$name" "test bug: no -- before plansim's arguments"
        return
    fi
    shift
    problem=$(check_run "" "$@")
    if [ -z "$problem" ]; then
        rm -rf "$tmp/o"
        mkdir "$tmp/o"
        problem=$(check_run "with -o FILE" "$@" -o "$tmp/o/report")
        left=$(cd "$tmp/o" && find . ! -name . -print | tr '\n' ' ')
        if [ -z "$problem" ] && [ -n "$left" ]; then
            problem="with -o FILE: left behind in the output folder: $left"
        fi
    fi
    if [ -z "$problem" ]; then
        ok "$name"
    else
        not_ok "$name" "${problem#; }"
    fi
}

# derive SRC DST SED-SCRIPT: DST is SRC edited by SED-SCRIPT; fails (with a
# "not ok" line) when the edit changed nothing, so that a changed shipped
# file cannot silently turn a case into a good input.
derive() {
    if ! sed "$3" "$1" >"$2" || cmp -s "$1" "$2"; then
        not_ok "setup $(basename "$2")" "sed '$3' did not change $1"
        return 1
    fi
}

# ---- model files ---------------------------------------------------------

m=$tmp/malformed.json
derive "$tiny" "$m" 's/"layers": 4,/"layers": ,/' &&
    expect_fail "malformed model JSON" "$m" "line 3, column 13" "malformed JSON" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/layers-negative.json
derive "$tiny" "$m" 's/"layers": 4/"layers": -3/' &&
    expect_fail "model layers -3" "$m" '$.layers' "-3" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/layers-string.json
derive "$tiny" "$m" 's/"layers": 4/"layers": "32"/' &&
    expect_fail "model layers as a string" "$m" '$.layers' '"32"' -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/no-hidden.json
derive "$tiny" "$m" '/"hidden_size"/d' &&
    expect_fail "model missing hidden_size" "$m" '$.hidden_size' "missing" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/vocab-zero.json
derive "$tiny" "$m" 's/"vocab_size": 1024/"vocab_size": 0/' &&
    expect_fail "model vocab_size 0" "$m" '$.vocab_size' "got 0" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/hiden.json
derive "$tiny" "$m" 's/"hidden_size"/"hiden_size"/' &&
    expect_fail "model unknown key hiden_size" "$m" '$.hiden_size' "unknown key" \
        '"hidden_size"' -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/heads.json
derive "$tiny" "$m" 's/"attention_heads": 8/"attention_heads": 7/' &&
    expect_fail "model attention_heads not dividing hidden_size" "$m" \
        '$.attention_heads' "got 7" "256" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/kv-heads.json
derive "$tiny" "$m" 's/"kv_heads": 8/"kv_heads": 3/' &&
    expect_fail "model kv_heads not dividing attention_heads" "$m" '$.kv_heads' "got 3" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/huge.json
derive "$tiny" "$m" 's/"hidden_size": 256/"hidden_size": 2000000000/; s/"layers": 4/"layers": 100000/' &&
    expect_fail "model sizes overflowing 2^53" "$m" "2^53" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/array.json
printf '[]\n' >"$m"
expect_fail "model file that is a JSON array" "$m" ': $: ' "JSON object" "[]" -- \
    simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/does-not-exist.json
expect_fail "model file that does not exist" "$m" -- \
    simulate --model "$m" --cluster "$a100" --nodes 1

# ---- cluster files -------------------------------------------------------

c=$tmp/tflops-negative.json
derive "$a100" "$c" 's/"peak_tflops": 312/"peak_tflops": -312/' &&
    expect_fail "cluster peak_tflops negative" "$c" '$.gpu.peak_tflops' "-312" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1

c=$tmp/efficiency.json
derive "$a100" "$c" 's/"compute_efficiency": 0.75/"compute_efficiency": 1.5/' &&
    expect_fail "cluster compute_efficiency 1.5" "$c" '$.gpu.compute_efficiency' "1.5" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1

c=$tmp/no-inter-node.json
cat >"$c" <<'EOF'
{
  "name": "dgx-a100-80gb",
  "nodes": 64,
  "gpus_per_node": 8,
  "gpu": {
    "name": "A100-SXM4-80GB",
    "peak_tflops": 312,
    "memory_GiB": 80,
    "memory_bandwidth_GBps": 2039,
    "compute_efficiency": 0.75,
    "memory_efficiency": 0.85,
    "kernel_launch_us": 2.0
  },
  "intra_node": {
    "bandwidth_GBps": 300,
    "latency_us": 2.0
  }
}
EOF
expect_fail "cluster missing inter_node" "$c" '$.inter_node' "nothing" -- \
    simulate --model "$tiny" --cluster "$c" --nodes 1

c=$tmp/gpu-key.json
derive "$a100" "$c" 's/"kernel_launch_us"/"kernel_launch_ms"/' &&
    expect_fail "cluster unknown key in gpu" "$c" '$.gpu.kernel_launch_ms' "unknown key" \
        '"kernel_launch_us"' -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1

# ---- plan files ----------------------------------------------------------

p=$tmp/tensor-parallel.json
printf '{\n  "tensor_parallel": 2\n}\n' >"$p"
expect_fail "plan unknown key tensor_parallel" "$p" '$.tensor_parallel' "unknown key" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$p"

p=$tmp/micro-batch.json
printf '{\n  "micro_batch": 2\n}\n' >"$p"
expect_fail "plan unknown key micro_batch" "$p" '$.micro_batch' "unknown key" \
    '"micro_batch_size"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$p"

p=$tmp/zero.json
printf '{\n  "zero_stage": 7\n}\n' >"$p"
expect_fail "plan zero_stage 7" "$p" '$.zero_stage' "got 7" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$p"

p=$tmp/zigzag.json
printf '{\n  "schedule": "zigzag"\n}\n' >"$p"
expect_fail "plan schedule zigzag" "$p" '$.schedule' '"zigzag"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$p"

p=$tmp/virtual.json
printf '{\n  "virtual_stages": 2,\n  "schedule": "1f1b"\n}\n' >"$p"
expect_fail "plan virtual_stages 2 with schedule 1f1b" "$p" '$.virtual_stages' "got 2" \
    "interleaved" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$p"

# ---- flags ---------------------------------------------------------------

expect_fail "global_batch_size not a multiple of micro_batch_size x dp" \
    "--global-batch-size" "100" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 \
    --dp 8 --micro-batch-size 4 --global-batch-size 100

expect_fail "--tp abc" "--tp" '"abc"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp abc

expect_fail "--tp 0" "--tp" '"0"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 0

expect_fail "--dp 1000000 larger than the cluster" "--dp" "1000000" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --dp 1000000

expect_fail "--nodes 0" "--nodes" '"0"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 0

expect_fail "--format xml" "--format" '"xml"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --format xml

expect_fail "unknown flag --tpp" "--tpp" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tpp 2

# tiny-gpt has 4 layers
expect_fail "--pp 3 does not divide the layers" "--pp" "4 layers" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 3

expect_fail "layers_per_stage not adding up" "--layers-per-stage" "add up to the model's 4" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --layers-per-stage 1,2

expect_fail "layers_per_stage of the wrong length" "--layers-per-stage" "pp x virtual_stages = 2" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --layers-per-stage 1,1,2

expect_fail "interleaved with micro-batches not a multiple of pp" "--global-batch-size" \
    "a multiple of pp = 2" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --dp 1 --global-batch-size 3 \
    --schedule interleaved --virtual-stages 2

expect_fail "--rank-order unknown" "--rank-order" "\"dp-tp-pp\"" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --rank-order tp-dp

# tiny-gpt has 8 heads, 8 KV heads and an FFN of 1024
expect_fail "--tp 3 does not divide the heads" "--tp" "attention_heads = 8" "got 3" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 3

expect_fail "--sequence-parallel with tp 1" "--sequence-parallel" "tp = 1" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --sequence-parallel

expect_fail "interleaved schedule with pp 1" "--schedule" "interleaved" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --schedule interleaved

# a step too big to hold in memory is refused before it is built
expect_fail "step of too many tasks" "--global-batch-size" "at most 50000000 tasks" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 16 --global-batch-size 2000000000

finish
