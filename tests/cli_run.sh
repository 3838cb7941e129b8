#!/bin/sh
# cli_run.sh: plansim run, a whole training run: the same seed gives the
# same bytes in every format, another seed other trials; JSON, CSV and text
# give the same figures; --checkpoint-every in steps and in time; -o
# writes what stdout shows; without failures the run is its clean time and
# its saves; sweeps ranked by run-time agree at any -j, and may crown a
# slower plan on fewer nodes; a run, or a sweep, of plans that do not fit
# exits 3.
#
# Run by the test harness with $top_srcdir and $PLANSIM set.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

r="run --model $tiny --cluster $a100 --nodes 2 --global-batch-size 64 --tokens 5e10"

# plansim ARG... >$tmp/NAME.out, and nothing on stderr
to() {
    name=$1
    shift
    # shellcheck disable=SC2086 # the command's words
    "$PLANSIM" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" && [ ! -s "$tmp/$name.err" ] ||
        printf '; %s failed: %s' "$name" "$(one_line "$tmp/$name.err")"
}

# the JSON number of "KEY" in object "GROUP" (an inline object's line)
json_in() {
    sed -n "s/.*\"$2\": {.*\"$3\": \\([^,}]*\\).*/\\1/p" "$1" | head -n 1
}

# ---- the same seed, the same bytes; another seed, other trials ----------
problem=
for format in text json csv; do
    # shellcheck disable=SC2086
    problem=$problem$(to "a-$format" $r --format $format --seed 5)$(to "b-$format" $r --format $format --seed 5)
    cmp -s "$tmp/a-$format.out" "$tmp/b-$format.out" || problem="$problem; $format differs"
done
# shellcheck disable=SC2086
problem=$problem$(to c-text $r --seed 6)
cmp -s "$tmp/a-text.out" "$tmp/c-text.out" && problem="$problem; seeds 5 and 6 gave the same trials"
check "run: the same seed gives the same bytes, another seed other trials" "$problem"

# ---- JSON, CSV and text agree -------------------------------------------
problem=
json=$(json_in "$tmp/a-json.out" days mean)
csv=$(csv_column "$tmp/a-csv.out" days_mean)
[ -n "$json" ] && [ "$json" = "$csv" ] || problem="days mean: JSON $json, CSV $csv"
text=$(awk '$1 == "days" { print $2 }' "$tmp/a-text.out")
[ "$(awk -v v="$json" 'BEGIN { printf "%.4g", v }')" = "$text" ] ||
    problem="$problem; days mean: JSON $json, text $text"
ettr=$(csv_column "$tmp/a-csv.out" ettr_mean)
awk -v e="$ettr" 'BEGIN { exit !(e > 0.5 && e < 1) }' || problem="$problem; ETTR $ettr"
check "run: JSON, CSV and text give the same figures" "$problem"

# ---- the interval in steps or in time -------------------------------------
# shellcheck disable=SC2086
problem=$(to every-steps $r --format csv --checkpoint-every 7)$(to every-time $r --format csv --checkpoint-every 2min)
steps=$(csv_column "$tmp/every-steps.out" interval_every_steps)
[ "$steps" = 7 ] || problem="$problem; --checkpoint-every 7: every $steps steps"
step=$(csv_column "$tmp/every-time.out" step_time_s)
every=$(csv_column "$tmp/every-time.out" interval_every_steps)
want=$(awk -v s="$step" 'BEGIN { printf "%.0f", 120 / s }')
[ "$every" = "$want" ] || problem="$problem; --checkpoint-every 2min: every $every steps, expected $want (step $step s)"
check "run --checkpoint-every: steps, or a time rounded to whole steps" "$problem"

# ---- -o FILE writes what stdout shows -----------------------------------
# shellcheck disable=SC2086
problem=$(to o $r --seed 5 -o "$tmp/report.txt")
cmp -s "$tmp/report.txt" "$tmp/a-text.out" || problem="$problem; -o FILE differs from stdout"
check "run -o FILE: the report stdout shows" "$problem"

# ---- no failures: the clean run and its saves -----------------------------
# shellcheck disable=SC2086
problem=$(to clean $r --format csv --failure-rate 0 --checkpoint-every 100)
clean=$(csv_column "$tmp/clean.out" clean_days)
days=$(csv_column "$tmp/clean.out" days_mean)
saves=$(csv_column "$tmp/clean.out" lost_days_checkpoints)
awk -v c="$clean" -v d="$days" -v s="$saves" 'BEGIN { exit !(s > 0 && (d - c - s)^2 < (1e-9 * d)^2) }' ||
    problem="$problem; days $days, clean $clean + saves $saves"
[ "$(csv_column "$tmp/clean.out" failures_observed)" = 0 ] || problem="$problem; failures observed"
# shellcheck disable=SC2086
problem=$problem$(to clean-text $r --failure-rate 0 --checkpoint-every 100)
grep -q '^failures     none' "$tmp/clean-text.out" || problem="$problem; text: $(one_line "$tmp/clean-text.out")"
grep -qi 'inf\|nan' "$tmp/clean-text.out" "$tmp/clean.out" && problem="$problem; an infinite or NaN figure"
check "run --failure-rate 0: the clean run plus its saves" "$problem"

# ---- asynchronous saves pause for less -------------------------------------
# shellcheck disable=SC2086
problem=$(to sync $r --format csv --checkpoint-every 100)$(to async $r --format csv --checkpoint-every 100 --async-save)
sync=$(csv_column "$tmp/sync.out" checkpoint_pause_s)
async=$(csv_column "$tmp/async.out" checkpoint_pause_s)
write=$(csv_column "$tmp/async.out" checkpoint_write_s)
awk -v s="$sync" -v a="$async" -v w="$write" 'BEGIN { exit !(a < s && w == s) }' ||
    problem="$problem; sync pause $sync, async pause $async and write $write"
check "run --async-save: a snapshot's pause, the save's write behind it" "$problem"

# ---- sweeps ranked by run-time: the same at -j 1 and -j 2 -------------------
s="sweep --model $tiny --cluster $a100 --nodes 2 --global-batch-size 64 --tp 1 --tokens 5e10 --rank-by run-time --top 3"
problem=
# shellcheck disable=SC2086
"$PLANSIM" $s -j 2 --seed 3 >"$tmp/j2.out" 2>/dev/null || problem="$problem; -j 2 failed"
# shellcheck disable=SC2086
"$PLANSIM" $s -j 1 --seed 3 >"$tmp/j1.out" 2>/dev/null || problem="$problem; -j 1 failed"
cmp -s "$tmp/j1.out" "$tmp/j2.out" || problem="$problem; -j 1 and -j 2 differ"
grep -q 'run(days)' "$tmp/j1.out" || problem="$problem; no run(days) column: $(one_line "$tmp/j1.out")"
check "sweep --rank-by run-time: the same table at -j 1 and -j 2" "$problem"

# ---- failures can make a slower plan win -------------------------------------
# 2 failures a node-day and hour-long restarts: on 4 nodes the run fails 4
# times as often as on 1, and the fastest plan by time (on 4 nodes) loses
# by run-time to a slower one on 1 node
problem=
s="sweep --model $tiny --cluster $a100 --nodes 1,4 --global-batch-size 64 --tokens 5e11 --top 1 -j 2 --pp 1 --recompute none --offload none"
# shellcheck disable=SC2086
"$PLANSIM" $s --rank-by time >"$tmp/by-time.out" 2>/dev/null || problem="$problem; --rank-by time failed"
# shellcheck disable=SC2086
"$PLANSIM" $s --rank-by run-time --failure-rate 2000 --restart 3600 >"$tmp/by-run-time.out" \
    2>/dev/null || problem="$problem; --rank-by run-time failed"
grep -q '^best: .* --nodes 4 ' "$tmp/by-time.out" || problem="$problem; by time: $(one_line "$tmp/by-time.out")"
grep -q '^best: .* --nodes 1 ' "$tmp/by-run-time.out" || problem="$problem; by run-time: $(one_line "$tmp/by-run-time.out")"
fast=$(awk '$1 == 1 { print $2 }' "$tmp/by-time.out")
slow=$(awk '$1 == 1 { print $2 }' "$tmp/by-run-time.out")
awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(s < f) }' || problem="$problem; tokens/s $slow against $fast"
check "sweep --rank-by run-time: more nodes fail more often, and a slower plan wins" "$problem"

# the best command is a plansim run of the winner, with the run's flags,
# whose mean days are the table's
problem=
best=$(sed -n 's/^best: plansim //p' "$tmp/by-run-time.out")
case "$best" in
"run "*"--tokens 5e11"*"--failure-rate 2000 --restart 3600"*) ;;
*) problem="best: $best" ;;
esac
# shellcheck disable=SC2086 # the command's words
(cd "$top_srcdir" && "$PLANSIM" $best) >"$tmp/best-run.out" 2>/dev/null || problem="$problem; it failed"
days=$(awk '$1 == "days" { print $2 }' "$tmp/best-run.out")
table=$(awk '$1 == 1 { print $7 }' "$tmp/by-run-time.out")
[ -n "$days" ] && [ "$days" = "$table" ] || problem="$problem; run: $days days, the table: $table"
check "sweep --rank-by run-time: its best command, plansim run, gives the table's days" "$problem"

# the answer is no: exit 3 with one line. Llama 3.1 405B on one node of 8
# A100s never fits: its bf16 weights alone, 2 bytes x 405e9 / 8 = 101 GB a
# GPU fully sharded, are over the 80 GiB of each. A run of it writes
# nothing; a sweep of it exits 3 after its reasons.
problem=
m405="$top_srcdir/models/llama3-405b.json"
"$PLANSIM" run --model "$m405" --cluster "$a100" --nodes 1 --global-batch-size 8 --tokens 1e9 \
    -o "$tmp/no-fit.txt" >"$tmp/no-fit.out" 2>"$tmp/no-fit.err"
status=$?
[ "$status" -eq 3 ] || problem="$problem; run: status $status"
[ "$(wc -l <"$tmp/no-fit.err")" -eq 1 ] && grep -q '^plansim: run: the plan does not fit: ' "$tmp/no-fit.err" ||
    problem="$problem; run: $(one_line "$tmp/no-fit.err")"
[ ! -e "$tmp/no-fit.txt" ] && [ ! -s "$tmp/no-fit.out" ] || problem="$problem; run wrote something"
"$PLANSIM" sweep --model "$m405" --cluster "$a100" --nodes 1 --global-batch-size 8 \
    >"$tmp/no-fit-sweep.out" 2>"$tmp/no-fit-sweep.err"
status=$?
[ "$status" -eq 3 ] || problem="$problem; sweep: status $status"
[ "$(grep -c '^plansim: ' "$tmp/no-fit-sweep.err")" -eq 1 ] &&
    grep -q "^plansim: sweep: no plan fits in the GPUs' memory" "$tmp/no-fit-sweep.err" ||
    problem="$problem; sweep: $(one_line "$tmp/no-fit-sweep.err")"
check "a run of a plan that does not fit, and a sweep where none fits, exit 3 with one line" "$problem"

finish
