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
seed planmoe "$src"/plans/*.json
seed grid "$src"/plots/*-grid.json
seed nccl "$src"/tests/data/calibrate/*.txt
seed gemm "$src"/tests/data/calibrate/*.csv
seed runs "$src"/topologies/runs/*.csv
# shapes the shipped files lack
printf '{"pp": 2, "layers_per_stage": [1, 3], "schedule": "gpipe"}\n' >"$out/plan/layers.json"
printf '{"pp": 2, "virtual_stages": 2, "schedule": "interleaved", "zero_stage": "fsdp"}\n' \
    >"$out/plan/interleaved.json"
printf '{"tp": 2, "ep": 4, "moe_dispatcher": "all_to_all", "global_batch_size": 16}\n' \
    >"$out/planmoe/ep.json"
printf '{"pp": 2, "ep": 2, "schedule": "zb-h1", "global_batch_size": 32}\n' >"$out/planmoe/zb.json"
printf 'm,n,k,dtype,seconds\n4096,4096,4096,bf16,0.0006\n4096,4096,4096,fp8,0.0003\n' \
    >"$out/gemm/fp8.csv"
printf 'name,model,gpus,tp,pp,layers_per_stage,schedule,step_s\nx,m,8,2,2,1 3,gpipe,1.5\n' \
    >"$out/runs/small.csv"
printf '{"tp": [1, 2], "schedule": ["1f1b", "gpipe"], "sequence_parallel": [true, false]}\n' \
    >"$out/grid/words.json"
# the what-ifs: a flag's value a line, by its first letter (fuzz_inputs.c)
mkdir -p "$out/whatif"
printf 'g3:2\nlnode 1 nic 0:0.5\nj0.1\ns7\n' >"$out/whatif/all.txt"
printf 'lnode 0 gpu 0 nvlink out:0.25\nlrail 0 spine up:0.5\n' >"$out/whatif/links.txt"
printf 'g15:1000\ng0:1\n' >"$out/whatif/gpus.txt"
printf 'cauto\nc500\nc30min\nc2.5h\nc90s\n' >"$out/whatif/every.txt"
# the test inputs: each to the target its keys belong to
for f in "$src"/tests/data/*.json "$src"/tests/data/calibrate/*.json "$src"/tests/golden/inputs/*.json; do
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
