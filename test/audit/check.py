#!/usr/bin/python3
"""Oracles for `topogate audit -o json --with-pods` reports.

  check.py --url URL --cacert CRT --port PORT REPORT.json...

For every pod an audit expanded:
  - its suggested patch applies with python jsonpatch, and when the pod
    as expanded passes `k8s-validate --strict`, the patched pod does too;
  - the same pod, sent to `serve` (URL) as a Pod CREATE review, gets the
    same answer: allowed, the same patch, the same warnings.
Prints `ok - ...` / `not ok - ...`; exit 1 if anything failed.
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile

import jsonpatch
import yaml

SHARED = os.environ.get("SHARED", "../shared")
if not os.path.isdir(SHARED):  # a clone alone: test/data/README.md
    SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "data")
K8S_VALIDATE = os.path.join(SHARED, "tools", "k8s-validate")
failed = False


def ok(what):
    print("ok - " + what)


def not_ok(what, detail=""):
    global failed
    failed = True
    print("not ok - " + what)
    for line in detail.splitlines():
        print("#   " + line)


def validates(obj):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        yaml.safe_dump(obj, f)
        f.flush()
        r = subprocess.run([K8S_VALIDATE, "--strict", f.name],
                           capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


def serve(args, pod, n):
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
              "request": {
                  "uid": "audit-check-%d" % n,
                  "kind": {"group": "", "version": "v1", "kind": "Pod"},
                  "resource": {"group": "", "version": "v1",
                               "resource": "pods"},
                  "namespace": pod.get("metadata", {}).get("namespace", ""),
                  "operation": "CREATE", "object": pod}}
    r = subprocess.run(
        ["curl", "-sS", "--fail", "--cacert", args.cacert,
         "--resolve", "localhost:%s:127.0.0.1" % args.port,
         "-H", "Content-Type: application/json", "--data-binary", "@-",
         args.url], input=json.dumps(review), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("curl: " + r.stderr)
    return json.loads(r.stdout)["response"]


def check_pod(args, where, p, n):
    pod = p["pod"]
    patch = p.get("patch", [])
    if patch:
        try:
            patched = jsonpatch.apply_patch(pod, patch, in_place=False)
        except jsonpatch.JsonPatchException as e:
            not_ok(where + ": patch applies", str(e))
            return
        ok(where + ": patch applies (%d ops)" % len(patch))
        before, _ = validates(pod)
        after, out = validates(patched)
        if before and not after:
            not_ok(where + ": patched pod passes k8s-validate --strict", out)
        elif before:
            ok(where + ": patched pod passes k8s-validate --strict")
        else:
            ok(where + ": (the pod as written is invalid: not validated)")
    resp = serve(args, pod, n)
    got_patch = json.loads(base64.b64decode(resp["patch"])) \
        if "patch" in resp else []
    want_allowed = p.get("decision") != "deny"
    problems = []
    if resp["allowed"] != want_allowed:
        problems.append("allowed %s, audit says %s" % (resp["allowed"],
                                                       p.get("decision")))
    if got_patch != patch:
        problems.append("patch differs:\n serve %s\n audit %s"
                        % (json.dumps(got_patch), json.dumps(patch)))
    if resp.get("warnings", []) != p.get("warnings", []):
        problems.append("warnings differ:\n serve %s\n audit %s"
                        % (resp.get("warnings"), p.get("warnings")))
    if not resp["allowed"] and resp["status"]["message"] != p.get("message"):
        problems.append("deny message differs")
    if problems:
        not_ok(where + ": serve agrees", "\n".join(problems))
    else:
        ok(where + ": serve agrees (%s)" % p.get("decision"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--cacert", required=True)
    ap.add_argument("--port", required=True)
    ap.add_argument("reports", nargs="+")
    args = ap.parse_args()
    n = 0
    for path in args.reports:
        with open(path) as f:
            report = json.load(f)
        for file in report["files"]:
            for w in file["workloads"]:
                for p in w.get("pods", []):
                    n += 1
                    where = "%s %s %s %s" % (os.path.basename(file["path"]),
                                             w["kind"], w["name"], p["role"])
                    check_pod(args, where.replace("  ", " "), p, n)
    if n == 0:
        not_ok("the reports hold pods")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
