/*
 * quantity.h - Kubernetes resource quantities ("64Gi", "500m", "1e3").
 */
#ifndef TOPOGATE_QUANTITY_H
#define TOPOGATE_QUANTITY_H

#include <cjson/cJSON.h>

/* The value of a quantity string. 0, or -1 when it is not one. */
int quantity_parse(const char *s, double *out);

/* A quantity as JSON: a number, or a string (white space around it
 * trimmed, as the apiserver does). 0 or -1. */
int quantity_json(const cJSON *v, double *out);

/*
 * A count of devices (GPUs, EFA): a whole, non-negative quantity below
 * 1,000,000. 0, or -1 for anything else ("1.5", "$GPUS", true).
 */
int quantity_count(const cJSON *v, long *out);

/*
 * Why v is not a count, as a phrase after its name ("is negative", "is
 * not a whole number"), or NULL when quantity_count() reads it.
 */
const char *quantity_count_problem(const cJSON *v);

#endif
