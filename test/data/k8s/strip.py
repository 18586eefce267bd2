#!/usr/bin/python3
"""Makes test/data/k8s from ../shared/k8s: the schemas the tests need
when ../shared is not beside the repository (test/data/README.md).

    test/data/k8s/strip.py [SHARED_K8S [OUT_DIR]]

SHARED_K8S defaults to ../shared/k8s, OUT_DIR to test/data/k8s. Each
file listed below is read, every `description` string is dropped (they
are most of the bytes and no validator reads them), and the rest is
written unchanged as compact JSON: openapi/NAME.json from the OpenAPI v3
file of the same name, crds/NAME.json from the CRD file NAME.yaml (one
JSON list when the file holds several documents). k8s-validate reads
both as it reads the originals.
"""
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

# Kubernetes 1.36, every group ../shared/k8s/openapi has.
OPENAPI = [
    "api__v1_openapi.json",
    "apis__admissionregistration.k8s.io__v1_openapi.json",
    "apis__apps__v1_openapi.json",
    "apis__batch__v1_openapi.json",
    "apis__networking.k8s.io__v1_openapi.json",
    "apis__policy__v1_openapi.json",
    "apis__rbac.authorization.k8s.io__v1_openapi.json",
    "apis__resource.k8s.io__v1_openapi.json",
]
# Every CRD of ../shared/k8s/crds, so that k8s-validate says the same
# here as there on every input of the repository (the golden cases send
# TrainJob, PyTorchJob and MPIJob v1 and v2beta1; test/audit/inputs holds
# a RayCluster).
CRDS = [
    "ray.io_rayclusters.yaml",
    "ray.io_rayjobs.yaml",
    "trainer.kubeflow.org_trainjobs.yaml",
    "trainer.kubeflow.org_trainingruntimes.yaml",
    "trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "kubeflow.org_pytorchjobs.yaml",
    "kubeflow.org_mpijobs.v2beta1.yaml",
    "kubeflow.org_mpijobs.v1.yaml",
    "kubeflow.org_jaxjobs.yaml",
    "kubeflow.org_tfjobs.yaml",
    "jobset.x-k8s.io_jobsets.yaml",
    "kueue.x-k8s.io_resourceflavors.yaml",
    "kueue.x-k8s.io_clusterqueues.yaml",
    "kueue.x-k8s.io_localqueues.yaml",
    "kueue.x-k8s.io_topologies.yaml",
    "kueue.x-k8s.io_workloads.yaml",
    "batch.volcano.sh_jobs.yaml",
    "resource.nvidia.com_computedomains.yaml",
    "resource.nvidia.com_computedomaincliques.yaml",
    "cert-manager.io_certificates.yaml",
    "cert-manager.io_issuers.yaml",
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    # What serve --live-audit writes (test/e2e/liveaudit.sh validates it).
    "wgpolicyk8s.io_policyreports.yaml",
]


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items()
                if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def write(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(strip(doc), f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "..",
                                                             "shared", "k8s")
    out = sys.argv[2] if len(sys.argv) > 2 else HERE
    for sub in ("openapi", "crds"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for name in OPENAPI:
        with open(os.path.join(src, "openapi", name), encoding="utf-8") as f:
            write(os.path.join(out, "openapi", name), json.load(f))
    for name in CRDS:
        with open(os.path.join(src, "crds", name), encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        write(os.path.join(out, "crds", name[:-len(".yaml")] + ".json"),
              docs[0] if len(docs) == 1 else docs)


if __name__ == "__main__":
    main()
