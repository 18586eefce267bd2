/*
 * snapshot_print.c - a snapshot back to policy YAML, in one canonical
 * form, so that print -> parse -> print gives the same bytes.
 */
#include "policy/table/snapshot.h"
#include "policy/table/env.h"

#include <string.h>

#include "base/strbuf.h"

/* Plain YAML only where no reader could take it for anything but text. */
static bool
plain_safe(const char *s)
{
    static const char *const words[] = {
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~", NULL};

    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
        return false;
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789._/-",
                    *p))
            return false;
    for (size_t i = 0; words[i]; i++)
        if (strcasecmp(s, words[i]) == 0)
            return false;
    return true;
}

/*
 * The code point of the UTF-8 sequence at s and its length in *n; -1 (and
 * *n = 1) for a byte that does not start one.
 */
static long
utf8_next(const unsigned char *s, size_t *n)
{
    long cp;
    size_t len, i;

    *n = 1;
    if (s[0] < 0x80)
        return s[0];
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2, cp = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3, cp = s[0] & 0x0F;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4, cp = s[0] & 0x07;
    else
        return -1;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    *n = len;
    return cp;
}

/*
 * A double-quoted YAML scalar, escaped. Besides '"' and '\\', every
 * character YAML does not take raw inside quotes is escaped: C0 and C1
 * controls and DEL (the reader refuses them), the line breaks U+0085,
 * U+2028 and U+2029 (read raw, they fold into a space), and U+FEFF,
 * U+FFFE, U+FFFF. What the loader accepted is UTF-8; a byte that is not
 * is copied as it is.
 */
static void
put_quoted(struct strbuf *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n;

    strbuf_puts(sb, "\"");
    for (; *p; p += n) {
        long cp = utf8_next(p, &n);

        if (cp == '"' || cp == '\\')
            strbuf_printf(sb, "\\%c", (int)cp);
        else if (cp >= 0 && (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)))
            strbuf_printf(sb, "\\x%02lx", cp);
        else if (cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF ||
                 cp == 0xFFFE || cp == 0xFFFF)
            strbuf_printf(sb, "\\u%04lx", cp);
        else
            strbuf_add(sb, (const char *)p, n);
    }
    strbuf_puts(sb, "\"");
}

static void
put_string(struct strbuf *sb, const char *s)
{
    if (plain_safe(s))
        strbuf_puts(sb, s);
    else
        put_quoted(sb, s);
}

static const char *
yes_no(bool b)
{
    return b ? "true" : "false";
}

static void
put_inject(struct strbuf *sb, const struct inject *in, const char *indent)
{
    strbuf_printf(sb,
                  "%sefa: %s\n%shostIPC: %s\n%sshm: %s\n%sipcLock: %s\n"
                  "%stolerations: %s\n%senv: %s\n",
                  indent, yes_no(in->efa), indent, yes_no(in->host_ipc), indent,
                  yes_no(in->shm), indent, yes_no(in->ipc_lock), indent,
                  yes_no(in->tolerations), indent, yes_no(in->env));
    /* Printed when on: policies written before it read back the same. */
    if (in->zone_affinity)
        strbuf_printf(sb, "%szoneAffinity: true\n", indent);
}

/*
 * An env list at indent: a row's own variables (those a profile added are
 * the profile's to print), or a profile's with their rows.
 */
static void
put_env(struct strbuf *sb, const struct env_var *env, size_t n,
        const char *indent, bool profile)
{
    size_t own = 0;

    for (size_t i = 0; i < n; i++)
        own += env[i].profile == NULL;
    if (own == 0) {
        strbuf_printf(sb, "%senv: []\n", indent);
        return;
    }
    strbuf_printf(sb, "%senv:\n", indent);
    for (size_t i = 0; i < n; i++) {
        if (env[i].profile)
            continue;
        strbuf_printf(sb, "%s  - name: ", indent);
        put_string(sb, env[i].name);
        strbuf_printf(sb, "\n%s    value: ", indent);
        /*
         * Values are always quoted: "1" must stay a string. Escaped, as
         * fuzz_policy found: a value with a '"' printed unreadable YAML.
         */
        put_quoted(sb, env[i].value);
        if (profile)
            strbuf_printf(sb, "\n%s    rows: %s", indent,
                          env_rows_name(env[i].rows));
        strbuf_printf(sb, "\n%s    versions: ", indent);
        put_quoted(sb, env[i].versions);
        strbuf_printf(sb, "\n%s    source: ", indent);
        put_quoted(sb, env[i].source);
        strbuf_printf(sb, "\n%s    why: ", indent);
        put_string(sb, env[i].why);
        strbuf_puts(sb, "\n");
    }
}

static void
put_type(struct strbuf *sb, const struct instance_type *t)
{
    strbuf_puts(sb, "  - name: ");
    put_string(sb, t->name);
    strbuf_puts(sb, "\n    accelerator: ");
    put_string(sb, t->accelerator);
    strbuf_puts(sb, "\n    resource: ");
    put_string(sb, t->resource);
    strbuf_printf(sb, "\n    count: %d\n    memory: %s\n", t->count, t->memory);
    strbuf_printf(sb, "    interconnect: %s\n    nvlinkGBps: %d\n",
                  link_name(t->link), t->nvlink_gbps);
    strbuf_printf(sb, "    efa: %d\n", t->efa);
    /* Only what differs from the default, so AWS rows print as before. */
    if (t->nic_resource) {
        strbuf_puts(sb, "    nicResource: ");
        put_string(sb, t->nic_resource);
        strbuf_puts(sb, "\n");
    }
    if (t->nic_annotation) {
        strbuf_puts(sb, "    nicAnnotation: ");
        put_string(sb, t->nic_annotation);
        strbuf_puts(sb, "\n");
    }
    if (t->nics_need_evidence)
        strbuf_puts(sb, "    nicsNeedEvidence: true\n");
    if (t->gke_gpudirect != GPUDIRECT_NONE)
        strbuf_printf(sb, "    gkeGPUDirect: %s\n",
                      gpudirect_name(t->gke_gpudirect));
    strbuf_printf(sb, "    gpuDirectRDMA: %s\n", yes_no(t->gpudirect_rdma));
    strbuf_printf(sb, "    hostMemory: %s\n    shm: %s\n", t->host_memory,
                  t->shm);
    put_env(sb, t->env, t->n_env, "    ", false);
}

static void
put_product(struct strbuf *sb, const struct gpu_product *p)
{
    strbuf_puts(sb, "  - name: ");
    put_string(sb, p->name);
    strbuf_puts(sb, "\n    accelerator: ");
    put_string(sb, p->accelerator);
    strbuf_puts(sb, "\n");
    if (p->memory)
        strbuf_printf(sb, "    memory: %s\n", p->memory);
    strbuf_printf(sb, "    nvlinkGBps: %d\n    labels:\n", p->nvlink_gbps);
    for (size_t i = 0; i < p->n_labels; i++) {
        strbuf_puts(sb, "      - ");
        put_string(sb, p->labels[i]);
        strbuf_puts(sb, "\n");
    }
    strbuf_puts(sb, p->n_links ? "    links:\n" : "    links: []\n");
    for (size_t i = 0; i < p->n_links; i++) {
        const struct product_link *l = &p->links[i];

        if (l->min == l->max)
            strbuf_printf(sb, "      - gpus: %d\n", l->min);
        else if (l->max == PRODUCT_GPUS_MAX)
            strbuf_printf(sb, "      - gpus: %d+\n", l->min);
        else
            strbuf_printf(sb, "      - gpus: %d-%d\n", l->min, l->max);
        strbuf_printf(sb, "        interconnect: %s\n", link_name(l->link));
    }
}

/* A scheme's list of keys, as a flow list; nothing when it is empty. */
static void
put_keys(struct strbuf *sb, const char *key, char *const *keys, size_t n)
{
    if (n == 0)
        return;
    strbuf_printf(sb, "    %s: [", key);
    for (size_t i = 0; i < n; i++) {
        strbuf_puts(sb, i ? ", " : "");
        put_string(sb, keys[i]);
    }
    strbuf_puts(sb, "]\n");
}

static void
put_scheme(struct strbuf *sb, const struct label_scheme *l)
{
    strbuf_puts(sb, "  - name: ");
    put_string(sb, l->name);
    strbuf_puts(sb, "\n    source: ");
    put_string(sb, l->source);
    strbuf_puts(sb, "\n");
    put_keys(sb, "instanceType", l->instance_type, l->n_instance_type);
    put_keys(sb, "gpuProduct", l->gpu_product, l->n_gpu_product);
    if (l->attr_prefix) {
        strbuf_puts(sb, "    instanceLabelPrefix: ");
        put_string(sb, l->attr_prefix);
        strbuf_puts(sb, "\n");
    }
}

/* A gkeNetworks list under key at indent; nothing when it is empty and
 * need is false (a policy without one prints as before). */
static void
put_gke_networks(struct strbuf *sb, const struct gke_networks *g, size_t n,
                 const char *indent, bool need)
{
    if (n == 0) {
        if (need)
            strbuf_printf(sb, "%sgkeNetworks: []\n", indent);
        return;
    }
    strbuf_printf(sb, "%sgkeNetworks:\n", indent);
    for (size_t i = 0; i < n; i++) {
        strbuf_printf(sb, "%s  - instanceType: ", indent);
        put_string(sb, g[i].instance_type);
        strbuf_printf(sb, "\n%s    interfaces:\n", indent);
        for (size_t j = 0; j < g[i].n_ifs; j++) {
            strbuf_printf(sb, "%s      - {interfaceName: ", indent);
            put_string(sb, g[i].ifs[j].name);
            strbuf_puts(sb, ", network: ");
            put_string(sb, g[i].ifs[j].network);
            strbuf_puts(sb, "}\n");
        }
    }
}

char *
snapshot_print(const struct snapshot *s)
{
    struct strbuf sb = {0};

    strbuf_printf(&sb, "# topogate policy, loaded from %s\n", s->origin);
    /* The whole merged table follows: it must not merge again. */
    strbuf_puts(&sb, "base: empty\n");
    strbuf_printf(&sb, "mode: %s\n", mode_name(s->mode));
    strbuf_printf(&sb, "unknownInstanceType: %s\n",
                  s->unknown == UNKNOWN_DENY ? "deny" : "warn");
    strbuf_printf(&sb, "optOut: %s\n", yes_no(s->allow_opt_out));
    strbuf_printf(&sb, "overrideUserValues: %s\n", yes_no(s->override_user));
    strbuf_puts(&sb, "inject:\n");
    put_inject(&sb, &s->inject, "  ");
    strbuf_puts(&sb, s->n_namespaces ? "namespaces:\n" : "namespaces: []\n");
    for (size_t i = 0; i < s->n_namespaces; i++) {
        strbuf_puts(&sb, "  - name: ");
        put_string(&sb, s->namespaces[i].name);
        strbuf_printf(&sb, "\n    mode: %s\n    optOut: %s\n",
                      mode_name(s->namespaces[i].mode),
                      yes_no(s->namespaces[i].allow_opt_out));
        if (s->namespaces[i].instance_type) {
            strbuf_puts(&sb, "    instanceType: ");
            put_string(&sb, s->namespaces[i].instance_type);
            strbuf_puts(&sb, "\n");
        }
        strbuf_puts(&sb, "    inject:\n");
        put_inject(&sb, &s->namespaces[i].inject, "      ");
        if (s->namespaces[i].gke_networks_set)
            put_gke_networks(&sb, s->namespaces[i].gke_networks,
                             s->namespaces[i].n_gke_networks, "    ", true);
    }
    put_gke_networks(&sb, s->gke_networks, s->n_gke_networks, "", false);
    /* Only the switches off the default (warn): policies written before
     * frameworks existed print as they did. */
    for (int i = 1, first = 1; i < FRAMEWORK_N; i++)
        if (s->frameworks[i] != FRAMEWORK_WARN) {
            strbuf_printf(&sb, "%s  %s: %s\n", first ? "frameworks:\n" : "",
                          framework_key((enum framework)i),
                          framework_level_name(s->frameworks[i]));
            first = 0;
        }
    strbuf_printf(&sb, "jobs:\n  repack: %s\n", yes_no(s->repack));
    strbuf_puts(&sb, s->n_runtime_types ? "  runtimes:\n" : "  runtimes: []\n");
    for (size_t i = 0; i < s->n_runtime_types; i++) {
        strbuf_puts(&sb, "    - name: ");
        put_string(&sb, s->runtime_types[i].runtime);
        strbuf_puts(&sb, "\n      instanceType: ");
        put_string(&sb, s->runtime_types[i].instance_type);
        strbuf_puts(&sb, "\n");
    }
    strbuf_puts(&sb, "envProfile: ");
    put_string(&sb, s->env_profile ? s->env_profile->name : "none");
    strbuf_puts(&sb, "\n");
    strbuf_puts(&sb,
                s->n_env_profiles ? "envProfiles:\n" : "envProfiles: []\n");
    for (size_t i = 0; i < s->n_env_profiles; i++) {
        strbuf_puts(&sb, "  - name: ");
        put_string(&sb, s->env_profiles[i].name);
        strbuf_puts(&sb, "\n");
        put_env(&sb, s->env_profiles[i].env, s->env_profiles[i].n_env,
                "    ", true);
    }
    /* An empty table must still read back as a list. */
    strbuf_puts(&sb, s->n_types ? "instanceTypes:\n" : "instanceTypes: []\n");
    for (size_t i = 0; i < s->n_types; i++)
        put_type(&sb, &s->types[i]);
    /* Left out when empty: a policy without the key prints as before. */
    if (s->n_products)
        strbuf_puts(&sb, "gpuProducts:\n");
    for (size_t i = 0; i < s->n_products; i++)
        put_product(&sb, &s->products[i]);
    if (s->n_schemes)
        strbuf_puts(&sb, "nodeLabels:\n");
    for (size_t i = 0; i < s->n_schemes; i++)
        put_scheme(&sb, &s->schemes[i]);
    return strbuf_take(&sb);
}
