#!/usr/bin/python3
"""Runs one scenario of test/kube: the stand-in apiserver (standin.py) in
this process, kube_dump against it, then compares the callbacks seen,
resource by resource, with the scenario's "expect", and the requests the
stand-in logged with what the API documentation asks of a client.

  check.py DUMP CERTDIR SCENARIO.json TMPDIR

Callback lines are written as short strings for comparison:
  replace a,b,c      replace with those items (in the server's order)
  ADDED x            an event of that type for object x
  restart REASON     a restart
  synced / unsynced WHY   a state change

Prints `ok - ...` / `not ok - ...` lines; exits 1 if any failed.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin  # noqa: E402

RESOURCES = ["nodes", "resourceflavors", "clusterqueues", "localqueues",
             "clustertrainingruntimes", "trainingruntimes", "deviceclasses",
             "resourceslices", "resourceclaimtemplates",
             "noderesourcetopologies"]
failed = 0
# A group no scenario line mentions is not installed: the client says so
# once, then only looks again (every 5 minutes, or sooner in a long run).
OPTIONAL = {"clustertrainingruntimes": "trainer",
            "trainingruntimes": "trainer", "deviceclasses": "dra",
            "resourceslices": "dra", "resourceclaimtemplates": "dra",
            "noderesourcetopologies": "nrt"}
NOT_SERVED = ["restart not_served", "replace", "unsynced not served"]


def wanted(sc, r):
    """What a resource's callbacks should be: the scenario's "expect" for
    it, else its "expect_every" (what every resource sees: a TLS failure),
    else nothing, or not served for an optional group left out."""
    if r in sc.get("expect", {}):
        return sc["expect"][r]
    if "expect_every" in sc:
        return sc["expect_every"]
    return NOT_SERVED if r in OPTIONAL else []


def callbacks_match(sc, r, seen):
    want = wanted(sc, r)
    if r in sc.get("expect_prefix", []):
        # A loop that goes on (an endless list, a 410 storm): how it
        # starts is what the scenario says.
        return seen[:len(want)] == want
    if r in sc.get("expect", {}) or "expect_every" in sc or \
            OPTIONAL.get(r) in sc:
        return seen == want
    return seen[:3] == NOT_SERVED and \
        all(x == "restart not_served" for x in seen[3:])


def ok(name):
    print("ok - " + name)


def not_ok(name, detail):
    global failed
    failed += 1
    print("not ok - %s: %s" % (name, detail))


def short(line):
    cb = line.get("cb")
    if cb == "replace":
        return "replace " + ",".join(line["names"]) if line["names"] \
            else "replace"
    if cb == "event":
        return "%s %s" % (line["type"], line["name"])
    if cb == "restart":
        return "restart " + line["reason"]
    if cb == "state":
        return "synced" if line["synced"] else "unsynced " + line["why"]
    return cb


def kubeconfig(path, server, ca, user):
    """A kubeconfig in the shape kubectl writes, with a decoy context."""
    lines = [
        "apiVersion: v1",
        "kind: Config",
        "current-context: standin",
        "clusters:",
        "- name: other",
        "  cluster: {server: 'https://192.0.2.1:6443'}",
        "- name: standin",
        "  cluster:",
        "    server: %s" % server,
    ] + ["    " + c for c in ca] + [
        "contexts:",
        "- name: other",
        "  context: {cluster: other, user: nobody}",
        "- name: standin",
        "  context:",
        "    cluster: standin",
        "    user: tester",
        "users:",
        "- name: tester",
        "  user:",
    ] + ["    " + u for u in user]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def b64file(path):
    import base64
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def main():
    dump, certs, scen_path, tmp = sys.argv[1:5]
    name = os.path.basename(scen_path)[:-5]
    with open(scen_path) as f:
        sc = json.load(f)

    server_token = os.path.join(tmp, "server-token")
    client_token = os.path.join(tmp, "client-token")
    for p in (server_token, client_token):
        with open(p, "w") as f:
            f.write("token-one\n")
    reqlog = os.path.join(tmp, "requests.jsonl")
    open(reqlog, "w").close()
    srv = standin.serve(sc, os.path.join(certs, "server.crt"),
                        os.path.join(certs, "server.key"),
                        os.path.join(certs, "ca.crt"), server_token,
                        client_token, reqlog)
    port = srv.server_address[1]
    server = "https://127.0.0.1:%d" % port

    # How kube_dump finds the stand-in.
    how = sc.get("auth", "token")
    args = [dump]
    env = dict(os.environ)
    env.update({"KUBE_DUMP_BACKOFF_MS": "100"})
    env.update(sc.get("env", {}))
    kc = os.path.join(tmp, "kube", "config")
    os.makedirs(os.path.dirname(kc), exist_ok=True)
    if how == "in_cluster":
        sa = os.path.join(tmp, "sa")
        os.makedirs(sa, exist_ok=True)
        os.symlink(os.path.join(certs, "ca.crt"), os.path.join(sa, "ca.crt"))
        os.symlink(client_token, os.path.join(sa, "token"))
        env.update({"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                    "KUBERNETES_SERVICE_PORT": str(port),
                    "TOPOGATE_SA_DIR": sa})
        args.append("--in-cluster")
    else:
        ca = ["certificate-authority-data: " +
              b64file(os.path.join(certs, "ca.crt"))]
        if how == "wrong_ca":
            ca = ["certificate-authority-data: " +
                  b64file(os.path.join(certs, "other-ca.crt"))]
        if how == "client_cert":
            user = ["client-certificate-data: " +
                    b64file(os.path.join(certs, "client.crt")),
                    "client-key-data: " +
                    b64file(os.path.join(certs, "client.key"))]
        elif how in ("token", "wrong_ca"):
            user = ["token: token-one"]
        else:
            # tokenFile relative to the kubeconfig's directory.
            os.symlink(client_token, os.path.join(tmp, "kube", "token"))
            user = ["tokenFile: token"]
            # ...and the CA by relative path too.
            os.symlink(os.path.join(certs, "ca.crt"),
                       os.path.join(tmp, "kube", "ca.crt"))
            ca = ["certificate-authority: ca.crt"]
        kubeconfig(kc, server, ca, user)
        args += ["--kubeconfig", kc]

    out_path = os.path.join(tmp, "dump.out")
    err_path = os.path.join(tmp, "dump.err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, env=env)

    deadline = time.monotonic() + sc.get("timeout", 20)
    seen = {}

    def read():
        got = {r: [] for r in RESOURCES}
        lines = []
        with open(out_path) as f:
            for raw in f:
                if not raw.endswith("\n"):
                    break
                line = json.loads(raw)
                lines.append(line)
                if "res" in line:
                    got[line["res"]].append(short(line))
        return got, lines

    while time.monotonic() < deadline and proc.poll() is None:
        seen, _ = read()
        if all(len(seen[r]) >= len(wanted(sc, r)) for r in RESOURCES):
            break
        time.sleep(0.1)
    # Anything more that was going to come comes now.
    time.sleep(sc.get("settle", 0.8))
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = "killed"
    stop_s = time.monotonic() - t0
    srv.stopping = True
    srv.shutdown()
    srv.server_close()
    seen, lines = read()
    stderr = open(err_path).read()

    for r in RESOURCES:
        want = wanted(sc, r)
        if callbacks_match(sc, r, seen[r]):
            ok("%s: %s callbacks" % (name, r))
        else:
            not_ok("%s: %s callbacks" % (name, r),
                   "\n    want %s\n    got  %s" % (want, seen[r]))
    # The kind serve files each resource's objects under is the kind the
    # API gives them (the stand-in's table, from the API docs and CRDs).
    kinds = [(x["res"], x.get("kind")) for x in lines
             if x.get("cb") in ("replace", "event")]
    bad = sorted(set(k for k in kinds if k[1] != standin.KINDS[k[0]][1]))
    if bad:
        not_ok("%s: kinds as the API names them" % name, bad[:3])
    elif kinds:
        ok("%s: kinds as the API names them (%d lines)" % (name, len(kinds)))
    if rc == 0 and lines and lines[-1].get("cb") == "stopped" and \
            stop_s < 2.5:
        ok("%s: stops on SIGTERM (%.2f s)" % (name, stop_s))
    else:
        not_ok("%s: stops on SIGTERM" % name,
               "rc %s in %.2f s, last line %s" % (rc, stop_s,
                                                   lines[-1:] or None))
    for r, bad in sc.get("never", {}).items():
        got = [x for x in seen[r] if any(x.startswith(b) for b in bad)]
        if got:
            not_ok("%s: %s never %s" % (name, r, bad), got[:3])
        else:
            ok("%s: %s never %s" % (name, r, bad))
    if any(line.get("cb") == "tick" for line in lines):
        ok("%s: ticks" % name)
    else:
        not_ok("%s: ticks" % name, "no tick line")
    if re.search(r"ERROR: \w+Sanitizer|runtime error:|LeakSanitizer",
                 stderr):
        not_ok("%s: no sanitizer report" % name, stderr[-3000:])
    for pat in sc.get("stderr", []):
        if re.search(pat, stderr):
            ok("%s: log says /%s/" % (name, pat))
        else:
            not_ok("%s: log says /%s/" % (name, pat), stderr[-1500:])

    check_requests(name, sc, reqlog)
    if failed:
        print("--- kube_dump stderr (last 25 lines)")
        print("\n".join(stderr.splitlines()[-25:]))
    return 1 if failed else 0


def check_requests(name, sc, reqlog):
    """What the API documentation asks of every client, then the
    scenario's own ordered patterns, per resource."""
    with open(reqlog) as f:
        reqs = [json.loads(x) for x in f]
    by_res = {r: [] for r in RESOURCES + ["discovery"]}
    times = {r: [] for r in by_res}
    bad = []
    for rq in reqs:
        u = urllib.parse.urlsplit(rq["path"])
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        res = u.path.rsplit("/", 1)[-1]
        res = res if res in by_res else "discovery"
        by_res[res].append(rq["path"])
        times[res].append(rq["t"])
        if res == "discovery":
            continue
        if q.get("watch"):
            if q.get("allowWatchBookmarks") != "true" or \
                    not 300 <= int(q.get("timeoutSeconds", 0)) <= 600 or \
                    not q.get("resourceVersion") or "limit" in q:
                bad.append("watch " + rq["path"])
        else:
            # limit=500, or after a watch's 410 a list at the last
            # resourceVersion, unpaged, as client-go's reflector asks it
            # of the watch cache.
            at_rv = q.get("resourceVersion") not in (None, "", "0") and \
                "limit" not in q and "continue" not in q
            if (q.get("limit") != "500" and not at_rv) or \
                    ("continue" in q and "resourceVersion" in q):
                bad.append("list " + rq["path"])
    if bad:
        not_ok("%s: requests as the API asks" % name, "; ".join(bad[:5]))
    else:
        ok("%s: requests as the API asks (%d)" % (name, len(reqs)))
    for res, i, lo, hi in sc.get("gaps", []):
        t = times[res]
        gap = t[i + 1] - t[i] if i + 1 < len(t) else None
        what = "%s: %s requests %d and %d %.1f-%.1f s apart" % (
            name, res, i, i + 1, lo, hi)
        if gap is not None and lo <= gap <= hi:
            ok(what + " (%.2f)" % gap)
        else:
            not_ok(what, "gap %s" % gap)
    for res, pat, lo, hi in sc.get("counts", []):
        n = sum(1 for p in by_res[res] if re.search(pat, p))
        what = "%s: %s requests /%s/: %d-%d" % (name, res, pat, lo, hi)
        if lo <= n <= hi:
            ok(what + " (%d)" % n)
        else:
            not_ok(what, "%d of them" % n)
    # A list cut at PAGES pages and started over (an endless list): each
    # round but the last, which the stop may cut anywhere, is one first
    # page and PAGES - 1 continues. Held however many rounds a busy
    # machine lets run before the stop.
    for res, first, cont, pages in sc.get("rounds", []):
        starts = sum(1 for p in by_res[res] if re.search(first, p))
        conts = sum(1 for p in by_res[res] if re.search(cont, p))
        what = "%s: %s lists cut at %d pages" % (name, res, pages)
        if (pages - 1) * (starts - 1) <= conts <= (pages - 1) * starts:
            ok(what + " (%d rounds, %d continues)" % (starts, conts))
        else:
            not_ok(what, "%d rounds, %d continues" % (starts, conts))
    for res, pats in sc.get("requests", {}).items():
        paths = by_res[res]
        i = 0
        for p in pats:
            while i < len(paths) and not re.search(p, paths[i]):
                i += 1
            if i == len(paths):
                not_ok("%s: %s requests" % (name, res),
                       "no /%s/ in order among %s" % (p, paths))
                break
            i += 1
        else:
            ok("%s: %s requests in order" % (name, res))


if __name__ == "__main__":
    sys.exit(main())
