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
printf '{"pp": 2, "pipeline_model_parallel_layout": "Et|(t|)*2,tL"}\n' >"$out/plan/layout.json"
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
# Megatron-LM launch lines: the tests' script, and short lines of a plan
# alone and of a model
mkdir -p "$out/megatron"
cp "$src/tests/data/megatron/llama3-70b.sh" "$out/megatron/llama3-70b.sh"
printf -- '--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel --use-distributed-optimizer --micro-batch-size 1 --global-batch-size 16 --recompute-granularity selective\n' \
    >"$out/megatron/plan.txt"
printf -- '--num-layers 4 --hidden-size 256 --num-attention-heads 8 --vocab-size 1024 --seq-length 128 --swiglu --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 4 --fp8-format hybrid --bf16\n' \
    >"$out/megatron/model.txt"

# sim: up to five parts, each ended by a NUL byte (fuzz_sim.c): a model, a
# cluster, a plan and a grid file (an empty part: the default), then the
# choices, a byte each
sim() { # sim NAME PART... : an input of the parts given, files or (after -c) choices
    name=$1
    shift
    mkdir -p "$out/sim"
    for part in "$@"; do
        case $part in
        -c) ;;
        '') printf '\0' ;;
        \\*) printf "$part" ;; # the choices, as printf escapes
        *) cat "$part" && printf '\0' ;;
        esac
    done >"$out/sim/$name"
}
sim_file() { # sim_file PART FILE: FILE as part PART (0 model, 1 cluster, 2 plan, 3 grid)
    name=${2#"$src"/}
    set -- "$1" "$2" "$(printf '%s' "${name#"$out"/}" | tr / _)"
    case $1 in
    0) sim "$3" "$2" ;;
    1) sim "$3" '' "$2" ;;
    2) sim "$3" '' '' "$2" ;;
    3) sim "$3" '' '' "$sim_plan" "$2" -c '\000\000\000\100' ;; # at one node too
    esac
}
sim_plan=$out/sim-plan.json # a small plan the grids sweep over
printf '{"tp": 2, "pp": 2, "global_batch_size": 8}\n' >"$sim_plan"
for f in "$src"/models/*.json "$src"/models/hf/*.json; do sim_file 0 "$f"; done
for f in "$src"/topologies/*.json; do sim_file 1 "$f"; done
for f in "$src"/plans/*.json "$out"/plan/*.json "$out"/planmoe/*.json; do sim_file 2 "$f"; done
for f in "$src"/plots/*-grid.json "$out"/grid/*.json; do sim_file 3 "$f"; done
# the choices (fuzz_sim.c's Choices): render, trials, every, flags, steps,
# failure, restart, seed, slow_gpu, slow_factor, jitter, sweep, price
sim_moe=$out/sim-moe.json
printf '{"name": "tiny-moe", "layers": 4, "hidden_size": 256, "attention_heads": 8, "kv_heads": 8, "ffn_hidden_size": 1024, "vocab_size": 1024, "seq_length": 128, "experts": 8, "experts_per_token": 2, "moe_ffn_hidden_size": 512, "first_dense_layers": 1}\n' \
    >"$sim_moe"
sim json-explain '' '' "$sim_plan" '' -c '\001\001\000\000'
sim csv-breakdown '' '' "$sim_plan" '' -c '\010\001\000\000'
sim text-explain-tokens '' '' "$sim_plan" '' -c '\003\000\000\000\000\000\000\000\000\000\000\000\002'
sim whatif-slow '' '' "$sim_plan" '' -c '\000\000\000\020\000\000\000\007\003\020'
sim whatif-jitter '' '' "$sim_plan" '' -c '\000\000\000\020\000\000\000\007\000\000\031'
sim run-failures '' '' "$sim_plan" '' -c '\000\003\004\000\377\040\002\005'
sim run-async-spares '' '' "$sim_plan" '' -c '\000\001\002\015\077\020\000\001'
sim run-best '' '' "$sim_plan" '' -c '\000\001\000\002\020\010\000\001'
sim run-best-every '' '' "$sim_plan" '' -c '\000\002\011\003\100\030\000\002'
sim moe-ep-dense '' '' "$out/planmoe/ep.json" ''
sim moe-ep "$sim_moe" '' "$out/planmoe/ep.json" ''
sim moe-zb "$sim_moe" '' "$out/planmoe/zb.json" '' -c '\001\000\000\020\000\000\000\000\001\010'
printf '{"schedule": ["1f1b", "gpipe"], "zero_stage": [0, 3]}\n' >"$out/sim-grid.json"
for k in 000 003 006 011 014 022; do # rank by tokens/s, time, cost, run-time; shards
    sim "sweep-$k" '' '' "$sim_plan" "$out/sim-grid.json" -c "\\000\\001\\000\\340\\000\\000\\000\\000\\000\\000\\000\\$k\\001"
done

# cli: the arguments of simulate, each ended by a NUL byte (fuzz_cli.c)
cli() { # cli NAME ARG...
    name=$1
    shift
    mkdir -p "$out/cli"
    for arg in "$@"; do printf '%s\0' "$arg"; done >"$out/cli/$name"
}
cli_words() { # cli_words NAME WORD...: a command line of the tests, its inputs named so
    name=$1   # that they are found from any folder; a word of the tests' variables left
    shift     # out, with the flag it is the value of
    prev=
    {
        for word in "$@"; do
            case $word in
            *'$'*)
                case $prev in *=*) ;; -*) prev= ;; esac
                continue
                ;;
            models/*.json | topologies/*.json | plans/*.json) word=$(basename "$word" .json) ;;
            tests/* | plots/* | models/* | topologies/*) word=$src/$word ;;
            esac
            [ -z "$prev" ] || printf '%s\n' "$prev"
            prev=$word
        done
        [ -z "$prev" ] || printf '%s\n' "$prev"
    } | tr '\n' '\0' >"$out/cli/$name"
}
mkdir -p "$out/cli"
# the golden cases of simulate: NAME EXT simulate ARGUMENT...
awk '$1 !~ /^#/ && $3 == "simulate" { $3 = $1 "-" $2; $1 = $2 = ""; print }' \
    "$src/tests/golden/cases.txt" | while read -r name words; do
    set -f # split on blanks, as golden.sh does, without globbing
    # shellcheck disable=SC2086
    cli_words "golden-$name" $words
    set +f
done
# the command-line tests' simulate commands: continued lines joined, cut at
# a redirection or the command's end, the tiny model and A100 cluster named
for f in "$src"/tests/*.sh; do
    awk '/\\$/ { sub(/\\$/, ""); line = line $0 " "; next }
        { line = line $0 }
        match(line, /(^|[ "])simulate( +-| *$)/) {
            args = substr(line, RSTART)
            sub(/^[ "]?simulate/, "", args)
            sub(/ *[0-9]*[<>|;&)].*/, "", args)
            gsub(/"\$tiny"/, "tiny-gpt", args)
            gsub(/"\$a100"/, "dgx-a100-80gb", args)
            gsub(/["\047]/, "", args)
            print FNR, args
        }
        { line = "" }' "$f" | while read -r at words; do
        set -f
        # shellcheck disable=SC2086
        cli_words "$(basename "$f" .sh)-$at" $words
        set +f
    done
done
cli bare
cli outputs --model tiny-gpt --nodes 1 -o report.txt --trace trace.json --trace-ranks stages
cli training --model llama3-8b --nodes 1 --tp 8 --tokens 2T --gpu-hour-price 2.5 --format json
cli whatifs --model tiny-gpt --nodes 2 --slow-gpu 3:2 --slow-link 'node 1 nic 0:4' --jitter 0.1 --seed 7
cli hf --model llama2-7b-config --cluster dgx-h200 --seq-length 2048 --pp 4 --schedule interleaved \
    --virtual-stages 2
cli moe --model mixtral-8x7b --cluster dgx-h100 --nodes 4 --ep 8 --moe-dispatcher all_gather \
    --no-sequence-parallel --zero-stage=fsdp

# the test inputs: each to the targets its keys belong to
# (tests/data/clusters: the shipped clusters whole, their GPUs in them)
for f in "$src"/tests/data/*.json "$src"/tests/data/calibrate/*.json "$src"/tests/golden/inputs/*.json \
    "$src"/tests/data/clusters/*.json "$src"/topologies/runs/*.json; do
    [ -f "$f" ] || continue
    if grep -q num_hidden_layers "$f"; then
        seed hf "$f"
        seed model "$f"
        sim_file 0 "$f"
    elif grep -q hidden_size "$f"; then
        seed model "$f"
        sim_file 0 "$f"
    elif grep -q gpus_per_node "$f"; then
        seed cluster "$f"
        sim_file 1 "$f"
    else # a plan or a grid: lists of values make a grid, but a plan may hold one
        seed plan "$f"
        seed grid "$f"
        sim_file 2 "$f"
        sim_file 3 "$f"
    fi
done
rm -f "$sim_plan" "$sim_moe" "$out/sim-grid.json"
