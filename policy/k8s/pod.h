/*
 * pod.h - reading a Pod (a borrowed cJSON view) the way the apiserver does.
 *
 * Everything returned is borrowed from the pod and lives as long as it.
 */
#ifndef TOPOGATE_POD_H
#define TOPOGATE_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define RESOURCE_GPU "nvidia.com/gpu"
#define RESOURCE_EFA "vpc.amazonaws.com/efa"

enum count_status { COUNT_ABSENT, COUNT_OK, COUNT_INVALID };

/*
 * A container's count of an extended resource: limits, else requests
 * (the apiserver requires them equal). A null (YAML "nvidia.com/gpu:"
 * with nothing after it) reads as absent, so a null limit falls back to
 * the request. COUNT_INVALID when the value is not a whole number; *out
 * is then 0.
 */
enum count_status pod_count(const cJSON *container, const char *resource,
                            long *out);

/* The raw value behind pod_count(), for messages. NULL when absent. */
const cJSON *pod_resource(const cJSON *container, const char *resource);

/*
 * What pod_count() and pod_resource() say of one resource of a container,
 * and where it is a null, from one look at each of its maps: for a caller
 * that needs more than one of them.
 */
struct pod_quantity {
    enum count_status status; /* pod_count() */
    long count;               /* its *out */
    const cJSON *value;       /* pod_resource() */
    const char *null_map;     /* "limits" when a null there, else
                                 "requests" when one there, else NULL */
};

struct pod_quantity pod_quantity(const cJSON *container, const char *resource);

/* A container's resource maps, for pod_quantity_in(): NULL where absent. */
struct pod_maps {
    const cJSON *limits, *requests;
};

struct pod_maps pod_maps(const cJSON *container);

/* pod_quantity() of a container whose maps are in hand: several
 * resources of one container without looking its maps up for each. */
struct pod_quantity pod_quantity_in(const struct pod_maps *maps,
                                    const char *resource);

/* A native sidecar: an init container with restartPolicy Always. */
bool pod_is_sidecar(const cJSON *init_container);

/*
 * The env entry of that name in a container, or NULL. Its "value" may be
 * missing (valueFrom).
 */
const cJSON *pod_env(const cJSON *container, const char *name);

/* An env entry's literal value, or NULL (absent, or valueFrom). */
const char *pod_env_value(const cJSON *container, const char *name);

/*
 * found[k] = pod_env(container, names[k]) for each of the n names, in one
 * pass over the env: a pod's env can hold hundreds of entries, and the
 * mutation asks for a dozen names in each GPU container. Borrowed.
 */
void pod_env_all(const cJSON *container, const char *const *names, size_t n,
                 const cJSON **found);

/*
 * A count as env values and command lines write one ("8"): a whole
 * number from 1 to 999,999 in decimal and nothing else, or -1 (NULL,
 * "auto", "1:4", "8x").
 */
long pod_text_count(const char *s);

/* metadata.labels[key] / metadata.annotations[key] as a string, or NULL. */
const char *pod_label(const cJSON *pod, const char *key);
const char *pod_annotation(const cJSON *pod, const char *key);

/*
 * Whether a required podAffinity term of the pod spec has a topologyKey
 * for which is_key() is true: its pods then land only on nodes that
 * carry that label, sharing its value.
 */
bool pod_affinity_on(const cJSON *spec, bool (*is_key)(const char *key));

/* A member of an object (NULL obj or a non-object: NULL). */
const cJSON *json_get(const cJSON *obj, const char *key);

/* {key: value} and [value], for patches; each takes value (deleted when
 * it cannot be placed) and gives NULL when out of memory or value is. */
cJSON *json_wrap(const char *key, cJSON *value);
cJSON *json_one_item(cJSON *value);

/*
 * A node's JSON text, compact, as a malloc()ed string (NULL when out of
 * memory), also for a node of a tree read into an arena: free() it.
 */
char *json_text(const cJSON *node);

/* A string member of an object, or NULL. */
const char *json_string(const cJSON *obj, const char *key);

/* metadata.name, else metadata.generateName, else "". */
const char *pod_name(const cJSON *pod);

#endif
