/* Instance type candidates from what a pod pins, and its job shape. */
#include <stdlib.h>

#include "policy/pod/placement.h"
#include "policy/kinds/workload.h"
#include "test/unit/check.h"

static struct snapshot *policy;

/*
 * Candidates of a pod spec given as JSON that asks for gpus, as
 * "name name ..." or "?x".
 */
static void
expect_for(const char *spec_json, long gpus, bool pinned, const char *want)
{
    char pod_json[4096], got[1024] = "";
    struct placement p;
    cJSON *pod;

    snprintf(pod_json, sizeof(pod_json), "{\"spec\": %s}", spec_json);
    pod = cJSON_Parse(pod_json);
    CHECK(pod != NULL);
    struct match m;
    CHECK(match_parse(cJSON_GetObjectItem(pod, "spec"), &m) == 0);
    placement_read(policy, &m, gpus, &p);
    for (size_t i = 0; i < p.n_types; i++) {
        strcat(got, i ? " " : "");
        strcat(got, p.types[i]->name);
    }
    if (p.unknown) {
        strcat(got, got[0] ? " ?" : "?");
        strcat(got, p.unknown);
    }
    CHECK_INT(p.pinned, pinned);
    CHECK_STR(got, want);
    match_free(&m);
    cJSON_Delete(pod);
}

static void
expect_candidates(const char *spec_json, bool pinned, const char *want)
{
    expect_for(spec_json, 0, pinned, want);
}

#define AFFINITY(terms)                                                      \
    "{\"affinity\": {\"nodeAffinity\": "                                     \
    "{\"requiredDuringSchedulingIgnoredDuringExecution\": "                  \
    "{\"nodeSelectorTerms\": " terms "}}}}"
#define TYPE_IN(values)                                                      \
    "{\"key\": \"node.kubernetes.io/instance-type\", \"operator\": \"In\", " \
    "\"values\": " values "}"

static void
test_placement(void)
{
    expect_candidates("{}", false, "");
    expect_candidates(
        "{\"nodeSelector\": {\"node.kubernetes.io/instance-type\": "
        "\"p4d.24xlarge\"}}",
        true, "p4d.24xlarge");
    expect_candidates(
        "{\"nodeSelector\": {\"beta.kubernetes.io/instance-type\": "
        "\"ml.p5.48xlarge\"}}",
        true, "p5.48xlarge");
    expect_candidates(
        "{\"nodeSelector\": {\"node.kubernetes.io/instance-type\": "
        "\"p9.mega\"}}",
        true, "?p9.mega");
    /* Terms are ORed: the union of their values. */
    expect_candidates(AFFINITY("[{\"matchExpressions\": [" TYPE_IN(
                          "[\"p5.48xlarge\"]") "]}, {\"matchExpressions\": "
                                               "[" TYPE_IN(
                                                   "[\"p5e.48xlarge\", "
                                                   "\"p5.48xlarge\"]") "]}]"),
                      true, "p5.48xlarge p5e.48xlarge");
    /* One term without the key leaves the pod free to land anywhere. */
    expect_candidates(AFFINITY("[{\"matchExpressions\": [" TYPE_IN(
                          "[\"p5.48xlarge\"]") "]}, {\"matchExpressions\": "
                                               "[{\"key\": \"zone\", "
                                               "\"operator\": \"In\", "
                                               "\"values\": [\"a\"]}]}]"),
                      false, "");
    /* NotIn does not pin anything. */
    expect_candidates(
        AFFINITY("[{\"matchExpressions\": [{\"key\": "
                 "\"node.kubernetes.io/instance-type\", \"operator\": "
                 "\"NotIn\", \"values\": [\"p4d.24xlarge\"]}]}]"),
        false, "");
    expect_candidates("{\"nodeSelector\": "
                      "{\"karpenter.k8s.aws/instance-gpu-count\": \"4\"}}",
                      true,
                      "p3.8xlarge p6e-gb200.36xlarge g4dn.12xlarge "
                      "g5.12xlarge g5.24xlarge g6.12xlarge g6.24xlarge "
                      "g6e.12xlarge g6e.24xlarge g7e.24xlarge g7.24xlarge");
    expect_candidates("{\"nodeSelector\": "
                      "{\"karpenter.k8s.aws/instance-gpu-count\": \"8\", "
                      "\"karpenter.k8s.aws/instance-family\": \"p5e\"}}",
                      true, "p5e.48xlarge");
    expect_candidates("{\"nodeSelector\": "
                      "{\"karpenter.k8s.aws/instance-gpu-count\": \"3\"}}",
                      true, "");
    /* A family holds every size: those too small for the pod drop out, */
    expect_for("{\"nodeSelector\": "
               "{\"karpenter.k8s.aws/instance-family\": \"p5\"}}",
               8, true, "p5.48xlarge");
    expect_for("{\"nodeSelector\": "
               "{\"karpenter.k8s.aws/instance-family\": \"p5\"}}",
               1, true, "p5.4xlarge p5.48xlarge");
    /* unless none is big enough: then it can never be scheduled. */
    expect_for("{\"nodeSelector\": "
               "{\"karpenter.k8s.aws/instance-family\": \"p5\"}}",
               16, true, "p5.4xlarge p5.48xlarge");
    /* Gt and NotIn narrow Karpenter's candidates, the GPU name too. */
    expect_candidates(AFFINITY("[{\"matchExpressions\": [{\"key\": "
                               "\"karpenter.k8s.aws/instance-gpu-count\", "
                               "\"operator\": \"Gt\", \"values\": [\"7\"]}, "
                               "{\"key\": \"karpenter.k8s.aws/instance-gpu-name\", "
                               "\"operator\": \"In\", \"values\": [\"h100\", "
                               "\"h200\"]}, {\"key\": "
                               "\"karpenter.k8s.aws/instance-family\", "
                               "\"operator\": \"NotIn\", \"values\": "
                               "[\"p5en\"]}]}]"),
                      true, "p5.48xlarge p5e.48xlarge");
    /* EKS Auto Mode's labels are Karpenter's under another prefix. */
    expect_candidates("{\"nodeSelector\": "
                      "{\"eks.amazonaws.com/instance-family\": \"p4de\"}}",
                      true, "p4de.24xlarge");
    /* nodeSelector AND affinity: a type the affinity excludes is gone. */
    expect_candidates("{\"nodeSelector\": {\"node.kubernetes.io/instance-type\": "
                      "\"p4d.24xlarge\"}, \"affinity\": " 
                      "{\"nodeAffinity\": "
                      "{\"requiredDuringSchedulingIgnoredDuringExecution\": "
                      "{\"nodeSelectorTerms\": [{\"matchExpressions\": ["
                      TYPE_IN("[\"p5.48xlarge\"]") "]}]}}}}",
                      true, "");
    /* A label the table cannot know (a node group) does not drop a row. */
    expect_candidates("{\"nodeSelector\": {\"node.kubernetes.io/instance-type\": "
                      "\"p4d.24xlarge\", \"eks.amazonaws.com/nodegroup\": "
                      "\"train\"}}",
                      true, "p4d.24xlarge");
}

static struct workload
shape(const char *pod_json)
{
    struct workload w;
    cJSON *pod = cJSON_Parse(pod_json);

    CHECK(pod != NULL);
    workload_read(pod, &w);
    /* Only numbers survive: nothing borrowed is used after the free. */
    w.bad_container = NULL;
    w.bad_value = NULL;
    cJSON_Delete(pod);
    return w;
}

#define TRAINJOB_POD(env, limits)                                            \
    "{\"metadata\": {\"labels\": {\"jobset.sigs.k8s.io/replicatedjob-name\": " \
    "\"node\"}}, \"spec\": {\"containers\": [{\"name\": \"node\", \"env\": " \
    env ", \"resources\": {\"limits\": " limits "}}]}}"

static void
test_workload(void)
{
    struct workload w;

    w = shape(TRAINJOB_POD("[{\"name\": \"PET_NNODES\", \"value\": \"16\"}, "
                           "{\"name\": \"PET_NPROC_PER_NODE\", \"value\": "
                           "\"1\"}]",
                           "{\"nvidia.com/gpu\": 1}"));
    CHECK_INT(w.owner, OWNER_TRAINJOB);
    CHECK_INT(w.gpus, 1);
    CHECK_INT(w.pods, 16);
    CHECK_INT(workload_world(&w), 16);

    w = shape(TRAINJOB_POD("[{\"name\": \"PET_NNODES\", \"value\": \"1:4\"}, "
                           "{\"name\": \"PET_NPROC_PER_NODE\", \"value\": "
                           "\"auto\"}]",
                           "{\"nvidia.com/gpu\": \"2\"}"));
    CHECK_INT(w.pods, 4);
    CHECK_INT(w.procs, 2);
    CHECK_INT(workload_world(&w), 8);

    /* The label without the env is a plain JobSet, not Trainer v2. */
    w = shape(TRAINJOB_POD("[]", "{\"nvidia.com/gpu\": 8}"));
    CHECK_INT(w.owner, OWNER_NONE);

    /* Init containers run one at a time; sidecars run alongside. */
    w = shape("{\"spec\": {\"initContainers\": [{\"name\": \"a\", "
              "\"resources\": {\"limits\": {\"nvidia.com/gpu\": 4}}}, "
              "{\"name\": \"s\", \"restartPolicy\": \"Always\", "
              "\"resources\": {\"limits\": {\"nvidia.com/gpu\": 1}}}], "
              "\"containers\": [{\"name\": \"c\", \"resources\": "
              "{\"limits\": {\"nvidia.com/gpu\": 2}}}]}}");
    CHECK_INT(w.gpus, 4);
    CHECK(w.any_gpu);

    w = shape("{\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": "
              "{\"limits\": {\"nvidia.com/gpu\": \"1.5\"}}}]}}");
    CHECK(w.bad_resource != NULL);
}

/* Issue 13: Trainer MPI pods, JAXJob sizes, ComputeDomain channels. */
#define RJ_POD(rj, container, claims)                                         \
    "{\"metadata\": {\"labels\": {\"jobset.sigs.k8s.io/replicatedjob-name\": " \
    "\"" rj "\"}}, \"spec\": {\"resourceClaims\": " claims ", "            \
    "\"containers\": [" container "]}}"

static void
test_workload_issue13(void)
{
    struct workload w;

    /* A node pod of an MPI runtime: the plugin's ssh mount, no PET_*. */
    w = shape(RJ_POD("node",
                     "{\"name\": \"node\", \"volumeMounts\": [{\"name\": "
                     "\"mpi-ssh-auth\", \"mountPath\": \"/root/.ssh\"}], "
                     "\"resources\": {\"limits\": {\"nvidia.com/gpu\": 1}}}",
                     "[]"));
    CHECK_INT(w.owner, OWNER_TRAINJOB);
    CHECK(w.trainer_mpi);
    CHECK(!w.launcher);
    CHECK_INT(w.pods, 2); /* no size on the pod: multi-pod */

    /* Its launcher: no GPU, runs no ranks. */
    w = shape(RJ_POD("launcher",
                     "{\"name\": \"node\", \"env\": [{\"name\": "
                     "\"OMPI_MCA_orte_default_hostfile\", \"value\": "
                     "\"/etc/mpi/hostfile\"}]}",
                     "[]"));
    CHECK_INT(w.owner, OWNER_TRAINJOB);
    CHECK(w.launcher);

    /* runLauncherAsNode: with GPUs it is a node; slots from its env. */
    w = shape(RJ_POD("launcher",
                     "{\"name\": \"node\", \"env\": [{\"name\": "
                     "\"OMPI_MCA_orte_default_hostfile\", \"value\": \"h\"}, "
                     "{\"name\": \"OMPI_MCA_orte_set_default_slots\", "
                     "\"value\": \"4\"}], \"resources\": {\"limits\": "
                     "{\"nvidia.com/gpu\": 8}}}",
                     "[]"));
    CHECK(!w.launcher);
    CHECK_INT(w.procs, 4);

    /* A plain JobSet container named node is still not Trainer's. */
    w = shape(RJ_POD("node",
                     "{\"name\": \"node\", \"resources\": {\"limits\": "
                     "{\"nvidia.com/gpu\": 8}}}",
                     "[]"));
    CHECK_INT(w.owner, OWNER_NONE);

    /* Only a ComputeDomain channel claim counts, in either shape. */
    w = shape(RJ_POD("x", "{\"name\": \"c\"}",
                     "[{\"name\": \"rdma\", \"resourceClaimTemplateName\": "
                     "\"all-mrdma\"}]"));
    CHECK(w.has_claims); /* a DRA claim, but a NIC's, not a channel */
    CHECK(!w.cd_channel);
    w = shape(RJ_POD("x", "{\"name\": \"c\"}",
                     "[{\"name\": \"rdma\", \"resourceClaimTemplateName\": "
                     "\"all-mrdma\"}, {\"name\": \"cd\", "
                     "\"resourceClaimTemplateName\": \"llama-domain-channel\"}]"));
    CHECK(w.cd_channel);
    w = shape(RJ_POD("x", "{\"name\": \"c\"}",
                     "[{\"name\": \"imex-0\", \"source\": "
                     "{\"resourceClaimTemplateName\": \"t\"}}]"));
    CHECK(w.cd_channel);

    /* An opted-in JAXJob pod: NUM_PROCESSES is the job's size. */
    w = shape("{\"metadata\": {\"labels\": {"
              "\"training.kubeflow.org/operator-name\": \"jaxjob-controller\", "
              "\"topogate.io/managed\": \"true\"}}, \"spec\": "
              "{\"containers\": [{\"name\": \"jax\", \"env\": [{\"name\": "
              "\"NUM_PROCESSES\", \"value\": \"8\"}], \"resources\": "
              "{\"limits\": {\"nvidia.com/gpu\": 1}}}]}}");
    CHECK_INT(w.owner, OWNER_MANAGED);
    CHECK_INT(w.pods, 8);
}

int
main(void)
{
    struct load_error err;

    policy = snapshot_parse_embedded(NULL, &err);
    test_placement();
    test_workload();
    test_workload_issue13();
    snapshot_unref(policy);
    CHECK_DONE();
}
