#!/bin/sh
# figures.sh OUT [draw]: the figures the docs show, made in the folder OUT.
# Runs plansim ($PLANSIM) on the shipped inputs (under $top_srcdir) for
# each figure's input (heatmap.csv, step.json, bubble.csv, trace.json),
# writes OUT/figures.txt, the figures' numbers as text (what each plot
# draws, so that a change of them shows in a diff), and with `draw` draws
# OUT/{heatmap,memory,bubble,gantt}.{png,svg} with gnuplot and
# OUT/html-report.png, the top of the step's --html page as headless
# Chromium shows it.
#
# `make plots` runs it into the build tree; `make plots-update` also copies
# the PNGs and figures.txt into plots/figures/, the committed ones, and
# tests/figures.sh checks that the committed figures.txt is this one's.

set -e
out=${1:?usage: figures.sh OUT [draw]}
src=${top_srcdir:?top_srcdir is not set}
plansim=${PLANSIM:?PLANSIM is not set}
a100=$src/topologies/dgx-a100-80gb.json
cols=$src/plots/csvcols.awk
mkdir -p "$out"

# the inputs
"$plansim" sweep --model "$src/models/llama2-13b.json" --cluster "$a100" --nodes 8 \
    --global-batch-size 256 --grid "$src/plots/heatmap-grid.json" --exhaustive \
    -o "$out/heatmap.csv" >/dev/null 2>&1
"$plansim" simulate --model "$src/models/gpt3-175b.json" --cluster "$a100" \
    --plan "$src/plans/seed-512.json" --format json -o "$out/step.json"
"$plansim" sweep --model "$src/models/llama2-7b.json" --cluster "$a100" --nodes 1 --tp 1 --pp 4 \
    --dp 1 --micro-batch-size 1 --zero-stage 0 --recompute none --no-sequence-parallel \
    --schedule 1f1b --virtual-stages 1 --offload none --grid "$src/plots/bubble-grid.json" \
    --exhaustive -o "$out/bubble.csv" >/dev/null 2>&1
"$plansim" simulate --model "$src/models/llama2-7b.json" --cluster "$a100" --nodes 1 --tp 2 \
    --pp 4 --dp 1 --global-batch-size 8 --trace "$out/trace.json" -o /dev/null

# their numbers, as the plots draw them
{
    echo "# plots/figures: the numbers of the committed figures (plots/figures.sh)"
    echo "# heatmap: tp pp best tokens/s among the plans that fit (Llama 2 13B, 64 A100s)"
    awk -v cols=tp,pp,tokens_per_s -v where=fits=true -f "$cols" "$out/heatmap.csv" |
        awk '!(($1 " " $2) in best) || $3 > best[$1 " " $2] { best[$1 " " $2] = $3 }
             END { for (k in best) printf "heatmap %s %.6g\n", k, best[k] }' | sort -k2,2n -k3,3n
    echo "# memory: stage, GiB of params grads optimizer activations buffers reserve (GPT-3 175B)"
    grep '"stage":' "$out/step.json" | sed 's/[{}",:]/ /g' |
        awk '{ printf "memory %s", $2
               for (i = 3; i <= NF; i++)
                   if ($i ~ /_bytes$/ && $i != "peak_bytes" && $i != "p2p_bytes")
                       printf " %.2f", $(i + 1) / 2^30
               printf "\n" }'
    echo "# bubble: micro-batches, measured bubble fraction (Llama 2 7B, 4 stages)"
    awk -v cols=micro_batches,bubble_percent -f "$cols" "$out/bubble.csv" | sort -n |
        awk '{ printf "bubble %s %.4f\n", $1, $2 / 100 }'
    echo "# gantt: the traced step's slices per stream (Llama 2 7B, tp 2 x pp 4)"
    grep '"ph": "X"' "$out/trace.json" | sed 's/.*"tid": \([0-9]*\).*/\1/' | sort -n | uniq -c |
        awk '{ printf "gantt stream %s %s slices\n", $2, $1 }'
} >"$out/figures.txt"

[ "${2:-}" = draw ] || exit 0
for plot in heatmap:heatmap.csv memory:step.json bubble:bubble.csv gantt:trace.json; do
    gnuplot -e "input='$out/${plot#*:}'; output='$out/${plot%%:*}'; dir='$src/plots'" \
        "$src/plots/${plot%%:*}.gp"
done
"$plansim" simulate --model "$src/models/gpt3-175b.json" --cluster "$a100" \
    --plan "$src/plans/seed-512.json" --html "$out/report.html" -o /dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1380 \
    --user-data-dir="$out/chromium" --screenshot="$out/html-report.png" \
    "file://$(cd "$out" && pwd)/report.html" 2>/dev/null
rm -rf "$out/chromium"
