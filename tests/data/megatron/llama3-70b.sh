# Llama 3 70B on 32 DGX H100 nodes: TP 4, PP 8, 5 virtual stages a rank
# (2 layers each), sequence parallelism, the distributed optimizer, FP8
# (delayed scaling), as Megatron-LM's examples launch it; read by
# tests/cli_megatron.sh through --megatron-args @FILE.
CUDA_DEVICE_MAX_CONNECTIONS=1 NVTE_FWD_LAYERNORM_SM_MARGIN=16 \
torchrun --nproc_per_node 8 --nnodes 32 --node_rank $NODE_RANK \
    --master_addr $MASTER_ADDR --master_port 6000 \
    pretrain_gpt.py \
    --tensor-model-parallel-size 4 \
    --pipeline-model-parallel-size 8 \
    --num-layers-per-virtual-pipeline-stage 2 \
    --sequence-parallel \
    --use-distributed-optimizer \
    --overlap-grad-reduce \
    --overlap-param-gather \
    --bf16 \
    --fp8-format hybrid \
    --fp8-amax-history-len 1024 \
    --fp8-amax-compute-algo max \
    --micro-batch-size 1 \
    --global-batch-size 512 \
    --seq-length 8192 \
    --max-position-embeddings 8192 \
    --num-layers 80 \
    --hidden-size 8192 \
    --ffn-hidden-size 28672 \
    --num-attention-heads 64 \
    --group-query-attention \
    --num-query-groups 8 \
    --vocab-size 128256 \
    --swiglu \
    --untie-embeddings-and-output-weights \
    --disable-bias-linear \
    --normalization RMSNorm \
    --position-embedding-type rope \
    --rotary-base 500000 \
    --attention-dropout 0.0 \
    --hidden-dropout 0.0 \
    --tokenizer-type HuggingFaceTokenizer \
    --tokenizer-model meta-llama/Meta-Llama-3-70B \
    --data-path $DATA_PATH \
    --split 99,1,0 \
    --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine --lr-warmup-iters 2000 \
    --weight-decay 0.1 --clip-grad 1.0 --adam-beta1 0.9 --adam-beta2 0.95 \
    --train-iters 100000 \
    --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH --save-interval 1000 \
    --log-interval 10 --eval-interval 1000 --eval-iters 10
