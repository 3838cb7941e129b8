#!/bin/sh
# cli_outputs.sh: what plansim prints for good input: reproducible JSON,
# well-formed JSON and CSV, -o FILE writing the same bytes as stdout (and
# nothing at all when it cannot), flags overriding the plan file, Hugging
# Face configs, the shipped defaults, and names escaped in JSON.
#
# Run by the test harness from the build folder with $top_srcdir (where
# models/, topologies/ and plans/ live) and $PLANSIM (the binary) set.
# Writes only inside a temporary folder that it removes on exit.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

hf=$top_srcdir/models/hf/llama2-7b-config.json

# run_to NAME ARG...: runs plansim with ARG..., its stdout into
# $tmp/NAME.out, its stderr into $tmp/NAME.err; prints nothing when it
# exits 0 with an empty stderr, else what went wrong.
run_to() {
    name=$1
    shift
    "$PLANSIM" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    status=$?
    if [ "$status" -ne 0 ]; then
        printf '; exit status %s, expected 0; stderr: %s' "$status" "$(one_line "$tmp/$name.err")"
    elif [ -s "$tmp/$name.err" ]; then
        printf '; stderr is not empty: %s' "$(one_line "$tmp/$name.err")"
    fi
}

# lacks FILE STRING: prints a problem when FILE does not contain STRING
lacks() {
    if ! grep -F -q -e "$2" "$1"; then
        printf "; output lacks '%s'" "$2"
    fi
}

# json_problems FILE: what makes FILE not look like one JSON object
json_problems() {
    if [ "$(head -n 1 "$1")" != "{" ]; then
        printf '; first line is not "{"'
    fi
    if [ "$(tail -n 1 "$1")" != "}" ]; then
        printf '; last line is not "}"'
    fi
    # braces and brackets outside strings balance and never go negative
    if ! awk '
        {
            n = length($0)
            for (i = 1; i <= n; i++) {
                ch = substr($0, i, 1)
                if (instr) {
                    if (esc) esc = 0
                    else if (ch == "\\") esc = 1
                    else if (ch == "\"") instr = 0
                } else if (ch == "\"") {
                    instr = 1
                } else if (ch == "{" || ch == "[") {
                    depth++
                } else if (ch == "}" || ch == "]") {
                    if (--depth < 0) bad = 1
                } else if (depth == 0 && ch != " " && ch != "\t") {
                    bad = 1
                }
            }
            if (instr) bad = 1
        }
        END { exit (bad || depth != 0) }' "$1"; then
        printf '; unbalanced braces, an unterminated string or text outside the object'
    fi
    for key in '"step_time_s":' '"memory": {' '"plan": {'; do
        lacks "$1" "$key"
    done
}

# json_value FILE KEY: the value of the first "KEY": line, without a comma
json_value() {
    sed -n "s/^ *\"$2\": *\\([^,]*\\),\\{0,1\\}\$/\\1/p" "$1" | head -n 1
}

# ---- (a) reproducible JSON -----------------------------------------------

problem=$(
    run_to json1 simulate --model "$tiny" --cluster "$a100" --nodes 2 \
        --micro-batch-size 2 --global-batch-size 64 --format json
    run_to json2 simulate --model "$tiny" --cluster "$a100" --nodes 2 \
        --micro-batch-size 2 --global-batch-size 64 --format json
)
if [ -z "$problem" ]; then
    grep -v '"sim_wall_s":' "$tmp/json1.out" >"$tmp/json1.cut"
    grep -v '"sim_wall_s":' "$tmp/json2.out" >"$tmp/json2.cut"
    if [ ! -s "$tmp/json1.cut" ]; then
        problem="the JSON output is empty"
    elif ! cmp "$tmp/json1.cut" "$tmp/json2.cut" >"$tmp/cmp" 2>&1; then
        problem="the two runs differ: $(one_line "$tmp/cmp")"
    fi
fi
check "two identical --format json runs agree but for sim_wall_s" "$problem"

# ---- (b) well-formed JSON, positive step time ----------------------------

problem=$(run_to json3 simulate --model "$tiny" --cluster "$a100" --nodes 2 \
    --micro-batch-size 2 --global-batch-size 64 --format json)
if [ -z "$problem" ]; then
    problem=$(json_problems "$tmp/json3.out")
fi
check "--format json prints one JSON object" "$problem"

if [ -s "$tmp/json3.out" ]; then
    step=$(json_value "$tmp/json3.out" step_time_s)
    if printf '%s\n' "$step" | grep -E -q '^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$' &&
        awk -v v="$step" 'BEGIN { exit !(v + 0 > 0) }'; then
        problem=
    else
        problem="step_time_s is \"$step\", expected a number > 0"
    fi
else
    problem="no JSON output to read step_time_s from"
fi
check "step_time_s > 0" "$problem"

# ---- (c) CSV -------------------------------------------------------------

# a pipeline plan, whose layers_per_stage cell is quoted ("2,2")
problem=$(run_to csv simulate --model "$tiny" --cluster "$a100" --nodes 2 --pp 2 \
    --micro-batch-size 2 --global-batch-size 64 --format csv)
if [ -z "$problem" ]; then
    csv=$tmp/csv.out
    lines=$(awk 'END { print NR }' "$csv")
    if [ "$lines" -ne 2 ]; then
        problem="$problem; $lines lines, expected 2"
    fi
    if [ "$(awk 'END { print NR }' "$csv")" -ne "$(wc -l <"$csv" | tr -d ' ')" ]; then
        problem="$problem; the last line does not end with a newline"
    fi
    # fields per line, commas inside double quotes not counting
    fields=$(awk '{ n = 1; q = 0
                    for (i = 1; i <= length($0); i++) {
                        c = substr($0, i, 1)
                        if (c == "\"") q = !q
                        else if (c == "," && !q) n++
                    }
                    print n }' "$csv" | sort -u | tr '\n' ' ')
    case $fields in
    *" "*" "*) problem="$problem; lines have different numbers of fields: $fields" ;;
    esac
    header=$(head -n 1 "$csv")
    case $header in
    plan_flags,tp,pp,dp,*) ;;
    *) problem="$problem; header does not start with \"plan_flags,tp,pp,dp,\"" ;;
    esac
    case ,$header, in
    *,step_time_s,*) ;;
    *) problem="$problem; header has no step_time_s field" ;;
    esac
    case $header in
    *sim_wall_s*) problem="$problem; header has sim_wall_s" ;;
    esac
    if [ -n "$problem" ]; then
        problem="$problem; output: $(one_line "$csv")"
    fi
fi
check "--format csv prints a header and one row" "$problem"

# ---- (d) -o FILE writes what stdout would --------------------------------

problem=$(run_to csv-o simulate --model "$tiny" --cluster "$a100" --nodes 2 --pp 2 \
    --micro-batch-size 2 --global-batch-size 64 --format csv -o "$tmp/report.csv")
if [ -z "$problem" ]; then
    if [ -s "$tmp/csv-o.out" ]; then
        problem="$problem; stdout is not empty: $(one_line "$tmp/csv-o.out")"
    fi
    if [ ! -f "$tmp/report.csv" ]; then
        problem="$problem; $tmp/report.csv was not written"
    elif [ ! -s "$tmp/csv.out" ]; then
        problem="$problem; no stdout CSV to compare with"
    elif ! cmp "$tmp/csv.out" "$tmp/report.csv" >"$tmp/cmp" 2>&1; then
        problem="$problem; it differs from stdout's CSV: $(one_line "$tmp/cmp")"
    fi
fi
check "-o FILE writes the bytes stdout would, and nothing to stdout" "$problem"

# ---- (e) -o into a missing folder ----------------------------------------

missing=$tmp/no-such-folder
"$PLANSIM" simulate --model "$tiny" --cluster "$a100" --nodes 2 \
    --micro-batch-size 2 --global-batch-size 64 --format csv \
    -o "$missing/report.csv" >"$tmp/missing.out" 2>"$tmp/missing.err"
status=$?
problem=
if [ "$status" -ne 2 ]; then
    problem="$problem; exit status $status, expected 2 (a bad target is bad input)"
fi
lines=$(awk 'END { print NR }' "$tmp/missing.err")
if [ "$lines" -ne 1 ] || [ "$(wc -l <"$tmp/missing.err" | tr -d ' ')" -ne 1 ]; then
    problem="$problem; stderr is not exactly one line"
fi
case $(head -n 1 "$tmp/missing.err") in
"plansim: "*) ;;
*) problem="$problem; stderr does not start with \"plansim: \"" ;;
esac
if [ -s "$tmp/missing.out" ]; then
    problem="$problem; stdout is not empty"
fi
if [ -e "$missing" ]; then
    problem="$problem; $missing was created"
fi
if [ -n "$problem" ]; then
    problem="$problem; stderr: $(one_line "$tmp/missing.err")"
fi
check "-o into a missing folder exits 2 and creates nothing" "$problem"

# ---- (f) flags override the plan file ------------------------------------

plan=$tmp/plan-b1.json
printf '{\n  "micro_batch_size": 1\n}\n' >"$plan"
problem=$(run_to plan-file simulate --model "$tiny" --cluster "$a100" --nodes 1 \
    --plan "$plan" --format json)
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/plan-file.out" '"micro_batch_size": 1,')
fi
check "the plan file's micro_batch_size 1 is used" "$problem"

problem=$(run_to plan-flag simulate --model "$tiny" --cluster "$a100" --nodes 1 \
    --plan "$plan" --micro-batch-size 2 --format json)
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/plan-flag.out" '"micro_batch_size": 2,')
fi
check "--micro-batch-size 2 overrides the plan file's 1" "$problem"

# ---- (g) a Hugging Face config -------------------------------------------

problem=$(run_to hf simulate --model "$hf" --cluster "$a100" --nodes 1 --dp 8 \
    --global-batch-size 8 --seq-length 4096 --format json)
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/hf.out" '"parameters": 6738415616,')
fi
check "a Hugging Face config.json loads (llama2-7b, 6738415616 parameters)" "$problem"

# a hybrid model by its shipped name (models/hf/nemotron-h-8b.json), tp 2
# and pp 2 on a DGX H100: its hand-counted parameters (check_hybrid.c)
problem=$(run_to nemotron simulate --model nemotron-h-8b --cluster dgx-h100 --nodes 1 \
    --tp 2 --pp 2 --global-batch-size 16 --seq-length 8192 --format json)
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/nemotron.out" '"parameters": 8100852736,')
fi
check "Nemotron-H 8B simulates with tp 2, pp 2 (8100852736 parameters)" "$problem"

# ---- (h) the shipped defaults --------------------------------------------

problem=$(cd "$top_srcdir" && "$PLANSIM" simulate >"$tmp/defaults.out" 2>"$tmp/defaults.err"
    status=$?
    if [ "$status" -ne 0 ]; then
        printf '; exit status %s, expected 0; stderr: %s' "$status" \
            "$(one_line "$tmp/defaults.err")"
    fi
)
if [ -z "$problem" ] && ! grep -q '^step time' "$tmp/defaults.out"; then
    problem="no line starts with \"step time\"; output: $(one_line "$tmp/defaults.out")"
fi
check "plansim simulate with no arguments, run in top_srcdir" "$problem"

# -o onto a device writes into it: /dev/null stays a device, not a file
problem=
"$PLANSIM" simulate --model "$tiny" --cluster "$a100" --nodes 1 -o /dev/null \
    >"$tmp/null.out" 2>&1 || problem="exit status $?: $(one_line "$tmp/null.out")"
[ -c /dev/null ] || problem="$problem; /dev/null is no longer a character device"
check "-o /dev/null writes into the device" "$problem"

# ---- (i) names escaped in JSON -------------------------------------------

# a cluster named, once read, a "quoted" \ name
odd=$tmp/odd-name.json
sed 's/"name": "dgx-a100-80gb"/"name": "a \\"quoted\\" \\\\ name"/' "$a100" >"$odd"
problem=$(lacks "$odd" '"name": "a \"quoted\" \\ name",')
if [ -z "$problem" ]; then
    problem=$(run_to odd-collective collective --cluster "$odd" --ranks 8 --max-bytes 1048576 \
        --format json)
fi
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/odd-collective.out" '  "cluster": "a \"quoted\" \\ name",')
fi
check "collective --format json escapes a quote and a backslash in the cluster's name" "$problem"

problem=$(run_to odd-simulate simulate --model "$tiny" --cluster "$odd" --nodes 1 --format json)
if [ -z "$problem" ]; then
    problem=$(json_problems "$tmp/odd-simulate.out"
        lacks "$tmp/odd-simulate.out" '  "cluster": "a \"quoted\" \\ name",')
fi
check "simulate --format json escapes a quote and a backslash in the cluster's name" "$problem"

# ---- training totals, diagnosis, data loading (issue 12) -------------------

t="--model $tiny --cluster $a100 --nodes 1"
# shellcheck disable=SC2086
problem=$(run_to totals simulate $t --tokens 2T --gpu-hour-price 2 --format json)
if [ -z "$problem" ]; then
    problem=$(json_problems "$tmp/totals.out"
        lacks "$tmp/totals.out" '  "training": {'
        lacks "$tmp/totals.out" '    "tokens": 2000000000000,'
        lacks "$tmp/totals.out" '    "gpu_hour_price": 2,'
        lacks "$tmp/totals.out" '  "diagnosis": [')
fi
check "simulate --tokens 2T --gpu-hour-price 2 --format json has training and diagnosis" "$problem"

# CSV: the training columns are empty without --tokens, filled with it
# shellcheck disable=SC2086
problem=$(run_to csv-none simulate $t --format csv)$(run_to csv-totals simulate $t --tokens 1B \
    --format csv)
if [ -z "$problem" ]; then
    column=$(head -n 1 "$tmp/csv-none.out" | tr ',' '\n' | grep -n '^training_steps$' | cut -d: -f1)
    none=$(sed -n 2p "$tmp/csv-none.out" | cut -d, -f"${column:-1}")
    some=$(sed -n 2p "$tmp/csv-totals.out" | cut -d, -f"${column:-1}")
    if [ -z "$column" ] || [ -n "$none" ] || [ -z "$some" ]; then
        problem="training_steps column ${column:-missing}: '$none' without --tokens, '$some' with"
    fi
fi
check "simulate --format csv: training columns empty without --tokens" "$problem"

# shellcheck disable=SC2086
problem=$(run_to explain simulate $t --tokens 300B --explain)
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/explain.out" "training         3e+11 tokens:"
        lacks "$tmp/explain.out" "diagnosis        compute:"
        lacks "$tmp/explain.out" "1. How close is the step to the ideal"
        lacks "$tmp/explain.out" "5. Is data loading"
        lacks "$tmp/explain.out" "   Verdict: ")
fi
check "simulate --explain walks the checklist after the report" "$problem"

# a storage limit and bytes per sample turn the loader on; a slow one stalls
c=$tmp/slow-storage.json
sed 's/"gpus_per_node": 8,/"gpus_per_node": 8, "storage": {"read_bandwidth_GBps": 0.001},/' \
    "$a100" >"$c"
# shellcheck disable=SC2086
problem=$(run_to loader simulate --model "$tiny" --cluster "$c" --nodes 1 --bytes-per-sample 1000000)
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/loader.out" "data: bottleneck")
fi
check "simulate --bytes-per-sample on slow storage: data loading is the bottleneck" "$problem"

# sweeps rank by cost with --tokens; with one GPU count the order is tokens/s's
s="sweep --model $tiny --cluster $a100 --nodes 1 --top 3 -j 1"
# shellcheck disable=SC2086
if ! "$PLANSIM" $s >"$tmp/rank-tps.out" 2>/dev/null ||
    ! "$PLANSIM" $s --tokens 1T --gpu-hour-price 2 --rank-by cost >"$tmp/rank-cost.out" 2>/dev/null ||
    [ ! -s "$tmp/rank-tps.out" ]; then
    problem="a sweep failed or printed no table"
else
    # the table by cost has the run's days and cost after the peak (columns
    # 7 and 8); without them, the same lines
    awk '/^best: /{ exit } { $1 = $1; print }' "$tmp/rank-tps.out" >"$tmp/rank-tps.lines"
    awk '/^best: /{ exit } { $7 = $8 = ""; $0 = $0; $1 = $1; print }' "$tmp/rank-cost.out" \
        >"$tmp/rank-cost.lines"
    cmp -s "$tmp/rank-tps.lines" "$tmp/rank-cost.lines" ||
        problem="--rank-by cost ranks differently from tokens/s on one GPU count"
    [ "$(sed -n 1p "$tmp/rank-cost.out" | awk '{ print $7, $8 }')" = "days cost" ] ||
        problem="$problem; no days and cost columns: $(sed -n 1p "$tmp/rank-cost.out")"
fi
check "sweep --rank-by cost --tokens 1T: on a fixed GPU count, tokens/s's order, with days and cost" "$problem"

# ---- (j) fit advice and what-ifs -----------------------------------------

# Llama-2 7B on one A100 node at micro-batch 4 does not fit (16 bytes of
# model states per parameter alone exceed 80 GiB): the report says so first,
# then the changes that fit; --no-advice skips them; JSON lists them
llama7=$top_srcdir/models/llama2-7b.json
big="simulate --model $llama7 --cluster $a100 --nodes 1 --micro-batch-size 4"
# shellcheck disable=SC2086
problem=$(run_to advice $big)
if [ -z "$problem" ]; then
    case $(head -n 1 "$tmp/advice.out") in
    "DOES NOT FIT: peak "*" GiB of 80.00 GiB on rank 0") ;;
    *) problem="first line: $(head -n 1 "$tmp/advice.out")" ;;
    esac
    problem="$problem$(lacks "$tmp/advice.out" "to fit, try:")"
fi
check "a plan that does not fit leads with it and the changes that fit" "$problem"
# shellcheck disable=SC2086
problem=$(run_to no-advice $big --no-advice)
if [ -z "$problem" ] && grep -q "to fit" "$tmp/no-advice.out"; then
    problem="--no-advice still advises"
fi
check "--no-advice skips the advice" "$problem"
# shellcheck disable=SC2086
problem=$(run_to advice-json $big --format json)
if [ -z "$problem" ]; then
    problem=$(json_problems "$tmp/advice-json.out"
        lacks "$tmp/advice-json.out" '"advice": ['
        lacks "$tmp/advice-json.out" '{"change": "--')
fi
check "JSON carries the advice" "$problem"
problem=$(run_to fits simulate --model "$tiny" --cluster "$a100" --nodes 1 --format json)
if [ -z "$problem" ] && grep -q '"advice"' "$tmp/fits.out"; then
    problem="a plan that fits is advised"
fi
check "a plan that fits gets no advice" "$problem"

# what-ifs: the report compares with the clean run and replays the cells
# around what they slow (GPUs 1 and 3 alone, one for the six others);
# noise is the same bytes for a seed and changes with it
w="simulate --model $tiny --cluster $a100 --nodes 1"
# shellcheck disable=SC2086
problem=$(run_to slow $w --slow-gpu 3:2 --slow-link "node 0 gpu 1 nvlink out:2x")
if [ -z "$problem" ]; then
    problem=$(lacks "$tmp/slow.out" "what-if          slow gpu 3 x2, slow link node 0 gpu 1 nvlink out x2: +"
        lacks "$tmp/slow.out" "critical rank 3 (clean: 0)"
        lacks "$tmp/slow.out" "3 of 8 ranks (symmetry: dp around the what-if)")
fi
check "--slow-gpu and --slow-link: the change against the clean run" "$problem"
# shellcheck disable=SC2086
problem=$(run_to j7 $w --jitter 0.2 --seed 7 --format csv)$(run_to j7b $w --jitter 0.2 --seed 7 --format csv)$(run_to j8 $w --jitter 0.2 --seed 8 --format csv)
if [ -z "$problem" ] && ! cmp -s "$tmp/j7.out" "$tmp/j7b.out"; then
    problem="the same seed gave different bytes"
fi
if [ -z "$problem" ] && cmp -s "$tmp/j7.out" "$tmp/j8.out"; then
    problem="seeds 7 and 8 gave the same bytes"
fi
check "--jitter: deterministic for a seed, different for another" "$problem"
# a sweep takes what-ifs, its rows the same at any thread count
sw="sweep --model $tiny --cluster $a100 --nodes 1 --tp 1 --pp 1 --zero-stage 0 --recompute none --schedule 1f1b"
sw="$sw --virtual-stages 1 --no-sequence-parallel --jitter 0.2 --seed 3"
# shellcheck disable=SC2086
"$PLANSIM" $sw -j 1 -o "$tmp/sw1.csv" >/dev/null 2>&1 && "$PLANSIM" $sw -j 2 -o "$tmp/sw2.csv" >/dev/null 2>&1
problem=
cmp -s "$tmp/sw1.csv" "$tmp/sw2.csv" || problem="-j 1 and -j 2 differ"
[ -z "$problem" ] && problem=$(lacks "$tmp/sw1.csv" ",jitter 0.2 seed 3,")
check "sweep under --jitter: the same rows at any thread count" "$problem"

# ---- the user's files (issue 19) ----------------------------------------

small="simulate --model $tiny --cluster $a100 --nodes 1"
# an existing file keeps its mode through the atomic replace
: >"$tmp/mode.txt"
chmod 600 "$tmp/mode.txt"
# shellcheck disable=SC2086
problem=$(run_to mode $small -o "$tmp/mode.txt")
mode=$(stat -c %a "$tmp/mode.txt")
[ "$mode" = 600 ] || problem="$problem; mode $mode, expected 600"
[ -s "$tmp/mode.txt" ] || problem="$problem; nothing written"
check "-o onto a mode-600 file keeps 600" "$problem"
# a symbolic link is written through: the link stays, its target changes
: >"$tmp/target.txt"
ln -s target.txt "$tmp/link.txt"
# shellcheck disable=SC2086
problem=$(run_to link $small -o "$tmp/link.txt")
[ -L "$tmp/link.txt" ] || problem="$problem; the link was replaced"
[ -s "$tmp/target.txt" ] || problem="$problem; its target is empty"
check "-o onto a symbolic link writes its target" "$problem"
ln -s missing.txt "$tmp/dangling.txt"
# shellcheck disable=SC2086
"$PLANSIM" $small -o "$tmp/dangling.txt" >/dev/null 2>"$tmp/dangling.err"
status=$?
problem=
[ "$status" -eq 1 ] || problem="exit status $status, expected 1"
[ -e "$tmp/missing.txt" ] && problem="$problem; the missing target was created"
grep -F -q "a symbolic link to a file that does not exist" "$tmp/dangling.err" ||
    problem="$problem; stderr: $(one_line "$tmp/dangling.err")"
check "-o onto a dangling symbolic link is refused" "$problem"
# -o and --trace may not name one file, nor -o an input
refused() { # refused NAME PATTERN ARG...: plansim ARG... exits 2 with PATTERN, writing nothing
    name=$1
    pattern=$2
    shift 2
    ls -A "$tmp/w" >"$tmp/before" 2>/dev/null
    "$PLANSIM" "$@" >"$tmp/refused.out" 2>"$tmp/refused.err"
    status=$?
    problem=
    [ "$status" -eq 2 ] || problem="exit status $status, expected 2"
    grep -F -q -e "$pattern" "$tmp/refused.err" || problem="$problem; stderr lacks '$pattern'"
    [ -s "$tmp/refused.out" ] && problem="$problem; stdout is not empty"
    ls -A "$tmp/w" >"$tmp/after" 2>/dev/null
    cmp -s "$tmp/before" "$tmp/after" || problem="$problem; files appeared in $tmp/w"
    [ -z "$problem" ] || problem="$problem; stderr: $(one_line "$tmp/refused.err")"
    check "$name" "$problem"
}
mkdir "$tmp/w"
# shellcheck disable=SC2086
refused "-o and --trace naming one file" "--trace: expected a file other than -o's" \
    $small -o "$tmp/w/x.json" --trace "$tmp/w/x.json"
cp "$tiny" "$tmp/w/model.json"
refused "-o naming the --model input" "-o: expected a file that is not an input" \
    simulate --model "$tmp/w/model.json" --cluster "$a100" --nodes 1 -o "$tmp/w/model.json"
cmp -s "$tiny" "$tmp/w/model.json" || check "-o naming the --model input leaves it" "overwritten"
# a run whose -o fails takes back the trace it wrote (/dev/full: every
# write fails with ENOSPC); one whose -o is a bad target writes nothing
if [ -c /dev/full ]; then
    # shellcheck disable=SC2086
    "$PLANSIM" $small --trace "$tmp/w/trace.json" -o /dev/full >/dev/null 2>"$tmp/fail.err"
    status=$?
    problem=
    [ "$status" -eq 1 ] || problem="exit status $status, expected 1"
    [ -e "$tmp/w/trace.json" ] && problem="$problem; the trace was left behind"
    check "-o failing after --trace removes the trace" "$problem"
fi
# shellcheck disable=SC2086
"$PLANSIM" $small --trace "$tmp/w/trace.json" -o "$tmp/w/no/such/folder/r.txt" \
    >/dev/null 2>"$tmp/fail.err"
status=$?
problem=
[ "$status" -eq 2 ] || problem="exit status $status, expected 2"
[ -e "$tmp/w/trace.json" ] && problem="$problem; a trace was written"
grep -q "r.txt: cannot write: its folder .*/no/such/folder does not exist" "$tmp/fail.err" ||
    problem="$problem; stderr: $(one_line "$tmp/fail.err")"
check "-o into a missing folder is refused before --trace is written" "$problem"

# the extremes a cluster file and the what-ifs accept give finite reports:
# every rate at its floor (docs/inputs.md), every latency at 1e9 us, a NIC
# at a millionth of that (GPT-3's step takes 2.5e10 s); and every rate at
# 1e9, latencies and launches 0 (6.8 ms): nothing prints nan or inf (the
# A100 with its GPU's keys in it, for the edits of both)
inline_gpu "$a100" >"$tmp/a100-whole.json"
sed -e 's/"bandwidth_GBps": [0-9.e]*/"bandwidth_GBps": 0.001/g' \
    -e 's/"efficiency": [0-9.]*/"efficiency": 0.01/g' \
    -e 's/"peak_tflops": [0-9.]*/"peak_tflops": 0.001/' \
    -e 's/"memory_bandwidth_GBps": [0-9.]*/"memory_bandwidth_GBps": 0.001/' \
    -e 's/"kernel_launch_us": [0-9.]*/"kernel_launch_us": 1e9/' \
    -e 's/"latency_us": [0-9.]*/"latency_us": 1e9/g' "$tmp/a100-whole.json" >"$tmp/floor.json"
sed -e 's/"bandwidth_GBps": [0-9.e]*/"bandwidth_GBps": 1e9/g' \
    -e 's/"peak_tflops": [0-9.]*/"peak_tflops": 1e9/' \
    -e 's/"memory_bandwidth_GBps": [0-9.]*/"memory_bandwidth_GBps": 1e9/' \
    -e 's/"memory_GiB": [0-9.]*/"memory_GiB": 1e9/' \
    -e 's/"kernel_launch_us": [0-9.]*/"kernel_launch_us": 0/' \
    -e 's/"latency_us": [0-9.]*/"latency_us": 0/g' "$tmp/a100-whole.json" >"$tmp/ceiling.json"
problem=
for end in floor ceiling; do
    slow=
    [ "$end" = floor ] && slow="node 0 nic 0:1e6"
    for format in text json csv; do
        problem="$problem$(run_to "$end-$format" simulate \
            --model "$top_srcdir/models/gpt3-175b.json" --cluster "$tmp/$end.json" --nodes 8 \
            --tp 8 --pp 8 --global-batch-size 8 ${slow:+--slow-link "$slow"} --format "$format")"
        if grep -i -q -E "nan|inf" "$tmp/$end-$format.out"; then
            problem="$problem; $end $format: $(grep -i -o -E ".{20}(nan|inf).{0,20}" \
                "$tmp/$end-$format.out" | head -n 1)"
        fi
    done
done
check "rates at their floors and ceilings: finite reports" "$problem"

# fit advice on a plan with one micro-batch of 2^31 - 1 or 2^20 sequences
# (issue 19: it allocated 16 GiB, or ran 55 s): candidates with more
# micro-batches than a step can hold are left out unbuilt, and the report
# says that changes were left out
for batch in 2147483647 1048576; do
    problem=$(run_to huge simulate --model "$top_srcdir/models/llama2-7b.json" --cluster "$a100" \
        --nodes 1 --tp 8 --global-batch-size $batch --micro-batch-size $batch)
    [ -z "$problem" ] && problem=$(lacks "$tmp/huge.out" "DOES NOT FIT")
    check "advice on a micro-batch of $batch sequences ends" "$problem"
done
[ -z "$problem" ] && problem=$(lacks "$tmp/huge.out" "were not tried")
check "advice says what its budget left out" "$problem"

finish
