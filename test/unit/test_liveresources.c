/*
 * test_liveresources.c - clusterview/liveresources.c: which job a pod
 * belongs to (the first watched label key, the controller reference's
 * kind when it names that job), the GPUs it asks for, and the pod as the
 * helper cuts it (nothing for a pod without GPUs; the service account's
 * projected volume emptied; status down to its phase). liveresources.c
 * needs only cJSON, so it is compiled in here.
 */
#include <stdio.h>
#include <string.h>

#include "clusterview/liveresources.c"
#include "test/unit/check.h"

static cJSON *
parse(const char *text)
{
    cJSON *o = cJSON_Parse(text);

    CHECK(o != NULL);
    return o;
}

int
main(void)
{
    struct live_owner o;
    cJSON *pod, *slim;
    char *text;
    size_t n;

    /* The resources: the five pod watches by label, then our reports. */
    const struct kube_resource *r = live_resources(&n);
    CHECK_INT(n, 6);
    CHECK_STR(r[0].selector, "training.kubeflow.org/job-name");
    CHECK_STR(r[5].name, LIVE_REPORTS);
    CHECK(r[5].optional);
    CHECK_INT(live_resource_index("pods-ray"), 2);
    CHECK_INT(live_resource_index("nodes"), -1);

    /* A JobSet pod that is also Volcano's: the first key in the fixed
     * order names it; its controller is a batch Job of another name, so
     * the kind is the label's own. */
    pod = parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
                "\"labels\":{\"volcano.sh/job-name\":\"v\","
                "\"jobset.sigs.k8s.io/jobset-name\":\"js\"},"
                "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\","
                "\"kind\":\"Job\",\"name\":\"js-node-0\",\"uid\":\"u1\","
                "\"controller\":true}]},"
                "\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
                "{\"nvidia.com/gpu\":\"2\"}}},{\"resources\":{\"requests\":"
                "{\"nvidia.com/gpu\":1}}}],\"initContainers\":[{"
                "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}],"
                "\"volumes\":[{\"name\":\"kube-api-access\",\"projected\":"
                "{\"sources\":[{\"serviceAccountToken\":{\"path\":"
                "\"token\"}}]}},{\"name\":\"dshm\",\"emptyDir\":{\"medium\":"
                "\"Memory\"}}]},"
                "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.1\"}}");
    CHECK(live_owner(pod, &o));
    CHECK_STR(o.label, "jobset.sigs.k8s.io/jobset-name");
    CHECK_STR(o.name, "js");
    CHECK_STR(o.kind, "JobSet");
    CHECK(o.uid == NULL);
    /* Containers add up (3); an init container runs alone (4). */
    CHECK_INT(live_pod_gpus(pod), 4);
    slim = live_slim_pod(pod);
    CHECK(slim != NULL);
    text = cJSON_PrintUnformatted(slim);
    CHECK(strstr(text, "serviceAccountToken") == NULL);
    CHECK(strstr(text, "\"projected\":{}") != NULL);
    CHECK(strstr(text, "\"medium\":\"Memory\"") != NULL);
    CHECK(strstr(text, "podIP") == NULL);
    CHECK(strstr(text, "\"phase\":\"Running\"") != NULL);
    free(text);
    cJSON_Delete(slim);
    cJSON_Delete(pod);

    /* A PyTorchJob's pod: its controller reference gives kind and uid. */
    pod = parse("{\"metadata\":{\"name\":\"w-0\",\"labels\":{"
                "\"training.kubeflow.org/job-name\":\"llama\"},"
                "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\","
                "\"kind\":\"PyTorchJob\",\"name\":\"llama\",\"uid\":\"u2\","
                "\"controller\":true},{\"apiVersion\":\"v1\",\"kind\":"
                "\"ConfigMap\",\"name\":\"llama\"}]},"
                "\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
                "{\"nvidia.com/gpu\":\"1\"}}}]}}");
    CHECK(live_owner(pod, &o));
    CHECK_STR(o.kind, "PyTorchJob");
    CHECK_STR(o.api_version, "kubeflow.org/v1");
    CHECK_STR(o.uid, "u2");
    slim = live_slim_pod(pod);
    text = cJSON_PrintUnformatted(slim);
    /* Only the controller reference is kept. */
    CHECK(strstr(text, "ConfigMap") == NULL);
    CHECK(strstr(text, "PyTorchJob") != NULL);
    free(text);
    cJSON_Delete(slim);
    cJSON_Delete(pod);

    /* No GPU, or no watched label: not the live audit's. */
    pod = parse("{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"r\"}},"
                "\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
                "{\"cpu\":\"1\",\"nvidia.com/gpu\":\"0\"}}}]}}");
    CHECK(live_owner(pod, &o));
    CHECK_INT(live_pod_gpus(pod), 0);
    CHECK(live_slim_pod(pod) == NULL);
    cJSON_Delete(pod);
    /* GPUs from a DRA claim: kept, to be counted through the view; a
     * ComputeDomain channel claim alone holds no GPU. */
    pod = parse("{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"r\"}},"
                "\"spec\":{\"containers\":[{\"resources\":{\"claims\":"
                "[{\"name\":\"gpu\"}]}}],\"resourceClaims\":[{\"name\":"
                "\"gpu\",\"resourceClaimTemplateName\":\"single-gpu\"}]}}");
    CHECK_INT(live_pod_gpus(pod), 0);
    slim = live_slim_pod(pod);
    CHECK(slim != NULL);
    cJSON_Delete(slim);
    cJSON_Delete(pod);
    pod = parse("{\"metadata\":{\"labels\":{\"ray.io/cluster\":\"r\"}},"
                "\"spec\":{\"resourceClaims\":[{\"name\":\"imex\","
                "\"resourceClaimTemplateName\":\"cd-channel\"}]}}");
    CHECK(live_slim_pod(pod) == NULL);
    cJSON_Delete(pod);
    pod = parse("{\"metadata\":{\"labels\":{\"batch.kubernetes.io/job-name\":"
                "\"j\",\"training.kubeflow.org/job-name\":\"\"}}}");
    CHECK(!live_owner(pod, &o));
    cJSON_Delete(pod);
    CHECK_DONE();
}
