/* recompute.h: which layers a plan's recomputation replays.
 *
 * "full" replays every layer, unless the plan's recompute_num_layers N > 0:
 * then only the first N layers of each model chunk, Megatron-LM's
 * --recompute-method block --recompute-num-layers N (its
 * transformer_block.py checkpoints the first N layers of each virtual
 * pipeline chunk and runs the rest whole); the others keep every
 * activation, as under "none". "selective" and "none" are every layer's. */
#ifndef PLANSIM_STRATEGY_RECOMPUTE_H
#define PLANSIM_STRATEGY_RECOMPUTE_H

#include "spec/plan.h"

/* How a layer runs: as the plan recomputes it, or whole (as under "none")
 * when a partial recomputation leaves it alone. */
typedef enum { LAYER_REPLAYED, LAYER_WHOLE, LAYER_WAYS } LayerWay;

/* How the layer that is the `index`-th (from 0) of its model chunk runs. */
LayerWay recompute_layer_way(const PlanSpec *plan, int index);

/* Its recomputation: the plan's, or "none" when whole. */
Recompute recompute_of_layer(const PlanSpec *plan, int index);

/* Whether the plan recomputes some layers of a chunk in full and runs
 * others whole: a full recomputation of the first recompute_num_layers. */
gboolean recompute_some_layers(const PlanSpec *plan);

/* The most transformer layers a model chunk of the resolved `plan` holds:
 * a recompute_num_layers of at least this many replays every layer. */
int recompute_most_chunk_layers(const PlanSpec *plan);

#endif
