/* collective.h: collective operations.
 *
 * n ranks, S bytes: the whole buffer (the reduced buffer for all-reduce,
 * the gathered one for all-gather and reduce-scatter, one rank's send
 * buffer for all-to-all, the message for send/recv), as nccl-tests define
 * it (docs/model.md, "The network"). How each runs is algorithm.h's; what
 * it costs, the network's (net.h). */
#ifndef PLANSIM_NET_COLLECTIVE_H
#define PLANSIM_NET_COLLECTIVE_H

#include "base/names.h"

/* Bytes each rank sends for `op` over n ranks with the ring algorithm:
 * 2(n-1)/n S for all-reduce, (n-1)/n S for the others, S for send/recv
 * and ring exchange. */
double collective_sent_bytes(CollOp op, int n, double bytes);

#endif
