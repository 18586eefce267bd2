/*
 * tables.c - `topogate tables`: the loaded topology table, for people
 * (default: each row says where it came from, the embedded policy or a
 * line of the file) or as policy YAML that --policy reads back (-o yaml:
 * the whole merged table, with `base: empty`).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "policy/table/env.h"
#include "policy/table/snapshot.h"

/* Where pods get the type's RDMA NICs: a resource, an annotation, none. */
static void
nic_text(const struct instance_type *t, char *buf, size_t size)
{
    const char *resource = type_nic_resource(t);

    if (resource)
        snprintf(buf, size, "%s%s", resource,
                 t->nics_need_evidence ? " (view)" : "");
    else if (t->nic_annotation && t->efa > 0)
        snprintf(buf, size, "annotation %s", t->nic_annotation);
    else
        snprintf(buf, size, "-");
}

/*
 * Where row i came from: "embedded", or the file's name and line (a file
 * merged onto the embedded tables, or one with `base: empty`).
 */
static void
source_text(const struct snapshot *s, const struct row_source *src, size_t i,
            char *buf, size_t size)
{
    const char *base = strrchr(s->origin, '/');

    if (src == NULL)
        snprintf(buf, size, "-");
    else if (src[i].embedded)
        snprintf(buf, size, "embedded");
    else
        snprintf(buf, size, "%s:%d", base ? base + 1 : s->origin,
                 src[i].line);
}

static void
print_products(const struct snapshot *s)
{
    if (s->n_products == 0)
        return;
    printf("\nGPU products, for nodes known by a GPU label (one GPU is "
           "single; a count not listed: unknown):\n");
    printf("%-16s %-12s %-8s %6s %-20s %s\n", "PRODUCT", "ACCELERATOR",
           "MEMORY", "GB/s", "FROM", "LINK BY GPU COUNT");
    for (size_t i = 0; i < s->n_products; i++) {
        const struct gpu_product *p = &s->products[i];
        char from[128];

        source_text(s, s->product_sources, i, from, sizeof(from));
        printf("%-16s %-12s %-8s %6d %-20s", p->name, p->accelerator,
               p->memory ? p->memory : "-", p->nvlink_gbps, from);
        for (size_t j = 0; j < p->n_links; j++) {
            const struct product_link *l = &p->links[j];

            if (l->min == l->max)
                printf(" %d:", l->min);
            else if (l->max == PRODUCT_GPUS_MAX)
                printf(" %d+:", l->min);
            else
                printf(" %d-%d:", l->min, l->max);
            printf("%s", link_name(l->link));
        }
        printf("\n  %-14s", "");
        for (size_t j = 0; j < p->n_labels; j++)
            printf(" %s", p->labels[j]);
        printf("\n");
    }
}

/* One list of a scheme's keys, under its title; nothing when empty. */
static void
print_keys(const char *title, char *const *keys, size_t n)
{
    if (n == 0)
        return;
    printf("    %-15s", title);
    for (size_t i = 0; i < n; i++)
        printf(" %s", keys[i]);
    printf("\n");
}

/* The providers' label schemes (nodeLabels), in the order they are read. */
static void
print_node_labels(const struct snapshot *s)
{
    if (s->n_schemes == 0)
        return;
    printf("\nnode labels by provider (nodeLabels): a kind of node is the "
           "row of its first\ninstance-type key that names one, else the "
           "product of its first GPU-product key\n");
    for (size_t i = 0; i < s->n_schemes; i++) {
        const struct label_scheme *l = &s->schemes[i];
        char from[128];

        source_text(s, s->scheme_sources, i, from, sizeof(from));
        printf("  %s (%s)\n", l->name, from);
        print_keys("instance type:", l->instance_type, l->n_instance_type);
        print_keys("GPU product:", l->gpu_product, l->n_gpu_product);
        if (l->attr_prefix) {
            printf("    %-15s %s{", "per attribute:", l->attr_prefix);
            for (size_t j = 0; j < NODELABELS_ATTRS; j++)
                printf("%s%s", j ? "," : "", nodelabels_attrs[j]);
            printf("}\n");
        }
        printf("    %-15s %s\n", "source:", l->source);
    }
}

/* One variable: what, why, for which images, and where that is written. */
static void
print_var(const struct env_var *e, const char *indent, const char *head)
{
    printf("%s%s%s=%s\n", indent, head, e->name, e->value);
    printf("%s  why:      %s\n", indent, e->why);
    printf("%s  versions: %s\n", indent, e->versions);
    printf("%s  source:   %s\n", indent, e->source);
}

/*
 * Which extended resources are RDMA NICs, by platform, and which of them
 * count a shared plugin's slots (table.c's lists, with their sources).
 */
static void
print_nic_names(void)
{
    static const struct {
        enum rdma_class class;
        const char *title;
    } lists[] = {
        {RDMA_NICS, "RDMA NIC resources (a unit is a NIC unless listed as "
                    "slots below):"},
        {RDMA_SLOTS, "of those, shared plugins' slots (one grants every "
                     "HCA: a slot count never becomes a limit):"},
    };

    for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
        size_t n;
        const struct rdma_name *names = table_rdma_names(lists[l].class, &n);

        printf("\n%s\n", lists[l].title);
        for (size_t i = 0; i < n; i++)
            printf("  %-30s %s\n  %-30s   source: %s\n", names[i].pattern,
                   names[i].who, "", names[i].source);
    }
}

/*
 * The env each row adds (its own, then its profile's), and every env
 * profile with the rows its variables go to, on or off.
 */
static void
print_env(const struct snapshot *s)
{
    size_t n = 0;

    printf("\nenv injected into GPU containers (envProfile: %s):\n",
           s->env_profile ? s->env_profile->name : "none");
    for (size_t i = 0; i < s->n_types; i++) {
        const struct instance_type *t = &s->types[i];

        for (size_t j = 0; j < t->n_env; j++, n++) {
            const struct env_var *e = &t->env[j];

            /* A profile's variable is told whole in the profile. */
            char head[128];

            snprintf(head, sizeof(head), "%-30s ", t->name);
            if (e->profile)
                printf("  %s%s=%s (profile %s)\n", head, e->name, e->value,
                       e->profile);
            else
                print_var(e, "  ", head);
        }
    }
    if (n == 0)
        printf("  none\n");
    if (s->n_env_profiles == 0)
        return;
    printf("\nenv profiles (envProfile turns one on; rows: all, efa = EFA "
           "rows, efa-gdr = EFA rows with GPUDirect RDMA):\n");
    for (size_t i = 0; i < s->n_env_profiles; i++) {
        const struct env_profile *p = &s->env_profiles[i];

        printf("  %s (%s)\n", p->name, p == s->env_profile ? "on" : "off");
        for (size_t j = 0; j < p->n_env; j++) {
            char head[32];

            snprintf(head, sizeof(head), "rows %s: ",
                     env_rows_name(p->env[j].rows));
            print_var(&p->env[j], "    ", head);
        }
    }
}

/*
 * The GKE GPUDirect rows: each one's stack and the networks the policy
 * names for it (gkeNetworks; a namespace's own lists are in -o yaml).
 */
static void
print_gke(const struct snapshot *s)
{
    size_t n = 0;

    for (size_t i = 0; i < s->n_types; i++) {
        const struct instance_type *t = &s->types[i];
        const struct gke_networks *g;

        if (t->gke_gpudirect == GPUDIRECT_NONE)
            continue;
        if (n++ == 0)
            printf("\nGKE GPUDirect (gkeGPUDirect) and the interfaces the "
                   "policy's gkeNetworks names (none: warned, not "
                   "patched):\n");
        printf("  %-20s %-6s", t->name, gpudirect_name(t->gke_gpudirect));
        g = snapshot_gke_networks(s, NULL, t->name);
        for (size_t j = 0; g && j < g->n_ifs; j++)
            printf(" %s=%s", g->ifs[j].name, g->ifs[j].network);
        printf("%s\n", g ? "" : " none");
    }
}

static void
print_text(const struct snapshot *s)
{
    char nic[128], from[128];
    int w = 20; /* the widest type name: Azure's run past 20 */
    size_t n_file = 0, n_view = 0;

    for (size_t i = 0; i < s->n_types; i++)
        if ((int)strlen(s->types[i].name) > w)
            w = (int)strlen(s->types[i].name);

    printf("policy %s: mode %s, unknown instance types: %s\n", s->origin,
           mode_name(s->mode), s->unknown == UNKNOWN_DENY ? "deny" : "warn");
    for (size_t i = 0; s->type_sources && i < s->n_types; i++)
        n_file += !s->type_sources[i].embedded;
    for (size_t i = 0; s->product_sources && i < s->n_products; i++)
        n_file += !s->product_sources[i].embedded;
    for (size_t i = 0; s->scheme_sources && i < s->n_schemes; i++)
        n_file += !s->scheme_sources[i].embedded;
    if (s->merged)
        printf("merged onto the embedded tables by name: %zu row(s) from "
               "the file (FROM: file:line), the rest embedded\n",
               n_file);
    else if (strcmp(s->origin, "embedded") != 0)
        printf("base: empty: every row is the file's\n");
    printf("\n%-*s %-12s %3s %-8s %-10s %6s %4s %-3s %-8s %-8s %-28s %s\n", w,
           "TYPE", "ACCELERATOR", "N", "MEMORY", "LINK", "GB/s", "NICS", "GDR",
           "HOST", "SHM", "NIC", "FROM");
    for (size_t i = 0; i < s->n_types; i++) {
        const struct instance_type *t = &s->types[i];

        nic_text(t, nic, sizeof(nic));
        source_text(s, s->type_sources, i, from, sizeof(from));
        printf("%-*s %-12s %3d %-8s %-10s %6d %4d %-3s %-8s %-8s %-28s %s\n",
               w, t->name, t->accelerator, t->count, t->memory,
               link_name(t->link), t->nvlink_gbps, t->efa,
               t->gpudirect_rdma ? "yes" : "no", t->host_memory, t->shm, nic,
               from);
        n_view += t->nics_need_evidence;
    }
    if (n_view > 0)
        printf("(view): nicsNeedEvidence, the NIC resource is added only "
               "where the cluster view shows nodes that advertise it\n");
    print_nic_names();
    print_gke(s);
    print_env(s);
    print_products(s);
    print_node_labels(s);
}

int
cmd_tables(int argc, char **argv)
{
    static const struct option options[] = {
        {"policy", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *policy = NULL, *output = "text";
    struct snapshot *s;
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
        switch (c) {
        case 'p':
            policy = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            puts("usage: topogate tables [--policy FILE] [-o text|yaml]");
            return 0;
        default:
            return 2;
        }
    }
    if (optind != argc ||
        (strcmp(output, "text") != 0 && strcmp(output, "yaml") != 0)) {
        fprintf(stderr, "usage: topogate tables [--policy FILE] "
                        "[-o text|yaml]\n");
        return 2;
    }
    if ((s = cmd_load_policy(policy, NULL)) == NULL)
        return 1;
    if (strcmp(output, "yaml") == 0) {
        char *text = snapshot_print(s);
        if (text == NULL) {
            fprintf(stderr, "topogate: out of memory\n");
            snapshot_unref(s);
            return 1;
        }
        fputs(text, stdout);
        free(text);
    } else {
        print_text(s);
    }
    snapshot_unref(s);
    return 0;
}
