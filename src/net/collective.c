/* collective.c: a ring's bytes per collective operation.
 *
 * A ring all-reduce is a reduce-scatter then an all-gather: 2(n - 1) steps,
 * each sending S/n bytes per rank, 2(n - 1)/n S in all. Reduce-scatter and
 * all-gather are one half of it; a direct all-to-all sends n - 1 messages
 * of S/n; a send/recv or a ring exchange one message of S. */
#include "net/collective.h"

#include <glib.h>

/* Messages each rank sends one after the other. */
static int steps(CollOp op, int n)
{
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2 * (n - 1);
    case COLL_SEND_RECV:
    case COLL_RING_EXCHANGE:
        return 1;
    default:
        return n - 1;
    }
}

double collective_sent_bytes(CollOp op, int n, double bytes)
{
    if (op == COLL_SEND_RECV || op == COLL_RING_EXCHANGE)
        return bytes;
    return steps(op, n) * (bytes / n);
}
