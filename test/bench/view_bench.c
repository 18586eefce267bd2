/*
 * view_bench.c - the cluster view at scale, in process:
 *
 *   view_bench [-N NODES] [-K KINDS] [-C CPU_NODES [-U]] [-T] [-D] FIXTURE
 *
 * A synthetic cluster of NODES GPU nodes (default 5,000) in KINDS kinds
 * (default 40: eight instance types, each kind a node group of its own,
 * over six zones), built as the watch thread builds it, from Node objects
 * shaped like an EKS node's (20-odd labels, a taint, allocatable). It prints
 * one JSON object with, on this thread's CPU clock: index_ms        putting
 * every node into an empty index (the first list) build_ms        view_build()
 * of it heartbeat_us    a node update that changes nothing decisions read
 *   relabel_us      an update that moves a node to another kind and back
 *   view_bytes      heap held by the index and one view (mallinfo2)
 *   node_parse_us   cJSON_Parse() of one such node, as an event arrives
 *   review_pinned_us / _pinned_view_us / _resolved_view_us
 *                   review_respond() of FIXTURE as it is (it pins
 *                   p4d.24xlarge), the same with the view in place, and
 *                   with its pin replaced by a node group the view
 *                   resolves: what the view adds to a review.
 * With -C, CPU_NODES nodes without GPUs (20 node groups; -U: a label
 * unique to each) go in after them: cpu_bytes is what the index keeps of
 * them (it keeps such nodes, out of the view, for ResourceSlices to come,
 * up to a bound of kinds), cpu_unread 1 when it stopped keeping new
 * ones. With -T every GPU node has a NodeResourceTopology whose kubelet
 * is restricted: the reviews then also look for the Topology Manager
 * (policy/pod/numafit.h). With -D every GPU node has a ResourceSlice of
 * the NVIDIA DRA driver (8 GPUs), listed before the nodes, as a DRA
 * cluster's: slices_ms is putting them in.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "policy/table/snapshot.h"
#include "policy/view/view.h"
#include "test/bench/bench_time.h"
#include "webhook/review.h"

static const char *const types[] = {
    "p4d.24xlarge", "p5.48xlarge", "p5e.48xlarge",  "g5.12xlarge",
    "g5.48xlarge",  "g6.12xlarge", "p4de.24xlarge", "g6e.48xlarge"};

static cJSON *
node(int i, int kinds, const char *group_suffix)
{
    char name[64], group[64], zone[32], text[2048];
    int kind = i % kinds;
    const char *type = types[kind % 8];

    snprintf(name, sizeof(name), "ip-10-%d-%d-%d.ec2.internal", i / 65536,
             i / 256 % 256, i % 256);
    snprintf(group, sizeof(group), "group-%d%s", kind, group_suffix);
    snprintf(zone, sizeof(zone), "us-east-1%c", 'a' + kind / 8 % 6);
    snprintf(text, sizeof(text),
             "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
             "\"beta.kubernetes.io/arch\":\"amd64\","
             "\"beta.kubernetes.io/instance-type\":\"%s\","
             "\"beta.kubernetes.io/os\":\"linux\","
             "\"eks.amazonaws.com/capacityType\":\"ON_DEMAND\","
             "\"eks.amazonaws.com/nodegroup\":\"%s\","
             "\"eks.amazonaws.com/nodegroup-image\":\"ami-0c7f2c5e9b1e4a111\","
             "\"failure-domain.beta.kubernetes.io/region\":\"us-east-1\","
             "\"failure-domain.beta.kubernetes.io/zone\":\"%s\","
             "\"k8s.io/cloud-provider-aws\":\"4b3e8a0c1f2d\","
             "\"kubernetes.io/arch\":\"amd64\","
             "\"kubernetes.io/hostname\":\"%s\","
             "\"kubernetes.io/os\":\"linux\","
             "\"node.kubernetes.io/instance-type\":\"%s\","
             "\"topology.k8s.aws/network-node-layer-1\":\"nn-%d\","
             "\"topology.k8s.aws/zone-id\":\"use1-az%d\","
             "\"topology.kubernetes.io/region\":\"us-east-1\","
             "\"topology.kubernetes.io/zone\":\"%s\"}},"
             "\"spec\":{\"providerID\":\"aws:///%s/i-%08x\",\"taints\":[{"
             "\"key\":\"nvidia.com/gpu\",\"value\":\"true\","
             "\"effect\":\"NoSchedule\"}]},"
             "\"status\":{\"allocatable\":{\"cpu\":\"95690m\","
             "\"memory\":\"1167052608Ki\",\"nvidia.com/gpu\":\"%d\","
             "\"pods\":\"737\",\"vpc.amazonaws.com/efa\":\"%d\"},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
             "\"lastHeartbeatTime\":\"2026-11-23T13:%02d:00Z\"}]}}",
             name, type, group, zone, name, type, i % 97, kind % 6, zone, zone,
             (unsigned)i, kind % 8 < 3 || kind % 8 == 6 ? 8 : 4,
             kind % 8 == 1 || kind % 8 == 2 ? 32 : 4, i % 60);
    return cJSON_Parse(text);
}

/* A node without GPUs; unique: a label of its own. */
static cJSON *
cpu_node(int i, bool unique)
{
    char text[1536];

    snprintf(text, sizeof(text),
             "{\"kind\":\"Node\",\"metadata\":{\"name\":"
             "\"ip-10-200-%d-%d.ec2.internal\",\"labels\":{"
             "\"kubernetes.io/arch\":\"amd64\","
             "\"eks.amazonaws.com/nodegroup\":\"cpu-%d\","
             "\"example.com/node-serial\":\"SN%07d\","
             "\"kubernetes.io/hostname\":\"ip-10-200-%d-%d\","
             "\"node.kubernetes.io/instance-type\":\"m7i.4xlarge\","
             "\"topology.kubernetes.io/region\":\"us-east-1\","
             "\"topology.kubernetes.io/zone\":\"us-east-1a\"}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"15890m\","
             "\"memory\":\"63000000Ki\",\"pods\":\"234\"}}}",
             i / 256, i % 256, i % 20, unique ? i : 0, i / 256, i % 256);
    return cJSON_Parse(text);
}

/* Node i's ResourceSlice: eight whole GPUs of the NVIDIA DRA driver. */
static cJSON *
slice(int i)
{
    char node[64], text[4096];
    size_t at;

    snprintf(node, sizeof(node), "ip-10-%d-%d-%d.ec2.internal", i / 65536,
             i / 256 % 256, i % 256);
    at = (size_t)snprintf(text, sizeof(text),
                          "{\"kind\":\"ResourceSlice\",\"metadata\":{"
                          "\"name\":\"%s-gpu.nvidia.com-x\"},\"spec\":{"
                          "\"driver\":\"gpu.nvidia.com\",\"nodeName\":"
                          "\"%s\",\"pool\":{\"name\":\"%s\","
                          "\"generation\":1,\"resourceSliceCount\":1},"
                          "\"devices\":[",
                          node, node, node);
    for (int d = 0; d < 8; d++)
        at += (size_t)snprintf(
            text + at, sizeof(text) - at,
            "%s{\"name\":\"gpu-%d\",\"attributes\":{\"type\":{"
            "\"string\":\"gpu\"},\"productName\":{\"string\":"
            "\"NVIDIA H100 80GB HBM3\"}}}",
            d ? "," : "", d);
    snprintf(text + at, sizeof(text) - at, "]}}");
    return cJSON_Parse(text);
}

/* Node i's NodeResourceTopology: restricted, two NUMA nodes. */
static cJSON *
topology(int i)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"kind\":\"NodeResourceTopology\",\"metadata\":{\"name\":"
             "\"ip-10-%d-%d-%d.ec2.internal\"},\"attributes\":[{\"name\":"
             "\"topologyManagerPolicy\",\"value\":\"restricted\"}],"
             "\"zones\":[{\"name\":\"node-0\",\"type\":\"Node\","
             "\"resources\":[{\"name\":\"cpu\",\"capacity\":\"48\"},"
             "{\"name\":\"nvidia.com/gpu\",\"capacity\":\"4\"}]},"
             "{\"name\":\"node-1\",\"type\":\"Node\",\"resources\":["
             "{\"name\":\"cpu\",\"capacity\":\"48\"},"
             "{\"name\":\"nvidia.com/gpu\",\"capacity\":\"4\"}]}]}",
             i / 65536, i / 256 % 256, i % 256);
    return cJSON_Parse(text);
}

static size_t
heap(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* Per review; the review must have been decided on want's hardware. */
static double
review_us(const struct snapshot *s, const struct view *v, const char *body,
          size_t len, long n, const char *want)
{
    double t0 = bench_cpu_ns();

    for (long i = 0; i < n; i++) {
        struct review_result r;
        if (review_respond(s, v, body, len, &r) < 0 || r.http_status != 200 ||
            strcmp(r.instance_type, want) != 0) {
            fprintf(stderr, "view_bench: review failed or not on %s\n", want);
            exit(1);
        }
        review_result_free(&r);
    }
    return (bench_cpu_ns() - t0) / (double)n / 1000.0;
}

/* The fixture with its instance-type pin replaced by a node group. */
static char *
resolved_fixture(const char *body)
{
    cJSON *root = cJSON_Parse(body), *spec, *sel;
    char *text;

    spec = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "request"), "object"),
        "spec");
    cJSON_DeleteItemFromObject(spec, "nodeSelector");
    sel = cJSON_AddObjectToObject(spec, "nodeSelector");
    cJSON_AddStringToObject(sel, "eks.amazonaws.com/nodegroup", "group-0");
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

int
main(int argc, char **argv)
{
    int n_nodes = 5000, kinds = 40, cpu_nodes = 0, c;
    bool unique = false, numa = false, dra = false;
    double slices_ms = 0;
    struct load_error err;
    struct snapshot *s;
    struct view_index *x;
    struct view *v;
    cJSON **nodes, *moved, *back;
    size_t before, len;
    double t0, index_ms, build_ms, heartbeat_us, relabel_us;
    char *body, *resolved;
    FILE *f;
    long flen, n = 2000;

    while ((c = getopt(argc, argv, "N:K:C:UTD")) != -1) {
        if (c == 'N')
            n_nodes = atoi(optarg);
        else if (c == 'K')
            kinds = atoi(optarg);
        else if (c == 'C')
            cpu_nodes = atoi(optarg);
        else if (c == 'U')
            unique = true;
        else if (c == 'T')
            numa = true;
        else if (c == 'D')
            dra = true;
        else
            return 2;
    }
    if (optind != argc - 1 || n_nodes < 1 || kinds < 1 || kinds > 400 ||
        cpu_nodes < 0) {
        fprintf(stderr, "usage: view_bench [-N NODES] [-K KINDS] "
                        "[-C CPU_NODES [-U]] [-T] [-D] FIXTURE\n");
        return 2;
    }
    if ((f = fopen(argv[optind], "rb")) == NULL || fseek(f, 0, SEEK_END) ||
        (flen = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
        (body = calloc(1, (size_t)flen + 1)) == NULL ||
        fread(body, 1, (size_t)flen, f) != (size_t)flen) {
        perror(argv[optind]);
        return 1;
    }
    fclose(f);
    len = (size_t)flen;
    s = snapshot_parse_embedded(NULL, &err);
    nodes = calloc((size_t)n_nodes, sizeof(*nodes));
    for (int i = 0; i < n_nodes; i++)
        nodes[i] = node(i, kinds, "");

    before = heap();
    x = view_index_new();
    t0 = bench_cpu_ns();
    for (int i = 0; dra && i < n_nodes; i++) {
        cJSON *sl = slice(i);
        view_index_put(x, sl);
        cJSON_Delete(sl);
    }
    slices_ms = (bench_cpu_ns() - t0) / 1e6;
    t0 = bench_cpu_ns();
    for (int i = 0; i < n_nodes; i++)
        view_index_put_node(x, nodes[i]);
    index_ms = (bench_cpu_ns() - t0) / 1e6;
    for (int i = 0; numa && i < n_nodes; i++) {
        cJSON *t = topology(i);
        view_index_put(x, t);
        cJSON_Delete(t);
    }
    size_t cpu_before = heap();
    for (int i = 0; i < cpu_nodes; i++) {
        cJSON *cpu = cpu_node(i, unique);
        view_index_put_node(x, cpu);
        cJSON_Delete(cpu);
    }
    size_t cpu_bytes = heap() - cpu_before;
    t0 = bench_cpu_ns();
    v = view_build(x);
    build_ms = (bench_cpu_ns() - t0) / 1e6;
    size_t view_bytes = heap() - before;

    t0 = bench_cpu_ns();
    for (int r = 0; r < 10; r++)
        for (int i = 0; i < n_nodes; i++)
            view_index_put_node(x, nodes[i]);
    heartbeat_us = (bench_cpu_ns() - t0) / (10.0 * n_nodes) / 1000.0;
    /* What the watch thread pays first for each event: parsing it. */
    char *text = cJSON_PrintUnformatted(nodes[0]);
    t0 = bench_cpu_ns();
    for (int r = 0; r < 20000; r++)
        cJSON_Delete(cJSON_Parse(text));
    double parse_us = (bench_cpu_ns() - t0) / 20000.0 / 1000.0;
    size_t node_json = strlen(text);
    free(text);
    moved = node(7, kinds, "-b");
    back = node(7, kinds, "");
    t0 = bench_cpu_ns();
    for (int r = 0; r < 5000; r++) {
        view_index_put_node(x, moved);
        view_index_put_node(x, back);
    }
    relabel_us = (bench_cpu_ns() - t0) / 10000.0 / 1000.0;

    resolved = resolved_fixture(body);
    printf("{\"nodes\":%d,\"kinds\":%zu,\"index_ms\":%.1f,\"build_ms\":%.2f,"
           "\"heartbeat_us\":%.2f,\"relabel_us\":%.2f,\"view_bytes\":%zu,"
           "\"node_json_bytes\":%zu,\"node_parse_us\":%.2f,"
           "\"review_pinned_us\":%.1f,\"review_pinned_view_us\":%.1f,"
           "\"review_resolved_view_us\":%.1f,\"cpu_nodes\":%d,"
           "\"cpu_unique\":%s,\"cpu_bytes\":%zu,\"cpu_unread\":%zu,"
           "\"numa\":%s,\"dra\":%s,\"slices_ms\":%.1f}\n",
           n_nodes, v->n_kinds, index_ms, build_ms, heartbeat_us, relabel_us,
           view_bytes, node_json, parse_us,
           review_us(s, NULL, body, len, n, "p4d.24xlarge"),
           review_us(s, v, body, len, n, "p4d.24xlarge"),
           review_us(s, v, resolved, strlen(resolved), n, "p4d.24xlarge"),
           cpu_nodes, unique ? "true" : "false", cpu_bytes, v->n_unread,
           numa ? "true" : "false", dra ? "true" : "false", slices_ms);
    free(resolved);
    cJSON_Delete(moved);
    cJSON_Delete(back);
    view_unref(v);
    view_index_free(x);
    for (int i = 0; i < n_nodes; i++)
        cJSON_Delete(nodes[i]);
    free(nodes);
    free(body);
    snapshot_unref(s);
    return 0;
}
