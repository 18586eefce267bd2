/* yamltree.c - libyaml events to a tree of struct ynode. */
#include "base/yamltree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/utf8.h"

/* Nesting beyond this is an attack or a mistake, not a manifest. */
#define YTREE_MAX_DEPTH 256

struct anchor {
    char *name;
    struct ynode *node;
};

struct builder {
    struct ytree *tree;
    struct anchor *anchors;
    size_t n_anchors;
    struct ynode *stack[YTREE_MAX_DEPTH];
    size_t depth;
};

void
ynode_error(struct load_error *err, const struct ynode *at, const char *fmt,
            ...)
{
    va_list ap;

    err->line = at ? at->line : 0;
    err->column = at ? at->column : 0;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
}

static struct ynode *
node_new(struct ytree *t, enum ynode_kind kind, yaml_mark_t mark)
{
    struct ynode *n;

    if (t->n_all == t->cap_all) {
        size_t cap = t->cap_all ? t->cap_all * 2 : 64;
        struct ynode **all = realloc(t->all, cap * sizeof(*all));
        if (all == NULL)
            return NULL;
        t->all = all;
        t->cap_all = cap;
    }
    if ((n = calloc(1, sizeof(*n))) == NULL)
        return NULL;
    n->kind = kind;
    n->line = (int)mark.line + 1;
    n->column = (int)mark.column + 1;
    t->all[t->n_all++] = n;
    return n;
}

static int
push_item(struct ynode ***items_p, size_t *n_p, struct ynode *item)
{
    /* Grow by doubling: capacity is the next power of two above n. */
    size_t n = *n_p;

    if ((n & (n - 1)) == 0) {
        struct ynode **items =
            realloc(*items_p, (n ? n * 2 : 4) * sizeof(*items));
        if (items == NULL)
            return -1;
        *items_p = items;
    }
    (*items_p)[n] = item;
    *n_p = n + 1;
    return 0;
}

/* Attaches a finished node to its parent, or makes it a document root. */
static int
attach(struct builder *b, struct ynode *n)
{
    if (b->depth == 0)
        return push_item(&b->tree->docs, &b->tree->n_docs, n);
    struct ynode *parent = b->stack[b->depth - 1];
    return push_item(&parent->items, &parent->n_items, n);
}

static int
remember_anchor(struct builder *b, const yaml_char_t *name, struct ynode *n)
{
    struct anchor *a;

    if (name == NULL)
        return 0;
    a = realloc(b->anchors, (b->n_anchors + 1) * sizeof(*a));
    if (a == NULL)
        return -1;
    b->anchors = a;
    if ((a[b->n_anchors].name = strdup((const char *)name)) == NULL)
        return -1;
    a[b->n_anchors++].node = n;
    return 0;
}

static struct ynode *
find_anchor(struct builder *b, const yaml_char_t *name)
{
    /* The latest definition wins, as YAML says. */
    for (size_t i = b->n_anchors; i-- > 0;)
        if (strcmp(b->anchors[i].name, (const char *)name) == 0)
            return b->anchors[i].node;
    return NULL;
}

static void
set_error_at(struct load_error *err, yaml_mark_t mark, const char *msg)
{
    err->line = (int)mark.line + 1;
    err->column = (int)mark.column + 1;
    snprintf(err->message, sizeof(err->message), "%s", msg);
}

/* Handles one event; returns 1 at stream end, 0 to go on, -1 on error. */
static int
on_event(struct builder *b, yaml_event_t *ev, struct load_error *err)
{
    struct ynode *n;

    switch (ev->type) {
    case YAML_STREAM_END_EVENT:
        return 1;
    case YAML_SCALAR_EVENT:
        if ((n = node_new(b->tree, YNODE_SCALAR, ev->start_mark)) == NULL)
            goto oom;
        n->scalar = malloc(ev->data.scalar.length + 1);
        if (n->scalar == NULL)
            goto oom;
        memcpy(n->scalar, ev->data.scalar.value, ev->data.scalar.length);
        n->scalar[ev->data.scalar.length] = '\0';
        /* libyaml's "\0" escape: kept, as the byte that stands for it. */
        for (char *z = memchr(n->scalar, '\0', ev->data.scalar.length); z;
             z = memchr(z, '\0', (size_t)(n->scalar +
                                           ev->data.scalar.length - z)))
            *z = (char)UTF8_NUL_STANDIN;
        if (ev->data.scalar.tag != NULL &&
            (n->tag = strdup((const char *)ev->data.scalar.tag)) == NULL)
            goto oom;
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                   n->tag == NULL;
        if (remember_anchor(b, ev->data.scalar.anchor, n) < 0 ||
            attach(b, n) < 0)
            goto oom;
        return 0;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (b->depth == YTREE_MAX_DEPTH) {
            set_error_at(err, ev->start_mark, "nesting too deep");
            return -1;
        }
        n = node_new(b->tree,
                     ev->type == YAML_SEQUENCE_START_EVENT ? YNODE_SEQ
                                                           : YNODE_MAP,
                     ev->start_mark);
        if (n == NULL)
            goto oom;
        if (remember_anchor(b, ev->type == YAML_SEQUENCE_START_EVENT
                                   ? ev->data.sequence_start.anchor
                                   : ev->data.mapping_start.anchor,
                            n) < 0 ||
            attach(b, n) < 0)
            goto oom;
        b->stack[b->depth++] = n;
        return 0;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        b->depth--;
        return 0;
    case YAML_ALIAS_EVENT:
        if ((n = find_anchor(b, ev->data.alias.anchor)) == NULL) {
            set_error_at(err, ev->start_mark, "unknown alias");
            return -1;
        }
        /* An alias inside the node it names would make the tree a loop
         * (go-yaml: "anchor 'a' value contains itself"). */
        for (size_t i = 0; i < b->depth; i++)
            if (b->stack[i] == n) {
                set_error_at(err, ev->start_mark,
                             "an alias inside the node it names");
                return -1;
            }
        if (attach(b, n) < 0)
            goto oom;
        return 0;
    default:
        return 0;
    }
oom:
    set_error_at(err, ev->start_mark, "out of memory");
    return -1;
}

struct ytree *
ytree_parse(const char *bytes, size_t len, struct load_error *err)
{
    struct builder b = {0};
    yaml_parser_t parser;
    yaml_event_t ev;
    int done = 0;

    memset(err, 0, sizeof(*err));
    if ((b.tree = calloc(1, sizeof(*b.tree))) == NULL) {
        snprintf(err->message, sizeof(err->message), "out of memory");
        return NULL;
    }
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err->message, sizeof(err->message), "out of memory");
        free(b.tree);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
    while (done == 0) {
        if (!yaml_parser_parse(&parser, &ev)) {
            set_error_at(err, parser.problem_mark,
                         parser.problem ? parser.problem : "invalid YAML");
            done = -1;
            break;
        }
        done = on_event(&b, &ev, err);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    for (size_t i = 0; i < b.n_anchors; i++)
        free(b.anchors[i].name);
    free(b.anchors);
    if (done < 0) {
        ytree_free(b.tree);
        return NULL;
    }
    return b.tree;
}

void
ytree_free(struct ytree *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n_all; i++) {
        free(t->all[i]->scalar);
        free(t->all[i]->tag);
        free(t->all[i]->items);
        free(t->all[i]);
    }
    free(t->all);
    free(t->docs);
    free(t);
}

const struct ynode *
ynode_get(const struct ynode *map, const char *key)
{
    if (map == NULL || map->kind != YNODE_MAP)
        return NULL;
    for (size_t i = 0; i + 1 < map->n_items; i += 2) {
        const struct ynode *k = map->items[i];
        if (k->kind == YNODE_SCALAR && strcmp(k->scalar, key) == 0)
            return map->items[i + 1];
    }
    return NULL;
}
