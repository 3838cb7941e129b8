/* pipeline_layout.h: Megatron-Core's pipeline layout string
 * (--pipeline-model-parallel-layout), read into the transformer layers of
 * each model chunk and written back.
 *
 * A layout lists the pp x v model chunks in model order (chunk c of
 * stage s is chunk c * pp + s, as plan.h numbers them), split by '|':
 * "E" is the embedding, "t" a transformer layer, "L" the loss (with the
 * LM head), "m" a multi-token-prediction layer. "x*N" repeats one
 * character, "(...)*N" a run of them (not nested); commas are cosmetic.
 * Megatron-Core's rules hold: the embedding is the first layer and the
 * loss the last, each once; the MTP layers come after every transformer
 * layer, all in one chunk (validate_layer_layout; the rules on stages are
 * the plan's, plan.c). plansim also wants the embedding at the start of
 * the first chunk and the loss at the end of the last (no empty chunk
 * before or after them). */
#ifndef PLANSIM_SPEC_PIPELINE_LAYOUT_H
#define PLANSIM_SPEC_PIPELINE_LAYOUT_H

#include <glib.h>

/* The most chunks a layout may describe (pp's largest). */
#define PIPELINE_LAYOUT_MAX_CHUNKS (1 << 20)

/* Reads `text` into `*chunks` (newly allocated, the layers of each chunk,
 * transformer and MTP layers together), `*n` and `*mtp`, its MTP layers,
 * the last of its layers; on failure returns FALSE with `*why` (newly
 * allocated) saying what was expected and where it went wrong. The work
 * is linear in the text and the chunks, never in a repetition's count. */
gboolean pipeline_layout_parse(const char *text, int **chunks, int *n, int *mtp, char **why);

/* The layout of `n` chunks of `chunks` layers each, the last `mtp` of
 * them MTP layers, the embedding first and the loss last, runs of equal
 * middle chunks written "(t*2|)*29": pipeline_layout_parse gives back the
 * same list. */
char *pipeline_layout_text(const int *chunks, int n, int mtp);

#endif
