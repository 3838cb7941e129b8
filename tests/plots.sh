#!/bin/sh
# plots.sh: every gnuplot script in plots/ renders a PNG and an SVG from
# small inputs made here (a sweep CSV, a step's JSON, a trace), without
# gnuplot reporting an error. gnuplot comes with bootstrap; without it the
# test is skipped (exit 77).

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP: gnuplot is not installed (./bootstrap installs gnuplot-nox)"
    exit 77
fi

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

plots=$top_srcdir/plots

# the inputs, from the tiny model
"$PLANSIM" sweep --exhaustive --model "$tiny" --cluster "$a100" --nodes 1 --global-batch-size 16 \
    --grid "$plots/heatmap-grid.json" -o "$tmp/sweep.csv" 2>/dev/null
"$PLANSIM" sweep --exhaustive --model "$tiny" --cluster "$a100" --nodes 1 --tp 1 --pp 4 --dp 1 \
    --micro-batch-size 1 --zero-stage 0 --recompute none --no-sequence-parallel \
    --schedule 1f1b --virtual-stages 1 --grid "$plots/bubble-grid.json" \
    -o "$tmp/bubble.csv" 2>/dev/null
"$PLANSIM" simulate --model "$tiny" --cluster "$a100" --nodes 1 --tp 2 --pp 4 \
    --global-batch-size 8 --format json -o "$tmp/step.json" --trace "$tmp/trace.json"

# render NAME INPUT: runs plots/NAME.gp on INPUT and checks its figures
render() {
    problem=
    if [ ! -s "$2" ]; then
        problem="no input $2"
    elif ! gnuplot -e "input='$2'; output='$tmp/$1'; dir='$plots'" "$plots/$1.gp" \
        >"$tmp/$1.log" 2>&1; then
        problem="gnuplot failed: $(one_line "$tmp/$1.log")"
    elif grep -qi "error" "$tmp/$1.log"; then
        problem="gnuplot said: $(one_line "$tmp/$1.log")"
    fi
    for ext in png svg; do
        [ -s "$tmp/$1.$ext" ] || problem="$problem; no $1.$ext"
    done
    check "plots/$1.gp renders PNG and SVG" "$problem"
}

render heatmap "$tmp/sweep.csv"
render bubble "$tmp/bubble.csv"
render memory "$tmp/step.json"
render gantt "$tmp/trace.json"

# svg_lacks NAME TEXT: a problem when plots/NAME.gp's SVG has no text
# element that is exactly TEXT
svg_lacks() {
    grep -F -q ">$2<" "$tmp/$1.svg" || printf '; %s.svg lacks "%s"' "$1" "$2"
}

# svg_has NAME TEXT: a problem when it has one
svg_has() {
    ! grep -F -q ">$2<" "$tmp/$1.svg" || printf '; %s.svg shows "%s"' "$1" "$2"
}

check "the heat map's title names the model and its colour bar has a label" \
    "$(svg_lacks heatmap "tiny-gpt: best tokens/s per (tp, pp), plans that fit")$(svg_lacks heatmap "best tokens/s")"
# tp 2 x pp 4: GPUs 1, 3, 5, 7 run as their tensor-parallel partners 0, 2,
# 4, 6 do; every stream with slices has a row (compute, the tp
# collectives, the pipeline sends), the step has no recomputation, and no
# row -1
check "the Gantt chart has a row per stream of each pipeline stage, no -1 tick, and a key of the kinds drawn" \
    "$(svg_lacks gantt "GPU 0 compute")$(svg_lacks gantt "GPU 0 tp")$(svg_lacks gantt "GPU 0 p2p")$(svg_lacks gantt "GPU 6 compute")$(svg_has gantt "GPU 1 compute")$(svg_has gantt "GPU 7 compute")$(svg_has gantt "-1")$(svg_lacks gantt forward)$(svg_has gantt recompute)$(svg_lacks gantt collective)"
check "the memory plot stacks the runtime's reserve" "$(svg_lacks memory reserve)"
finish
