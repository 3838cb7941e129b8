/* cmd_collective.c: plansim collective (cmd_collective.h), an nccl-tests
 * table of one collective at many sizes (app/collbench.c times it). */
#include <string.h>

#include "app/cmd_collective.h"
#include "app/cli.h"
#include "app/collbench.h"
#include "app/command.h"
#include "output/report.h"
#include "spec/cluster.h"
#include "base/names.h"
#include "base/text.h"
#include "base/units.h"

typedef struct {
    char *op, *ranks, *cluster, *nodes, *min_bytes, *max_bytes, *algorithm, *format, *output;
} CollectiveArgs;

static gboolean collective(void *args, GError **error)
{
    CollectiveArgs *a = args;
    CollOp op = COLL_ALL_REDUCE;
    CollAlgorithm algorithm = ALGORITHM_AUTO;
    ReportFormat format = FORMAT_TEXT;
    double ranks, min_bytes, max_bytes, nodes;
    if (!cli_parse_choice("--op", a->op, collective_names, (int *)&op, error) ||
        !cli_parse_choice("--algorithm", a->algorithm, collective_algorithm_choices,
                          (int *)&algorithm, error))
        return FALSE;
    g_autofree char *cluster_path =
        cli_input_path(&cli_clusters, a->cluster, CLI_DEFAULT_CLUSTER, error);
    g_autoptr(ClusterSpec) cluster = NULL;
    if (!cluster_path ||
        !cli_parse_choice("--format", a->format, report_format_names, (int *)&format, error) ||
        !cli_parse_number("--nodes", a->nodes, 1, CLUSTER_MAX_GPUS, TRUE, 0, &nodes, error) ||
        !cli_parse_number("--ranks", a->ranks, 2, CLUSTER_MAX_GPUS, TRUE, 8, &ranks, error) ||
        !cli_parse_bytes("--min-bytes", a->min_bytes, 1, 1e15, UNITS_MIB, &min_bytes, error) ||
        !cli_parse_bytes("--max-bytes", a->max_bytes, 1, 1e15, UNITS_GIB, &max_bytes, error) ||
        !(cluster = cluster_spec_load(cluster_path, (int)nodes, error)))
        return FALSE;
    GArray *rows = collbench_run(cluster, op, (int)ranks, min_bytes, max_bytes, algorithm, error);
    if (!rows)
        return FALSE;
    g_autofree char *text = report_collective_render(rows, op, (int)ranks, cluster->name, format);
    g_array_free(rows, TRUE);
    return text_write_atomic(a->output ? a->output : "-", text, strlen(text), error);
}

int cmd_collective(int argc, char **argv)
{
    CollectiveArgs a = {0};
    GOptionEntry entries[] = {
        {"op", 0, 0, G_OPTION_ARG_FILENAME, &a.op,
         "all_reduce (default), all_gather, reduce_scatter, all_to_all, send_recv", "OP"},
        {"ranks", 0, 0, G_OPTION_ARG_FILENAME, &a.ranks, "GPUs taking part (default 8)", "N"},
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &a.cluster,
         "cluster JSON, or a shipped cluster's name", "FILE"},
        {"nodes", 0, 0, G_OPTION_ARG_FILENAME, &a.nodes, "override the cluster's node count", "N"},
        {"min-bytes", 0, 0, G_OPTION_ARG_FILENAME, &a.min_bytes,
         "smallest size, bytes or K, M, G (default 1M)", "B"},
        {"max-bytes", 0, 0, G_OPTION_ARG_FILENAME, &a.max_bytes,
         "largest size, bytes or K, M, G (default 1G)", "B"},
        {"algorithm", 0, 0, G_OPTION_ARG_FILENAME, &a.algorithm,
         "auto (default), ring, tree, hierarchical or nvls", "A"},
        {"format", 0, 0, G_OPTION_ARG_FILENAME, &a.format, "text (default), json or csv", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the table to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    return command_main(argc, argv, "- an nccl-tests table from the simulated network", entries,
                        NULL, collective, &a);
}
