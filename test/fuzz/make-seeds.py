#!/usr/bin/python3
"""test/fuzz/make-seeds.py: (re)writes the checked-in seed corpora.

Small on purpose: a few inputs per behaviour, JSON compacted (libFuzzer
mutates short inputs faster), YAML as is. Sources: the golden cases, the
policies, the audit inputs, a Node list, and ../shared/corpus. Run from
the repository root:

    /usr/bin/python3 test/fuzz/make-seeds.py
"""
import json
import os
import shutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CASES = os.path.join(REPO, "test/golden/cases")
SHARED = os.environ.get("SHARED", os.path.join(REPO, "../shared"))
OUT = os.path.join(REPO, "test/fuzz/corpus")

# One or two golden cases per behaviour: deny, patch, warn, ignore, each
# way of pinning a type, and every malformed envelope.
REVIEWS = """
affinity-in-p4d-g5-split-strictest-deny affinity-in-p5-p5e-whole-node
beta-instance-type-label devshm-hostpath-kept efa-zero-kept-warning
elastic-pet-nnodes-min-max-deny envfrom-no-env-warning
g5-48xl-8x1-pcie-split-warn gb200-computedomain-podclaim-allow
gpu-count-not-integer-warn gpu-init-container-untouched hyperpod-ml-prefix
karpenter-gpu-count-8-split-deny managed-label-plain-pod
mpijob-worker-1gpu-deny native-sidecar-untouched nproc-auto-2gpu-deny
p4d-16x1-trainjob-enforce-deny p4d-2x8-pytorchjob-worker-mutate
p4d-2x8-trainjob-whole-node-mutate p5-4gpu-single-pod-efa-share
requests-mirror-efa shm-capped-by-memory-limit skip-annotation-optout
user-env-kept-warning user-hostipc-false-kept whole-node-annotation-fills-gpu
malformed-json malformed-missing-object malformed-uid-not-string
malformed-v1beta1-apiversion non-pod-kind-ignored
""".split()

JSONREAD_SEEDS = """
hyperpod-ml-prefix mpijob-worker-1gpu-deny malformed-json non-pod-kind-ignored
k8s-testdata--admission.k8s.io.v1.AdmissionReview
""".split()

MANIFESTS = """
adt-fsdp-hyperpod-pytorchjob.yaml adt-megatron-pytorchjob-multidoc.yaml
aicr-trainjob-placeholder.yaml doeks-mpijob-imagenet-1gpu.yaml
doeks-pod-gpu-efa.yaml doeks-deployment-gpu-efa0.yaml
jobset-pytorch-resnet-cpu.yaml kai-pytorchjob-1gpu-quoted.yaml
kftrainer-trainjob-runtime-patches.yaml kftrainer-trainingruntime-multistep.yaml
kueue-provisioning-job-generatename.yaml k8s-fuzz-core-v1-pod.yaml
""".split()

# Manifests of this repository's own tests, under the seed's name: the
# audit inputs of issue 13, and a Node list the cluster view reads.
REPO_MANIFESTS = {
    "i13-accelerators.yaml": "test/audit/inputs/accelerators.yaml",
    "i13-gb200.yaml": "test/audit/inputs/gb200.yaml",
    "i13-kinds.yaml": "test/audit/inputs/kinds.yaml",
    "i13-templates.yaml": "test/audit/inputs/templates.yaml",
    "i46-frameworks.yaml": "test/audit/inputs/frameworks.yaml",
    "view-eks-p4d-p5-g5.yaml": "test/nodes/eks-p4d-p5-g5.yaml",
}


def fresh(name):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def short_table(policy):
    """instanceTypes: and its first three rows, from deploy/policy.yaml."""
    with open(policy) as f:
        lines = f.read().splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if l.startswith("instanceTypes:"))
    out, rows = [], 0
    for line in lines[start:]:
        if line.startswith("  - name:"):
            rows += 1
            if rows > 3:
                break
        out.append(line)
    return "".join(out)


def main():
    d = fresh("review")
    for case in REVIEWS:
        src = os.path.join(CASES, case + ".in.json")
        with open(src, "rb") as f:
            raw = f.read()
        try:
            data = json.dumps(json.loads(raw), separators=(",", ":")).encode()
        except ValueError:
            data = raw  # malformed on purpose: keep the bytes
        with open(os.path.join(d, case + ".json"), "wb") as f:
            f.write(data)
    shared_reviews = os.path.join(SHARED, "corpus/admissionreviews")
    for name in sorted(os.listdir(shared_reviews)):
        if name.endswith(".json"):
            shutil.copy(os.path.join(shared_reviews, name), d)

    # The review's parser alone: a few reviews, and every kind of value.
    j = fresh("jsonread")
    for name in JSONREAD_SEEDS:
        shutil.copy(os.path.join(d, name + ".json"), j)
    with open(os.path.join(j, "values.json"), "w") as f:
        f.write('[0,-0,1.5e-3,"a\\u00e9\\ud83d\\ude00\\n",true,false,null,'
                '{"managedFields":[{"f:x":{}}]}]')
    # A compact managedFields as the apiserver writes it: its fieldsV1 is
    # the block-at-a-time check's (json/jsonskim.h) to read.
    with open(os.path.join(j, "managed-fields.json"), "w") as f:
        f.write('{"metadata":{"managedFields":[{"manager":"kubelet",'
                '"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":'
                '{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":'
                '{"k:{\\"name\\":\\"trainer\\"}":{".":{},"f:env":'
                '{"k:{\\"name\\":\\"NCCL_DEBUG\\"}":{".":{},'
                '"f:name":{},"f:value":{}}}}}}}}]}}')

    d = fresh("policy")
    policy = os.path.join(REPO, "deploy/policy.yaml")
    shutil.copy(policy, d)
    table = short_table(policy)
    for name in sorted(os.listdir(CASES)):
        if name.endswith(".policy"):
            with open(os.path.join(CASES, name)) as f:
                top = f.read()
            # As the golden runner does, with three rows instead of all.
            with open(os.path.join(d, name[:-len(".policy")] + ".yaml"),
                      "w") as f:
                f.write(top + table)

    d = fresh("manifest")
    for name in MANIFESTS:
        shutil.copy(os.path.join(SHARED, "corpus/manifests", name), d)
    for seed, path in REPO_MANIFESTS.items():
        shutil.copy(os.path.join(REPO, path), os.path.join(d, seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
