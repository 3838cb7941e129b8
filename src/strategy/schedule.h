/* schedule.h: pipeline schedules, one row each.
 *
 * A schedule orders the units (strategy.h) of each pipeline stage and
 * checks the plan fields it constrains. Each schedule is one file
 * (schedule_NAME.c) defining its row; pipeline_schedules, in schedule.c,
 * indexes the rows by the plan's Schedule value. A new schedule is its
 * file plus its row in base/schedules.def, which may give it a plan field
 * of its own (SCHEDULE_KNOB), that its order reads as StageWork's knob. */
#ifndef PLANSIM_STRATEGY_SCHEDULE_H
#define PLANSIM_STRATEGY_SCHEDULE_H

#include "spec/plan.h"
#include "strategy/unit.h"

/* What a stage's schedule orders: m micro-batches through p stages, v model
 * chunks per stage, for stage s; and the value of the schedule's own plan
 * field, for one declared with it (base/schedules.def's SCHEDULE_KNOB): a
 * schedule's order reads the plan through these alone, so that a stage's
 * order is cached by them. */
typedef struct {
    int micro_batches; /* m */
    int stages;        /* p */
    int chunks;        /* v */
    int stage;         /* s, 0 .. p - 1 */
    int knob;          /* its own field's value; 0 for a schedule without one */
    gboolean paired;   /* the steady state's forward and backward units walk in pairs
                        * (schedule_pair_last): the combined 1F1B overlap */
} StageWork;

/* Which of its backward units a schedule splits into B and W
 * (BackwardPart): none, some (the others whole) or all. */
typedef enum { SPLIT_NONE, SPLIT_SOME, SPLIT_ALL } BackwardSplit;

typedef struct {
    const char *name; /* as the plan names it (schedule_names) */
    /* Appends the stage's units (Unit) to `units`, in the order it runs them. */
    void (*order)(const StageWork *w, GArray *units);
    /* Checks the plan fields the schedule constrains (pp, virtual_stages,
     * the micro-batches); PS_ERROR_INPUT naming the field. */
    gboolean (*check)(const PlanSpec *plan, GError **error);
    /* Which backward units it splits into B and W. */
    BackwardSplit split;
    /* Whether it holds one micro-batch in the pipeline at a time: each
     * stage runs a micro-batch's backward before the next one's forward,
     * so the step chains every micro-batch through every chunk, forward
     * and back (strategy/estimate.h). */
    gboolean one_at_a_time;
    /* Whether its steady state runs a forward then a backward, which it
     * marks as pairs (schedule_pair_last): a 1F1B schedule, whose steady
     * state Megatron-Core's combined 1F1B overlap merges. */
    gboolean pairs;
    /* The micro-batches after which its steady state's order repeats: a
     * step of P more runs one more block of the same units, each P
     * micro-batches on (schedule_fold); NULL when none does (all forwards
     * first, or one micro-batch at a time). */
    int (*period)(const StageWork *w);
} PipeSchedule;

/* The rows, indexed by Schedule. */
extern const PipeSchedule *const pipeline_schedules[SCHEDULES];

/* What stage `stage` of `plan`'s pipeline orders, over `micro_batches`. */
StageWork schedule_stage_work(const PlanSpec *plan, int micro_batches, int stage);

/* A stage's units in the order `schedule` runs them, as its order()
 * appends them, from a cache of the orders this thread asked for before
 * (a sweep asks for the same few again and again for plans that differ
 * elsewhere); valid until the thread's next call. */
const GArray *schedule_units(Schedule schedule, const StageWork *w);

/* A stage's peaks under `schedule`: after a forward unit, the
 * micro-batches per chunk whose forward has run and whose backward has
 * not ended (unit_ends_backward), keeping only the count vectors no
 * other one covers (at least as high in every chunk). Whatever each
 * chunk's micro-batch holds, if not negative, the most the stage holds
 * after any unit is held at one of them (with `paired`, after any pair:
 * within it the forward may allocate as the backward frees, so it counts
 * after both). Each peak is `chunks` + 1 ints:
 * its total, then its counts; the largest totals first (so that a peak
 * whose total times the largest amount cannot beat the most so far ends
 * the search). Cached with the units, and valid as long. */
const GArray *schedule_peaks(Schedule schedule, const StageWork *w);

/* The most bytes a rank of stage s holds at once when each forward unit of
 * its model chunk k (0 .. virtual_stages - 1) keeps per_chunk[k] until
 * that micro-batch's backward of the chunk ends, its schedule's units in
 * order: the most over the schedule's peaks (schedule_peaks), a negative
 * per_chunk[k] (a rounding's) counted as 0. */
double schedule_stage_held(const PlanSpec *plan, int s, const double *per_chunk);

/* In a paired stage's work (StageWork.paired, the combined 1F1B overlap:
 * Megatron-Core's --overlap-moe-expert-parallel-comm, combined_1f1b.py),
 * marks the last two units appended, a forward and then a whole backward
 * of its steady state, to walk together (Unit.paired on the forward),
 * unless they are of the same micro-batch through the same chunk (the
 * backward waits for that forward). Its warm-up and cool-down units walk
 * alone, as Megatron-Core merges only the steady state's. A schedule that
 * calls it says so (PipeSchedule.pairs). */
void schedule_pair_last(const StageWork *w, GArray *units);

/* Appends one unit (a backward is whole). */
void schedule_add(GArray *units, int micro_batch, gboolean forward, int chunk);

/* Appends the B or the W of micro-batch `micro_batch`'s backward through
 * the stage's chunk `chunk`. */
void schedule_add_part(GArray *units, int micro_batch, BackwardPart part, int chunk);

/* A step built short (core/graph.h, graph_fold): the plan's step run with
 * fewer micro-batches, the steady state's last `periods` blocks of units
 * before its cut marked as periods, the block the step of all its
 * micro-batches runs `repeats` more times there. Each stage is cut before
 * the same forward (a micro-batch through a chunk), so that what crosses
 * the cut between stages goes one way; its periods are blocks of units
 * each the one before it P micro-batches on (PipeSchedule.period), with a
 * block more of them before, away from the step's first and last
 * micro-batches, whose units the strategies treat apart. */
typedef struct {
    int micro_batches; /* of the step built short */
    int repeats;       /* copies of its last period the whole step runs besides it */
    int periods;       /* built */
    int *first;        /* per stage: the index of period 0's first unit */
    int *units;        /* per stage: the units of a period */
} StepFold;

/* The shortest step of `least` to `most` micro-batches that `plan`'s
 * schedule cuts as StepFold says, with `periods` periods, standing for its
 * step of `micro_batches`; FALSE when there is none shorter (or its
 * schedule has no period). *fold is then untouched; else
 * schedule_fold_clear frees it. */
gboolean schedule_fold(const PlanSpec *plan, int micro_batches, int periods, int least, int most,
                       StepFold *fold);
void schedule_fold_clear(StepFold *fold);

/* The period (graph.h: GRAPH_BEFORE, 0 .. periods - 1, or periods, after
 * them) of unit `unit` of stage `stage`'s order in the step built short. */
int schedule_fold_period(const StepFold *fold, int stage, int unit);

/* PipeSchedule.period of the schedules whose steady state repeats every
 * micro-batch. */
int schedule_period_one(const StageWork *w);

/* Which backward units the plan's schedule splits. */
BackwardSplit schedule_splits_backward(const PlanSpec *plan);

/* The check of the zero-bubble schedules: one chunk per stage, pp >= 2,
 * and at least `least` micro-batches per step. */
gboolean schedule_check_zero_bubble(const PlanSpec *plan, int least, GError **error);

/* A check for the schedules that run one model chunk per stage: fails
 * unless virtual_stages is 1. */
gboolean schedule_check_one_chunk(const PlanSpec *plan, GError **error);

/* The rows, one per file (base/schedules.def). */
#define SCHEDULE(ID, name, row) extern const PipeSchedule row;
#include "base/schedules.def"
#undef SCHEDULE

#endif
