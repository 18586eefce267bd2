/*
 * repack.h - rewriting a fragmented job to whole nodes with the same
 * world size, when that is safe.
 */
#ifndef TOPOGATE_REPACK_H
#define TOPOGATE_REPACK_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "policy/decision.h"
#include "policy/kinds/expand.h"
#include "policy/table/table.h"

/*
 * Adds to d the ops that repack job (expanded as e, gpus GPUs per pod
 * today, world processes) onto whole nodes of t with nics of its NIC
 * resource each (judge.c's fix: the fewest of the candidates; 0: none),
 * an annotation saying what changed, and a warning. Returns 1 when repacked, 0 when it is not
 * safe (why says why, one short clause), -1 out of memory.
 */
int repack_job(const cJSON *job, const struct expansion *e, long gpus,
               long world, const struct instance_type *t, int nics,
               struct decision *d, char *why, size_t why_len);

#endif
