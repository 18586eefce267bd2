/*
 * job_launcher.c - the env of an MPI job's nodes, for the process that
 * starts its ranks.
 *
 * Ranks that mpirun starts over ssh take their env from mpirun, not from
 * the container they run in (mutate.c says how Open MPI passes it on).
 * Where that process is defined in the job itself, the env goes there:
 *   - mpi-operator v2's MPIJob: the Launcher template's first container,
 *     which it runs mpirun in;
 *   - a TrainJob on an MPI runtime (MPI, DeepSpeed): spec.trainer.env,
 *     which Trainer copies into the containers named "node" of the
 *     launcher and node jobs (pkg/runtime/framework/plugins/jobset/
 *     builder.go; in earlier releases, into the job labelled as the trainer
 *     ancestor, which an MPI runtime's launcher is).
 * Training Operator v1's MPIJob starts ranks with kubectl exec into the
 * workers, whose env they keep: their pods get it as any pod does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/jobs/job_internal.h"
#include "policy/k8s/labels.h"
#include "policy/pod/mutate.h"
#include "policy/pod/nics.h"
#include "policy/k8s/pod.h"
#include "base/strbuf.h"

#define TRAINER_ENV "/spec/trainer/env"

/* The container named name, else the first one, else NULL. */
static const cJSON *
container_or_first(const cJSON *pod, const char *name)
{
    const cJSON *cs = json_get(json_get(pod, "spec"), "containers"), *c;

    cJSON_ArrayForEach(c, cs)
    {
        const char *n = json_string(c, "name");
        if (n && strcmp(n, name) == 0)
            return c;
    }
    return cJSON_GetArrayItem(cs, 0);
}

/* The pods of role, or NULL. */
static cJSON *
group_pod(const struct expansion *e, const char *role)
{
    for (size_t i = 0; i < e->n_groups; i++)
        if (strcmp(e->groups[i].role, role) == 0)
            return e->groups[i].pod;
    return NULL;
}

/*
 * The target of the nodes the ranks run on: the candidates of the
 * pods of role (p holds them, t borrows from it), or the type the job
 * was repacked to. 1 known, 0 not, -1 out of memory.
 */
static int
ranks_target(const struct snapshot *s, const struct admission *req,
             const struct expansion *e, const struct verdict_of_job *v,
             const char *role, struct placement *p, struct target *t, long *efa)
{
    const struct inject *in = snapshot_inject_for(s, req->namespace);
    cJSON *pod = group_pod(e, role);
    struct workload w;

    if (pod == NULL)
        return 0;
    job_workload(e, pod, &w);
    if (!w.any_gpu || w.bad_value)
        return 0;
    if (v->repacked) {
        /* The nodes are now whole nodes of that type, with all its NICs. */
        target_agree(&v->worst.type, 1, t);
        w.gpus = t->gpus;
        w.efa = t->efa > 0 ? t->efa : 0;
    } else {
        if (place_job_pod(s, req, e, pod, &w, p) < 0)
            return -1;
        if (!placement_known(p))
            return 0;
        target_agree(p->types, p->n_types, t);
        /* The NICs the workers get, as decide() gives them. */
        struct match m;
        if (match_parse(json_get(pod, "spec"), &m) < 0)
            return -1;
        nics_narrow(t, pod,
                    placement_nic_fewest(req->view, &m, &w, req->namespace,
                                         pod_label(pod, LABEL_QUEUE_NAME),
                                         t->nic));
        match_free(&m);
    }
    *efa = mutate_efa_after(&w, t, in, s->override_user);
    return 1;
}

/* The env entries scratch's ops add (an entry, or a whole env array). */
static cJSON *
added_entries(const struct decision *scratch)
{
    cJSON *all = cJSON_CreateArray();

    for (size_t i = 0; all && i < scratch->n_ops; i++) {
        /* Adding an item fails only for a NULL one: a failed parse. */
        cJSON *one = cJSON_Parse(scratch->ops[i].value), *entry;
        if (one == NULL)
            goto oom;
        if (!cJSON_IsArray(one)) {
            cJSON_AddItemToArray(all, one);
            continue;
        }
        while ((entry = cJSON_DetachItemFromArray(one, 0)) != NULL)
            cJSON_AddItemToArray(all, entry);
        cJSON_Delete(one);
    }
    return all;
oom:
    cJSON_Delete(all);
    return NULL;
}

/* Audit mode: one warning naming what would be added to where. */
static int
warn_would_add(const cJSON *entries, const char *where, struct decision *d)
{
    struct strbuf names = {0};
    const cJSON *entry;
    char *list;
    int rc;

    cJSON_ArrayForEach(entry, entries)
    {
        const char *n = json_string(entry, "name");
        /* The list that names them goes without saying. */
        if (n && strcmp(n, LAUNCHER_ENV_LIST) == 0)
            continue;
        strbuf_printf(&names, "%s%s", names.len ? ", " : "", n ? n : "?");
    }
    if ((list = strbuf_take(&names)) == NULL)
        return -1;
    rc = decision_warn(d, "audit: would add to %s, for its ranks: %s", where,
                       list);
    free(list);
    return rc;
}

/*
 * The launcher's container c as Trainer makes it: spec.trainer.env
 * upserted into its env, by name. NULL out of memory.
 */
static cJSON *
with_trainer_env(const cJSON *c, const cJSON *job)
{
    const cJSON *env =
        json_get(json_get(json_get(job, "spec"), "trainer"), "env");
    cJSON *copy = cJSON_Duplicate(c, true), *into;
    const cJSON *e;

    if (copy == NULL || !cJSON_IsArray(env))
        return copy;
    into = cJSON_GetObjectItemCaseSensitive(copy, "env");
    if (!cJSON_IsArray(into)) {
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "env");
        if ((into = cJSON_AddArrayToObject(copy, "env")) == NULL)
            goto oom;
    }
    cJSON_ArrayForEach(e, env)
    {
        const cJSON *have = pod_env(copy, json_string(e, "name"));
        cJSON *dup = cJSON_Duplicate(e, true);
        int at = 0;
        const cJSON *it;

        cJSON_ArrayForEach(it, into)
        {
            if (it == have)
                break;
            at++;
        }
        if (have ? !cJSON_ReplaceItemInArray(into, at, dup)
                 : !cJSON_AddItemToArray(into, dup)) {
            cJSON_Delete(dup);
            goto oom;
        }
    }
    return copy;
oom:
    cJSON_Delete(copy);
    return NULL;
}

/* The entries into the TrainJob's spec.trainer.env, by name: the user's
 * own are replaced only when the policy overrides the user. */
static int
add_to_trainer_env(const cJSON *job, cJSON *entries, struct decision *d)
{
    const cJSON *trainer = json_get(json_get(job, "spec"), "trainer");
    const cJSON *env = json_get(trainer, "env");
    cJSON *entry, *made;

    if (!cJSON_IsObject(trainer)) {
        /* No trainer: the runtime's own numNodes and image. */
        if ((made = cJSON_CreateObject()) == NULL ||
            !cJSON_AddItemToObject(made, "env",
                                   cJSON_Duplicate(entries, true))) {
            cJSON_Delete(made);
            return -1;
        }
        return decision_add(d, "/spec/trainer", made);
    }
    if (!cJSON_IsArray(env))
        return decision_add(d, TRAINER_ENV, cJSON_Duplicate(entries, true));
    cJSON_ArrayForEach(entry, entries)
    {
        const cJSON *have = pod_env(trainer, json_string(entry, "name"));
        char at[64];
        int i = 0;
        const cJSON *e;

        if (have == NULL) {
            if (decision_add(d, TRAINER_ENV "/-",
                             cJSON_Duplicate(entry, true)) < 0)
                return -1;
            continue;
        }
        cJSON_ArrayForEach(e, env)
        {
            if (e == have)
                break;
            i++;
        }
        snprintf(at, sizeof(at), TRAINER_ENV "/%d", i);
        if (decision_replace(d, at, cJSON_Duplicate(entry, true)) < 0)
            return -1;
    }
    return 0;
}

/*
 * scratch's warnings into d, then its env: in enforce and warn modes as
 * ops (MPIJob: as they are; TrainJob: into spec.trainer.env), in audit
 * mode as a warning.
 */
static int
apply(struct decision *scratch, const struct admission *req, bool trainjob,
      enum mode mode, struct decision *d)
{
    cJSON *entries;
    int rc = 0;

    for (size_t i = 0; i < scratch->n_warnings; i++)
        if (decision_warn(d, "%s", scratch->warnings[i]) < 0)
            return -1;
    if (scratch->n_ops == 0)
        return 0;
    if (!trainjob && mode != MODE_AUDIT) {
        for (size_t i = 0; rc == 0 && i < scratch->n_ops; i++) {
            const struct op *o = &scratch->ops[i];
            jsonout_raw(decision_value(d), o->value, o->value_len);
            rc = o->kind == OP_ADD ? decision_add_value(d, o->path, NULL)
                                   : decision_replace_value(d, o->path);
        }
        return rc;
    }
    if ((entries = added_entries(scratch)) == NULL)
        return -1;
    if (mode == MODE_AUDIT) {
        rc = warn_would_add(
            entries, trainjob ? "spec.trainer.env" : "the Launcher's env", d);
        if (rc == 0 && d->judged == VERDICT_ALLOW)
            d->judged = VERDICT_PATCH;
    } else {
        rc = add_to_trainer_env(req->object, entries, d);
    }
    cJSON_Delete(entries);
    return rc;
}

/*
 * The env of the nodes of role's pods into launcher container c (at
 * JSON pointer cpath, for an MPIJob; a TrainJob's goes to
 * spec.trainer.env), when they land on a known type.
 */
static int
forward_env(const struct snapshot *s, const struct admission *req,
            const struct expansion *e, const struct verdict_of_job *v,
            const char *role, const cJSON *c, const char *cpath, bool trainjob,
            enum mode mode, struct decision *d)
{
    struct decision scratch;
    struct placement p;
    struct target t;
    long efa;
    int rc;

    if ((rc = ranks_target(s, req, e, v, role, &p, &t, &efa)) <= 0)
        return rc;
    decision_init(&scratch);
    rc = mutate_launcher_env(c, cpath, &t, efa, s->override_user, &scratch);
    if (rc == 0)
        rc = apply(&scratch, req, trainjob, mode, d);
    decision_free(&scratch);
    return rc;
}

/* mpi-operator v2: into the Launcher template's first container. */
static int
mpijob_launcher(const struct snapshot *s, const struct admission *req,
                const struct expansion *e, const struct verdict_of_job *v,
                enum mode mode, struct decision *d)
{
    static const char *const where =
        "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0";
    const cJSON *c = cJSON_GetArrayItem(
        json_get(
            json_get(json_get(json_get(json_get(json_get(req->object, "spec"),
                                                "mpiReplicaSpecs"),
                                       "Launcher"),
                              "template"),
                     "spec"),
            "containers"),
        0);

    if (c == NULL)
        return 0;
    return forward_env(s, req, e, v, "Worker", c, where, false, mode, d);
}

/*
 * A TrainJob on an MPI runtime (the runtime at hand: audit's files, the
 * cluster view): the launcher's container "node", as Trainer makes it,
 * says what is already there; what is missing goes into
 * spec.trainer.env.
 */
static int
trainjob_launcher(const struct snapshot *s, const struct admission *req,
                  const struct expansion *e, const struct verdict_of_job *v,
                  enum mode mode, struct decision *d)
{
    const cJSON *c =
        container_or_first(group_pod(e, TRAINER_LAUNCHER), TRAINER_NODE);
    const char *name = json_string(c, "name");
    cJSON *made;
    int rc;

    if (c == NULL)
        return 0;
    /* Trainer copies its env only into containers named "node". */
    if (name == NULL || strcmp(name, TRAINER_NODE) != 0)
        return decision_warn(d,
                             "the runtime's launcher runs mpirun in '%s': "
                             "topogate cannot add env for its ranks",
                             name ? name : "?");
    if ((made = with_trainer_env(c, req->object)) == NULL)
        return -1;
    rc = forward_env(s, req, e, v, TRAINER_NODE, made, "/launcher", true, mode,
                     d);
    cJSON_Delete(made);
    return rc;
}

int
job_launcher_env(const struct snapshot *s, const struct admission *req,
                 const struct expansion *e, const struct verdict_of_job *v,
                 enum mode mode, struct decision *d)
{
    const struct inject *in = snapshot_inject_for(s, req->namespace);

    if (!in->env || strcmp(req->operation, "CREATE") != 0)
        return 0;
    if (e->job.owner == OWNER_MPIJOB)
        return mpijob_launcher(s, req, e, v, mode, d);
    if (e->job.owner == OWNER_TRAINJOB && group_pod(e, TRAINER_LAUNCHER))
        return trainjob_launcher(s, req, e, v, mode, d);
    return 0;
}
