#!/usr/bin/python3
"""Runs the chart's certgen steps, as rendered, through an install and an
upgrade, and checks that the upgrade keeps the CA.

    certgen_steps.py RENDERED.yaml BIN WORKDIR

BIN is build/topogate. The pre-install Job's certgen command line runs
twice with its mounts mapped into WORKDIR:

  install  the CA Secret's mount is empty (the Secret does not exist yet,
           the volume is optional): certgen makes the CA;
  upgrade  the mount holds what the install stored in that Secret (what
           the kubelet would project): certgen must sign the new serving
           certificate with the same CA, so the caBundle does not change.

Between them it checks what the kubectl steps would send: the Secret the
webhook pods mount (no CA key in it), the CA Secret that only the hook
reads, and the caBundle patch of the post-install Job (taken from where
that Job reads it), applied with Python jsonpatch. A CA mount holding a
certificate without its key must make certgen fail rather than replace the
CA. Prints the patched objects as YAML on stdout (run.sh validates them),
one line per failed property on stderr, and exits 1 when any failed.
"""
import base64
import json
import os
import subprocess
import sys

import jsonpatch
import yaml

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def pod_of(o):
    t = o["spec"]
    if o["kind"] == "CronJob":
        t = t["jobTemplate"]["spec"]
    return t["template"]["spec"]


def mount_of(pod, container, path):
    """(volume, mountPath) of the volume CONTAINER mounts at PATH or above."""
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for m in container.get("volumeMounts", []):
        if path == m["mountPath"] or path.startswith(m["mountPath"] + "/"):
            return vols[m["name"]], m["mountPath"]
    return {}, None


def run_certgen(bin_, args, mapping, tag):
    """Runs certgen with ARGS, each mount path replaced as MAPPING says."""
    real = []
    for a in args:
        for src, dst in mapping.items():
            if a == src or a.startswith(src + "/"):
                a = dst + a[len(src):]
        real.append(a)
    p = subprocess.run([bin_] + real, capture_output=True, text=True)
    check(p.returncode == 0, f"{tag}: certgen exit {p.returncode}: "
          f"{(p.stderr.strip().splitlines() or [''])[0]}\n    "
          f"(certgen {' '.join(real)})")
    return p


def read(path):
    with open(path, "rb") as f:
        return f.read()


def secret_files(secret, items=None):
    """What the kubelet projects for a Secret volume: key -> bytes."""
    data = {k: base64.b64decode(v) for k, v in secret.get("data", {}).items()}
    if items is None:
        return data
    return {i["path"]: data[i["key"]] for i in items if i["key"] in data}


def main():
    rendered, bin_, work = sys.argv[1:]
    objs = [o for o in yaml.safe_load_all(open(rendered)) if o]
    jobs = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Job"}
    dep = [o for o in objs if o["kind"] == "Deployment"][0]
    mwc = [o for o in objs if o["kind"] == "MutatingWebhookConfiguration"][0]
    pre = [j for j in jobs.values() if "pre-install" in
           j["metadata"]["annotations"].get("helm.sh/hook", "")]
    post = [j for j in jobs.values() if "post-install" in
            j["metadata"]["annotations"].get("helm.sh/hook", "")]
    if not (check(len(pre) == 1, f"{len(pre)} pre-install Jobs, want 1") &
            check(len(post) == 1, f"{len(post)} post-install Jobs, want 1")):
        return
    pod = pod_of(pre[0])
    cg = [c for c in pod.get("initContainers", []) + pod["containers"]
          if c["name"] == "certgen"][0]
    args = cg["args"]
    out_dir = args[args.index("--out") + 1]
    ca_dir = args[args.index("--ca-dir") + 1] if "--ca-dir" in args else None
    if not check(ca_dir, "the certgen Job passes no --ca-dir: the CA is "
                 "made anew on every upgrade"):
        return
    ca_vol, _ = mount_of(pod, cg, ca_dir)
    ca_secret_name = ca_vol.get("secret", {}).get("secretName")
    mounted_tls = [v["secret"]["secretName"] for v in
                   pod_of(dep)["volumes"] if "secret" in v]

    runs = {}
    for step in ("install", "upgrade"):
        d = os.path.join(work, step)
        os.makedirs(d + "/out")
        os.makedirs(d + "/ca")
        if step == "upgrade":
            # The optional Secret volume now shows what the install stored.
            for k, v in secret_files(runs["install"]["ca_secret"]).items():
                with open(f"{d}/ca/{k}", "wb") as f:
                    f.write(v)
        p = run_certgen(bin_, args, {out_dir: d + "/out", ca_dir: d + "/ca"},
                        step)
        if p.returncode != 0:
            return
        r = {"bundle": p.stdout.strip(), "dir": d + "/out"}
        for name in ("secret.yaml", "ca-secret.yaml"):
            path = f"{d}/out/{name}"
            if not check(os.path.exists(path), f"{step}: certgen wrote no "
                         f"{name} (the Job applies /out/{name})"):
                return
        r["secret"] = yaml.safe_load(open(f"{d}/out/secret.yaml"))
        r["ca_secret"] = yaml.safe_load(open(f"{d}/out/ca-secret.yaml"))
        runs[step] = r

        s, cs = r["secret"], r["ca_secret"]
        check(s["kind"] == "Secret" and s["type"] == "kubernetes.io/tls",
              f"{step}: secret.yaml is not a kubernetes.io/tls Secret")
        check([s["metadata"]["name"]] == mounted_tls, f"{step}: Secret "
              f"{s['metadata']['name']}, the pods mount {mounted_tls}")
        check(s["metadata"]["namespace"] == dep["metadata"]["namespace"],
              f"{step}: Secret namespace")
        check(set(s["data"]) == {"tls.crt", "tls.key", "ca.crt"},
              f"{step}: the pods' Secret holds {sorted(s['data'])}, want "
              "tls.crt, tls.key, ca.crt (never the CA key)")
        check(cs["metadata"]["name"] == ca_secret_name and
              cs["metadata"]["namespace"] == dep["metadata"]["namespace"],
              f"{step}: CA Secret {cs['metadata']}, the Job mounts "
              f"{ca_secret_name} at --ca-dir")
        check({"ca.crt", "ca.key", "cabundle-patch.json"} <= set(cs["data"]),
              f"{step}: CA Secret holds {sorted(cs['data'])}")
        check(cs["metadata"]["name"] not in mounted_tls,
              f"{step}: the pods mount the CA Secret")

        # The post-install Job patches from the CA Secret: the file it
        # reads, as the kubelet projects it.
        ppod = pod_of(post[0])
        pc = ppod["containers"][0]
        pf = next(a.split("=", 1)[1] for a in pc["args"]
                  if a.startswith("--patch-file="))
        vol, mpath = mount_of(ppod, pc, pf)
        check(vol.get("secret", {}).get("secretName") == ca_secret_name,
              f"{step}: the caBundle Job reads {vol}, not {ca_secret_name}")
        files = secret_files(cs, vol.get("secret", {}).get("items"))
        check("ca.key" not in files, f"{step}: the caBundle Job sees the "
              "CA key")
        rel = pf[len(mpath) + 1:] if mpath else pf
        if not check(rel in files, f"{step}: {pf} is not in what the "
                     "caBundle Job mounts"):
            return
        patch = json.loads(files[rel])
        r["patched"] = jsonpatch.apply_patch(mwc, patch)
        check(r["bundle"] and all(
            w["clientConfig"].get("caBundle") == r["bundle"]
            for w in r["patched"]["webhooks"]),
            f"{step}: the stored patch does not put the CA on every entry")
        check(base64.b64decode(r["bundle"]) ==
              base64.b64decode(s["data"]["ca.crt"]),
              f"{step}: caBundle is not the pods' ca.crt")
        # The CronJob patches from certgen's own output: the same patch.
        check(json.loads(read(f"{d}/out/cabundle-patch.json")) == patch,
              f"{step}: /out/cabundle-patch.json differs from the stored one")
        v = subprocess.run(["openssl", "verify", "-CAfile",
                            f"{d}/out/ca.crt", f"{d}/out/tls.crt"],
                           capture_output=True, text=True)
        check(v.returncode == 0, f"{step}: serving certificate does not "
              f"verify against the CA: {v.stdout}{v.stderr}")

    i, u = runs["install"], runs["upgrade"]
    check(u["bundle"] == i["bundle"], "upgrade: the CA bundle changed (the "
          "apiserver would refuse the pods' certificates until patched)")
    check(u["ca_secret"]["data"]["ca.key"] == i["ca_secret"]["data"]
          ["ca.key"], "upgrade: the CA key changed")
    check(read(f"{u['dir']}/tls.crt") != read(f"{i['dir']}/tls.crt"),
          "upgrade: the serving certificate was not renewed")
    v = subprocess.run(["openssl", "verify", "-CAfile", f"{i['dir']}/ca.crt",
                        f"{u['dir']}/tls.crt"], capture_output=True,
                       text=True)
    check(v.returncode == 0, "upgrade: the new serving certificate does not "
          f"verify against the install's CA: {v.stdout}{v.stderr}")

    # A CA certificate without its key: certgen must refuse, not replace
    # the CA (that would change the caBundle under running pods).
    d = os.path.join(work, "half")
    os.makedirs(d + "/out")
    os.makedirs(d + "/ca")
    with open(f"{d}/ca/ca.crt", "wb") as f:
        f.write(secret_files(i["ca_secret"])["ca.crt"])
    real = [d + "/out" if a == out_dir else d + "/ca" if a == ca_dir else a
            for a in args]
    p = subprocess.run([bin_] + real, capture_output=True, text=True)
    check(p.returncode != 0, "certgen made a new CA beside a ca.crt without "
          "its key")

    for o in (i["secret"], i["ca_secret"], u["patched"]):
        print("---\n" + yaml.safe_dump(o), end="")


if __name__ == "__main__":
    try:
        main()
    finally:
        for f in failures:
            print(f"FAIL certgen steps: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)
