/* model.h: what is trained, as a plain C struct (model.c).
 *
 * Read from a plansim model file or a Hugging Face config.json and fully
 * validated; nothing outside src/spec/ sees cJSON. Every error names the
 * file, the JSON path (or the command-line flag), the bad value and what
 * was expected. Sizes are counts. */
#ifndef PLANSIM_SPEC_MODEL_H
#define PLANSIM_SPEC_MODEL_H

#include <glib.h>

/* The MLP: GPT's GeLU (with GPT's LayerNorms, biases and learned
 * positions), Llama's gated SwiGLU (RMSNorm, no biases, rotary
 * positions), or Nemotron-H's squared ReLU, relu(x)^2, ungated (RMSNorm,
 * no biases), as model files name them: "gelu", "swiglu", "relu2". */
typedef enum { MLP_GELU, MLP_SWIGLU, MLP_RELU2 } MlpKind;

/* A layer of a hybrid model (docs/model.md, "Hybrid models"), as
 * Megatron-Core's hybrid_override_pattern names it, one symbol a layer:
 * a Mamba-2 mixer (M), self-attention (*), an MLP (-), a mixture of
 * experts (E); each is one block with its norm and residual. */
typedef enum { HYBRID_MAMBA, HYBRID_ATTENTION, HYBRID_MLP, HYBRID_MOE } HybridLayer;

/* The most transformer layers a model may have: a hundred times those of
 * any model trained so far, and few enough that a walk over the layers
 * (the strategies' checks, the bounds) stays cheap whatever a file says. */
#define MODEL_MAX_LAYERS 65536

/* A plansim model's dropout probabilities when it gives none: Megatron-Core's
 * defaults (TransformerConfig's hidden_dropout and attention_dropout). */
#define MODEL_DEFAULT_DROPOUT 0.1

typedef struct {
    char *name;
    int layers;          /* transformer layers, l */
    int hidden_size;     /* h */
    int attention_heads; /* a */
    int kv_heads;        /* key/value heads (GQA); equals a for MHA */
    int head_dim;        /* a head's width; 0: hidden_size / attention_heads */
    gboolean qkv_bias;   /* a SwiGLU model's QKV projection has a bias (Qwen2's) */
    gboolean out_bias;   /* a SwiGLU model's attention output projection has a bias */
    gboolean mlp_bias;   /* a SwiGLU model's MLP projections have biases */
    int sliding_window;  /* in a windowed layer each query attends to at most this many
                          * keys, itself and those before it (Mistral's); 0: no layer is
                          * windowed, each attends to the whole sequence */
    /* Which layers are windowed when sliding_window > 0
     * (transformer_layer_windowed): those window_layers flags, one a layer,
     * where the file lists them (Hugging Face's layer_types; owned); else
     * every layer from window_from on (Qwen2's max_window_layers) but each
     * window_period-th (Gemma's sliding_window_pattern: layer i is full when
     * (i + 1) % window_period == 0; 0: none is). */
    guint8 *window_layers;
    int window_from, window_period;
    /* a learned sink logit per head and layer (GPT-OSS's) */
    gboolean attention_sinks;
    gboolean qk_norm;    /* an RMSNorm over each head of Q and of K (Qwen3's) */
    double hidden_dropout;    /* Megatron-Core's: of the residual branches and the embedding */
    double attention_dropout; /* of the attention probabilities; 0 keeps no mask (PyTorch's
                               * dropout returns its input at p = 0) */
    int ffn_hidden_size; /* f */
    int vocab_size;      /* V */
    int seq_length;      /* s, tokens per sequence */
    MlpKind mlp;
    gboolean tied_embeddings; /* input embedding shared with the output layer */
    /* A mixture of experts (docs/model.md, "Mixture of experts"): each MoE
     * layer's MLP is `experts` routed experts of moe_ffn_hidden_size, of
     * which every token goes to experts_per_token, plus shared_experts
     * that every token goes to. Layer i (0-based) is a MoE layer when
     * experts > 1, i >= first_dense_layers and i % moe_layer_frequency ==
     * 0; the other layers are dense, of ffn_hidden_size. */
    int experts;             /* E; 0 or 1: a dense model */
    int experts_per_token;   /* k, top-k routing, 1 .. E */
    int shared_experts;      /* >= 0 */
    int moe_ffn_hidden_size; /* f_e */
    int moe_layer_frequency; /* >= 1 */
    int first_dense_layers;  /* DeepSeek's first_k_dense_replace, >= 0 */
    gboolean router_bias;    /* the router has a bias, one per expert (GPT-OSS's) */
    /* Group-limited routing (DeepSeek-V2 and V3's n_group, topk_group): the
     * experts in router_groups equal groups, a token's k experts among
     * those of its router_topk_groups best groups. 1 and 1: none. */
    int router_groups, router_topk_groups;
    /* Multi-head latent attention (DeepSeek-V2; docs/model.md, "Multi-head
     * latent attention"): kv_lora_rank 0 is standard attention. */
    int kv_lora_rank, q_lora_rank; /* q_lora_rank 0: Q projected directly */
    int qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    /* Multi-token-prediction modules the model has (DeepSeek-V3's
     * num_nextn_predict_layers), each a layer of its last layer's kind;
     * a plan trains up to as many (its mtp_num_layers). */
    int mtp_layers;
    /* A hybrid model: hybrid_layers, one HybridLayer a layer (owned), read
     * from hybrid_override_pattern; NULL: every layer is attention then
     * an MLP. Its Mamba-2 mixers (Dao and Gu 2024, arXiv 2405.21060):
     * mamba_heads heads of mamba_head_dim (d_inner = their product),
     * mamba_groups groups of B and C of ssm_state N each, a causal
     * convolution of conv_kernel taps (with a bias when conv_bias), the
     * SSD scan in chunks of chunk_size tokens; mamba_bias: in_proj and
     * out_proj have biases. */
    guint8 *hybrid_layers;
    int mamba_heads, mamba_head_dim, mamba_groups, ssm_state, conv_kernel, chunk_size;
    gboolean conv_bias, mamba_bias;
} ModelSpec;

/* Reads a plansim model file or a Hugging Face config.json (recognised by
 * its "num_hidden_layers" key; Mixtral's, DeepSeek's and Qwen's expert
 * keys, DeepSeek-V2's latent attention, DeepSeek-V3's
 * multi-token-prediction layers, the windowed layers of layer_types,
 * sliding_window_pattern and max_window_layers, and Nemotron-H's
 * hybrid_override_pattern with its Mamba-2 sizes are read). Returns NULL and
 * sets `error` on bad input. */
ModelSpec *model_spec_load(const char *path, GError **error);

/* As model_spec_load; *from_max_positions says whether the sequence length
 * is a Hugging Face config's max_position_embeddings, the longest context
 * the model takes rather than the length it trains on. */
ModelSpec *model_spec_load_noting(const char *path, gboolean *from_max_positions, GError **error);

/* The model of `json`, a plansim model file's text that plansim made
 * (spec/megatron.c's, of a launch line's flags); `origin` names it in
 * errors. */
ModelSpec *model_spec_parse(const char *origin, const char *json, GError **error);

/* Replaces the model's sequence length with `text` (a flag's value, a
 * positive integer; `origin` names the flag in the error), checking that
 * the sizes still multiply to less than 2^53. */
gboolean model_spec_set_seq_length(ModelSpec *model, const char *text, const char *origin,
                                   GError **error);
void model_spec_free(ModelSpec *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ModelSpec, model_spec_free)

#endif
