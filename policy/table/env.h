/*
 * env.h - the env of the policy file: a row's own list (instanceTypes[].env)
 * and the opt-in env profiles (envProfiles, chosen by envProfile) whose
 * variables only some images need.
 *
 * The loader's side, called from snapshot.c. Every variable names the
 * versions it is for and its source. What is read is owned by the row or
 * the snapshot, and stays there for env_free_list() and
 * env_profiles_free() even when a read fails half way.
 */
#ifndef TOPOGATE_ENV_H
#define TOPOGATE_ENV_H

#include "policy/table/snapshot.h"
#include "base/yamltree.h"

/* A row's env list into t->env. 0, or -1 with err. */
int env_read_row(const struct ynode *n, struct instance_type *t,
                 struct load_error *err);

/* envProfiles (a list) into s->env_profiles. 0, or -1 with err. */
int env_profiles_read(const struct ynode *n, struct snapshot *s,
                      struct load_error *err);

/*
 * envProfile: "none", or the name of one of s->env_profiles, whose
 * variables are then added to every row they fit, after the row's own
 * (a name the row sets itself is left to the row). 0, or -1 with err.
 */
int env_profile_apply(const struct ynode *n, struct snapshot *s,
                      struct load_error *err);

/* "all", "efa", "efa-gdr". */
const char *env_rows_name(enum env_rows rows);

/* Whether a profile's variable for rows goes to type t. */
bool env_rows_fit(enum env_rows rows, const struct instance_type *t);

void env_free_list(struct env_var *env, size_t n);
void env_profiles_free(struct snapshot *s);

#endif
