#!/usr/bin/python3
"""Checks on topogate's golden responses by tools we did not write.

Run with Debian's /usr/bin/python3 (python3-jsonpatch, python3-yaml).
test/golden/run.sh calls it; each subcommand prints `ok - ...` /
`not ok - ...` lines and exits 1 when anything failed.

  oracle.py inputs CASES_DIR
      Every request.object (and oldObject) in CASES_DIR/*.in.json passes
      `k8s-validate --strict`, unless CASES_DIR/<case>.novalidate exists.
  oracle.py case --bin BIN --dir CASES_DIR --name CASE --rc N
                 [--allow-overwrite] [-- ARGS...]
      The response in CASE.out.json, which `BIN audit --review - ARGS`
      wrote with exit status N: envelope invariants for every case; for a
      response with a patch: the patch is applied with python `jsonpatch`
      (must apply cleanly), generic invariants hold (RFC 6901 paths, no
      path twice, nothing touches hostNetwork or privileged, no value the
      user set is overwritten, no duplicates left behind), the patched pod
      passes `k8s-validate --strict` (unless CASE.novalidate), and the
      same review with the patched pod gets no patch (idempotence).
      CASE.patch.json must be the decoded patch, pretty-printed.
  oracle.py write-patch OUT_JSON PATCH_JSON
      (UPDATE=1) writes the decoded patch, indent 2, or removes a stale
      file; prints what changed.
  oracle.py http-code OUT_JSON
      The HTTP status `serve` must answer with for this golden body.
  oracle.py diff EXPECTED ACTUAL
      A readable diff of two response bodies.

The k8s-validate tool is found in $SHARED/tools, SHARED defaulting to
../shared beside the repository.
"""

import base64
import binascii
import copy
import difflib
import glob
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonpatch
    import jsonpointer
except ImportError:
    sys.exit("oracle.py: needs python3-jsonpatch: apt-get install "
             "python3-jsonpatch")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.environ.get("SHARED") or os.path.join(REPO, "..", "shared")
if not os.path.isdir(SHARED):  # a clone alone: test/data/README.md
    SHARED = os.path.join(REPO, "test", "data")
K8S_VALIDATE = os.path.join(SHARED, "tools", "k8s-validate")

WARNING_MAX = 120
VALGRIND = ["valgrind", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--error-exitcode=99", "-q"]
SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer",
                   "UndefinedBehaviorSanitizer", "runtime error:")


class Report:
    def __init__(self):
        self.failed = False

    def ok(self, what):
        print("ok - " + what)

    def not_ok(self, what, detail=""):
        self.failed = True
        print("not ok - " + what)
        for line in detail.rstrip("\n").splitlines():
            print("#   " + line)


def load_json(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def run_validate(obj):
    """k8s-validate --strict on one object: (passed, output)."""
    if not os.access(K8S_VALIDATE, os.X_OK):
        return False, "no k8s-validate at %s (set SHARED)" % K8S_VALIDATE
    p = subprocess.run([K8S_VALIDATE, "--strict", "-"],
                       input=json.dumps(obj).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=60)
    return p.returncode == 0, p.stdout.decode(errors="replace")


# ------------------------------------------------------------ inputs

def cmd_inputs(argv):
    cases_dir = argv[0]
    rep = Report()
    with tempfile.TemporaryDirectory() as tmp:
        want = {}
        for path in sorted(glob.glob(os.path.join(cases_dir, "*.in.json"))):
            name = os.path.basename(path)[:-len(".in.json")]
            if os.path.exists(os.path.join(cases_dir, name + ".novalidate")):
                continue
            try:
                review = load_json(path)
            except (ValueError, UnicodeDecodeError, RecursionError):
                continue  # a malformed-* case: not JSON on purpose
            req = review.get("request") if isinstance(review, dict) else None
            if not isinstance(req, dict):
                continue
            for field in ("object", "oldObject"):
                obj = req.get(field)
                if isinstance(obj, dict):
                    f = os.path.join(tmp, "%s.%s.json" % (name, field))
                    with open(f, "w") as out:
                        json.dump(obj, out)
                    want[f] = "%s %s" % (name, field)
        if not want:
            rep.ok("inputs: nothing to validate")
            return rep
        p = subprocess.run([K8S_VALIDATE, "--strict"] + sorted(want),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=300)
        out = p.stdout.decode(errors="replace")
        # With several files, each file's results follow a `# FILE` line.
        results, current = {}, None
        for line in out.splitlines():
            if line.startswith("# ") and line[2:] in want:
                current = line[2:]
                results[current] = []
            elif current is not None:
                results[current].append(line)
        for f in sorted(want):
            lines = results.get(f)
            if lines is None:
                rep.not_ok("%s (k8s-validate)" % want[f],
                           "no result for this object:\n" + out[-2000:])
            elif lines and lines[0].startswith("OK "):
                rep.ok("%s is valid (k8s-validate --strict)" % want[f])
            else:
                rep.not_ok("%s (k8s-validate --strict)" % want[f],
                           "\n".join(lines))
    return rep


# ------------------------------------------------------------ envelope

def decode_patch(resp):
    """The ops in response.patch, or None. Raises ValueError."""
    if "patch" not in resp:
        return None
    raw = resp["patch"]
    if not isinstance(raw, str):
        raise ValueError("response.patch is not a string")
    try:
        text = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError("response.patch is not base64: %s" % e)
    ops = json.loads(text.decode("utf-8"))
    if not isinstance(ops, list):
        raise ValueError("response.patch is not a JSON array")
    return ops


def mode_of(args):
    for i, a in enumerate(args):
        if a == "--mode" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--mode="):
            return a[len("--mode="):]
    return None


def check_envelope(review, body, rc, args):
    """Problems with one response body, as a list of strings."""
    bad = []
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    if body.get("kind") == "Status":
        if rc != 2:
            bad.append("a Status body, but exit status %d (want 2)" % rc)
        if body.get("apiVersion") != "v1":
            bad.append("Status apiVersion %r, want 'v1'"
                       % body.get("apiVersion"))
        if body.get("code") != 400:
            bad.append("Status code %r, want 400" % body.get("code"))
        if body.get("status") != "Failure":
            bad.append("Status status %r, want 'Failure'"
                       % body.get("status"))
        msg = body.get("message")
        if not isinstance(msg, str) or not msg or "\n" in msg:
            bad.append("Status message must be one non-empty line: %r"
                       % (msg,))
        return bad
    if rc != 0:
        bad.append("an AdmissionReview body, but exit status %d (want 0)"
                   % rc)
    if body.get("apiVersion") != "admission.k8s.io/v1":
        bad.append("apiVersion %r" % body.get("apiVersion"))
    if body.get("kind") != "AdmissionReview":
        bad.append("kind %r" % body.get("kind"))
    resp = body.get("response")
    if not isinstance(resp, dict):
        return bad + ["no response object"]
    req = review.get("request") if isinstance(review, dict) else None
    if isinstance(req, dict) and resp.get("uid") != req.get("uid"):
        bad.append("response.uid %r != request.uid %r"
                   % (resp.get("uid"), req.get("uid")))
    allowed = resp.get("allowed")
    if not isinstance(allowed, bool):
        bad.append("response.allowed is %r, not a boolean" % (allowed,))
    if allowed is False:
        st = resp.get("status")
        if not isinstance(st, dict) or st.get("code") != 403:
            bad.append("a denial without status.code 403: %r" % (st,))
        else:
            msg = st.get("message")
            if not isinstance(msg, str) or not msg or "\n" in msg:
                bad.append("deny message must be one non-empty line: %r"
                           % (msg,))
    mode = mode_of(args)
    if mode in ("warn", "audit") and allowed is not True:
        bad.append("--mode %s never denies, but allowed is %r"
                   % (mode, allowed))
    try:
        ops = decode_patch(resp)
    except ValueError as e:
        bad.append(str(e))
        ops = None
    if ops is not None:
        if resp.get("patchType") != "JSONPatch":
            bad.append("patch without patchType JSONPatch: %r"
                       % resp.get("patchType"))
        if not ops:
            bad.append("an empty patch: leave patch out when there are "
                       "no ops")
        if mode == "audit":
            bad.append("--mode audit never patches, but there is a patch")
    elif "patchType" in resp:
        bad.append("patchType without a patch")
    warnings = resp.get("warnings", [])
    if not isinstance(warnings, list):
        bad.append("warnings is not a list")
    else:
        for w in warnings:
            if not isinstance(w, str):
                bad.append("a warning that is not a string: %r" % (w,))
            elif "\n" in w or "\r" in w:
                bad.append("a warning of more than one line: %r" % w)
            elif len(w) > WARNING_MAX:
                bad.append("a warning of %d characters (max %d): %r"
                           % (len(w), WARNING_MAX, w))
    ann = resp.get("auditAnnotations")
    if ann is not None and not (isinstance(ann, dict) and all(
            isinstance(v, str) for v in ann.values())):
        bad.append("auditAnnotations must map strings to strings")
    return bad


# ------------------------------------------------------------ patch

def pointer_ok(path):
    if not isinstance(path, str):
        return False
    if path == "":
        return True
    if not path.startswith("/"):
        return False
    i = 0
    while True:
        i = path.find("~", i)
        if i < 0:
            return True
        if i + 1 >= len(path) or path[i + 1] not in "01":
            return False
        i += 2


def segments(path):
    return [s.replace("~1", "/").replace("~0", "~")
            for s in path.split("/")[1:]]


FORBIDDEN = ("hostNetwork", "privileged")


def forbidden_keys(value, where=""):
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in FORBIDDEN:
                found.append(where + "/" + k)
            found += forbidden_keys(v, where + "/" + k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += forbidden_keys(v, "%s/%d" % (where, i))
    return found


def resolve(doc, path):
    """(found, value) for an RFC 6901 path in doc."""
    try:
        return True, jsonpointer.resolve_pointer(doc, path)
    except jsonpointer.JsonPointerException:
        return False, None


def keeps(old, new):
    """new still holds everything old had: an op that rewrites a whole
    list or object but keeps the user's entries does not overwrite them."""
    if isinstance(old, dict) and isinstance(new, dict):
        return all(k in new and keeps(v, new[k]) for k, v in old.items())
    if isinstance(old, list) and isinstance(new, list):
        if new[:len(old)] == old:
            return True
        return all(any(keeps(o, n) for n in new) for o in old)
    return old == new


def check_ops(pod, ops, allow_overwrite):
    bad = []
    seen = {}
    valid_ops = ("add", "remove", "replace", "move", "copy", "test")
    for i, op in enumerate(ops):
        if not isinstance(op, dict):
            bad.append("op %d is not an object" % i)
            continue
        if op.get("op") not in valid_ops:
            bad.append("op %d: unknown op %r" % (i, op.get("op")))
        path = op.get("path")
        if not pointer_ok(path):
            bad.append("op %d: path %r is not an RFC 6901 pointer"
                       % (i, path))
            continue
        if "from" in op and not pointer_ok(op["from"]):
            bad.append("op %d: from %r is not an RFC 6901 pointer"
                       % (i, op["from"]))
        for seg in segments(path):
            if seg in FORBIDDEN:
                bad.append("op %d touches %s: %s" % (i, seg, path))
        for k in forbidden_keys(op.get("value")):
            bad.append("op %d sets %s inside %s" % (i, k.lstrip("/"), path))
        # An append ("/-") adds a new element each time; any other path
        # named twice means one op undoes another.
        if not path.endswith("/-"):
            if path in seen:
                bad.append("ops %d and %d both name %s" % (seen[path], i,
                                                           path))
            seen.setdefault(path, i)
        # "add" on an object member that exists replaces the user's value.
        if op.get("op") in ("add", "replace") and not allow_overwrite:
            segs = segments(path)
            parent_ok, parent = resolve(pod, "/" + "/".join(
                s.replace("~", "~0").replace("/", "~1") for s in segs[:-1]))
            if (parent_ok and isinstance(parent, dict) and segs
                    and segs[-1] in parent
                    and segs[-1] != "nvidia.com/gpu"
                    and not keeps(parent[segs[-1]], op.get("value"))):
                bad.append("op %d overwrites a value the user set: %s = %s"
                           % (i, path, json.dumps(parent[segs[-1]])))
            if op.get("op") == "replace" and segs[-1:] != ["nvidia.com/gpu"]:
                bad.append("op %d replaces %s" % (i, path))
    return bad


def quantity_key(q):
    return str(q).strip()


def check_pod(pod):
    """Cross-field rules of the apiserver that k8s-validate leaves out,
    the ones a careless patch breaks."""
    bad = []
    spec = pod.get("spec", {})
    vols = [v.get("name") for v in spec.get("volumes", []) or []]
    if len(vols) != len(set(vols)):
        bad.append("volume names repeat: %s" % vols)
    all_c = []
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(kind, []) or []:
            all_c.append((kind, c))
    names = [c.get("name") for _, c in all_c]
    if len(names) != len(set(names)):
        bad.append("container names repeat: %s" % names)
    for kind, c in all_c:
        where = "%s %s" % (kind, c.get("name"))
        env = [e.get("name") for e in c.get("env", []) or []]
        dups = sorted({n for n in env if env.count(n) > 1})
        if dups:
            bad.append("%s: env repeats %s" % (where, dups))
        mounts = c.get("volumeMounts", []) or []
        paths = [m.get("mountPath") for m in mounts]
        dups = sorted({p for p in paths if paths.count(p) > 1})
        if dups:
            bad.append("%s: mountPath repeats %s" % (where, dups))
        for m in mounts:
            if m.get("name") not in vols:
                bad.append("%s: mount %r names no volume"
                           % (where, m.get("name")))
        caps = (((c.get("securityContext") or {}).get("capabilities") or {})
                .get("add") or [])
        dups = sorted({x for x in caps if caps.count(x) > 1})
        if dups:
            bad.append("%s: capabilities.add repeats %s" % (where, dups))
        res = c.get("resources") or {}
        lim, req = res.get("limits") or {}, res.get("requests") or {}
        for name in sorted(set(lim) | set(req)):
            # Extended resources (a domain, not hugepages-): requests,
            # when present, must equal limits, and need a limit.
            if "/" not in name or name.startswith("hugepages-"):
                continue
            if name in req and name not in lim:
                bad.append("%s: %s in requests but not in limits"
                           % (where, name))
            elif name in req and quantity_key(req[name]) != \
                    quantity_key(lim[name]):
                bad.append("%s: %s requests %r != limits %r"
                           % (where, name, req[name], lim[name]))
    tols = [json.dumps(t, sort_keys=True)
            for t in spec.get("tolerations", []) or []]
    dups = sorted({t for t in tols if tols.count(t) > 1})
    if dups:
        bad.append("tolerations repeat: %s" % dups)
    return bad


def audit_command(binary, args):
    cmd = [binary, "audit", "--review", "-"] + list(args)
    if os.environ.get("VALGRIND") == "1":
        cmd = VALGRIND + cmd
    return cmd


def cmd_case(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="oracle.py case")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--rc", type=int, required=True)
    ap.add_argument("--allow-overwrite", action="store_true")
    ap.add_argument("args", nargs="*")
    o = ap.parse_args(argv)
    rep = Report()
    name = o.name
    base = os.path.join(o.dir, name)
    try:
        review = load_json(base + ".in.json")
    except (ValueError, UnicodeDecodeError, RecursionError):
        review = None
    try:
        body = load_json(base + ".out.json")
    except (OSError, ValueError) as e:
        rep.not_ok("%s (response)" % name, "cannot read the response: %s" % e)
        return rep
    bad = check_envelope(review, body, o.rc, o.args)
    if bad:
        rep.not_ok("%s (response)" % name, "\n".join(bad))
    else:
        rep.ok("%s (response envelope)" % name)
    if not isinstance(body, dict) or body.get("kind") == "Status":
        return rep
    resp = body.get("response") or {}
    try:
        ops = decode_patch(resp)
    except ValueError:
        return rep  # reported above

    # The reviewers' copy of the patch is current.
    pfile = base + ".patch.json"
    if ops is None:
        if os.path.exists(pfile):
            rep.not_ok("%s (patch.json)" % name,
                       "stale %s: the response has no patch; run UPDATE=1"
                       % os.path.basename(pfile))
        return rep
    want = json.dumps(ops, indent=2, ensure_ascii=False) + "\n"
    try:
        with open(pfile, encoding="utf-8") as f:
            have = f.read()
    except OSError:
        have = None
    if have != want:
        rep.not_ok("%s (patch.json)" % name,
                   "%s is missing or not the decoded patch; run UPDATE=1"
                   % os.path.basename(pfile))

    if not isinstance(review, dict) or not isinstance(
            (review.get("request") or {}).get("object"), dict):
        rep.not_ok("%s (oracle)" % name, "a patch, but no request.object")
        return rep
    pod = review["request"]["object"]
    bad = check_ops(pod, ops, o.allow_overwrite)
    if bad:
        rep.not_ok("%s (patch invariants)" % name, "\n".join(bad))
    else:
        rep.ok("%s (patch invariants: pointers, no repeats, no hostNetwork/"
               "privileged, user values kept)" % name)

    try:
        patched = jsonpatch.apply_patch(pod, ops, in_place=False)
    except (jsonpatch.JsonPatchException,
            jsonpointer.JsonPointerException) as e:
        rep.not_ok("%s (jsonpatch apply)" % name, "%s: %s"
                   % (type(e).__name__, e))
        return rep
    rep.ok("%s (jsonpatch applies cleanly)" % name)

    bad = check_pod(patched)
    if bad:
        rep.not_ok("%s (patched pod cross-field rules)" % name,
                   "\n".join(bad))
    else:
        rep.ok("%s (patched pod: no duplicate env/mount/volume/capability/"
               "toleration, extended requests == limits)" % name)

    if os.path.exists(base + ".novalidate"):
        rep.ok("%s (k8s-validate skipped: %s.novalidate) # SKIP"
               % (name, name))
    else:
        passed, out = run_validate(patched)
        if passed:
            rep.ok("%s (patched pod passes k8s-validate --strict)" % name)
        else:
            rep.not_ok("%s (patched pod fails k8s-validate --strict)" % name,
                       out)

    second = copy.deepcopy(review)
    second["request"]["object"] = patched
    try:
        p = subprocess.run(audit_command(o.bin, o.args),
                           input=json.dumps(second).encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=300 if os.environ.get("VALGRIND") == "1"
                           else 30)
    except subprocess.TimeoutExpired:
        rep.not_ok("%s (idempotent)" % name, "the second pass timed out")
        return rep
    err = p.stderr.decode(errors="replace")
    detail = []
    if p.returncode != 0:
        detail.append("the second pass exited %d" % p.returncode)
    if any(m in err for m in SANITIZER_MARKS):
        detail.append("sanitizer report on stderr")
    if detail:
        rep.not_ok("%s (idempotent)" % name,
                   "\n".join(detail) + "\n" + err[-3000:])
        return rep
    try:
        again = json.loads(p.stdout.decode("utf-8"))
        ops2 = decode_patch(again.get("response") or {})
    except (ValueError, AttributeError) as e:
        rep.not_ok("%s (idempotent)" % name,
                   "the second response is unreadable: %s" % e)
        return rep
    if ops2:
        rep.not_ok("%s (idempotent)" % name,
                   "the patched pod gets %d more ops:\n%s"
                   % (len(ops2), json.dumps(ops2, indent=2)))
    else:
        rep.ok("%s (idempotent: the patched pod gets no ops)" % name)
    return rep


# ------------------------------------------------------------ helpers

def cmd_write_patch(argv):
    out_json, patch_json = argv
    rep = Report()
    body = load_json(out_json)
    ops = None
    if isinstance(body, dict) and body.get("kind") != "Status":
        ops = decode_patch(body.get("response") or {})
    rel = os.path.relpath(patch_json, REPO)
    if ops is None:
        if os.path.exists(patch_json):
            os.remove(patch_json)
            print("removed: " + rel)
        return rep
    text = json.dumps(ops, indent=2, ensure_ascii=False) + "\n"
    try:
        with open(patch_json, encoding="utf-8") as f:
            if f.read() == text:
                return rep
    except OSError:
        pass
    with open(patch_json, "w", encoding="utf-8") as f:
        f.write(text)
    print("updated: " + rel)
    return rep


def cmd_http_code(argv):
    try:
        body = load_json(argv[0])
    except (OSError, ValueError):
        print(0)
        return Report()
    if isinstance(body, dict) and body.get("kind") == "Status":
        print(body.get("code", 0))
    else:
        print(200)
    return Report()


def pretty(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        doc = json.loads(data)
        resp = doc.get("response") if isinstance(doc, dict) else None
        if isinstance(resp, dict) and "patch" in resp:
            # Show the ops, not their base64.
            try:
                resp["patch"] = {"base64 of": decode_patch(resp)}
            except ValueError:
                pass
        return json.dumps(doc, indent=2, ensure_ascii=False).splitlines()
    except (ValueError, UnicodeDecodeError, RecursionError):
        return data.decode(errors="replace").splitlines()


def cmd_diff(argv):
    a, b = argv
    lines = list(difflib.unified_diff(pretty(a), pretty(b), "expected",
                                      "actual", lineterm="", n=2))
    if not lines:
        with open(a, "rb") as f1, open(b, "rb") as f2:
            x, y = f1.read(), f2.read()
        n = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]),
                 min(len(x), len(y)))
        lines = ["the same JSON, but the bytes differ at offset %d "
                 "(expected %d bytes, actual %d): %r vs %r"
                 % (n, len(x), len(y), x[n:n + 20], y[n:n + 20])]
    for line in lines[:60]:
        print(line)
    if len(lines) > 60:
        print("... %d more lines" % (len(lines) - 60))
    return Report()


COMMANDS = {
    "inputs": cmd_inputs,
    "case": cmd_case,
    "write-patch": cmd_write_patch,
    "http-code": cmd_http_code,
    "diff": cmd_diff,
}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit("usage: oracle.py %s ..." % "|".join(COMMANDS))
    rep = COMMANDS[sys.argv[1]](sys.argv[2:])
    sys.exit(1 if rep.failed else 0)


if __name__ == "__main__":
    main()
