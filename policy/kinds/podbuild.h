/*
 * podbuild.h - building the Pod a controller makes from a template, for
 * expand.c and its per-kind files. Every function returns 0, or -1 when
 * memory runs out.
 */
#ifndef TOPOGATE_PODBUILD_H
#define TOPOGATE_PODBUILD_H

#include <cjson/cJSON.h>

#include "policy/kinds/expand.h"

/*
 * A new Pod from a PodTemplateSpec (metadata + spec, either may be
 * missing) in namespace ns, named after owner. NULL out of memory.
 */
cJSON *podbuild_from_template(const cJSON *template, const char *ns,
                              const char *owner);

/* Sets metadata.labels[key] (metadata.annotations[key]) to value. */
int podbuild_label(cJSON *pod, const char *key, const char *value);
int podbuild_annotation(cJSON *pod, const char *key, const char *value);

/* Appends name=value to the container's env unless it is already set. */
int podbuild_env(cJSON *container, const char *name, const char *value);

/* The same, for every container of the pod's spec.containers. */
int podbuild_env_all(cJSON *pod, const char *name, const char *value);

/* The container of that name in spec.containers, or NULL. */
cJSON *podbuild_container(cJSON *pod, const char *name);

/* Appends a group; takes pod (freed on failure). */
int podbuild_group(struct expansion *e, const char *role, long replicas,
                   cJSON *pod);

/* A group of replicas pods from template, each labelled with the
 * key/value pairs of labels (NULL-terminated; may be NULL). */
int podbuild_group_with(struct expansion *e, const char *role, long replicas,
                        const cJSON *template, const char *const *labels);

/* An object member, created empty when missing; NULL out of memory. */
cJSON *podbuild_object(cJSON *parent, const char *key);

/* A number member as a long; fallback when missing or not a whole number. */
long podbuild_long(const cJSON *obj, const char *key, long fallback);

/* An IntOrString member: a positive number, or 0 ("auto", missing). */
long podbuild_count(const cJSON *obj, const char *key);

/* Replaces e->note with a printf-style text. */
int podbuild_note(struct expansion *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
