#!/bin/sh
# seed-corpus.sh SRCDIR OUTDIR: the fuzz targets' seed corpora, copied from
# the shipped inputs and the test inputs of SRCDIR into OUTDIR/TARGET (run
# by `make fuzz`; a corpus is a build output, never committed).
set -eu
src=$1
out=$2
seed() { # seed TARGET FILE...: copies the files that exist
    target=$1
    shift
    mkdir -p "$out/$target"
    for f in "$@"; do
        if [ -f "$f" ]; then
            cp "$f" "$out/$target/$(printf '%s' "${f#"$src"/}" | tr / _)"
        fi
    done
}
seed model "$src"/models/*.json "$src"/models/hf/*.json
seed hf "$src"/models/hf/*.json
seed cluster "$src"/topologies/*.json
seed plan "$src"/plans/*.json
seed grid "$src"/plots/*-grid.json
# shapes the shipped files lack
printf '{"pp": 2, "layers_per_stage": [1, 3], "schedule": "gpipe"}\n' >"$out/plan/layers.json"
printf '{"pp": 2, "virtual_stages": 2, "schedule": "interleaved", "zero_stage": "fsdp"}\n' \
    >"$out/plan/interleaved.json"
printf '{"tp": [1, 2], "schedule": ["1f1b", "gpipe"], "sequence_parallel": [true, false]}\n' \
    >"$out/grid/words.json"
# the test inputs: each to the target its keys belong to
for f in "$src"/tests/inputs/*.json "$src"/tests/golden/inputs/*.json; do
    [ -f "$f" ] || continue
    if grep -q num_hidden_layers "$f"; then
        seed hf "$f"
        seed model "$f"
    elif grep -q hidden_size "$f"; then
        seed model "$f"
    elif grep -q gpus_per_node "$f"; then
        seed cluster "$f"
    else # a plan or a grid: lists of values make a grid, but a plan may hold one
        seed plan "$f"
        seed grid "$f"
    fi
done
