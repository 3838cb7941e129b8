/* megatron.h: Megatron-LM arguments in and out (megatron.c).
 *
 * A launch line of Megatron-LM (its pretrain_gpt.py arguments, with any
 * launcher, environment assignments and backslash-newlines around them)
 * is read into a plan and, from its model shape flags, a model; a plan is
 * written back as Megatron-LM arguments or as Megatron-Bridge's
 * Hydra-style recipe overrides. Which Megatron-LM argument sets which
 * plan field is megatron.c's one table. Flags plansim does not model but
 * that leave the plan as it is (data, logging, checkpoints, the learning
 * rate) are collected for one warning; a flag that changes the plan in a
 * way plansim cannot express is an error naming it. */
#ifndef PLANSIM_SPEC_MEGATRON_H
#define PLANSIM_SPEC_MEGATRON_H

#include <glib.h>

#include "spec/model.h"
#include "spec/plan.h"

/* A launch line, read. */
typedef struct MegatronLine MegatronLine;

/* Reads `arg`: the arguments themselves, or "@FILE" for a file's. Fails
 * (PS_ERROR_INPUT, naming --megatron-args and the flag) on text a shell
 * would not split, a flag plansim cannot honour or a bad value of one it
 * reads. */
MegatronLine *megatron_line_read(const char *arg, GError **error);
void megatron_line_free(MegatronLine *line);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MegatronLine, megatron_line_free)

/* The flags the line gives that plansim does not model ("--lr, --save"),
 * and shell variables it could not expand; NULL when there are none. */
const char *megatron_line_unmodelled(const MegatronLine *line);

/* Whether the line gives a model shape flag (--num-layers, ...). */
gboolean megatron_line_has_model(const MegatronLine *line);

/* The model its shape flags give, named `name`; fails naming the flag
 * that a model needs and the line lacks (--num-layers, --hidden-size,
 * --num-attention-heads, --vocab-size, --seq-length). */
ModelSpec *megatron_line_model(const MegatronLine *line, const char *name, GError **error);

/* Fails unless each shape flag the line gives agrees with `model`
 * (`model_flag`, "--model llama3-70b", names it in the error). */
gboolean megatron_line_check_model(const MegatronLine *line, const ModelSpec *model,
                                   const char *model_flag, GError **error);

/* --seq-length's text, or NULL. */
const char *megatron_line_seq_length(const MegatronLine *line);

/* Sets the plan's fields as the line gives them, over `plan`; a field the
 * line leaves out keeps its value, except where Megatron-LM's default is
 * not plansim's: no --overlap-grad-reduce or --overlap-param-gather is
 * false, no --global-batch-size is micro-batch x dp (0, resolved so).
 * `model` gives the layers --num-layers-per-virtual-pipeline-stage and
 * block recomputation count. */
gboolean megatron_line_apply(const MegatronLine *line, PlanSpec *plan, const ModelSpec *model,
                             GError **error);

/* The ways a resolved plan is written (--print). */
typedef enum { MEGATRON_LM, MEGATRON_BRIDGE } MegatronStyle;
extern const char *const megatron_style_names[]; /* "megatron", "megatron-bridge" */

/* Resolved `plan` on `model` as Megatron-LM arguments ("--tensor-model-
 * parallel-size 4 ...") or Megatron-Bridge overrides
 * ("model.tensor_model_parallel_size=4 ..."), one line with its newline.
 * *unsaid, when not NULL, gets the plan's fields away from their defaults
 * that the style cannot say ("link_contention false, ..."), or NULL. */
char *megatron_plan_text(const PlanSpec *plan, const ModelSpec *model, MegatronStyle style,
                         char **unsaid);

#endif
