/*
 * nodes.c - `topogate nodes`: how topogate sees the cluster's GPU nodes,
 * one line per kind of node, from a file (`kubectl get nodes -o yaml`) or
 * from the apiserver. The same view feeds `audit --nodes`.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/audit.h"
#include "policy/pod/nodefacts.h"
#include "policy/pod/placement.h"
#include "policy/table/snapshot.h"
#include "policy/view/view.h"
#include "kube/kube.h"
#include "clusterview/kubewatch.h"

static const char nodes_usage[] =
    "usage: topogate nodes [--nodes FILE | --kubeconfig FILE] [--policy FILE]\n"
    "                      [-o text|json]\n"
    "\n"
    "  --nodes FILE       `kubectl get nodes -o yaml|json` (a List), Node,\n"
    "                     ResourceFlavor, ClusterQueue, LocalQueue, and DRA's\n"
    "                     DeviceClass, ResourceSlice, ResourceClaimTemplate\n"
    "  --kubeconfig FILE  list them from the cluster instead (in a pod: the\n"
    "                     service account, when neither is given)\n";

int
cmd_view_read(struct view_index *x, const char *path)
{
    struct audit_input in = {0};
    char *paths[] = {(char *)path};
    int rc = audit_input_read(&in, paths, 1), nodes = 0;

    for (size_t i = 0; rc == 0 && i < in.n_docs; i++) {
        cJSON *o = in.docs[i].object;
        if (in.docs[i].error) {
            fprintf(stderr, "topogate: %s:%d: %s\n", path, in.docs[i].line,
                    in.docs[i].error);
            rc = -1;
            break;
        }
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind"));
        /* A NodeList's items may come without a kind (the raw API). */
        if (o && (kind == NULL || strcmp(kind, "Node") == 0)) {
            nodes++;
            rc = view_index_put_node(x, o) < 0 ? -2 : 0;
        } else if (o && view_index_put(x, o) < 0) {
            rc = -2;
        }
    }
    audit_input_free(&in);
    if (rc == -2)
        fprintf(stderr, "topogate: out of memory\n");
    return rc < 0 ? -1 : nodes;
}

/*
 * A quantity of NICs as people read it: "vpc.amazonaws.com/efa 4"; a
 * shared plugin's count says "slots", as it is not a count of NICs.
 */
static void
nic_text(const struct node_kind *k, const struct placement_row *r, bool known,
         char *out, size_t len)
{
    const char *nic = known ? type_nic_resource(&r->row) : NULL;
    long count = 0;

    if (known && r->row.nic_annotation) {
        snprintf(out, len, "by annotation %s", r->row.nic_annotation);
        return;
    }
    if (nic == NULL && k->n_nics > 0) {
        nic = k->nics[0].resource;
        count = k->nics[0].count;
    } else if (nic) {
        count = r->row.efa;
    }
    if (nic == NULL && k->dra_nics > 0)
        snprintf(out, len, "DRA dra.net RDMA %ld (claims)", k->dra_nics);
    else if (nic == NULL)
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%s %ld%s", nic, count,
                 table_rdma_class(nic) == RDMA_SLOTS ? " slots" : "");
}

static const char *
kind_name(const struct node_kind *k)
{
    static const char *const keys[] = {
        "nvidia.com/gpu.product", "cloud.google.com/gke-accelerator",
        "node.kubernetes.io/instance-type", "nvidia.com/gpu.machine"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (label_get(&k->set, keys[i]))
            return label_get(&k->set, keys[i]);
    if (k->dra_product) /* GPUs from ResourceSlices */
        return k->dra_product;
    return "(no type or GPU label)";
}

/* nodefacts_say: a comment line under the kind's row. */
static int
print_fact(void *arg, const char *sentence)
{
    (void)arg;
    printf("#   %s\n", sentence);
    return 0;
}

/* "single-numa-node, scope container; NUMA nodes 4+4 GPUs, 48+48 CPUs",
 * or "" where no NodeResourceTopology says the policy. */
static void
numa_text(const struct node_numa *n, char *out, size_t len)
{
    size_t at;

    out[0] = '\0';
    if (n->policy == NUMA_NOT_SAID)
        return;
    at = (size_t)snprintf(out, len, "%s, scope %s",
                          viewnuma_policy_name(n->policy),
                          n->pod_scope ? "pod" : "container");
    for (int r = 0; r < 2 && n->zones > 0 && at < len; r++) {
        const long *counts = r == 0 ? n->gpus : n->cpus;
        for (int i = 0; i < n->zones && at < len; i++)
            at += (size_t)snprintf(out + at, len - at, "%s%ld",
                                   i ? "+" : r ? ", " : "; NUMA nodes ",
                                   counts[i]);
        if (at < len)
            at += (size_t)snprintf(out + at, len - at, r ? " CPUs" : " GPUs");
    }
}

static void
print_text(const struct snapshot *s, const struct view *v, int left_out)
{
    printf("%-28s %4s  %-9s %-32s %5s  %s\n", "KIND", "GPUS", "LINK", "NIC",
           "NODES", "KNOWN BY");
    for (size_t i = 0; i < v->n_kinds; i++) {
        const struct node_kind *k = &v->kinds[i];
        struct placement_row r;
        const char *by = placement_kind(s, k, &r);
        const char *zone = label_get(&k->set, "topology.kubernetes.io/zone");
        char nic[96];

        nic_text(k, &r, by != NULL, nic, sizeof(nic));
        printf("%-28s %4ld  %-9s %-32s %5zu  %s%s%s\n",
               by ? r.row.name : kind_name(k), k->gpus,
               by ? link_name(r.row.link) : "unknown", nic, k->nodes,
               by ? by : "nothing topogate knows: no topology check",
               zone ? "; zone " : "", zone ? zone : "");
        if (by)
            nodefacts_kind(k, &r.row, print_fact, NULL);
        numa_text(&k->numa, nic, sizeof(nic));
        if (nic[0])
            printf("#   kubelet Topology Manager %s\n", nic);
    }
    printf("# GPU nodes %zu, kinds %zu; Kueue flavors %zu, cluster queues "
           "%zu, local queues %zu; Trainer runtimes %zu\n",
           v->n_nodes, v->n_kinds, v->n_flavors, v->n_cluster_queues,
           v->n_local_queues, v->runtimes.n);
    if (v->n_slices > 0 || cJSON_GetArraySize(v->device_classes) > 0)
        printf("# DRA: ResourceSlices %zu, DeviceClasses %d, "
               "ResourceClaimTemplates %d\n",
               v->n_slices, cJSON_GetArraySize(v->device_classes),
               cJSON_GetArraySize(v->claim_templates));
    if (v->n_numa > 0)
        printf("# NodeResourceTopologies %zu\n", v->n_numa);
    if (v->n_unread)
        printf("# more GPU-less nodes than the index keeps: ResourceSlices "
               "of the rest are not read\n");
    if (left_out > 0)
        printf("# %d more node%s with no allocatable nvidia.com/gpu (CPU "
               "nodes, MIG, no device plugin) left out\n",
               left_out, left_out == 1 ? "" : "s");
}

static int
print_json(const struct snapshot *s, const struct view *v)
{
    cJSON *root = cJSON_CreateObject(),
          *kinds = cJSON_AddArrayToObject(root, "kinds");
    char *text;

    for (size_t i = 0; kinds && i < v->n_kinds; i++) {
        const struct node_kind *k = &v->kinds[i];
        struct placement_row r;
        const char *by = placement_kind(s, k, &r);
        cJSON *o = cJSON_CreateObject(), *labels;
        char nic[96];

        nic_text(k, &r, by != NULL, nic, sizeof(nic));
        cJSON_AddItemToArray(kinds, o);
        cJSON_AddStringToObject(o, "name", by ? r.row.name : kind_name(k));
        cJSON_AddNumberToObject(o, "gpus", (double)k->gpus);
        cJSON_AddStringToObject(o, "interconnect",
                                by ? link_name(r.row.link) : "unknown");
        cJSON_AddStringToObject(o, "nic", nic);
        cJSON_AddNumberToObject(o, "nodes", (double)k->nodes);
        if (by)
            cJSON_AddStringToObject(o, "knownBy", by);
        else
            cJSON_AddNullToObject(o, "knownBy");
        numa_text(&k->numa, nic, sizeof(nic));
        if (nic[0])
            cJSON_AddStringToObject(o, "topologyManager", nic);
        labels = cJSON_AddObjectToObject(o, "labels");
        for (size_t j = 0; labels && j < k->n_labels; j++)
            cJSON_AddStringToObject(labels, k->labels[j].key,
                                    k->labels[j].value);
    }
    cJSON_AddNumberToObject(root, "nodes", (double)v->n_nodes);
    if ((text = cJSON_Print(root)) == NULL) {
        cJSON_Delete(root);
        return -1;
    }
    puts(text);
    free(text);
    cJSON_Delete(root);
    return 0;
}

int
cmd_nodes(int argc, char **argv)
{
    static const struct option longs[] = {
        {"nodes", required_argument, NULL, 'N'},
        {"kubeconfig", required_argument, NULL, 'k'},
        {"policy", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *nodes = NULL, *kubeconfig = NULL, *policy = NULL, *out = "text";
    struct view_index *x = NULL;
    struct snapshot *s = NULL;
    struct view *v = NULL;
    int c, rc = 2, read = 0;

    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'N':
            nodes = optarg;
            break;
        case 'k':
            kubeconfig = optarg;
            break;
        case 'p':
            policy = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            fputs(nodes_usage, stdout);
            return 0;
        default:
            fputs(nodes_usage, stderr);
            return 2;
        }
    }
    if (optind != argc || (nodes && kubeconfig) ||
        (strcmp(out, "text") && strcmp(out, "json"))) {
        fputs(nodes_usage, stderr);
        return 2;
    }
    if ((s = cmd_load_policy(policy, NULL)) == NULL)
        goto out;
    if (nodes ? (x = view_index_new()) == NULL ||
                    (read = cmd_view_read(x, nodes)) < 0
              : (x = kubewatch_list_once(kubeconfig)) == NULL)
        goto out;
    if ((v = view_build(x)) == NULL)
        goto out;
    if (strcmp(out, "text") == 0)
        print_text(s, v, read - (int)v->n_nodes);
    else if (print_json(s, v) < 0)
        goto out;
    rc = 0;
out:
    view_unref(v);
    view_index_free(x);
    snapshot_unref(s);
    return rc;
}
