/*
 * review.c - AdmissionReview admission.k8s.io/v1 in, the same out.
 *
 * decode: check the envelope the apiserver always sends, and nothing of the
 * object (that is the engine's business and never a 400). decide. encode:
 * response.uid echoes request.uid; a patch only when there are ops.
 */
#include "webhook/review.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "webhook/jsonpatch.h"
#include "base/base64.h"
#include "json/jsonread.h"
#include "base/jsonout.h"
#include "policy/decide.h"
#include "policy/k8s/pod.h"
#include "base/strbuf.h"
#include "policy/view/view.h"

#define REVIEW_API_VERSION "admission.k8s.io/v1"
#define REVIEW_KIND "AdmissionReview"

static const char *
status_reason(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 503:
        return "ServiceUnavailable";
    default:
        return "InternalError";
    }
}

/*
 * Written as text, the bytes cJSON would print for the same Status, with
 * encoding/json's newline; a message holding bytes that are not UTF-8 (a
 * name cut in the middle of a character) still makes a JSON body.
 */
char *
review_error_body(int code, const char *message)
{
    struct jsonout o = {0};

    jsonout_lit(&o, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":"
                    "{},\"status\":\"Failure\",\"message\":");
    jsonout_string(&o, message);
    jsonout_lit(&o, ",\"reason\":");
    jsonout_string(&o, status_reason(code));
    jsonout_lit(&o, ",\"code\":");
    jsonout_int(&o, code);
    jsonout_lit(&o, "}\n");
    return jsonout_take(&o, NULL);
}

/* src cut to fit, as snprintf() would; a review copies four of them. */
static void
copy_field(char *dst, size_t size, const char *src)
{
    size_t len = 0;

    text_append(dst, size, &len, src != NULL ? src : "");
}

/* The envelope: fills *req or writes why not into msg. 0 or -1. */
static int
decode(const cJSON *root, struct admission *req, char *msg, size_t size)
{
    const char *version = json_string(root, "apiVersion");
    const char *kind = json_string(root, "kind");
    const cJSON *r = json_get(root, "request");
    const cJSON *k = json_get(r, "kind");
    const cJSON *dry = json_get(r, "dryRun");
    const cJSON *ns = json_get(r, "namespace");

    memset(req, 0, sizeof(*req));
    if (!cJSON_IsObject(root))
        return snprintf(msg, size, "the body is not a JSON object"), -1;
    if (version == NULL)
        return snprintf(
                   msg, size,
                   "missing apiVersion: topogate speaks " REVIEW_API_VERSION),
               -1;
    if (strcmp(version, REVIEW_API_VERSION) != 0)
        return snprintf(msg, size,
                        "unsupported apiVersion '%s': topogate "
                        "speaks " REVIEW_API_VERSION " only",
                        version ? version : ""),
               -1;
    if (kind == NULL || strcmp(kind, REVIEW_KIND) != 0)
        return snprintf(msg, size, "kind '%s' is not " REVIEW_KIND,
                        kind ? kind : ""),
               -1;
    if (!cJSON_IsObject(r))
        return snprintf(msg, size, "'request' is missing or not an object"), -1;
    req->uid = json_string(r, "uid");
    if (req->uid == NULL || req->uid[0] == '\0')
        return snprintf(msg, size, "'request.uid' is missing or not a string"),
               -1;
    req->kind = json_string(k, "kind");
    req->group = json_string(k, "group");
    if (req->kind == NULL || req->group == NULL)
        return snprintf(msg, size,
                        "'request.kind' needs string 'group' and 'kind'"),
               -1;
    req->operation = json_string(r, "operation");
    if (req->operation == NULL)
        return snprintf(msg, size, "'request.operation' is missing"), -1;
    if (ns && !cJSON_IsString(ns))
        return snprintf(msg, size, "'request.namespace' is not a string"), -1;
    req->namespace = ns ? ns->valuestring : "";
    if (dry && !cJSON_IsBool(dry))
        return snprintf(msg, size, "'request.dryRun' is not a boolean"), -1;
    req->dry_run = cJSON_IsTrue(dry);
    req->object = json_get(r, "object");
    req->old_object = json_get(r, "oldObject");
    /* DELETE sends a null object; CREATE and UPDATE always send one. */
    if ((strcmp(req->operation, "CREATE") == 0 ||
         strcmp(req->operation, "UPDATE") == 0) &&
        !cJSON_IsObject(req->object))
        return snprintf(msg, size,
                        "'request.object' is missing or not an "
                        "object"),
               -1;
    return 0;
}

/* The patch text, then its base64 in place in the response. */
static void
add_patch(struct jsonout *o, const struct decision *d)
{
    struct jsonout patch = {0};

    jsonpatch_print(&patch, d->ops, d->n_ops);
    if (patch.failed) {
        o->failed = true;
        return;
    }
    jsonout_lit(o, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
    base64_put(o, patch.buf, patch.len);
    jsonout_lit(o, "\"");
    jsonout_free(&patch);
}

/*
 * Reported for every governed pod: what enforce makes of it (whatever the
 * mode, so an audit-mode log reads as the enforce-mode future), the mode,
 * and why. The apiserver prefixes each key with the webhook's name.
 */
static void
add_audit(struct jsonout *o, const struct decision *d)
{
    jsonout_lit(o, ",\"auditAnnotations\":{\"decision\":");
    jsonout_string(o, verdict_name(d->judged));
    if (d->mode != NULL && d->mode[0] != '\0') {
        jsonout_lit(o, ",\"mode\":");
        jsonout_string(o, d->mode);
    }
    jsonout_lit(o, ",\"reason\":");
    jsonout_string(o, d->reason);
    if (d->would_patch) {
        /* Audit mode: the patch enforce and warn would make, values and
         * all (README "Modes"). */
        jsonout_lit(o, ",\"patch\":");
        jsonout_string(o, d->would_patch);
    }
    jsonout_lit(o, "}");
}

/*
 * The response, written straight as text: the same bytes as a cJSON tree
 * of it printed compact, with encoding/json's newline at the end.
 */
static char *
encode(const struct admission *req, const struct decision *d, size_t *len)
{
    struct jsonout o = {0};

    jsonout_lit(&o, "{\"apiVersion\":\"" REVIEW_API_VERSION
                    "\",\"kind\":\"" REVIEW_KIND "\",\"response\":{\"uid\":");
    jsonout_string(&o, req->uid);
    if (d->allowed) {
        jsonout_lit(&o, ",\"allowed\":true");
    } else {
        jsonout_lit(&o, ",\"allowed\":false,\"status\":{\"status\":"
                        "\"Failure\",\"message\":");
        jsonout_string(&o, d->message);
        jsonout_lit(&o, ",\"reason\":");
        jsonout_string(&o, status_reason(d->code));
        jsonout_lit(&o, ",\"code\":");
        jsonout_int(&o, d->code);
        jsonout_lit(&o, "}");
    }
    if (d->n_ops > 0)
        add_patch(&o, d);
    if (d->n_warnings > 0) {
        jsonout_lit(&o, ",\"warnings\":[");
        for (size_t i = 0; i < d->n_warnings; i++) {
            if (i > 0)
                jsonout_lit(&o, ",");
            jsonout_string(&o, d->warnings[i]);
        }
        jsonout_lit(&o, "]");
    }
    if (d->verdict != VERDICT_IGNORE)
        add_audit(&o, d);
    jsonout_lit(&o, "}}\n");
    return jsonout_take(&o, len);
}

static int
fail(struct review_result *out, int code, const char *message)
{
    out->http_status = code;
    out->verdict = VERDICT_IGNORE;
    if ((out->body = review_error_body(code, message)) == NULL)
        return -1;
    out->body_len = strlen(out->body);
    return 0;
}

static void
remember(struct review_result *out, const struct admission *req,
         const struct decision *d)
{
    copy_field(out->uid, sizeof(out->uid), req->uid);
    copy_field(out->namespace_, sizeof(out->namespace_), req->namespace);
    copy_field(out->name, sizeof(out->name), pod_name(req->object));
    copy_field(out->instance_type, sizeof(out->instance_type),
               d->instance_type);
    out->verdict = d->verdict;
    out->judged = d->judged;
    out->mode = d->mode && d->mode[0] ? d->mode : NULL;
    out->known_by = d->known_by;
    if (d->would_patch)
        out->would_patch = strdup(d->would_patch);
    out->n_ops = d->n_ops;
}

/*
 * The body is read into arena from `body`, or where it is when `writable`
 * is set. The tree is the arena's (json/jsonread.h): read, never changed,
 * dropped by the reset at the end. The decision is built apart from it
 * with malloc() and freed by decision_free().
 */
static int
respond(struct jsonarena *arena, const struct snapshot *s,
        const struct view *view, const char *body, char *writable, size_t len,
        struct review_result *out)
{
    struct admission req;
    struct decision d;
    enum jsonread_status status;
    char msg[256];
    const cJSON *root;
    int rc;

    memset(out, 0, sizeof(*out));
    /*
     * What cJSON would echo as bytes that are not JSON is refused by the
     * parse; \u0000 is read whole, not cut (jsonread.h).
     */
    status = writable != NULL
                 ? jsonread_in_place(arena, writable, len, &root, msg,
                                     sizeof(msg))
                 : jsonread(arena, body, len, &root, msg, sizeof(msg));
    if (status != JSONREAD_OK) {
        rc = fail(out, status == JSONREAD_NO_MEMORY ? 500 : 400,
                  status == JSONREAD_NO_MEMORY ? "out of memory" : msg);
        goto dropped;
    }
    decision_init(&d);
    if (decode(root, &req, msg, sizeof(msg)) < 0) {
        rc = fail(out, 400, msg);
        goto done;
    }
    req.view = view;
    req.runtimes = view_runtimes(view);
    if (decide(s, &req, &d) < 0) {
        rc = fail(out, 500, "out of memory");
        goto done;
    }
    remember(out, &req, &d);
    out->http_status = 200;
    if ((out->body = encode(&req, &d, &out->body_len)) == NULL) {
        rc = fail(out, 500, "out of memory");
        goto done;
    }
    rc = 0;
done:
    decision_free(&d);
dropped:
    jsonarena_reset(arena);
    return rc;
}

int
review_respond(const struct snapshot *s, const struct view *view,
               const char *body, size_t len, struct review_result *out)
{
    struct jsonarena *arena = jsonarena_new();
    int rc;

    if (arena == NULL) {
        memset(out, 0, sizeof(*out));
        return fail(out, 500, "out of memory");
    }
    rc = respond(arena, s, view, body, NULL, len, out);
    jsonarena_free(arena);
    return rc;
}

int
review_respond_in_place(struct jsonarena *arena, const struct snapshot *s,
                        const struct view *view, char *body, size_t len,
                        struct review_result *out)
{
    return respond(arena, s, view, body, body, len, out);
}

void
review_result_free(struct review_result *r)
{
    if (r == NULL)
        return;
    free(r->body);
    r->body = NULL;
    free(r->would_patch);
    r->would_patch = NULL;
}
