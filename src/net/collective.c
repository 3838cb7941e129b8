/* collective.c: collective operations by name, and a ring's bytes.
 *
 * A ring all-reduce is a reduce-scatter then an all-gather: 2(n - 1) steps,
 * each sending S/n bytes per rank, 2(n - 1)/n S in all. Reduce-scatter and
 * all-gather are one half of it; a direct all-to-all sends n - 1 messages
 * of S/n. */
#include "net/collective.h"

#include <glib.h>

static const char *const names[COLL_N_OPS] = {
    [COLL_ALL_REDUCE] = "all_reduce",         [COLL_ALL_GATHER] = "all_gather",
    [COLL_REDUCE_SCATTER] = "reduce_scatter", [COLL_ALL_TO_ALL] = "all_to_all",
    [COLL_SEND_RECV] = "send_recv",
};

const char *collective_name(CollOp op)
{
    g_assert(op >= 0 && op < COLL_N_OPS);
    return names[op];
}

int collective_from_name(const char *name, CollOp *op)
{
    for (int i = 0; i < COLL_N_OPS; i++) {
        if (g_strcmp0(name, names[i]) == 0) {
            *op = (CollOp)i;
            return TRUE;
        }
    }
    return FALSE;
}

/* Messages each rank sends one after the other. */
static int steps(CollOp op, int n)
{
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2 * (n - 1);
    case COLL_SEND_RECV:
        return 1;
    default:
        return n - 1;
    }
}

double collective_sent_bytes(CollOp op, int n, double bytes)
{
    if (op == COLL_SEND_RECV)
        return bytes;
    return steps(op, n) * (bytes / n);
}
