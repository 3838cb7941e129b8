/* netbound.c: lower bounds of the network's collectives (netbound.h). */
#include "net/netbound.h"

#include "net/net.h"
#include "net/topology.h"

double netbound_payload_Bps(const LinkSpec *link, double capacity)
{
    return capacity * topology_link_efficiency(link);
}

double netbound_nic_payload_Bps(const ClusterSpec *cluster, int *nics)
{
    return netbound_payload_Bps(&cluster->inter, topology_nic_capacity(cluster, nics));
}

gboolean netbound_loads_links(double bytes, int n)
{
    return bytes / n > NET_PACKET_BYTES;
}

double netbound_loaded_bytes(double times, double bytes, int n)
{
    return netbound_loads_links(bytes, n) ? times * bytes : 0;
}

double netbound_exchange_s(const ClusterSpec *cluster, double bytes, int n)
{
    if (n < 2 || !netbound_loads_links(bytes, n))
        return 0;
    int nics;
    double links = netbound_payload_Bps(&cluster->intra, cluster->intra.bandwidth_Bps) +
                   netbound_nic_payload_Bps(cluster, &nics);
    return bytes * (n - 1) / n / links;
}

double netbound_least_alpha_s(const ClusterSpec *cluster, const LinkSpec *link)
{
    double alpha = topology_link_alpha(link, PROTOCOL_SIMPLE);
    for (CollProtocol p = 0; p < PROTOCOLS; p++)
        if (cluster->protocols >> p & 1)
            alpha = MIN(alpha, topology_link_alpha(link, p));
    return alpha;
}

double netbound_send_s(const ClusterSpec *cluster, double bytes, gboolean across)
{
    int nics;
    double inter = netbound_least_alpha_s(cluster, &cluster->inter);
    double nic_Bps = netbound_nic_payload_Bps(cluster, &nics);
    double alpha = across ? inter : MIN(inter, netbound_least_alpha_s(cluster, &cluster->intra));
    double Bps =
        across ? nic_Bps
               : MAX(nic_Bps, netbound_payload_Bps(&cluster->intra, cluster->intra.bandwidth_Bps));
    return cluster->base_latency_s + alpha + (netbound_loads_links(bytes, 2) ? bytes / Bps : 0);
}

double netbound_all_to_all_latency_s(const ClusterSpec *cluster, int n, gboolean across)
{
    double inter = netbound_least_alpha_s(cluster, &cluster->inter);
    double alpha = across ? inter : MIN(inter, netbound_least_alpha_s(cluster, &cluster->intra));
    return cluster->base_latency_s + (n - 1) * alpha;
}
