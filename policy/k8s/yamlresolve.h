/*
 * yamlresolve.h - what a YAML scalar is, by the rules of the decoder
 * kubectl reads manifests with.
 *
 * kubectl reads a manifest with k8s.io/cli-runtime's StreamVisitor
 * (pkg/resource/visitor.go: yaml.NewYAMLOrJSONDecoder, into a
 * runtime.RawExtension), that is apimachinery's YAMLToJSONDecoder
 * (pkg/util/yaml/decoder.go), which calls sigs.k8s.io/yaml.Unmarshal.
 * kubernetes/kubectl's go.mod (master, July 2026) pins sigs.k8s.io/yaml
 * v1.6.0, whose yaml.go imports go.yaml.in/yaml/v2 (v2.4.4): go-yaml v2,
 * YAML 1.1 rules. A RawExtension is a json.Unmarshaler, so no Go type
 * steers the reading (convertToJSONableObject() drops its jsonTarget):
 * each scalar is what go-yaml v2's resolve() (resolve.go) makes of it.
 *
 * - A quoted scalar without a tag is a string; so is one tagged "!" or
 *   with a tag go-yaml does not resolve ("!foo"): resolvableTag().
 * - A plain one: null for "", "~", "null", "Null", "NULL"; a boolean for
 *   y Y yes Yes YES true True TRUE on On ON and n N no No NO false False
 *   FALSE off Off OFF; an integer as Go's strconv.ParseInt(s, 0, 64)
 *   reads it once its '_' are dropped (0x, 0o, 0b, a leading 0 octal,
 *   a sign), else an unsigned one (ParseUint), else a float where
 *   resolve()'s yamlStyleFloat pattern matches, or one beginning with '.'
 *   (".5", ".inf", ".nan"); a date such as 2015-01-01 stays text (decode.go
 *   keeps a timestamp as its string when the target is interface{});
 *   anything else is a string. The first character picks the rules
 *   tried, as resolve()'s resolveTable does.
 * - An explicit tag (!!str, !!int, !!float, !!bool, !!null, !!timestamp)
 *   must fit what the text resolves to, else go-yaml fails ("cannot
 *   decode !!str `x` as a !!int"); !!float takes an integer; !!str takes
 *   anything; !!binary is base64, decoded.
 */
#ifndef TOPOGATE_YAMLRESOLVE_H
#define TOPOGATE_YAMLRESOLVE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/yamltree.h"

enum yscalar_kind {
    YSCALAR_STRING,
    YSCALAR_NULL,
    YSCALAR_BOOL,
    YSCALAR_INT,   /* int64: .i */
    YSCALAR_UINT,  /* above int64, up to uint64: .u */
    YSCALAR_FLOAT, /* .f, maybe infinite or NaN */
};

struct yscalar {
    enum yscalar_kind kind;
    bool b;
    long long i;
    unsigned long long u;
    double f;
    /* A string's text: the node's, or (!!binary) an owned copy; free it
     * with yscalar_free(). */
    const char *text;
    char *owned;
    /* The rule that made it so, for messages: "!!bool", "!!int"... */
    const char *why;
};

/*
 * Resolves scalar node n into *out. 0, or -1 with msg filled where go-yaml
 * would fail the document (a tag the text does not fit, !!binary that
 * is not base64) or out of memory.
 */
int yscalar_resolve(const struct ynode *n, struct yscalar *out, char *msg,
                    size_t size);

void yscalar_free(struct yscalar *s);

#endif
