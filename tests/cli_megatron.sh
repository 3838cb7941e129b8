#!/bin/sh
# cli_megatron.sh: Megatron arguments in and out. A Megatron-LM launch
# line for Llama 3 70B (TP 4, PP 8, VP 5, SP, the distributed optimizer,
# FP8; tests/data/megatron/llama3-70b.sh) gives the report of the same
# plan in plansim's flags, byte for byte, with --model or with the model
# its own shape flags give; --print megatron of any report reads back to
# the same report; --print megatron-bridge writes the overrides worked
# out by hand below; the flags plansim does not model are one warning;
# plansim's flags override the line's; what plansim cannot honour, bad
# values and a missing file are errors naming them (exit 2).
#
# Run by the test harness with $top_srcdir and $PLANSIM set.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

line=$top_srcdir/tests/data/megatron/llama3-70b.sh
h100="--cluster dgx-h100 --nodes 32"
# the plan of the line, in plansim's flags: 80 layers / (pp 8 x 2 layers
# a virtual stage) = 5 virtual stages; --use-distributed-optimizer is ZeRO
# 1; --fp8-format hybrid with Megatron-LM's default recipe, delayed
flags="--tp 4 --pp 8 --virtual-stages 5 --schedule interleaved --sequence-parallel --zero-stage 1 --dtype fp8 --micro-batch-size 1 --global-batch-size 512"

# plansim ARG... >$tmp/NAME.out 2>$tmp/NAME.err; a failure is a problem
to() {
    name=$1
    shift
    "$PLANSIM" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
        printf '; %s failed: %s' "$name" "$(one_line "$tmp/$name.err")"
}

# plansim ARG... must fail with status 2 and one line on stderr holding TEXT
refused() {
    text=$1
    shift
    "$PLANSIM" "$@" >"$tmp/refused.out" 2>"$tmp/refused.err"
    status=$?
    [ "$status" -eq 2 ] || printf '; exit %s, not 2, for %s' "$status" "$text"
    [ "$(wc -l <"$tmp/refused.err")" -eq 1 ] || printf '; not one line for %s' "$text"
    grep -qF -- "$text" "$tmp/refused.err" || printf '; no "%s" in: %s' "$text" "$(one_line "$tmp/refused.err")"
    [ -s "$tmp/refused.out" ] && printf '; output for %s' "$text"
}

# A report without its CSV's first cell, plan_flags: the flags that give
# the plan name those given, and a launch line gives some at their
# defaults (--overlap-grad-reduce); every figure and plan field follows
figures() {
    awk 'substr($0, 1, 1) == "\"" { rest = substr($0, 2); print substr(rest, index(rest, "\",") + 2); next }
         { print substr($0, index($0, ",") + 1) }' "$1"
}

# ---- done when: the launch line's report is the plansim flags' ---------
problem=
for format in csv json; do
    # shellcheck disable=SC2086 # the flags' words
    problem=$problem$(to "line-$format" simulate --model llama3-70b $h100 --megatron-args "@$line" --format $format)$(to "flags-$format" simulate --model llama3-70b $h100 $flags --format $format)
    # the simulation's own wall-clock time is the one field that differs
    for run in line flags; do
        if [ $format = csv ]; then
            figures "$tmp/$run-$format.out"
        else
            grep -v '"sim_wall_s":' "$tmp/$run-$format.out"
        fi >"$tmp/$run-$format.cut"
    done
    cmp -s "$tmp/line-$format.cut" "$tmp/flags-$format.cut" || problem="$problem; $format differs"
done
check "a Megatron-LM launch line for Llama 3 70B gives the report of the same plansim flags" "$problem"

# the model of its shape flags is llama3-70b's (named after the file)
problem=
# shellcheck disable=SC2086
problem=$(to own-model simulate $h100 --megatron-args "@$line" --format csv)
[ "$(figures "$tmp/own-model.out")" = "$(figures "$tmp/line-csv.out")" ] || problem="$problem; the line's own model gives another report"
check "the line's shape flags make the model models/llama3-70b.json is" "$problem"

# one warning: the flags it does not model, listed
n=$(grep -c 'warning' "$tmp/line-csv.err")
grep -q 'not modelled.*--lr, --min-lr' "$tmp/line-csv.err" && [ "$n" -eq 1 ] &&
    ! grep -q -- '--tensor-model-parallel-size\|--num-layers\b' "$tmp/line-csv.err"
check "the flags plansim does not model are one warning" "$( [ $? -eq 0 ] || one_line "$tmp/line-csv.err")"

# ---- --print megatron reads back to the same plan ---------------------
problem=
# shellcheck disable=SC2086
problem=$(to print simulate --model llama3-70b $h100 --megatron-args "@$line" --print megatron)
# worked out from the plan: the shape, 2 layers a virtual stage, the
# batch and the sequence always; then every flag away from Megatron-LM's
# defaults, in the table's order (src/spec/megatron.c)
expected="--tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 2 --micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --use-distributed-optimizer --overlap-param-gather --sequence-parallel --overlap-grad-reduce --bf16 --fp8-format hybrid --fp8-recipe delayed"
[ "$(cat "$tmp/print.out")" = "$expected" ] || problem="$problem; printed $(one_line "$tmp/print.out")"
# shellcheck disable=SC2086
problem=$problem$(to again simulate --model llama3-70b $h100 --megatron-args "$(cat "$tmp/print.out")" --format csv)
[ "$(figures "$tmp/again.out")" = "$(figures "$tmp/line-csv.out")" ] || problem="$problem; read back, another report"
[ -s "$tmp/again.err" ] && problem="$problem; read back, a warning: $(one_line "$tmp/again.err")"
check "--print megatron of the report reads back to the same report" "$problem"

# a round trip of other plans: in, out, in again gives the same report
problem=
set -f # the layouts' * are no globs
for plan in "--model llama3-70b $h100 --tp 4 --pp 4 --recompute full --zero-stage 2 --cp 2 --cp-algorithm all_to_all --micro-batch-size 2 --global-batch-size 256" \
    "--model $top_srcdir/models/hf/deepseek-v3.json --cluster dgx-h100 --nodes 32 --tp 2 --pp 8 --ep 16 --expert-tensor-parallel-size 1 --moe-shared-expert-overlap --mtp-num-layers 1 --pipeline-model-parallel-layout Et*7|(t*8|)*5,t*7|t*7mL --recompute selective --recompute-modules layernorm,mla_up_proj,moe_act --global-batch-size 256 --seq-length 4096" \
    "--model llama3-70b --cluster dgx-h100 --nodes 40 --tp 8 --pp 5 --recompute selective --zero-stage 3 --cross-entropy-fusion te --cuda-graphs --grad-accum-dtype bf16 --global-batch-size 256" \
    "--model llama3-70b --cluster dgx-h100 --nodes 24 --tp 4 --pp 3 --pipeline-model-parallel-layout Et*26|t*27|t*27,L --zero-stage 1 --dtype fp8 --fp8-recipe tensorwise --fp8-param-gather --tp-comm-overlap --sequence-parallel --global-batch-size 512" \
    "--model mixtral-8x7b $h100 --tp 2 --pp 4 --ep 8 --expert-tensor-parallel-size 1 --moe-capacity-percent 125 --moe-dispatcher all_gather --zero-stage 1 --global-batch-size 512" \
    "--model mixtral-8x7b $h100 --tp 2 --pp 4 --virtual-stages 2 --schedule interleaved --ep 8 --expert-tensor-parallel-size 1 --moe-dispatcher flex --overlap-moe-expert-parallel-comm --zero-stage 1 --global-batch-size 512" \
    "--model llama3-8b --cluster dgx-b200 --nodes 2 --tp 2 --dtype mxfp8 --zero-stage 1 --global-batch-size 64" \
    "--model llama3-8b --cluster dgx-b200 --nodes 2 --tp 2 --pp 2 --virtual-stages 2 --schedule interleaved --dtype nvfp4 --attention standard --offload optimizer --global-batch-size 64"; do
    # shellcheck disable=SC2086 # the plan's words
    problem=$problem$(to rt-in simulate $plan --format csv)$(to rt-args simulate $plan --print megatron)
    # shellcheck disable=SC2086
    model_cluster=$(printf '%s\n' "$plan" | sed 's/ --tp .*//')
    # shellcheck disable=SC2086
    problem=$problem$(to rt-back simulate $model_cluster --megatron-args "$(cat "$tmp/rt-args.out")" --format csv)
    [ "$(figures "$tmp/rt-in.out")" = "$(figures "$tmp/rt-back.out")" ] || problem="$problem; $plan: read back as $(one_line "$tmp/rt-args.out"), another report"
    [ -s "$tmp/rt-args.err" ] && problem="$problem; $plan: a note: $(one_line "$tmp/rt-args.err")"
    for switch in --moe-shared-expert-overlap --overlap-moe-expert-parallel-comm; do
        case $plan in *$switch*)
            grep -q -- "$switch" "$tmp/rt-args.out" ||
                problem="$problem; $plan: printed without $switch" ;;
        esac
    done
    case $plan in *--recompute-modules*)
        grep -q -- '--recompute-modules layernorm mla_up_proj moe_act' "$tmp/rt-args.out" ||
            problem="$problem; $plan: printed without Megatron-LM's --recompute-modules words" ;;
    esac
done
set +f
check "plans of every kind read back from --print megatron to the same report" "$problem"

# ---- --print megatron-bridge ------------------------------------------
problem=
# shellcheck disable=SC2086
problem=$(to bridge simulate --model llama3-70b $h100 $flags --print megatron-bridge)
for want in model.tensor_model_parallel_size=4 model.pipeline_model_parallel_size=8 \
    model.virtual_pipeline_model_parallel_size=5 model.sequence_parallel=true \
    train.micro_batch_size=1 train.global_batch_size=512 model.seq_length=8192 \
    dataset.seq_length=8192 ddp.use_distributed_optimizer=true \
    optimizer.use_distributed_optimizer=true ddp.overlap_grad_reduce=true \
    ddp.overlap_param_gather=true mixed_precision=bf16_with_fp8_delayed_scaling_mixed \
    mixed_precision.fp8_param_gather=false model.recompute_granularity=null; do
    tr ' ' '\n' <"$tmp/bridge.out" | grep -qx -- "$want" || problem="$problem; no $want"
done
check "--print megatron-bridge gives Megatron-Bridge's overrides of the plan" "$problem"

# --print in run too, and a plansim flag overrides the line's
problem=
# shellcheck disable=SC2086
problem=$(to run-print run --model llama3-70b $h100 --megatron-args "@$line" --tp 8 --print megatron)
grep -q -- '^--tensor-model-parallel-size 8 ' "$tmp/run-print.out" || problem="$problem; $(one_line "$tmp/run-print.out")"
check "run --print megatron, with --tp over the line's" "$problem"

# ---- what cannot be read ----------------------------------------------
problem=$(refused "--fp16: plansim cannot honour it" simulate --megatron-args "--tensor-model-parallel-size 2 --fp16")
problem=$problem$(refused "--hybrid-override-pattern: plansim cannot honour it" simulate --megatron-args "--hybrid-override-pattern M-M-")
check "a flag plansim cannot honour is an error naming it" "$problem"

problem=$(refused '--megatron-args: --tensor-model-parallel-size: expected an integer from 1 to 1048576, got "four"' simulate --megatron-args "--tensor-model-parallel-size four")
problem=$problem$(refused 'shell variables are not expanded' simulate --megatron-args '--pipeline-model-parallel-size $PP')
problem=$problem$(refused '--cp-comm-type: expected p2p or a2a (what plansim models), got "a2a+p2p"' simulate --megatron-args "--context-parallel-size 2 --cp-comm-type a2a+p2p")
problem=$problem$(refused '--recompute-num-layers: expected 1' simulate --megatron-args "--recompute-granularity full --recompute-method uniform --recompute-num-layers 4")
problem=$problem$(refused '--recompute-modules: expected one of core_attn, layernorm, mla_up_proj or moe_act (the modules plansim models of Megatron-Core'"'"'s), got "moe"' simulate --megatron-args "--recompute-granularity selective --recompute-modules core_attn moe")
problem=$problem$(refused '--sequence-parallel: expected no value (a switch), got "yes"' simulate --megatron-args "--sequence-parallel yes")
problem=$problem$(refused "--num-layers: expected --model llama3-70b's layers, 80" simulate --model llama3-70b --megatron-args "--num-layers 40")
problem=$problem$(refused "expected --vocab-size" simulate --megatron-args "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64")
problem=$problem$(refused '--megatron-args: expected Megatron-LM arguments, got none' simulate --megatron-args " ")
problem=$problem$(refused "expected a command line a shell splits" simulate --megatron-args "--tensor-model-parallel-size '4")
# a hidden size whose default FFN size (4h, or SwiGLU's 8h/3) passes an int:
# the model's own size check, not an overflow (the fuzzer's find)
for swiglu in "" --swiglu; do
    problem=$problem$(refused "expected a model whose sizes multiply to less than 2^53" simulate --megatron-args "--num-layers 3 --hidden-size 1g --num-attention-heads 8 --vocab-size 1024 --seq-length 128 $swiglu")
done
check "bad values are errors naming the flag" "$problem"

problem=$(refused "--megatron-args: $tmp/missing.sh" simulate --megatron-args "@$tmp/missing.sh")
problem=$problem$(refused "expected no --plan beside it" simulate --plan seed-512 --megatron-args "--tensor-model-parallel-size 8")
problem=$problem$(refused '--print: expected megatron or megatron-bridge, got "json"' simulate --print json)
check "a missing @FILE, --plan beside a line and a bad --print are errors" "$problem"

finish
