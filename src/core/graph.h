/* graph.h: the task graph, the per-rank programs the engine replays.
 *
 * Each rank (GPU) has a few ordered streams, like CUDA streams: a task
 * starts after the task before it on its stream and after its explicit
 * dependencies. Kinds of task:
 *   - compute: runs for a given time on one rank's stream;
 *   - collective: one task joined by every member of a communicator group,
 *     each on its own stream; it starts when every member has reached it.
 *     Members join in program order, like NCCL calls on a communicator: a
 *     rank's k-th collective on a group is the group's k-th collective;
 *   - marker: takes no time (a point in a program, e.g. a step's start);
 *   - copy: moves bytes between one rank's GPU and its host, down or up,
 *     for as long as the network takes over the host's links.
 * Any task may carry memory operations: bytes allocated (positive) or freed
 * (negative) in a category on a rank, at the task's start or at its end.
 *
 * The graph knows nothing of transformers: a task's `tag` and categories
 * are small numbers whose meaning belongs to the code that builds the graph.
 * Storage is flat: tasks in one array, successors and per-stream task lists
 * in compressed rows built by graph_seal. */
#ifndef PLANSIM_CORE_GRAPH_H
#define PLANSIM_CORE_GRAPH_H

#include <glib.h>
#include <stdint.h>

#include "base/names.h"

#define GRAPH_MAX_STREAMS    9
#define GRAPH_MEM_CATEGORIES 8
#define GRAPH_OFF_STREAM     (-1)

typedef int32_t TaskId;
#define TASK_NONE ((TaskId)-1)

typedef enum { TASK_COMPUTE, TASK_COLLECTIVE, TASK_MARKER, TASK_COPY } TaskKind;

/* A task's name: a printf format with at most two int conversions, and
 * their values, e.g. {"fwd mb%d L%d attn", 3, 17}, and the part of that
 * work the task is, appended after a space ("column GEMM"; NULL: the
 * whole). The format and the part must be strings that live as long as
 * the graph (literals): the graph keeps them and the values, and formats
 * them only when graph_name asks, so naming a task costs nothing. */
typedef struct {
    const char *fmt;
    int a, b;
    const char *part;
} TaskName;

typedef struct {
    union {
        double seconds; /* compute: duration at full speed (0 for a marker) */
        double bytes;   /* collective: the buffer size S (see collective.h); copy: its bytes */
    };
    double flops;        /* compute: FLOPs executed, for utilisation (else 0) */
    int32_t owner;       /* compute, marker and copy: the rank; collective: the group */
    uint32_t first_succ; /* where its successors start (graph_arrays), once sealed */
    uint32_t first_mem;  /* where its memory operations start, once sealed */
    uint8_t kind;        /* TaskKind */
    uint8_t stream;      /* the stream it runs on (every member's, for a collective) */
    uint8_t op;          /* collective: CollOp; copy: 1 up (to the GPU), 0 down */
    uint8_t tag;         /* the builder's label (phase, group kind, ...) */
} Task;

typedef struct {
    double bytes; /* > 0 allocates, < 0 frees */
    int32_t rank;
    uint8_t category; /* < GRAPH_MEM_CATEGORIES */
    uint8_t at_end;   /* applied when the task ends, else when it starts */
} MemOp;

typedef struct Graph Graph;

/* An empty graph over `ranks` ranks with `streams` streams each. */
Graph *graph_new(int ranks, int streams);
void graph_free(Graph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Graph, graph_free)

/* Makes room for `tasks` more tasks, `edges` more dependencies (stream
 * order included) and `mem` more memory operations, so that adding them
 * does not grow the graph's arrays step by step. An estimate: more are
 * still added, fewer waste only address space. */
void graph_reserve(Graph *g, gsize tasks, gsize edges, gsize mem);

/* Places the ranks on GPUs: rank r runs on GPU gpu_of[r] of `gpus` (by
 * default rank r runs on GPU r). A graph may hold the programs of some of
 * the GPUs only (a symmetry-reduced replay): its groups then name GPUs that
 * run no rank of it. Before any group is added. */
void graph_place(Graph *g, const int *gpu_of, int gpus);

/* Registers a communicator group of `n` distinct GPUs (copied); returns its
 * id. Its members are the graph's ranks on those GPUs: they join its
 * collectives, which start when they all have. */
int graph_add_group(Graph *g, const int *gpus, int n);

/* Appends a compute task to `rank`'s `stream`. */
TaskId graph_compute(Graph *g, int rank, int stream, double seconds, double flops, int tag,
                     TaskName name);

/* Appends a zero-time marker to `rank`'s `stream`. */
TaskId graph_marker(Graph *g, int rank, int stream, int tag, TaskName name);

/* Appends to `rank`'s `stream` a copy of `bytes` between its GPU and its
 * host, up (to the GPU) or down. */
TaskId graph_copy(Graph *g, int rank, int stream, double bytes, gboolean up, int tag,
                  TaskName name);

/* `rank` joins its next collective on `group`, on its `stream`. The first
 * member to join creates the task with `op`, `bytes`, `tag` and `name`;
 * later members must join with the same op and bytes (a mismatch is a bug),
 * and on the same stream. A member may join with GRAPH_OFF_STREAM: it is
 * matched (and counted by graph_seal) but runs nothing, and waits for the
 * task only through dependencies it adds itself. A send/recv is such a
 * collective over a pair of ranks: the sender runs it on its stream, the
 * receiver's work depends on it. */
TaskId graph_collective(Graph *g, int group, int rank, int stream, CollOp op, double bytes, int tag,
                        TaskName name);

/* `after` also waits for `before`. */
void graph_dep(Graph *g, TaskId before, TaskId after);

/* The last task appended to a stream so far, or TASK_NONE. */
TaskId graph_last(const Graph *g, int rank, int stream);

/* Attaches a memory operation to `task` on `rank`. */
void graph_mem(Graph *g, TaskId task, int rank, int category, double bytes, gboolean at_end);

/* ---- a steady state built short ----------------------------------------
 *
 * A step whose steady state repeats a period (the same tasks, each
 * standing where the one a period before stood) may be built with a few
 * periods only: the tasks before them, `periods` consecutive periods
 * numbered 0 .. periods - 1, and the tasks after them. The step it stands
 * for runs `repeats` more copies of the last period between that period
 * and the tasks after it, each copy's dependencies those of the period
 * shifted by one period; the engine checks that the replay of the periods
 * built repeats, and what the copies would add (engine.h). The builder
 * says which period each task belongs to, GRAPH_BEFORE before the
 * periods and `periods` after them; a collective belongs to the period of
 * the first member that joined it on a stream (a send/recv's sender),
 * whose program it stands in. */
#define GRAPH_BEFORE      (-1)
#define GRAPH_MAX_PERIODS 100

/* Marks the graph as built short: `periods` (2 .. GRAPH_MAX_PERIODS) periods,
 * the last standing for itself and `repeats` (>= 1) more. Before any task
 * is added; the tasks added then are GRAPH_BEFORE. */
void graph_fold(Graph *g, int periods, int repeats);

/* The tasks added from now on belong to `period` (GRAPH_BEFORE .. the
 * periods, which is after them). */
void graph_set_period(Graph *g, int period);

/* The periods built and the last one's repeats; 0 and 0 for a graph not
 * built short. */
int graph_fold_periods(const Graph *g);
int graph_fold_repeats(const Graph *g);

/* Per task, the period it belongs to; NULL for a graph not built short. */
const int8_t *graph_periods(const Graph *g);

/* Ends construction: builds the compressed rows. Fails (PS_ERROR_STUCK)
 * when a collective was not joined by every member of its group, naming it
 * and the missing ranks. */
gboolean graph_seal(Graph *g, GError **error);

/* ---- reading a sealed graph -------------------------------------------- */

int graph_ranks(const Graph *g);
int graph_streams(const Graph *g);
gsize graph_tasks(const Graph *g);
/* The copies added (TASK_COPY). */
gsize graph_copies(const Graph *g);

/* The tasks of one rank each (all but collectives);
 * also before the graph is sealed. */
gsize graph_rank_tasks(const Graph *g);
const Task *graph_task(const Graph *g, TaskId id);

/* The task's name, formatted: a newly allocated string (g_free). */
char *graph_name(const Graph *g, TaskId id);

/* The sealed graph's tasks, successors, memory operations and dependency
 * counts as flat arrays, for loops over every task (the engine's); they
 * live as long as the graph. The successors of task `id` are
 * succ[task[id].first_succ .. task[id + 1].first_succ), its memory
 * operations mem[task[id].first_mem .. task[id + 1].first_mem), as
 * graph_succ and graph_mem_ops give them: task[graph_tasks] is there, a
 * sentinel that only ends the last rows. */
typedef struct {
    const Task *task;
    const TaskId *succ;
    const MemOp *mem;
    const int32_t *npred; /* per task: its dependencies, stream order included */
} GraphArrays;

GraphArrays graph_arrays(const Graph *g);

/* An uninitialised array of `size` bytes per task, for per-task state
 * (the replay's), freed with graph_per_task_free; like the graph's own
 * arrays, it comes from base/bigmem.h. */
void *graph_per_task(const Graph *g, gsize size);
void graph_per_task_free(void *p);

/* Successors of `id`: *n entries. */
const TaskId *graph_succ(const Graph *g, TaskId id, int *n);

/* The tasks of `rank`'s `stream` in program order: *n entries. */
const TaskId *graph_stream(const Graph *g, int rank, int stream, int *n);

/* Memory operations of `id`: *n entries. */
const MemOp *graph_mem_ops(const Graph *g, TaskId id, int *n);

/* The groups added, numbered 0 .. graph_groups - 1. */
int graph_groups(const Graph *g);

/* A group's members (ranks of the graph), and all its GPUs. */
const int *graph_group(const Graph *g, int group, int *n);
const int *graph_group_gpus(const Graph *g, int group, int *n);

/* The GPU rank `rank` runs on. */
int graph_gpu(const Graph *g, int rank);

#endif
