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
derive "$tiny" "$m" 's/"hidden_size": 256/"hidden_size": 2000000000/; s/"layers": 4/"layers": 65536/' &&
    expect_fail "model sizes overflowing 2^53" "$m" "2^53" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

# MODEL_MAX_LAYERS (model.h): a walk over the layers stays cheap
m=$tmp/deep.json
derive "$tiny" "$m" 's/"layers": 4/"layers": 65537/' &&
    expect_fail "model of more layers than plansim takes" "$m" '$.layers' "1 to 65536" \
        "got 65537" -- simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/array.json
printf '[]\n' >"$m"
expect_fail "model file that is a JSON array" "$m" ': $: ' "JSON object" "[]" -- \
    simulate --model "$m" --cluster "$a100" --nodes 1

m=$tmp/does-not-exist.json
expect_fail "model file that does not exist" "$m" -- \
    simulate --model "$m" --cluster "$a100" --nodes 1

# a hybrid model's pattern (Nemotron-H's hybrid_override_pattern): a
# known symbol a layer, as many as the layers; Mamba-2's heads and groups
# split over tp; no context parallelism of the scan
nemotron=$top_srcdir/models/hf/nemotron-h-8b.json
h100=$top_srcdir/topologies/dgx-h100.json

m=$tmp/pattern-symbol.json
derive "$nemotron" "$m" 's/"M-M-M-M\*-/"M-M-X-M*-/' &&
    expect_fail "hybrid pattern with an unknown symbol" "$m" '$.hybrid_override_pattern' \
        'symbols of "M*-E"' "layer 4" -- \
        simulate --model "$m" --cluster "$h100" --nodes 1 --tp 2 --pp 2

m=$tmp/pattern-short.json
derive "$nemotron" "$m" 's/"M-M-M-M\*-/"M-M-M*-/' &&
    expect_fail "hybrid pattern shorter than the layers" "$m" '$.hybrid_override_pattern' \
        "num_hidden_layers = 52 symbols" -- \
        simulate --model "$m" --cluster "$h100" --nodes 1 --tp 2 --pp 2

m=$tmp/groups-tp.json
derive "$nemotron" "$m" 's/"num_key_value_heads": 8/"num_key_value_heads": 32/' &&
    expect_fail "Mamba groups that tp does not divide" "--tp" "n_groups = 8" "got 16" -- \
        simulate --model "$m" --cluster "$h100" --nodes 2 --tp 16 --seq-length 8192

expect_fail "context parallelism of a Mamba model" "--cp" "Mamba-2" -- \
    simulate --model "$nemotron" --cluster "$h100" --nodes 1 --cp 2 --seq-length 8192

# ---- cluster files -------------------------------------------------------

# the A100 cluster with its GPU file's keys in it, for edits of either
a100_whole=$tmp/a100-whole.json
inline_gpu "$a100" >"$a100_whole"

c=$tmp/tflops-negative.json
derive "$a100_whole" "$c" 's/"peak_tflops": 312/"peak_tflops": -312/' &&
    expect_fail "cluster peak_tflops negative" "$c" '$.gpu.peak_tflops' "-312" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1

c=$tmp/efficiency.json
derive "$a100_whole" "$c" 's/"compute_efficiency": 0.75/"compute_efficiency": 1.5/' &&
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
derive "$a100_whole" "$c" 's/"kernel_launch_us"/"kernel_launch_ms"/' &&
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
expect_fail "--pp 8 has more stages than the 4 layers" "--pp" "at most the model's 4 layers" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 8

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
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 3 --dp 2
expect_fail "--pp 3 leaves dp to derive from 8 GPUs" "--pp" \
    "tp x pp divides the cluster's 8 GPUs" "got 3" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 1 --pp 3

expect_fail "--sequence-parallel with tp 1" "--sequence-parallel" "tp = 1" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --sequence-parallel
expect_fail "a boolean flag with a value not true or false" "--sequence-parallel" \
    "expected true or false" '"maybe"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 2 --sequence-parallel=maybe
expect_fail "a --no- flag given a value" "--no-sequence-parallel" "expected no value" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --no-sequence-parallel=banana
g=$tmp/grid.json
printf '{"tp": [1, "abc"]}\n' >"$g"
expect_fail "a grid value of the wrong kind" "$g" '$.tp' "expected an integer" '"abc"' -- \
    sweep --model "$tiny" --cluster "$a100" --nodes 1 --grid "$g"

expect_fail "interleaved schedule with pp 1" "--schedule" "interleaved" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --schedule interleaved
expect_fail "zero-bubble schedule with pp 1" "--schedule" '"zb-h1"' "pp = 1" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --schedule zb-h1
expect_fail "zero-bubble schedule with virtual stages" "--virtual-stages" "got 2" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --schedule zb-h2 --virtual-stages 2
expect_fail "zb-h2 with fewer than 2p - 1 micro-batches" "--global-batch-size" \
    "at least 3 for the \"zb-h2\" schedule with pp = 2" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --dp 1 --global-batch-size 2 \
    --schedule zb-h2
expect_fail "dualpipev with one model chunk a stage" "--virtual-stages" \
    "2 model chunks per stage with the \"dualpipev\" schedule" "got 1" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --schedule dualpipev \
    --virtual-stages 1
expect_fail "dualpipev with fewer than 2 pp micro-batches" "--global-batch-size" \
    "at least 2 pp = 4 for the \"dualpipev\" schedule" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --dp 1 --global-batch-size 3 \
    --schedule dualpipev

# a step too big to hold in memory is refused before it is built
expect_fail "step of too many tasks" "--global-batch-size" "at most 50000000 tasks" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 16 --global-batch-size 2000000000

# ---- hardened inputs -------------------------------------------------------
# Cases that hung, grew without bound or broke the one-line rule, each run
# under timeout(1) where there is one, so that a regression fails instead of
# hanging the suite.

plansim_real=$PLANSIM
if command -v timeout >/dev/null 2>&1; then
    # shellcheck disable=SC2016 # the wrapper expands them, not this shell
    printf '#!/bin/sh\nexec timeout 120 "$PLANSIM_REAL" "$@"\n' >"$tmp/plansim-limited"
    chmod +x "$tmp/plansim-limited"
    export PLANSIM_REAL="$plansim_real"
    PLANSIM=$tmp/plansim-limited
fi

# a file over the size limit (PLANSIM_MAX_INPUT_BYTES sets it; 64 MiB by
# default), and a limit that is not a number
export PLANSIM_MAX_INPUT_BYTES=100
expect_fail "model file over the size limit" "$tiny" "at most 100 bytes" \
    "PLANSIM_MAX_INPUT_BYTES" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1
PLANSIM_MAX_INPUT_BYTES=lots
expect_fail "PLANSIM_MAX_INPUT_BYTES not a number" "PLANSIM_MAX_INPUT_BYTES" '"lots"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1
unset PLANSIM_MAX_INPUT_BYTES

# devices and FIFOs: refused before they are read (or, for a FIFO, opened)
if [ -c /dev/zero ]; then
    expect_fail "model file /dev/zero" "/dev/zero" "expected a regular file" \
        "character device" -- \
        simulate --model /dev/zero --cluster "$a100" --nodes 1
fi
if mkfifo "$tmp/fifo.json" 2>/dev/null; then
    expect_fail "cluster file that is a FIFO" "$tmp/fifo.json" "expected a regular file" \
        "FIFO" -- \
        simulate --model "$tiny" --cluster "$tmp/fifo.json" --nodes 1
fi
expect_fail "plan file that is a folder" "$tmp" "expected a regular file" "folder" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$tmp"

# a list of 10^6 entries is read in linear time (and refused: tiny-gpt has
# 4 layers and one stage)
p=$tmp/long-list.json
awk 'BEGIN { printf "{\"layers_per_stage\": ["
    for (i = 0; i < 1000000; i++) printf "%s1", i ? "," : ""
    print "]}" }' >"$p"
expect_fail "layers_per_stage of 10^6 entries" "$p" '$.layers_per_stage' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$p"

# control characters in what an error quotes are escaped: one line
m=$tmp/newline-key.json
printf '{\n  "name": "tiny-gpt",\n  "lay\ners": 4\n}\n' >"$m"
expect_fail "raw newline in a model key" "$m" '$.lay\ners' "unknown key" -- \
    simulate --model "$m" --cluster "$a100" --nodes 1

expect_fail "raw newline in a flag value" "--tp" '"2\n3"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp "$(printf '2\n3')"

expect_fail "raw newline in a flag name" '--t\np' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 "$(printf -- '--t\np')" 2

m=$tmp/newline-name.json
derive "$tiny" "$m" 's/"tiny-gpt"/"tiny\\ngpt"/' &&
    expect_fail "model name with an escaped newline" "$m" '$.name' "control characters" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

# names must be UTF-8 (they reach the reports)
m=$tmp/latin1-name.json
sed "s/\"tiny-gpt\"/\"tiny$(printf '\377')gpt\"/" "$tiny" >"$m"
expect_fail "model name not UTF-8" "$m" '$.name' "expected valid UTF-8 text" \
    'tiny\xffgpt' -- \
    simulate --model "$m" --cluster "$a100" --nodes 1

c=$tmp/latin1-gpu.json
sed "s/\"A100-SXM4-80GB\"/\"A100 $(printf '\351')dition\"/" "$a100_whole" >"$c"
expect_fail "cluster gpu name not UTF-8" "$c" '$.gpu.name' "expected valid UTF-8 text" -- \
    simulate --model "$tiny" --cluster "$c" --nodes 1

# a Hugging Face config.json gives no key twice either
m=$tmp/hf-twice.json
derive "$top_srcdir/models/hf/llama2-7b-config.json" "$m" \
    's/"num_hidden_layers": 32,/"num_hidden_layers": 32, "vocab_size": 7,/' &&
    expect_fail "Hugging Face config with vocab_size twice" "$m" '$.vocab_size' \
        "key given twice" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1

PLANSIM=$plansim_real

# within SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds, for
# at most SECONDS; fails if it never does
within() {
    tries=$(($1 * 10))
    shift
    until "$@"; do
        tries=$((tries - 1))
        [ "$tries" -gt 0 ] || return 1
        sleep 0.1
    done
}
# shellcheck disable=SC2317 # the two are called through within
# (the process must be plansim itself: the shell's child, before it runs
# plansim, still has the shell's own TERM trap)
catches_term() {
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = plansim ] || return 1
    mask=$(sed -n 's/^SigCgt:[[:blank:]]*//p' "/proc/$1/status" 2>/dev/null)
    [ -n "$mask" ] && [ $((0x$mask & 0x4000)) -ne 0 ]
}
# shellcheck disable=SC2317
has_ended() {
    ! kill -0 "$1" 2>/dev/null
}

# SIGTERM stops a sweep as Ctrl-C does: one line, exit 143 (128 + 15), no
# file. A sweep stops between plans, so this one has many plans of
# milliseconds each (tiny-gpt on one node, 2,000 bucket sizes over the
# default grid), and the signal goes once the sweep has set its handler:
# SIGTERM (15, the bit of value 0x4000) among the caught signals of
# /proc/PID/status. Each wait is at most 60 s, in 0.1 s steps.
if [ -r /proc/$$/status ]; then
    problem=
    grid=$tmp/buckets.json
    awk 'BEGIN { printf "{\"ddp_bucket_size\": ["
        for (i = 0; i < 2000; i++) printf "%s%d", i ? ", " : "", 1000000 + i
        print "]}" }' >"$grid"
    "$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1 --tp 1 --pp 1 \
        --global-batch-size 16 --grid "$grid" -j 1 -o "$tmp/terminated.csv" \
        </dev/null >"$tmp/stdout" 2>"$tmp/stderr" &
    pid=$!
    if within 60 catches_term "$pid"; then
        kill -TERM "$pid"
        within 60 has_ended "$pid" || problem="still running 60 s after SIGTERM"
        kill -KILL "$pid" 2>/dev/null
        wait "$pid"
        status=$?
        [ "$status" -eq 143 ] || problem="$problem; exit status $status, expected 143"
        lines=$(awk 'END { print NR }' "$tmp/stderr")
        [ "$lines" -eq 1 ] || problem="$problem; stderr has $lines lines, expected exactly 1"
        grep -q "^plansim: sweep interrupted: nothing written$" "$tmp/stderr" ||
            problem="$problem; stderr: $(one_line "$tmp/stderr")"
        [ ! -s "$tmp/stdout" ] || problem="$problem; stdout is not empty"
        left=$(find "$tmp" -name 'terminated.csv*' | tr '\n' ' ')
        [ -z "$left" ] || problem="$problem; written: $left"
    else
        problem="SIGTERM not caught within 60 s of the start"
        kill -KILL "$pid" 2>/dev/null
        wait "$pid"
    fi
    check "SIGTERM during a sweep: one line, exit 143, nothing written" "$problem"
else
    ok "SIGTERM during a sweep # SKIP no /proc"
fi

# tp_comm_overlap overlaps sequence parallelism's all-gathers and
# reduce-scatters: Megatron-LM refuses it without --sequence-parallel
expect_fail "--tp-comm-overlap without sequence parallelism" "--tp-comm-overlap" \
    "without sequence_parallel" "got true" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 2 --tp-comm-overlap
p=$tmp/overlap-plan.json
printf '{"tp": 2, "tp_comm_overlap": true}\n' >"$p"
expect_fail "tp_comm_overlap without sequence_parallel in a plan file" "$p" '$.tp_comm_overlap' \
    "without sequence_parallel" "got true" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$p"

# ---- what-ifs (src/app/whatif.h) ------------------------------------------

w="simulate --model $tiny --cluster $a100 --nodes 1"
# shellcheck disable=SC2086
{
    expect_fail "--slow-gpu without a factor" "--slow-gpu" '"3"' "RANK:FACTOR" -- $w --slow-gpu 3
    expect_fail "--slow-gpu factor below 1" "--slow-gpu" '"3:0.5"' "from 1 to 1000" -- $w --slow-gpu 3:0.5
    expect_fail "--slow-gpu rank not a number" "--slow-gpu" '"x:2"' "RANK" -- $w --slow-gpu x:2
    expect_fail "--slow-gpu rank beyond the plan" "--slow-gpu" '"8:2"' "below the plan's 8 GPUs" \
        -- $w --slow-gpu 8:2
    expect_fail "--slow-link factor 0.5, a fraction: it reads as --slow-gpu's, times slower" \
        "--slow-link" '"node 0 nic 0:0.5"' 'how many times slower it runs, a number from 1 to 1e+06 ("2" or "2x": half its bandwidth)' -- \
        $w --slow-link "node 0 nic 0:0.5"
    expect_fail "--slow-gpu factor 0.5 says what 2 means" "--slow-gpu" '"3:0.5"' \
        '("2" or "2x": half its speed)' -- $w --slow-gpu 3:0.5
    expect_fail "--slow-link unknown link" "--slow-link" '"node 3 nic 0"' "node 0 nic 0 out" -- \
        $w --slow-link "node 3 nic 0:2"
    expect_fail "--jitter negative" "--jitter" '"-1"' "from 0 to 4" -- $w --jitter -1
    expect_fail "--seed without --jitter" "--seed" '"7"' "--jitter" -- $w --seed 7
    expect_fail "--seed not an integer" "--seed" '"x"' "an integer" -- $w --jitter 0.1 --seed x
}

# ---- training totals, diagnosis, data loading (issue 12) -------------------

t="simulate --model $tiny --cluster $a100 --nodes 1"
# shellcheck disable=SC2086
{
    expect_fail "--tokens with an unknown suffix" "--tokens" '"2X"' "K, M, B or G, T" -- \
        $t --tokens 2X
    expect_fail "--tokens zero" "--tokens" '"0"' "tokens from 1 to 1e+18" -- $t --tokens 0
    expect_fail "--gpu-hour-price without --tokens" "--gpu-hour-price" "--tokens" -- \
        $t --gpu-hour-price 2
    expect_fail "--gpu-hour-price negative" "--gpu-hour-price" '"-2"' -- \
        $t --tokens 1T --gpu-hour-price -2
    expect_fail "--explain with --format json" "--explain" "--format text" "json" -- \
        $t --explain --format json
    expect_fail "--explain with --breakdown" "--explain" "the report" "--breakdown" -- \
        $t --explain --breakdown
    expect_fail "--bytes-per-sample negative" "--bytes-per-sample" '"-1"' -- \
        $t --bytes-per-sample -1
    expect_fail "sweep --rank-by unknown" "--rank-by" '"price"' "tokens_per_s, time" -- \
        sweep --model $tiny --cluster $a100 --nodes 1 --rank-by price
    expect_fail "sweep --rank-by cost without --tokens" "--rank-by" '"cost"' "--tokens" -- \
        sweep --model $tiny --cluster $a100 --nodes 1 --rank-by cost
    expect_fail "sweep --tokens bad" "--tokens" '"lots"' -- \
        sweep --model $tiny --cluster $a100 --nodes 1 --tokens lots
}
c=$tmp/storage-zero.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "storage": {"read_bandwidth_GBps": 0},/' &&
    expect_fail "cluster storage read bandwidth 0" "$c" '$.storage.read_bandwidth_GBps' "0" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1
c=$tmp/storage-key.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "storage": {"read_GBps": 2},/' &&
    expect_fail "cluster storage unknown key" "$c" '$.storage' "read_GBps" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1
c=$tmp/storage-list.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "storage": [2],/' &&
    expect_fail "cluster storage not an object" "$c" '$.storage' -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1
c=$tmp/storage-write.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "storage": {"write_bandwidth_GBps": -1},/' &&
    expect_fail "cluster storage write bandwidth negative" "$c" '$.storage.write_bandwidth_GBps' "-1" -- \
        run --model "$tiny" --cluster "$c" --nodes 1 --tokens 1e9

# ---- reliability and whole runs (metrics/run.h, runplan.h) ------------------
c=$tmp/reliability-both.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "reliability": {"gpu_mtbf_hours": 5e4, "gpu_failures_per_1000_node_days": 2},/' &&
    expect_fail "cluster reliability given both ways" "$c" '$.reliability.gpu_mtbf_hours' "not both" -- \
        run --model "$tiny" --cluster "$c" --nodes 1 --tokens 1e9
c=$tmp/reliability-zero.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "reliability": {"node_mtbf_hours": 0},/' &&
    expect_fail "cluster reliability mtbf 0" "$c" '$.reliability.node_mtbf_hours' "0" -- \
        run --model "$tiny" --cluster "$c" --nodes 1 --tokens 1e9
c=$tmp/reliability-key.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "reliability": {"mtbf": 3},/' &&
    expect_fail "cluster reliability unknown key" "$c" '$.reliability.mtbf' 'unknown key' -- \
        run --model "$tiny" --cluster "$c" --nodes 1 --tokens 1e9
c=$tmp/reliability-spares.json
derive "$a100" "$c" 's/"gpus_per_node": 8,/"gpus_per_node": 8, "reliability": {"hot_spares": 1},/' &&
    expect_fail "cluster reliability hot_spares not a boolean" "$c" '$.reliability.hot_spares' -- \
        run --model "$tiny" --cluster "$c" --nodes 1 --tokens 1e9
r="--model $tiny --cluster $a100 --nodes 1"
# shellcheck disable=SC2086 # the command's words
{
    expect_fail "run without --tokens" "--tokens" "got none" -- run $r
    expect_fail "run --checkpoint-every bad" "--checkpoint-every" '"often"' "30min" -- \
        run $r --tokens 1e9 --checkpoint-every often
    expect_fail "run --checkpoint-every 0" "--checkpoint-every" '"0"' -- \
        run $r --tokens 1e9 --checkpoint-every 0
    expect_fail "run --trials 0" "--trials" '"0"' -- run $r --tokens 1e9 --trials 0
    expect_fail "run --hot-spares maybe" "--hot-spares" '"maybe"' "no or yes" -- \
        run $r --tokens 1e9 --hot-spares maybe
    expect_fail "run --failure-rate negative" "--failure-rate" '"-1"' -- \
        run $r --tokens 1e9 --failure-rate -1
    expect_fail "run --seed bad" "--seed" '"x"' -- run $r --tokens 1e9 --seed x
    expect_fail "run that cannot end" "rare enough for the run to end" -- \
        run $r --tokens 1T --failure-rate 1e6
    expect_fail "sweep --seed alone" "--seed" "--jitter or --rank-by run-time" -- \
        sweep $r --seed 3
    expect_fail "sweep --trials without --rank-by run-time" "--trials" "--rank-by run-time" \
        "tokens_per_s" -- sweep $r --trials 10
    expect_fail "run --trials past 100,000" "--trials" '"200000"' -- \
        run $r --tokens 1e9 --trials 200000
    expect_fail "run trials seeing over 1e7 failures" "--trials" "fewer trials" -- \
        run $r --tokens 1T --trials 100000 --failure-rate 2e5 --restart 1 --checkpoint-every 1
}
# a GPU without a host link, in a cluster without a host path (which needs one)
c=$tmp/no-pcie.json
derive "$a100_whole" "$c" '/"pcie_GBps"/d; /"host_path"/,/}/d' &&
    expect_fail "run --async-save without pcie_GBps" "--async-save" "pcie_GBps" -- \
        run --model "$tiny" --cluster "$c" --nodes 1 --tokens 1e9 --async-save
[ -f "$c" ] && expect_fail "sweep --async-save without pcie_GBps" "--async-save" "pcie_GBps" -- \
    sweep --model "$tiny" --cluster "$c" --nodes 1 --tokens 1e9 --rank-by run-time --async-save

# ---- mixtures of experts (expert_parallel.c) ----------------------------
moe=$top_srcdir/models/mixtral-8x7b.json
m=$tmp/top-k.json
derive "$moe" "$m" 's/"experts_per_token": 2/"experts_per_token": 9/' &&
    expect_fail "model experts_per_token above experts" "$m" '$.experts_per_token' "9" \
        "at most the experts, 8" -- simulate --model "$m" --cluster "$a100" --nodes 1
expect_fail "--ep not dividing dp" "--ep" "8" \
    "a divisor of tp x cp x dp / expert-tensor-parallel-size = 4" -- \
    simulate --model "$moe" --cluster "$a100" --nodes 1 --tp 2 --ep 8
# folded over tp (etp 1), ep 8 fits the 8 GPUs; etp must divide tp
expect_fail "--expert-tensor-parallel-size not dividing tp" "--expert-tensor-parallel-size" "3" \
    "a divisor of tp = 2" -- \
    simulate --model "$moe" --cluster "$a100" --nodes 1 --tp 2 --expert-tensor-parallel-size 3
expect_fail "--ep beyond tp x dp / etp" "--ep" "8" \
    "a divisor of tp x cp x dp / expert-tensor-parallel-size = 4" -- \
    simulate --model "$moe" --cluster "$a100" --nodes 1 --tp 4 --expert-tensor-parallel-size 2 --ep 8
expect_fail "--ep dividing neither the experts nor dp: the model's rule first" "--ep" "3" \
    "a divisor of the experts, 8" -- simulate --model "$moe" --cluster "$a100" --nodes 1 --ep 3
expect_fail "--ep not dividing the experts" "--ep" "16" "a divisor of the experts, 8" -- \
    simulate --model "$moe" --cluster "$a100" --nodes 2 --ep 16
expect_fail "--ep on a dense model" "--ep" "2" "1 for a model without experts" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --ep 2
# ZeRO shards the experts' states over the expert-data-parallel group
# (zero.c), but not the host's shards of ZeRO-Offload
expect_fail "--ep with ZeRO and offload optimizer" "--offload" "got optimizer" \
    "none or activations with ep > 1 and ZeRO" -- \
    simulate --model "$moe" --cluster "$a100" --nodes 1 --ep 2 --zero-stage 1 --offload optimizer

# ---- context parallelism (context_parallel.c, plan.c) --------------------
expect_fail "--cp not dividing the GPUs" "--cp" "16" "tp x cp x pp divides the cluster's 24 GPUs" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 3 --cp 16
expect_fail "--cp with tp over the GPUs" "--cp" "4" "tp 4 x cp 4 x pp 1 = 16" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --cp 4 --tp 4
expect_fail "--cp all_to_all with heads not dividing" "--cp" "4" \
    "tp x cp = 4 x 4 divides attention_heads = 8" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 2 --cp 4 --tp 4 --cp-algorithm all_to_all
expect_fail "--cp ring with 2 cp not dividing the sequence" "--cp" "128" \
    "2 x cp divides seq_length = 128" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 16 --cp 128
expect_fail "--cp-algorithm unknown" "--cp-algorithm" "ulysses" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --cp 2 --cp-algorithm ulysses

# dtype fp8 and offload need cluster keys (plan_spec_check_cluster)
expect_fail "dtype fp8 on A100" "$a100" '$.gpu.peak_fp8_tflops' "dtype fp8 (--dtype)" "none" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --dtype fp8
c=$tmp/no-pcie.json
derive "$a100_whole" "$c" 's/"pcie_GBps": 25,//; /"host_path"/,/}/d' &&
    expect_fail "offload without pcie_GBps" "$c" '$.gpu.pcie_GBps' "offload optimizer" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1 --offload optimizer
c=$tmp/host-path-no-pcie.json
derive "$a100_whole" "$c" 's/"pcie_GBps": 25,//' &&
    expect_fail "host_path without pcie_GBps" "$c" '$.host_path' "gpu.pcie_GBps" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1
c=$tmp/no-host.json
derive "$a100" "$c" 's/"host_memory_GiB": 2048,//' &&
    expect_fail "offload without host_memory_GiB" "$c" '$.host_memory_GiB' -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1 --offload optimizer
c=$tmp/no-adam.json
derive "$a100" "$c" 's/"cpu_adam_params_per_s": 4e9,//' &&
    expect_fail "offload without cpu_adam_params_per_s" "$c" '$.cpu_adam_params_per_s' -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1 --offload optimizer
c=$tmp/fp8-zero.json
derive "$a100_whole" "$c" 's/"pcie_GBps": 25,/"pcie_GBps": 25, "peak_fp8_tflops": 0,/' &&
    expect_fail "cluster peak_fp8_tflops 0" "$c" '$.gpu.peak_fp8_tflops' "0" -- \
        simulate --model "$tiny" --cluster "$c" --nodes 1
expect_fail "--offload unknown" "--offload" '"disk"' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --offload disk
# offload activations: no recomputation, offload_layers only with it and
# below the layers of a model chunk (offload.c)
expect_fail "offload activations with recompute" "--recompute" "none with offload activations" \
    "full" -- simulate --model "$tiny" --cluster "$a100" --nodes 1 --offload activations \
    --recompute full
expect_fail "--offload-layers without activations" "--offload-layers" \
    "0 without offload activations" "2" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --offload-layers 2
expect_fail "--offload-layers of every layer" "--offload-layers" \
    "at most the layers of a model chunk less one, 1" "2" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --pp 2 --offload activations \
    --offload-layers 2

# ---- hostile inputs (issue 19): each once crashed, hung or was accepted --

# (inputs by path: distcheck runs outside the source tree, where shipped
# names do not resolve)
llama7b=$top_srcdir/models/llama2-7b.json
expect_fail "--seq-length empty" "--seq-length" 'got ""' -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --seq-length ""
expect_fail "--slow-link 1e305 times slower" "--slow-link" "from 1 to 1e+06" -- \
    simulate --model "$llama7b" --cluster "$top_srcdir/topologies/dgx-h100.json" --nodes 2 \
    --global-batch-size 64 --slow-link "node 0 nic 0:1e305"
c=$tmp/bw-tiny.json
derive "$a100" "$c" 's/"bandwidth_GBps": 25/"bandwidth_GBps": 1e-310/' &&
    expect_fail "inter_node bandwidth 1e-310" "$c" '$.inter_node.bandwidth_GBps' \
        "a number from 0.001 to" "got 9.99999999999997e-311" -- simulate --model "$tiny" --cluster "$c" --nodes 2
c=$tmp/eff-tiny.json
derive "$a100" "$c" '/"inter_node"/,/}/s/"efficiency": [0-9.]*/"efficiency": 1e-300/' &&
    expect_fail "inter_node efficiency 1e-300" "$c" '$.inter_node.efficiency' \
        "a number from 0.01 to 1" -- simulate --model "$tiny" --cluster "$c" --nodes 2
c=$tmp/adam-tiny.json
derive "$a100" "$c" 's/"cpu_adam_params_per_s": 4e9/"cpu_adam_params_per_s": 1e-300/' &&
    expect_fail "cpu_adam_params_per_s 1e-300" "$c" '$.cpu_adam_params_per_s' \
        "a number from 1 to" -- simulate --model "$tiny" --cluster "$c" --nodes 1 \
        --offload optimizer
expect_fail "sweep --slow-gpu past its GPUs" "--slow-gpu" "below the plan's 8 GPUs" -- \
    sweep --model "$tiny" --cluster "$a100" --nodes 1 --global-batch-size 8 --slow-gpu 8:2
expect_fail "sweep --slow-link on a node it lacks" "--slow-link" "of the plan's 1 node" -- \
    sweep --model "$tiny" --cluster "$a100" --nodes 1 --global-batch-size 8 \
    --slow-link "node 5 nic 0:2"
m=$tmp/top2-of-1.json
derive "$tiny" "$m" 's/"layers": 4,/"layers": 4, "experts": 1, "experts_per_token": 2,/' &&
    expect_fail "experts 1, experts_per_token 2" "$m" '$.experts_per_token' \
        "at most the experts, 1" -- simulate --model "$m" --cluster "$a100" --nodes 1
m=$tmp/dense-moe-ffn.json
derive "$tiny" "$m" 's/"layers": 4,/"layers": 4, "experts": 0, "moe_ffn_hidden_size": 2147483647,/' &&
    expect_fail "moe_ffn_hidden_size in a dense model" "$m" '$.moe_ffn_hidden_size' \
        "no moe_ffn_hidden_size in a dense model" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1
m=$tmp/groups-3-of-8.json
derive "$tiny" "$m" 's/"layers": 4,/"layers": 4, "experts": 8, "router_groups": 3,/' &&
    expect_fail "router_groups 3 of 8 experts" "$m" '$.router_groups' \
        "router_groups dividing the experts, 8" -- simulate --model "$m" --cluster "$a100" --nodes 1
m=$tmp/groups-too-few.json
derive "$tiny" "$m" 's/"layers": 4,/"layers": 4, "experts": 8, "experts_per_token": 4, "router_groups": 4, "router_topk_groups": 1,/' &&
    expect_fail "router_topk_groups 1 of 4 groups of 2 for 4 experts a token" "$m" \
        '$.router_topk_groups' "their experts holding the 4 a token takes" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1
m=$tmp/dense-first.json
derive "$tiny" "$m" 's/"layers": 4,/"layers": 4, "experts": 8, "first_dense_layers": 1000,/' &&
    expect_fail "first_dense_layers past the layers" "$m" '$.first_dense_layers' \
        "at most layers, 4" -- simulate --model "$m" --cluster "$a100" --nodes 1
m=$tmp/experts-inf.json
derive "$tiny" "$m" 's/"layers": 4,/"layers": 4, "experts": 1e999,/' &&
    expect_fail "experts 1e999" "$m" '$.experts' "beyond the range of a double" -- \
        simulate --model "$m" --cluster "$a100" --nodes 1
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; print "" }' >"$tmp/deep.json"
expect_fail "arrays nested 100,000 deep" "$tmp/deep.json" "nested at most 1000 deep" -- \
    simulate --model "$tmp/deep.json"
awk 'BEGIN { printf "{\"pp\": 2, \"layers_per_stage\": [1"; for (i = 1; i < 1000000; i++)
    printf ", 1"; print "]}" }' >"$tmp/long-split.json"
expect_fail "a layer split of 10^6 stages" '$.layers_per_stage' "(1999999 bytes)" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --plan "$tmp/long-split.json"
for v in 0x8 " 8" 8x; do
    expect_fail "--ep \"$v\"" "--ep" "got \"$v\"" -- $w --ep "$v"
done
expect_fail "--tokens 0x10" "--tokens" 'got "0x10"' -- $w --tokens 0x10
expect_fail "--tokens inf" "--tokens" 'got "inf"' -- $w --tokens inf
# (reduced, the dp tree's cells make it 5 ranks: bench_scale times that)
expect_fail "a step of 10^6 GPUs in full over the task cap, refused unbuilt" \
    "--global-batch-size" "expected a step of at most 50000000 tasks, got at least" -- \
    simulate --model "$llama7b" --cluster "$a100" --nodes 131072 --tp 8 --global-batch-size 131072 \
    --full-fidelity
expect_fail "2^31 - 1 micro-batches" "--global-batch-size" "got at least" -- \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 8 --global-batch-size 2147483647 \
    --micro-batch-size 1
# issue 33: every request sized before it is made. An all-to-all plans
# n (n - 1) transfers, at most 2^24 = 16777216 in one collective (so
# 4096 ranks, collbench.h); an all-reduce over 1,048,536 GB200s, 72 NICs a
# node, up to 72 x (2 n + 4 x 14563) = 155183328
expect_fail "collective all_to_all over 4,097 ranks" "--ranks" \
    "expected at most 4096 for all_to_all" "got 4097" -- \
    collective --cluster "$a100" --ranks 4097 --nodes 513 --op all_to_all
expect_fail "collective all_to_all over 100,000 ranks" "--ranks" \
    "expected at most 4096 for all_to_all" "got 100000" -- \
    collective --cluster "$a100" --ranks 100000 --nodes 12500 --op all_to_all
expect_fail "collective all_reduce over 2^20 GB200s" "--ranks" \
    "expected a collective of at most 16777216 transfers" "up to 155183328" -- \
    collective --cluster "$top_srcdir/topologies/gb200-nvl72.json" --nodes 14563 \
    --ranks 1048536
# a step whose estimate passes the cap, counted without being built:
# GPT-3 175B on one rank, 114,688 micro-batches of 96 layers under GPipe
# (all forwards, then all backwards: no steady state to skip)
expect_fail "a step counted past the task cap" "--global-batch-size" \
    "expected a step of at most 50000000 tasks, got more" -- \
    simulate --model "$top_srcdir/models/gpt3-175b.json" --cluster "$a100" \
    --global-batch-size 58720256 --micro-batch-size 1 --tp 1 --pp 1 --no-sequence-parallel \
    --zero-stage 0 --schedule gpipe
# --exhaustive over the tiny GPT's default space on one node: 10304 plans
# pass its rules (sweep's own count), over the default --max-plans 1000
expect_fail "sweep --exhaustive over 1000 plans" "--exhaustive" \
    "expected a space of at most 1000 plans" "raise it with --max-plans" "got 10304" -- \
    sweep --model "$tiny" --cluster "$a100" --nodes 1 -j 1 --exhaustive
expect_fail "sweep --max-plans without --exhaustive" "--max-plans" \
    "expected --exhaustive (or --jitter) with it" -- \
    sweep --model "$tiny" --cluster "$a100" --nodes 1 -j 1 --max-plans 20000

finish
