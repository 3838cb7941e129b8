#!/bin/sh
# cli_sweep.sh: plansim sweep: 1 and 2 threads write the same bytes,
# pruning keeps the best plans an exhaustive sweep ranks first (their rows
# byte for byte) and pruned rows carry their bound, the union of 4 shards
# of an exhaustive sweep is the whole sweep, a sampled row is what simulate
# prints for its plan, a grid with no valid plan is a clear error, and an
# interrupted sweep writes nothing, and --nodes takes a list of sizes; a
# grid file sweeps what it names; a sweep keeps the plan's precision
# unless --dtype lists formats.
#
# Run by the test harness from the build folder with $top_srcdir and
# $PLANSIM set; writes only inside a temporary folder.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

grid=$tmp/grid.json
cat >"$grid" <<'GRID'
{"tp": [1, 2, 4], "pp": [1, 2, 3], "micro_batch_size": [1, 2], "zero_stage": [0, 3],
 "recompute": ["none", "full"], "sequence_parallel": [false, true],
 "schedule": ["1f1b", "interleaved"], "virtual_stages": [1, 2]}
GRID
# the grid's axes alone: the other fields keep the plan's values
sweep() {
    "$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1 --global-batch-size 16 \
        --grid "$grid" "$@"
}

# one thread and two: the same bytes
problem=
sweep -j 1 --all-rows -o "$tmp/j1.csv" >/dev/null 2>"$tmp/j1.err" || problem="-j 1 failed: $(one_line "$tmp/j1.err")"
sweep -j 2 --all-rows -o "$tmp/j2.csv" >/dev/null 2>"$tmp/j2.err" || problem="$problem; -j 2 failed"
if [ -z "$problem" ] && ! cmp -s "$tmp/j1.csv" "$tmp/j2.csv"; then
    problem="-j 1 and -j 2 differ"
fi
rows=$(($(wc -l <"$tmp/j1.csv") - 1))
# a row for each of the 576 combinations but those the walk refused
refused=$(sed -n 's/.* (\([0-9]*\) refused by the space.s rules.*/\1/p' "$tmp/j1.err")
grep -q '^sweep: 576 combinations' "$tmp/j1.err" || problem="$problem; stderr: $(one_line "$tmp/j1.err")"
[ "$rows" -eq $((576 - ${refused:-0})) ] && [ "${refused:-0}" -gt 0 ] ||
    problem="$problem; $rows rows, expected 576 combinations less the ${refused:-no} refused"
simulated=$(grep -c ',simulated,' "$tmp/j1.csv")
[ "$simulated" -ge 10 ] || problem="$problem; only $simulated plans simulated"
check "-j 1 and -j 2 write byte-identical CSV ($rows plans, $simulated simulated)" "$problem"

# without --all-rows: the plans replayed that fit, ranked, and no other
problem=
sweep -j 2 -o "$tmp/ranked.csv" >/dev/null 2>&1 || problem="the ranked sweep failed"
head -n 1 "$tmp/ranked.csv" | grep -q '^rank,plan_flags,tp,' || problem="$problem; header: $(head -c 60 "$tmp/ranked.csv")"
# the units are in the header: GiB, and percent for shares
for col in peak_gib mfu_percent bubble_percent; do
    head -n 1 "$tmp/ranked.csv" | tr ',' '\n' | grep -qx "$col" || problem="$problem; no column $col"
done
awk -v cols=rank,fits,status -f "$top_srcdir/plots/csvcols.awk" "$tmp/ranked.csv" >"$tmp/ranks"
[ "$(grep -c . "$tmp/ranks")" -eq "$(awk -v cols=fits,status -f "$top_srcdir/plots/csvcols.awk" "$tmp/j1.csv" |
    grep -c '^true simulated$')" ] || problem="$problem; not one row for each plan replayed that fits"
bad=$(awk '$2 != "true" || $3 != "simulated" || $1 < prev { print; exit } { prev = $1 }' "$tmp/ranks")
[ -z "$bad" ] || problem="$problem; a row out of rank or that does not fit: $bad"
[ "$(head -n 1 "$tmp/ranks" | cut -d ' ' -f 1)" = 1 ] || problem="$problem; the first row is not rank 1"
check "-o writes the plans that fit, ranked, with the units in the header" "$problem"

problem=
out=$(sweep --all-rows 2>&1 >/dev/null)
[ $? -eq 2 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] || problem="exit $?, stderr: $out"
check "--all-rows without -o is an error" "$problem"

# best_rows FILE K: the K best simulated rows that fit, by tokens/s, the
# earlier first on ties; without the rank, which depends on the rows beside
best_rows() {
    tail -n +2 "$1" >"$tmp/best.rows"
    awk -v cols=tokens_per_s,fits,status -f "$top_srcdir/plots/csvcols.awk" "$1" |
        awk '{print $1 "\t" NR "\t" $2 "\t" $3}' | paste - "$tmp/best.rows" |
        awk -F '\t' '$3 == "true" && $4 == "simulated"' | sort -t "$(printf '\t')" -k1,1gr -k2,2n |
        head -n "$2" | cut -f 5- | cut -d , -f 2-
}

# pruning against the exhaustive sweep: the same 10 best rows, byte for
# byte, and the same --top table; some plans pruned, each with its bound
# in bound_s and no step_time_s (it was not replayed: issue 21)
problem=
sweep -j 2 --exhaustive --all-rows -o "$tmp/all.csv" >/dev/null 2>"$tmp/all.err" ||
    problem="--exhaustive failed: $(one_line "$tmp/all.err")"
best_rows "$tmp/j1.csv" 10 >"$tmp/best.pruned"
best_rows "$tmp/all.csv" 10 >"$tmp/best.all"
[ "$(wc -l <"$tmp/best.all")" -eq 10 ] || problem="$problem; $(wc -l <"$tmp/best.all") best rows"
cmp -s "$tmp/best.pruned" "$tmp/best.all" || problem="$problem; the 10 best rows differ"
[ "$(grep -c ',simulated,' "$tmp/all.csv")" -gt "$simulated" ] ||
    problem="$problem; the exhaustive sweep simulated no more plans"
# the tables up to the best plan's command (what its choices bought may be
# a bound after pruning, sweep.h)
sweep -j 2 --top 3 2>/dev/null | sed "/^best: /q" >"$tmp/top.pruned" || problem="$problem; --top 3 failed"
sweep -j 2 --top 3 --exhaustive 2>/dev/null | sed "/^best: /q" >"$tmp/top.all" ||
    problem="$problem; --top 3 --exhaustive failed"
cmp -s "$tmp/top.pruned" "$tmp/top.all" || problem="$problem; the --top 3 tables differ"
awk -v cols=status,bound_s,step_time_s -v where=status=pruned -f "$top_srcdir/plots/csvcols.awk" \
    "$tmp/j1.csv" >"$tmp/pruned"
pruned=$(wc -l <"$tmp/pruned")
[ "$pruned" -gt 0 ] || problem="$problem; nothing pruned"
bad=$(awk 'NF != 2 || !($2 > 0)' "$tmp/pruned" | head -n 1)
[ -z "$bad" ] || problem="$problem; a pruned row without its bound: $bad"
check "pruning keeps the 10 best rows of the exhaustive sweep ($pruned pruned, with their bounds)" "$problem"

# the union of 4 shards of the exhaustive sweep: the same rows
problem=
: >"$tmp/union"
for k in 1 2 3 4; do
    if ! sweep -j 2 --exhaustive --all-rows --shard "$k/4" -o "$tmp/shard$k.csv" >/dev/null 2>&1; then
        problem="$problem; shard $k/4 failed"
        continue
    fi
    if [ "$(head -n 1 "$tmp/shard$k.csv")" != "$(head -n 1 "$tmp/j1.csv")" ]; then
        problem="$problem; shard $k/4 has another header"
    fi
    tail -n +2 "$tmp/shard$k.csv" | cut -d , -f 2- >>"$tmp/union"
done
# without the rank: a shard ranks its own rows
tail -n +2 "$tmp/all.csv" | cut -d , -f 2- | sort >"$tmp/whole"
sort "$tmp/union" >"$tmp/union.sorted"
cmp -s "$tmp/whole" "$tmp/union.sorted" || problem="$problem; the shards' rows differ from the whole's"
check "the union of 4 shards is the whole sweep" "$problem"

# pruning shards: the 10 best of their rows together are the whole grid's
problem=
: >"$tmp/union"
for k in 1 2 3 4; do
    sweep -j 2 --shard "$k/4" -o "$tmp/pshard$k.csv" >/dev/null 2>/dev/null || problem="$problem; shard $k/4 failed"
    tail -n +2 "$tmp/pshard$k.csv" >>"$tmp/union"
done
{ head -n 1 "$tmp/all.csv"; cat "$tmp/union"; } >"$tmp/merged.csv"
best_rows "$tmp/merged.csv" 10 | sort >"$tmp/best.merged"
sort "$tmp/best.all" >"$tmp/best.all.sorted"
cmp -s "$tmp/best.merged" "$tmp/best.all.sorted" || problem="$problem; the shards' 10 best differ"
check "the 10 best of 4 pruning shards are the whole grid's" "$problem"

# a sampled row is simulate's CSV row for that plan
problem=
row=$(grep ',simulated,' "$tmp/j1.csv" | tail -n 1) # the last: the widest tp and pp
# csvcols.awk reads the header first
plan=$( (head -n 1 "$tmp/j1.csv"; printf '%s\n' "$row") | awk \
    -v cols=tp,pp,dp,micro_batch_size,global_batch_size,schedule,virtual_stages,zero_stage,sequence_parallel,recompute \
    -f "$top_srcdir/plots/csvcols.awk")
# shellcheck disable=SC2086 # split the plan into positional parameters
set -- $plan
sp=--no-sequence-parallel
[ "$9" = true ] && sp=--sequence-parallel
"$PLANSIM" simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp "$1" --pp "$2" --dp "$3" \
    --micro-batch-size "$4" --global-batch-size "$5" --schedule "$6" --virtual-stages "$7" \
    --zero-stage "$8" "$sp" --recompute "${10}" --format csv >"$tmp/one.csv" 2>"$tmp/one.err" ||
    problem="simulate failed: $(one_line "$tmp/one.err")"
if [ -z "$problem" ] && [ "$(sed -n 2p "$tmp/one.csv")" != "${row#*,}" ]; then
    problem="sweep row: ${row#*,}; simulate row: $(sed -n 2p "$tmp/one.csv")"
fi
check "a sampled row equals simulate's for its plan ($plan)" "$problem"

# a grid whose every plan is invalid: one clear line, exit 2, nothing written
problem=
printf '{"tp": [3, 5]}\n' >"$tmp/impossible.json"
"$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1 --grid "$tmp/impossible.json" \
    -o "$tmp/none.csv" >"$tmp/imp.out" 2>"$tmp/imp.err"
status=$?
[ "$status" -eq 2 ] || problem="exit status $status, expected 2"
grep -q "^plansim: .*impossible.json: expected a grid with at least one valid plan" "$tmp/imp.err" ||
    problem="$problem; stderr: $(one_line "$tmp/imp.err")"
[ ! -e "$tmp/none.csv" ] || problem="$problem; none.csv was written"
check "an impossible grid is a clear error" "$problem"

# Ctrl-C once the sweep is under way: exit 130, no file. The signal goes
# when the sweep shows it has started (and so set its SIGINT handler): its
# progress line, which it draws only on a terminal, so the sweep runs under
# script(1) from util-linux, which gives it one (and CI unset). Without
# that script(1), the sign is SIGINT among the caught signals of
# /proc/PID/status. Either is waited for at most 30 s, in 0.1 s steps.
problem=
how=
cat >"$tmp/int.sh" <<'RUN'
echo $$ >"$INT_DIR/int.pid" # then become the sweep, under script's terminal
unset CI
exec "$PLANSIM" sweep --model "$INT_SRC/models/llama2-7b.json" \
    --cluster "$INT_SRC/topologies/dgx-a100-80gb.json" --nodes 4 -j 1 --exhaustive \
    --max-plans 100000 -o "$INT_DIR/stopped.csv"
RUN
# started PID: whether the sweep shows it has started
if script --version 2>/dev/null | grep -q util-linux; then
    how="its progress line"
    INT_DIR=$tmp INT_SRC=$top_srcdir script -q -e -c "sh '$tmp/int.sh'" /dev/null \
        </dev/null >"$tmp/int.err" 2>&1 &
    waited=$!
    started() { grep -q 'plans/s' "$tmp/int.err"; }
elif [ -r /proc/$$/status ]; then
    how="SIGINT caught"
    INT_DIR=$tmp INT_SRC=$top_srcdir sh "$tmp/int.sh" </dev/null 2>"$tmp/int.err" &
    waited=$!
    # the caught-signal mask in hex: SIGINT (2) is the bit of value 2
    started() { sed -n 's/^SigCgt:[[:blank:]]*//p' "/proc/$1/status" 2>/dev/null | grep -q '[2367abefABEF]$'; }
fi
if [ -n "$how" ]; then
    tries=0
    while [ "$tries" -lt 300 ]; do
        pid=$(cat "$tmp/int.pid" 2>/dev/null)
        if [ -n "$pid" ] && started "$pid"; then
            break
        fi
        sleep 0.1
        tries=$((tries + 1))
    done
    if [ "$tries" -lt 300 ]; then
        kill -INT "$pid"
        wait "$waited"
        status=$?
        [ "$status" -eq 130 ] || problem="exit status $status, expected 130"
        [ ! -e "$tmp/stopped.csv" ] || problem="$problem; stopped.csv was written"
        grep -q "interrupted: nothing written" "$tmp/int.err" ||
            problem="$problem; output: $(tr '\r' '\n' <"$tmp/int.err" | tail -n 3 | tr '\n' '|')"
    else
        problem="no sign within 30 s that the sweep started ($how); output: $(one_line "$tmp/int.err")"
        [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null
        wait "$waited"
    fi
    check "a sweep interrupted once started ($how) writes nothing" "$problem"
else
    ok "an interrupted sweep writes nothing # SKIP neither util-linux script(1) nor /proc"
fi

# --top: the best plans as a table
problem=
sweep -j 2 --top 3 >"$tmp/top.out" 2>/dev/null || problem="--top failed"
# a header, three rows ranked 1 to 3, the best plan's command, then what
# its choices bought
[ "$(sed -n '/^best: /q; p' "$tmp/top.out" | awk '{ print $1 }' | tr '\n' ' ')" = "rank 1 2 3 " ] ||
    problem="$problem; table: $(one_line "$tmp/top.out")"
grep -q '^best: plansim simulate ' "$tmp/top.out" || problem="$problem; no best: line"
grep -q "^what the winner's choices bought" "$tmp/top.out" || problem="$problem; no gains"
check "--top 3 prints three plans" "$problem"

# a set field's commas are its value's, not an axis: --recompute-modules
# core_attn,layernorm is one plan field, which the best plan's command keeps
problem=
"$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1 --global-batch-size 64 --tp 1 --pp 1 \
    --recompute selective --recompute-modules core_attn,layernorm --attention standard \
    >"$tmp/modules.out" 2>/dev/null || problem="the sweep failed"
grep -q '^best: .* --recompute-modules core_attn,layernorm' "$tmp/modules.out" ||
    problem="$problem; $(grep '^best' "$tmp/modules.out")"
grep -q '^sweep: .*recompute_modules' "$tmp/modules.out" && problem="$problem; swept as an axis"
check "--recompute-modules a,b is one value in a sweep" "$problem"

# --nodes 1,2: both sizes in one sweep, the outermost axis; ranked by cost
# (GPU-hours of a run), the best plan's command names its own size; the
# winner is the row simulate prints for it; a size given twice, or a list
# with --gpus, is an error
problem=
"$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1,2 --global-batch-size 64 --tp 1 \
    --pp 1 --offload none --tokens 1e9 --rank-by cost --top 1 -j 2 >"$tmp/nodes.out" \
    2>"$tmp/nodes.err" || problem="the sweep failed: $(one_line "$tmp/nodes.err")"
grep -q '^sweep: nodes 1,2 x ' "$tmp/nodes.err" || problem="$problem; stderr: $(one_line "$tmp/nodes.err")"
best=$(sed -n 's/^best: plansim //p' "$tmp/nodes.out")
case "$best" in
*"--nodes 1 "* | *"--nodes 2 "*) ;;
*) problem="$problem; best: $best" ;;
esac
# shellcheck disable=SC2086 # the command's words
(cd "$top_srcdir" && "$PLANSIM" $best --format csv) >"$tmp/nodes-best.csv" 2>/dev/null ||
    problem="$problem; the best command failed"
tokens=$(sed -n 2p "$tmp/nodes.out" | awk '{ print $2 }')
[ "$(csv_column "$tmp/nodes-best.csv" tokens_per_s | awk '{ printf "%.4g", $1 }')" = "$tokens" ] ||
    problem="$problem; the best plan's tokens/s differ: $tokens in the table"
"$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1,1 >/dev/null 2>"$tmp/twice.err"
[ $? -eq 2 ] && grep -q -- '--nodes: expected distinct node counts, got 1 twice' "$tmp/twice.err" ||
    problem="$problem; --nodes 1,1: $(one_line "$tmp/twice.err")"
"$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1,2 --gpus 4 >/dev/null 2>"$tmp/gpus.err"
[ $? -eq 2 ] && grep -q -- '--gpus: expected none with several --nodes' "$tmp/gpus.err" ||
    problem="$problem; --gpus with --nodes 1,2: $(one_line "$tmp/gpus.err")"
check "--nodes 1,2 sweeps both sizes, the best command naming its own" "$problem"

# a grid file sweeps what it names: the space line lists its axes alone,
# the other fields keep the plan's values (the flags', else the
# defaults); --space default lays it over the default space (which adds
# offload and the rest)
problem=
printf '{"tp": [1, 2], "pp": [1, 2]}\n' >"$tmp/named.json"
"$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1 --global-batch-size 16 \
    --grid "$tmp/named.json" >/dev/null 2>"$tmp/named.err" || problem="named failed: $(one_line "$tmp/named.err")"
grep -q '^sweep: tp 1,2 x pp 1,2$' "$tmp/named.err" || problem="$problem; space: $(one_line "$tmp/named.err")"
"$PLANSIM" sweep --model "$tiny" --cluster "$a100" --nodes 1 --global-batch-size 16 \
    --grid "$tmp/named.json" --space default >/dev/null 2>"$tmp/whole.err" || problem="$problem; --space default failed"
grep -q '^sweep: tp 1,2 x pp 1,2 x .*offload' "$tmp/whole.err" || grep -q '^sweep: .*tp 1,2.* x .*offload' "$tmp/whole.err" ||
    problem="$problem; --space default: $(one_line "$tmp/whole.err")"
check "a grid file sweeps what it names; --space default adds the default space" "$problem"

# a precision is the user's: the default space keeps bf16 and notes what
# fp8 would make of the winner; --dtype bf16,fp8 compares the two (on an
# H100, fp8's peak is twice bf16's: the winner is fp8)
problem=
h100=$top_srcdir/topologies/dgx-h100.json
printf '{"tp": [1, 2]}\n' >"$tmp/tp.json"
"$PLANSIM" sweep --model "$tiny" --cluster "$h100" --nodes 1 --global-batch-size 16 \
    --grid "$tmp/tp.json" >"$tmp/bf16.out" 2>/dev/null || problem="bf16 sweep failed"
grep '^best: ' "$tmp/bf16.out" | grep -q -- '--dtype' && problem="$problem; the winner changed the precision"
grep -q '^note: the sweep keeps bf16, a numerics choice; in fp8 this plan would take ' "$tmp/bf16.out" ||
    problem="$problem; no fp8 note: $(one_line "$tmp/bf16.out")"
"$PLANSIM" sweep --model "$tiny" --cluster "$h100" --nodes 1 --global-batch-size 16 \
    --grid "$tmp/tp.json" --dtype bf16,fp8 >"$tmp/both.out" 2>"$tmp/both.err" || problem="$problem; --dtype bf16,fp8 failed"
grep -q '^sweep: tp 1,2 x dtype bf16,fp8$' "$tmp/both.err" || problem="$problem; space: $(one_line "$tmp/both.err")"
grep '^best: ' "$tmp/both.out" | grep -q -- '--dtype fp8' || problem="$problem; best: $(grep '^best' "$tmp/both.out")"
grep -q '^note: ' "$tmp/both.out" && problem="$problem; a note where the formats were swept"
check "a sweep keeps the plan's precision, notes fp8's gain, and compares formats when asked" "$problem"

# clusters compared: by time the B200s win (above the A100 in every
# datasheet figure); by cost at 1, 4 and 8 a GPU-hour the A100s, since
# neither the H100 (dense bf16 3.2x the A100's, HBM 1.7x, NVLink 1.5x) nor
# the B200 (7.2x, 4x, 3x) is as many times faster as it costs more; each
# row names its cluster, the best command the winner's, and a line gives
# the best on each other cluster
problem=
clusters() {
    "$PLANSIM" sweep --model "$tiny" --cluster dgx-a100-80gb,dgx-h100,dgx-b200 --nodes 1 \
        --global-batch-size 16 --tokens 1e9 --top 3 "$@"
}
clusters --gpu-hour-price 1,4,8 --rank-by time >"$tmp/by-time.out" 2>"$tmp/by-time.err" ||
    problem="by time failed: $(one_line "$tmp/by-time.err")"
clusters --gpu-hour-price 1,4,8 --rank-by cost >"$tmp/by-cost.out" 2>/dev/null || problem="$problem; by cost failed"
grep -q '^sweep: clusters dgx-a100-80gb:1,dgx-h100:1,dgx-b200:1 x ' "$tmp/by-time.err" ||
    problem="$problem; space: $(one_line "$tmp/by-time.err")"
[ "$(sed -n 1p "$tmp/by-time.out" | awk '{ print $7, $8, $9 }')" = "days cost cluster" ] ||
    problem="$problem; header: $(sed -n 1p "$tmp/by-time.out")"
[ "$(sed -n 2p "$tmp/by-time.out" | awk '{ print $9 }')" = dgx-b200:1 ] ||
    problem="$problem; by time: $(sed -n 2p "$tmp/by-time.out")"
[ "$(sed -n 2p "$tmp/by-cost.out" | awk '{ print $9 }')" = dgx-a100-80gb:1 ] ||
    problem="$problem; by cost: $(sed -n 2p "$tmp/by-cost.out")"
grep '^best: ' "$tmp/by-cost.out" | grep -q -- '--cluster dgx-a100-80gb --nodes 1 ' ||
    problem="$problem; $(grep '^best: ' "$tmp/by-cost.out")"
# the cost column: days x 24 h x 8 GPUs x the row's price
bad=$(sed -n '2,4p' "$tmp/by-cost.out" | awk '{ want = $7 * 24 * 8 * 1
    if ($8 < want * 0.999 || $8 > want * 1.001) print }')
[ -z "$bad" ] || problem="$problem; a cost not days x 24 x 8 x 1: $bad"
[ "$(grep -c '^  dgx-\(h100\|b200\):1 ' "$tmp/by-cost.out")" -eq 2 ] ||
    problem="$problem; no best on each other cluster: $(one_line "$tmp/by-cost.out")"
check "--cluster a,b,c ranks across clusters: the winner flips between time and cost" "$problem"

# a list of clusters and what goes with it: a node count for each (or one
# for all), a price for each, every cluster priced to rank by cost; a GPU
# count they share sizes each
problem=
for bad in "--nodes 1,2:--nodes: expected one node count, or one for each of the 3 clusters" \
    "--nodes 1 --gpu-hour-price 1,2:--gpu-hour-price: expected one price, or one for each cluster" \
    "--nodes 1 --rank-by cost:--rank-by: expected a price for each cluster compared by cost"; do
    # shellcheck disable=SC2086 # the flags split into words
    clusters ${bad%%:*} >/dev/null 2>"$tmp/list.err"
    status=$?
    [ $status -eq 2 ] && [ "$(grep -c . "$tmp/list.err")" -eq 1 ] &&
        grep -q -- "${bad#*:}" "$tmp/list.err" || problem="$problem; ${bad%%:*}: exit $status, $(one_line "$tmp/list.err")"
done
"$PLANSIM" sweep --model "$tiny" --cluster dgx-a100-80gb,dgx-a100-80gb >/dev/null 2>"$tmp/twice.err"
[ $? -eq 2 ] && grep -q -- '--cluster: expected distinct clusters, got dgx-a100-80gb twice' "$tmp/twice.err" ||
    problem="$problem; a cluster twice: $(one_line "$tmp/twice.err")"
"$PLANSIM" sweep --model "$tiny" --cluster dgx-a100-80gb,gb200-nvl72 --gpus 8 --global-batch-size 16 \
    --grid "$tmp/tp.json" >"$tmp/shared.out" 2>"$tmp/shared.err" || problem="$problem; --gpus 8 failed: $(one_line "$tmp/shared.err")"
grep -q '^sweep: clusters dgx-a100-80gb:1,gb200-nvl72:1 x tp 1,2$' "$tmp/shared.err" ||
    problem="$problem; --gpus 8: $(one_line "$tmp/shared.err")"
check "a list of clusters: node counts, prices and a shared GPU count, each checked" "$problem"

# a grid sweeps what it names and nothing more: the GPT-3 grid of
# bench/grid-gpt3-66.json walks 3 x 3 x 2 x 2 x 2 x 2 = 144 combinations,
# 66 of them valid on 1,024 A100s (its count when it was written; issue 37)
problem=
"$PLANSIM" sweep --model "$top_srcdir/models/gpt3-175b.json" --cluster "$a100" --nodes 128 \
    --global-batch-size 1536 --zero-stage 1 --sequence-parallel \
    --grid "$top_srcdir/bench/grid-gpt3-66.json" --top 1 >/dev/null 2>"$tmp/g66.err" ||
    problem="failed: $(one_line "$tmp/g66.err")"
grep -q '^sweep: 144 combinations, 66 valid:' "$tmp/g66.err" || problem="$problem; $(one_line "$tmp/g66.err")"
check "the GPT-3 grid of 66 plans sweeps 66 valid plans" "$problem"

# where the winner's experts are: on two 8-GPU nodes, tp 1, an ep 8 group
# is 8 consecutive ranks (tp-dp-pp order), one node; ep 16 spans both
problem=
cat >"$tmp/tiny-moe.json" <<'MOE'
{"name": "tiny-moe", "layers": 4, "hidden_size": 256, "attention_heads": 8, "kv_heads": 8,
 "ffn_hidden_size": 1024, "vocab_size": 1024, "seq_length": 128, "experts": 16,
 "experts_per_token": 2, "moe_ffn_hidden_size": 512}
MOE
for ep in 8 16; do
    "$PLANSIM" sweep --model "$tmp/tiny-moe.json" --cluster "$a100" --nodes 2 --global-batch-size 32 \
        --tp 1 --pp 1 --ep "$ep" --grid "$tmp/tp.json" --space grid >"$tmp/ep$ep.out" 2>"$tmp/ep$ep.err" ||
        problem="$problem; ep $ep failed: $(one_line "$tmp/ep$ep.err")"
done
grep -q "^experts: each ep 8 group inside one node's NVLink domain (8 GPUs a node)" "$tmp/ep8.out" ||
    problem="$problem; ep 8: $(grep '^experts' "$tmp/ep8.out")"
grep -q '^experts: an ep 16 group spans up to 2 nodes of 8 GPUs' "$tmp/ep16.out" ||
    problem="$problem; ep 16: $(grep '^experts' "$tmp/ep16.out")"
check "the winner's explanation says whether its expert groups stay inside a node" "$problem"

# issue 36: the default sweep of a DeepSeek-V3-shaped model on one GB200
# NVL72 rack (72 GPUs, one NVLink domain) picks expert parallelism and says
# its groups stay inside the rack's NVLink domain. The shipped config with
# 2 layers, the first dense (as its first 3 are) and one of experts, so
# that the whole default space walks in two seconds (11 under the
# sanitizers); the rest (MLA, 256 experts, 8 a token, a shared expert,
# MTP) as shipped. A global batch of 1,152 = 72 x 16 divides
# over every dp the rack's sizes give.
problem=
sed -e 's/"num_hidden_layers": 61/"num_hidden_layers": 2/' \
    -e 's/"first_k_dense_replace": 3/"first_k_dense_replace": 1/' \
    "$top_srcdir/models/hf/deepseek-v3.json" >"$tmp/ds2.json"
"$PLANSIM" sweep --model "$tmp/ds2.json" --cluster gb200-nvl72 --nodes 1 --seq-length 4096 \
    --global-batch-size 1152 --top 1 >"$tmp/ds2.out" 2>"$tmp/ds2.err" ||
    problem="failed: $(one_line "$tmp/ds2.err")"
grep -q '^best: .* --ep [1-9][0-9]* ' "$tmp/ds2.out" && ! grep -q '^best: .* --ep 1 ' "$tmp/ds2.out" ||
    problem="$problem; no expert parallelism: $(grep '^best' "$tmp/ds2.out")"
grep -q "^experts: each ep [0-9]* group inside one node's NVLink domain (72 GPUs a node): its dispatch and combine cross no NIC$" "$tmp/ds2.out" ||
    problem="$problem; $(grep '^experts' "$tmp/ds2.out")"
check "a DeepSeek-V3-shaped model's default sweep on a GB200 NVL72 rack keeps its expert groups in the rack" "$problem"

finish
