#!/bin/sh
# cli_campaign.sh: what a new user and a reliability campaign hit (issue
# 33), each case as the campaign found it: shipped names from any folder,
# Megatron-Core's rules, non-UTF-8 arguments, one cap on echoed values, bad
# targets to write, duplicated what-ifs, counts out of range, a NUL escape in
# JSON, and the flag blamed for a run too long to simulate.
# shellcheck disable=SC1091 # cli_lib.sh is found through $top_srcdir
. "$top_srcdir/tests/cli_lib.sh"

# refused NAME STATUS PATTERN ARG...: plansim ARG... exits STATUS with one
# line on stderr holding PATTERN (grep -E) and nothing on stdout
refused() {
    name=$1
    want=$2
    pattern=$3
    shift 3
    "$PLANSIM" "$@" >"$tmp/r.out" 2>"$tmp/r.err"
    status=$?
    problem=
    [ "$status" -eq "$want" ] || problem="exit status $status, expected $want"
    [ "$(wc -l <"$tmp/r.err" | tr -d ' ')" -eq 1 ] || problem="$problem; stderr is not one line"
    grep -E -q -e "$pattern" "$tmp/r.err" || problem="$problem; stderr lacks /$pattern/"
    [ -s "$tmp/r.out" ] && problem="$problem; stdout is not empty"
    [ -z "$problem" ] || problem="$problem; stderr: $(one_line "$tmp/r.err")"
    check "$name" "$problem"
}

# ---- shipped names resolve from any folder ---------------------------------

# the build tree finds its shipped inputs through the source tree it was
# configured in, installed or not: run from an empty folder
mkdir "$tmp/elsewhere"
problem=$(cd "$tmp/elsewhere" && "$PLANSIM" simulate --model llama3-8b --cluster dgx-h100 \
    --nodes 1 --tp 8 --global-batch-size 8 --no-advice 2>&1 >"$tmp/named.out") ||
    problem="exit status $?: $problem"
grep -q '^llama3-8b on dgx-h100: 8 GPUs' "$tmp/named.out" ||
    problem="$problem; stdout: $(one_line "$tmp/named.out")"
check "--model llama3-8b resolves from a folder without models/" "$problem"
problem=$(cd "$tmp/elsewhere" && "$PLANSIM" simulate 2>&1 >"$tmp/bare.out") ||
    problem="exit status $?: $problem"
grep -q '^gpt3-175b on dgx-a100-80gb: 512 GPUs' "$tmp/bare.out" ||
    problem="$problem; stdout: $(one_line "$tmp/bare.out")"
check "a bare plansim simulate finds its defaults from a folder without models/" "$problem"
(cd "$tmp/elsewhere" && "$PLANSIM" simulate --model llama3-8bb >/dev/null 2>"$tmp/near.err")
problem=
grep -q 'looked in models, .*/models/hf: the shipped models there are ' "$tmp/near.err" &&
    grep -F -q "the shipped models there are $(shipped_names models models/hf)" "$tmp/near.err" ||
    problem="stderr: $(one_line "$tmp/near.err")"
grep -q '(did you mean "llama3-8b"?)' "$tmp/near.err" || problem="$problem; no suggestion"
check "an unknown name lists the folders looked in and the names they hold" "$problem"

# ---- Megatron-Core's rules --------------------------------------------------

# Llama 3 8B has 8 KV heads (its config.json's num_key_value_heads):
# Megatron-Core's divide(num_query_groups, tp) refuses tp 16
refused "--tp 16 on Llama 3 8B names the KV heads" 2 \
    '^plansim: --tp: expected a divisor of kv_heads = 8 \(the KV heads, Megatron-Core.s query groups, are split over the tensor-parallel group, never replicated\), got 16$' \
    simulate --model llama3-8b --cluster dgx-h100 --nodes 2 --tp 16
"$PLANSIM" simulate --model "$tiny" --cluster "$a100" --nodes 1 --seq-length 1 \
    >"$tmp/short.out" 2>"$tmp/short.err"
problem=
grep -q '^plansim: warning: sequences of 1 token, under 128: the step is mostly launch and communication latency' \
    "$tmp/short.err" || problem="stderr: $(one_line "$tmp/short.err")"
check "a one-token sequence warns that the step is all latency" "$problem"
"$PLANSIM" simulate --model "$tiny" --cluster "$a100" --nodes 1 --seq-length 128 \
    >/dev/null 2>"$tmp/long.err"
problem=
grep -q 'latency' "$tmp/long.err" && problem="stderr: $(one_line "$tmp/long.err")"
check "128 tokens do not warn" "$problem"

# ---- arguments that are not UTF-8 ---------------------------------------------

bad=$(printf '\377')
refused "a true/false flag's non-UTF-8 value is refused, naming the flag" 2 \
    '^plansim: simulate: --sequence-parallel: expected UTF-8 text, got "\\xff"$' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 "--sequence-parallel=$bad"
refused "a --no- flag's non-UTF-8 value is refused, naming the flag" 2 \
    '^plansim: simulate: --no-sequence-parallel: expected UTF-8 text' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 "--no-sequence-parallel=$bad"
refused "a number flag's non-UTF-8 value is refused, naming the flag" 2 \
    '^plansim: simulate: --tp: expected UTF-8 text, got "\\xff"$' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp "$bad"

# valid UTF-8 beyond ASCII is no charset conversion's to fail (the fuzzer's
# first finding: "Invalid byte sequence in conversion input", no flag named)
refused "a UTF-8 value beyond ASCII reaches the flag's own check" 2 \
    '^plansim: --tp: expected an integer from 1 to 1048576, got "é"$' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp=é
refused "a missing value names its flag" 2 '^plansim: simulate: Missing argument for --model$' \
    simulate --model

# ---- one cap on echoed values -----------------------------------------------------

nines=$(awk 'BEGIN { while (n++ < 100000) printf "9" }')
for flag in --nodes --model --tp --jitter; do
    "$PLANSIM" simulate "$flag=$nines" >/dev/null 2>"$tmp/long.err"
    bytes=$(wc -c <"$tmp/long.err" | tr -d ' ')
    problem=
    [ "$bytes" -lt 1000 ] || problem="$bytes bytes: $(one_line "$tmp/long.err")"
    grep -q '\.\.\. (1000[0-9][0-9] bytes)' "$tmp/long.err" ||
        problem="$problem; not cut: $(one_line "$tmp/long.err")"
    check "$flag of 100,000 bytes is echoed cut at 120 bytes" "$problem"
done

# ---- targets to write -------------------------------------------------------------

refused "-o '' is a bad target" 2 '^plansim: -o: expected a file name \("-": standard output\), got ""$' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 -o ''
if [ -d /proc/self ]; then
    refused "-o /proc/x names the target and the real reason" 2 \
        '^plansim: /proc/x: cannot write: its folder takes no new files$' \
        collective -o /proc/x
fi
refused "-o onto a folder is a bad target" 2 "^plansim: $tmp: cannot write: it is a folder\$" \
    collective -o "$tmp"

# ---- what-ifs, counts and JSON -------------------------------------------------

refused "two what-ifs for one GPU are refused" 2 \
    '^plansim: --slow-gpu: expected one --slow-gpu per GPU \(GPU 0 is already 2x slower\), got "0:3"$' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --slow-gpu=0:2 --slow-gpu=0:3
refused "two what-ifs for one link are refused" 2 \
    '^plansim: --slow-link: expected one --slow-link per link' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 \
    --slow-link "node 0 nic 0 out:2" --slow-link "node 0 nic 0:3"
refused "--tokens under one token is refused" 2 \
    '^plansim: --tokens: expected tokens from 1 to 1e\+18' \
    simulate --model "$tiny" --cluster "$a100" --nodes 1 --tokens=1e-308
refused "--tokens=1e300 is refused as --tokens" 2 '^plansim: --tokens: expected tokens from 1' \
    run --model "$tiny" --cluster "$a100" --nodes 1 --tokens=1e300
# one failure a second on each of 1,000 node-days' worth of... : 1e9 per
# 1,000 node-days is 11.6 a second on a node; 1e15 tokens at 2^20 a step
# (1024 x 1024) is about 1e9 steps of 0.1 s: some 1e9 failures in one trial
refused "a run one trial of which passes the failures' cap blames --tokens" 2 \
    '^plansim: --tokens: expected a run that sees at most 1e\+07 failures' \
    run --model "$tiny" --cluster "$a100" --nodes 1 --tokens=1e15 --failure-rate 1e9
# a step whose symmetry breaks, over the task cap, is refused before it is
# built (simulate.c's probe finds the 16 ranks to replay): at least 16 / 4
# stages x 524,288 micro-batches x (2 passes x 2 blocks x 4 layers + 2 +
# 2 x 3 transfers) + 3 x 16 = 5.03e7 tasks, over 5e7 (emit_tasks_at_least);
# GPipe's, whose forwards all come first: no steady state to skip
refused "a step over the task cap whose symmetry breaks is refused before it is built" 2 \
    '^plansim: --global-batch-size: expected a step of at most 50000000 tasks, got at least 5.03e\+07 \(16 ranks' \
    simulate --model "$tiny" --cluster "$a100" --nodes 2 --pp 4 --global-batch-size 2097152 \
    --micro-batch-size 1 --schedule gpipe
# the same step under 1F1B is built short (model.md, "Skipping the steady
# state"): a few of its 524,288 micro-batches are replayed, the events of
# the rest counted
"$PLANSIM" simulate --model "$tiny" --cluster "$a100" --nodes 2 --pp 4 --global-batch-size 2097152 \
    --micro-batch-size 1 >"$tmp/long.out" 2>&1
problem=
grep -q '^batch: 2097152 sequences per step = 524288 micro-batches' "$tmp/long.out" ||
    problem="$(head -n 1 "$tmp/long.out")"
check "the same step past the cap whose steady state repeats is simulated" "$problem"
refused "collective sizes are whole bytes" 2 \
    '^plansim: --min-bytes: expected a whole number of bytes from 1 to 1e\+15.*got "1.5"$' \
    collective --min-bytes 1.5 --max-bytes 1.6
printf '{"name": "x\\u0000y", "layers": 2}\n' >"$tmp/nul.json"
refused 'a JSON string with \u0000 is refused, not cut' 2 \
    "^plansim: $tmp/nul.json: line 1, column 12: expected strings without NUL" \
    simulate --model "$tmp/nul.json"
printf '{"name": "x\\\\u0000y"}\n' >"$tmp/backslash.json"
refused 'an escaped backslash before u0000 is no NUL' 2 "backslash.json: \\\$.layers: missing" \
    simulate --model "$tmp/backslash.json"

# ---- small words ---------------------------------------------------------------------

# 100K tokens, under one step's 1,024 x 128: one step
"$PLANSIM" run --model "$tiny" --cluster "$a100" --nodes 1 --tokens 100K >"$tmp/run.out" 2>&1
problem=
grep -q '^tiny-gpt on dgx-a100-80gb: 8 GPUs on 1 node, 1e+05 tokens in 1 step$' "$tmp/run.out" ||
    problem="$(head -n 1 "$tmp/run.out")"
check "one node is a node, not nodes" "$problem"

finish
