/*
 * expand_mpi_v1alpha2.c - mpi-operator v0.2's kubeflow.org/v1alpha2
 * MPIJob: spec.mpiReplicaSpecs Launcher and Worker, as the v1alpha2
 * controller labels them (kubeflow/mpi-operator
 * pkg/controllers/v1alpha2/mpi_job_controller.go at 8943cf73:
 * labelGroupName group_name, labelMPIJobName mpi_job_name,
 * labelMPIRoleType mpi_role_type; the workers are a StatefulSet of
 * Worker replicas, the launcher a Job).
 */
#include "policy/kinds/expand_internal.h"
#include "policy/kinds/podbuild.h"
#include "policy/k8s/pod.h"

static int
role(struct expansion *e, const cJSON *specs, const char *key,
     const char *value)
{
    const cJSON *r = json_get(specs, key);
    const char *labels[] = {"group_name", "kubeflow.org",  "mpi_job_name",
                            e->name,      "mpi_role_type", value,
                            NULL};

    if (r == NULL)
        return 0;
    return podbuild_group_with(e, key, podbuild_long(r, "replicas", 1),
                               json_get(r, "template"), labels);
}

int
expand_mpijob_v1alpha2(const cJSON *obj, const struct runtimes *rt,
                       struct expansion *e)
{
    const cJSON *specs = json_get(json_get(obj, "spec"), "mpiReplicaSpecs");

    (void)rt;
    if (role(e, specs, "Launcher", "launcher") < 0 ||
        role(e, specs, "Worker", "worker") < 0)
        return -1;
    if (e->n_groups == 0)
        return podbuild_note(e, "no Launcher or Worker in "
                                "spec.mpiReplicaSpecs");
    return 0;
}
