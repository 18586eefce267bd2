#!/usr/bin/python3
"""A stand-in kube-apiserver for test/kube: nodes and the API groups of
the CRDs the cluster view reads (Kueue, Trainer, DRA, NFD's
NodeResourceTopology) and the live audit's, over HTTPS, scripted per
scenario.

Written from the API documentation, not from topogate's client:
https://kubernetes.io/docs/reference/using-api/api-concepts/ ("Efficient
detection of changes", "Watch bookmarks", "Retrieving large results sets
in chunks", "Resource versions") and the common parameters reference.
What it does, as those pages say the apiserver does:

- Every object and list carries metadata.resourceVersion, one counter for
  all resources (etcd's revision). A list's RV is that of the snapshot;
  every page of a paginated list shares it.
- LIST takes limit and continue; the server may return fewer than limit
  (here at most scenario "max_page") and sets metadata.continue while
  more remain. A continue request must not carry resourceVersion (the
  token encodes it): 400. An expired continue token: 410 with a Status of
  reason "Expired".
- WATCH (?watch=1) takes resourceVersion and streams, with
  Transfer-Encoding: chunked, one JSON object per event
  {"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": ...},
  newline-terminated. Events after the given RV are replayed from history;
  an RV older than the compacted history is 410 Gone, as an HTTP status
  or, as the watch cache does, as an ERROR event carrying a Status with
  code 410. BOOKMARK objects carry only metadata.resourceVersion, and
  only when allowWatchBookmarks=true. limit/continue with watch: 400.
  The watch ends at timeoutSeconds.
- GET /apis/GROUP is an APIGroup {versions, preferredVersion}; a group not
  served is 404. A missing or wrong bearer token is 401.

The scenario (a JSON file) says what the cluster holds and what goes
wrong; see test/kube/scenarios/*.json and the comments in run.sh.
Every request is appended to the request log as one JSON line.

Fleet scale (test/kube/view-scale.sh): scenario "generate" makes nodes
GPU nodes of a few pools by number instead of listing them, without
keeping them (50,000 realistic nodes would not fit in this process),
and streams such a list with chunked encoding. As the watch cache does
for a list at resourceVersion=0, it ignores limit and answers the whole
list in one page (client-go tools/cache/reflector.go, list(): "watch
cache is ignoring Limit in that case anyway"); "rv0_paged": true pages
it all the same. Two hostile servers: "endless_list" gives every page a
continue token (and new names), forever; "expire_every_watch" answers
every watch 410 Gone.
"""

import base64
import copy
import http.server
import json
import os
import select
import socket
import ssl
import sys
import threading
import time
import urllib.parse

KUEUE = "kueue.x-k8s.io"
TRAINER = "trainer.kubeflow.org"
# Dynamic Resource Allocation, GA in Kubernetes 1.34 (resource.k8s.io/v1):
# served only when the scenario says so, as on a cluster before 1.34.
RESOURCE = "resource.k8s.io"
WGPOLICY = "wgpolicyk8s.io"
# NFD's NodeResourceTopology CRD: cluster-scoped, v1alpha2 (storage) and
# v1alpha1 (k8stopologyawareschedwg/noderesourcetopology-api 7f99f9c2
# manifests/crd.yaml).
NRT = "topology.node.k8s.io"
KINDS = {
    "nodes": ("v1", "Node"),
    "resourceflavors": (KUEUE, "ResourceFlavor"),
    "clusterqueues": (KUEUE, "ClusterQueue"),
    "localqueues": (KUEUE, "LocalQueue"),
    "clustertrainingruntimes": (TRAINER, "ClusterTrainingRuntime"),
    "trainingruntimes": (TRAINER, "TrainingRuntime"),
    "deviceclasses": (RESOURCE, "DeviceClass"),
    "resourceslices": (RESOURCE, "ResourceSlice"),
    "resourceclaimtemplates": (RESOURCE, "ResourceClaimTemplate"),
    "noderesourcetopologies": (NRT, "NodeResourceTopology"),
    # The live audit's (standin_writes.py): pods, listed and watched
    # across namespaces with a labelSelector, and PolicyReports, also
    # written (server-side apply, DELETE).
    "pods": ("v1", "Pod"),
    "policyreports": (WGPOLICY, "PolicyReport"),
}
# Namespaced kinds stored under "namespace/name" (the others by name).
NAMESPACED = ("pods", "policyreports")
# An API group a CRD adds is served only when the scenario says which
# versions: scenario["kueue"] / scenario["trainer"] / scenario["dra"] /
# scenario["nrt"] / scenario["policyreport"] = {"versions": [...]}.
GROUP_KEYS = {KUEUE: "kueue", TRAINER: "trainer", RESOURCE: "dra",
              NRT: "nrt", WGPOLICY: "policyreport"}


# The pools of a generated cluster: nodegroup, instance type, GPUs, EFA.
POOLS = [("p5-a", "p5.48xlarge", 8, 32), ("p5-b", "p5.48xlarge", 8, 32),
         ("p4d", "p4d.24xlarge", 8, 4), ("g5", "g5.12xlarge", 4, 0),
         ("g6e", "g6e.48xlarge", 8, 0)]


def generated_node(gen, i):
    """Node number i of a generated cluster (of gen["pools"] node groups,
    5 by default): labels as EKS, GPU Feature Discovery and the GPU
    Operator write them, one label unique to the
    node when gen["unique_label"], a node-condition taint on one node in
    97, and a status as the kubelet fills it (images included: they are
    most of a real Node's bytes)."""
    group, itype, gpus, efa = POOLS[i % len(POOLS)]
    if gen.get("pools"):  # more node groups, of the same five shapes
        group = "pool-%d" % (i % gen["pools"])
    name = "ip-10-%d-%d-%d.ec2.internal" % (i >> 16, (i >> 8) & 255, i & 255)
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": itype,
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": group,
        "eks.amazonaws.com/nodegroup-image": "ami-0c7f2c5e9b1e4a111",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": itype,
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": "us-east-1a",
        "topology.k8s.aws/network-node-layer-1": "nn-%08x" % (i // 16),
        "nvidia.com/gfd.timestamp": str(1760000000 + i),
        "nvidia.com/gpu.count": str(gpus),
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/cuda.driver.major": "570",
        "nvidia.com/cuda.driver.minor": "133",
        "nvidia.com/gpu.deploy.device-plugin": "true",
        "nvidia.com/gpu.deploy.dcgm-exporter": "true",
        "feature.node.kubernetes.io/pci-10de.present": "true",
    }
    if gen.get("unique_label"):
        labels["example.com/node-serial"] = "SN%07d" % i
    taints = [{"key": "nvidia.com/gpu", "value": "true",
               "effect": "NoSchedule"}]
    if i % 97 == 0:
        taints.append({"key": "node.kubernetes.io/not-ready",
                       "effect": "NoExecute"})
    alloc = {"cpu": "191450m", "memory": "2047123456Ki", "pods": "737",
             "nvidia.com/gpu": str(gpus), "ephemeral-storage": "95551679124"}
    if efa:
        alloc["vpc.amazonaws.com/efa"] = str(efa)
    images = [{"names": ["registry.example/team/image-%d@sha256:%064x"
                         % (j, i * 31 + j), "registry.example/team/"
                         "image-%d:v%d" % (j, j)],
               "sizeBytes": 1000000 + j} for j in range(gen.get("images", 8))]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels,
                         "uid": "%032x" % i,
                         "resourceVersion": "100",
                         "annotations": {
                             "node.alpha.kubernetes.io/ttl": "0",
                             "volumes.kubernetes.io/controller-managed-"
                             "attach-detach": "true"}},
            "spec": {"providerID": "aws:///us-east-1a/i-%017x" % i,
                     "taints": taints},
            "status": {"allocatable": alloc, "capacity": alloc,
                       "conditions": [{"type": t, "status": "False",
                                       "reason": "Kubelet" + t}
                                      for t in ("MemoryPressure",
                                                "DiskPressure",
                                                "PIDPressure")],
                       "images": images,
                       "nodeInfo": {"kubeletVersion": "v1.34.1",
                                    "containerRuntimeVersion":
                                    "containerd://2.1.4"}}}


def selects(selector, obj):
    """Whether a labelSelector selects obj: comma-separated requirements,
    each "key", "!key", "key=value", "key==value" or "key!=value"
    (https://kubernetes.io/docs/concepts/overview/working-with-objects/
    labels/, "Label selectors", equality-based and exists)."""
    if not selector:
        return True
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for req in selector.split(","):
        req = req.strip()
        if "!=" in req:
            k, v = req.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in req:
            k, v = req.replace("==", "=").split("=", 1)
            if labels.get(k) != v:
                return False
        elif req.startswith("!"):
            if req[1:] in labels:
                return False
        elif req not in labels:
            return False
    return True


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason,
            "code": code}


class Cluster:
    """Objects, one resourceVersion counter, and the event history."""

    def version_of(self, res):
        """The first version the scenario serves res's group in."""
        served = self.scenario.get(GROUP_KEYS[KINDS[res][0]]) or {}
        return (served.get("versions") or ["v1"])[0]

    def __init__(self, scenario):
        self.lock = threading.Lock()
        self.rv = 100
        self.compacted = 0  # watches from an RV below this get 410
        self.objects = {r: {} for r in KINDS}
        self.history = []  # (rv, resource, type, object)
        self.snapshots = {}  # continue id -> (rv, [objects])
        self.next_snapshot = 1
        self.counts = {}  # (resource, "list"|"watch"|...) -> requests so far
        self.scenario = scenario
        # A generated cluster: nodes 0 .. generated-1, never stored.
        self.generated = (scenario.get("generate") or {}).get("nodes", 0)
        for res in KINDS:
            for obj in scenario.get("objects", {}).get(res, []):
                self.put(res, "ADDED", obj)

    def put(self, res, etype, obj):
        """Applies a change under a new RV; returns the stored object."""
        self.rv += 1
        obj = copy.deepcopy(obj)
        name = obj["metadata"]["name"]
        if res in NAMESPACED:
            if "/" in name:  # a scenario's {"delete": "ns/name"}
                obj["metadata"]["namespace"], obj["metadata"]["name"] = \
                    name.split("/", 1)
            name = obj["metadata"].get("namespace", "") + "/" + \
                obj["metadata"]["name"]
        if etype == "DELETED":
            obj = self.objects[res].pop(name)
            obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        obj.setdefault("apiVersion", KINDS[res][0] if KINDS[res][0] == "v1"
                       else KINDS[res][0] + "/" + self.version_of(res))
        obj.setdefault("kind", KINDS[res][1])
        if etype != "DELETED":
            self.objects[res][name] = obj
        self.history.append((self.rv, res, etype, obj))
        return obj

    def count(self, res, kind):
        with self.lock:
            n = self.counts.get((res, kind), 0) + 1
            self.counts[(res, kind)] = n
            return n


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "standin-apiserver"

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        # Headers and body go out as two writes: without this, Nagle's
        # algorithm holds the body for the client's delayed ACK (40 ms a
        # request), which a list of 1,000 pages would feel.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # --- plumbing ----------------------------------------------------------

    def record(self, code, note=""):
        self.server.log_request_line(self.path, code, note, self.command)

    def send_json(self, code, obj, delay=0.0, headers=()):
        body = (json.dumps(obj) + "\n").encode()
        self.record(code)
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if delay:
            # A slow server: half the body, a pause, the rest.
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            time.sleep(delay)
            self.wfile.write(body[len(body) // 2:])
        else:
            self.wfile.write(body)
        self.wfile.flush()

    def send_status(self, code, reason, message, headers=()):
        self.send_json(code, status(code, reason, message), headers=headers)

    def chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    # --- requests ----------------------------------------------------------

    def do_GET(self):
        sc = self.server.scenario
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        q = {k: v[-1] for k, v in q.items()}
        parts = [p for p in url.path.split("/") if p]

        if not sc.get("client_cert"):
            want = "Bearer " + self.server.token()
            if self.headers.get("Authorization") != want:
                self.send_status(401, "Unauthorized", "Unauthorized")
                return
        if self.headers.get("Accept") not in (None, "application/json",
                                              "*/*"):
            self.send_status(406, "NotAcceptable", "json only here")
            return

        # /api/v1/nodes, /apis/G (discovery), /apis/G/V/R
        group = parts[1] if len(parts) >= 2 and parts[0] == "apis" else None
        served = sc.get(GROUP_KEYS.get(group, ""))
        if parts == ["api", "v1", "nodes"]:
            res = "nodes"
        elif parts == ["api", "v1", "pods"]:
            res = "pods"
        elif len(parts) == 2 and group in GROUP_KEYS:
            if self.fault(group, "discovery"):
                return
            if not served:
                self.send_status(404, "NotFound", "the server could not "
                                 "find the requested resource")
                return
            vs = [{"groupVersion": group + "/" + v, "version": v}
                  for v in served["versions"]]
            self.send_json(200, {"kind": "APIGroup", "apiVersion": "v1",
                                 "name": group, "versions": vs,
                                 "preferredVersion": vs[0]})
            return
        elif (len(parts) == 4 and group in GROUP_KEYS and served
              and parts[3] in KINDS and KINDS[parts[3]][0] == group
              and parts[2] in served["versions"]):
            res = parts[3]
        else:
            self.send_status(404, "NotFound", "the server could not find "
                             "the requested resource")
            return

        if q.get("watch") in ("1", "true"):
            self.watch(res, q)
        else:
            self.list(res, q)

    def fault(self, res, kind):
        """A scripted failure for the nth request of this kind, if any."""
        n = self.server.cluster.count(res, kind)
        for f in self.server.scenario.get("faults", []):
            if f["resource"] == res and f["kind"] == kind and f["nth"] == n:
                code = f["status"]
                if code == "drop":
                    self.record(0, "dropped before answering")
                    self.close_hard()
                    return True
                hdrs = [("Retry-After", str(f["retry_after"]))] \
                    if "retry_after" in f else []
                self.send_status(code, f.get("reason", "Fault"),
                                 f.get("message", "scripted %d" % code),
                                 headers=hdrs)
                return True
        return False

    def close_hard(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def list(self, res, q):
        sc = self.server.scenario
        cl = self.server.cluster
        if self.fault(res, "list"):
            return
        limit = int(q.get("limit") or 0)
        cont = q.get("continue", "")
        if res == "nodes" and sc.get("endless_list"):
            self.list_endless(cont)
            return
        if res == "nodes" and cl.generated:
            self.list_generated(q, limit, cont)
            return
        if cont and q.get("resourceVersion"):
            self.send_status(400, "BadRequest", "specifying resource "
                             "version is not allowed when using continue")
            return
        with cl.lock:
            if cont:
                try:
                    tok = json.loads(base64.urlsafe_b64decode(cont))
                    snap_id, start = tok["id"], tok["start"]
                except (ValueError, KeyError):
                    self.send_status(400, "BadRequest", "invalid continue")
                    return
                if snap_id in self.server.expired_snapshots or \
                        snap_id not in cl.snapshots:
                    self.send_status(410, "Expired", "The provided continue "
                                     "parameter is too old to display a "
                                     "consistent list result. You can start "
                                     "a new list without the continue "
                                     "parameter.")
                    return
                rv, objs = cl.snapshots[snap_id]
            else:
                rv = cl.rv
                objs = [copy.deepcopy(cl.objects[res][k])
                        for k in sorted(cl.objects[res])
                        if selects(q.get("labelSelector"),
                                   cl.objects[res][k])]
                snap_id = cl.next_snapshot
                cl.next_snapshot += 1
                cl.snapshots[snap_id] = (rv, objs)
                start = 0
        page = limit if limit > 0 else len(objs)
        page = min(page, sc.get("max_page", page)) or len(objs)
        items = objs[start:start + page]
        md = {"resourceVersion": str(rv)}
        if start + page < len(objs):
            tok = {"id": snap_id, "start": start + page}
            md["continue"] = base64.urlsafe_b64encode(
                json.dumps(tok).encode()).decode()
            md["remainingItemCount"] = len(objs) - start - page
            # The scenario may expire this list's token before it is used.
            n_list = self.server.cluster.counts.get((res, "list"), 0)
            for e in sc.get("expire_continue", []):
                if e["resource"] == res and e["list"] == n_list:
                    self.server.expired_snapshots.add(snap_id)
        kind = KINDS[res][1] + "List"
        api = "v1" if KINDS[res][0] == "v1" else KINDS[res][0] + "/" + \
            self.path.split("/")[3]
        self.send_json(200, {"kind": kind, "apiVersion": api,
                             "metadata": md, "items": items},
                       delay=sc.get("list_delay", 0))

    def list_endless(self, cont):
        """A page of one new node and a continue token, always."""
        page = int(cont or "0") + 1
        with self.server.cluster.lock:
            rv = self.server.cluster.rv
        item = generated_node({}, page)
        item["metadata"]["name"] = "endless-%d" % page
        self.send_json(200, {"kind": "NodeList", "apiVersion": "v1",
                             "metadata": {"resourceVersion": str(rv),
                                          "continue": str(page)},
                             "items": [item]})

    def list_generated(self, q, limit, cont):
        """A generated cluster, streamed: metadata after the items when
        the scenario says so (JSON members have no order)."""
        sc = self.server.scenario
        cl = self.server.cluster
        gen = sc["generate"]
        with cl.lock:
            rv, total = cl.rv, cl.generated
        start = 0
        if cont:
            tok = json.loads(base64.urlsafe_b64decode(cont))
            start, rv, total = tok["start"], tok["rv"], tok["total"]
        whole = q.get("resourceVersion") == "0" and not sc.get("rv0_paged")
        page = total - start if whole or limit <= 0 else limit
        end = min(total, start + page)
        md = {"resourceVersion": str(rv)}
        if end < total:
            md["continue"] = base64.urlsafe_b64encode(json.dumps(
                {"start": end, "rv": rv, "total": total}).encode()).decode()
        head = {"kind": "NodeList", "apiVersion": "v1"}
        if not gen.get("metadata_last"):
            head["metadata"] = md
        self.record(200, "generated %d-%d" % (start, end))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.chunk(json.dumps(head)[:-1].encode() + b', "items": [')
            buf = []
            for i in range(start, end):
                buf.append(json.dumps(generated_node(gen, i)))
                if len(buf) == 200 or i == end - 1:
                    sep = b"," if i != end - 1 else b""
                    self.chunk(",".join(buf).encode() + sep)
                    buf = []
            tail = b"]"
            if gen.get("metadata_last"):
                tail += b', "metadata": ' + json.dumps(md).encode()
            self.chunk(tail + b"}\n")
            self.end_stream()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    # --- watch ---------------------------------------------------------------

    def event_bytes(self, etype, obj):
        return (json.dumps({"type": etype, "object": obj}) + "\n").encode()

    def send_events(self, data, pieces):
        """Writes data as `pieces` chunks, cut mid-event, with pauses so
        the client reads them apart."""
        if pieces <= 1:
            self.chunk(data)
            return
        step = max(1, len(data) // pieces)
        cuts = list(range(0, len(data), step))[:pieces] + [len(data)]
        for a, b in zip(cuts, cuts[1:]):
            self.chunk(data[a:b])
            time.sleep(0.03)

    def watch(self, res, q):
        sc = self.server.scenario
        cl = self.server.cluster
        sel = q.get("labelSelector")
        self.selector = sel
        # Each selector of a resource is a watch of its own: its count,
        # its faults, its script ("pods?training.kubeflow.org/job-name").
        sres = res + "?" + sel if sel else res
        n = cl.count(sres, "watch")
        if self.fault(sres, "watch_status"):
            return
        if sc.get("expire_every_watch"):
            self.send_status(410, "Expired", "too old resource version")
            return
        if "limit" in q or "continue" in q:
            self.send_status(400, "BadRequest", "limit and continue are "
                             "not allowed with watch")
            return
        rv = q.get("resourceVersion", "")
        bookmarks = q.get("allowWatchBookmarks") == "true"
        timeout = float(q.get("timeoutSeconds") or 1800)
        with cl.lock:
            too_old = rv not in ("", "0") and int(rv) < cl.compacted
            replay = [(erv, t, o) for erv, r, t, o in cl.history
                      if r == res and rv not in ("", "0") and erv > int(rv)
                      and selects(sel, o)]
            if rv in ("", "0"):
                # Synthetic ADDED events for the current state.
                replay = [(cl.rv, "ADDED", o) for _, o in
                          sorted(cl.objects[res].items())
                          if selects(sel, o)]
        if too_old and sc.get("expired_as", "status") == "status":
            self.send_status(410, "Expired", "too old resource version: "
                             "%s (%d)" % (rv, cl.compacted))
            return
        self.record(200, "watch %d" % n)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        try:
            if too_old:
                st = status(410, "Expired", "too old resource version: "
                            "%s (%d)" % (rv, cl.compacted))
                self.chunk(self.event_bytes("ERROR", st))
                self.end_stream()
                return
            for _, t, o in replay:
                self.send_events(self.event_bytes(t, o), 2)
            script = sc.get("watch", {}).get(sres, [])
            steps = script[n - 1] if n - 1 < len(script) else []
            deadline = time.monotonic() + timeout
            for step in steps:
                if self.step(res, step, bookmarks) == "closed":
                    return
            while time.monotonic() < deadline and not self.server.stopping:
                if self.client_gone():
                    return
                if res in NAMESPACED and KINDS[res][0] != "v1" and \
                        not sc.get(GROUP_KEYS[KINDS[res][0]]):
                    break  # the CRD was deleted: its watches end
            self.end_stream()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def client_gone(self):
        """Waits a moment; true when the client closed its end."""
        r, _, _ = select.select([self.connection], [], [], 0.05)
        if not r:
            return False
        try:
            return self.connection.recv(1) == b""
        except ssl.SSLWantReadError:
            return False
        except OSError:
            return True

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True

    def step(self, res, step, bookmarks):
        cl = self.server.cluster
        pieces = step.get("chunks", 2)
        if "batch" in step:
            # Several events in one chunk.
            data = b""
            for s in step["batch"]:
                data += self.change(res, s)
            self.send_events(data, 1)
        elif any(k in step for k in ("add", "add_big", "modify", "delete")):
            data = self.change(res, step)
            if not step.get("silent"):
                self.send_events(data, pieces)
        elif "bookmark" in step:
            if bookmarks:
                with cl.lock:
                    rv = str(cl.rv)
                # The version watched: /apis/GROUP/VERSION/RESOURCE.
                group = KINDS[res][0]
                obj = {"kind": KINDS[res][1],
                       "apiVersion": group if group == "v1"
                       else group + "/" + self.path.split("/")[3],
                       "metadata": {"resourceVersion": rv}}
                self.send_events(self.event_bytes("BOOKMARK", obj), pieces)
        elif "compact" in step:
            with cl.lock:
                cl.compacted = cl.rv
        elif "error" in step:
            code = step["error"]
            reason = {410: "Expired", 500: "InternalError"}.get(code, "Bad")
            st = status(code, reason, "scripted ERROR event %d" % code)
            self.send_events(self.event_bytes("ERROR", st), pieces)
            self.end_stream()
            return "closed"
        elif "sleep" in step:
            time.sleep(step["sleep"])
        elif "shrink_generated" in step:
            # The cluster shrinks to its first n nodes: a DELETED event
            # for each of the others.
            keep = step["shrink_generated"]
            gen = self.server.scenario["generate"]
            with cl.lock:
                old, cl.generated = cl.generated, keep
            for lo in range(keep, old, 500):
                data = b""
                for i in range(lo, min(old, lo + 500)):
                    with cl.lock:
                        cl.rv += 1
                        rv = cl.rv
                    obj = generated_node(gen, i)
                    obj["metadata"]["resourceVersion"] = str(rv)
                    data += self.event_bytes("DELETED", obj)
                self.chunk(data)
        elif "wait_for" in step:
            # The test's cue: until this file exists (test/e2e/view.sh
            # drives the cluster's changes step by step this way).
            while not os.path.exists(step["wait_for"]):
                if self.server.stopping or self.client_gone():
                    return "closed"
                time.sleep(0.05)
        elif "policyreport_off" in step:
            # The PolicyReport CRD is deleted: not served, no reports.
            self.server.scenario["policyreport"] = None
            with cl.lock:
                cl.objects["policyreports"] = {}
        elif "kueue_off" in step:
            # The CRDs are deleted: the group is no longer served.
            self.server.scenario["kueue"] = None
        elif "rotate_token" in step:
            self.server.rotate(step["rotate_token"])
        elif "raw" in step:
            self.chunk(step["raw"].encode())
        elif "drop" in step:
            # Half an event, then the connection goes without the
            # terminating chunk.
            data = self.event_bytes("ADDED", {"metadata": {"name": "half"}})
            self.chunk(data[: len(data) // 2])
            time.sleep(0.05)
            self.close_hard()
            return "closed"
        elif "end" in step:
            self.end_stream()
            return "closed"
        return None

    def change(self, res, step):
        """Applies a step's change; its event, or b"" when this watch's
        labelSelector does not select the object."""
        cl = self.server.cluster
        with cl.lock:
            if "add" in step:
                obj = cl.put(res, "ADDED", step["add"])
                t = "ADDED"
            elif "add_big" in step:
                big = step["add_big"]
                obj = cl.put(res, "ADDED", {"metadata": {
                    "name": big["name"],
                    "annotations": {"blob": "x" * big["bytes"]}}})
                t = "ADDED"
            elif "modify" in step:
                obj = cl.put(res, "MODIFIED", step["modify"])
                t = "MODIFIED"
            else:
                obj = cl.put(res, "DELETED",
                             {"metadata": {"name": step["delete"]}})
                t = "DELETED"
        if not selects(getattr(self, "selector", None), obj):
            return b""
        return self.event_bytes(t, obj)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, scenario, token_file, client_token_file,
                 request_log):
        super().__init__(addr, Handler)
        self.scenario = scenario
        self.cluster = Cluster(scenario)
        self.token_file = token_file
        self.client_token_file = client_token_file
        self.request_log = request_log
        self.expired_snapshots = set()
        self.stopping = False
        self.log_lock = threading.Lock()

    def token(self):
        with open(self.token_file) as f:
            return f.read().strip()

    def rotate(self, new):
        """The kubelet's rotation, made abrupt: the old token stops
        working at once, and the client's file holds the new one."""
        for path in (self.token_file, self.client_token_file):
            if path:
                tmp = path + ".tmp"
                with open(tmp, "w") as f:
                    f.write(new + "\n")
                os.replace(tmp, path)

    def log_request_line(self, path, code, note, method="GET"):
        with self.log_lock:
            with open(self.request_log, "a") as f:
                f.write(json.dumps({"path": path, "code": code,
                                    "note": note, "method": method,
                                    "t": time.monotonic()}) + "\n")


def serve(scenario, cert, key, ca, token_file, client_token_file,
          request_log, port=0, host="127.0.0.1"):
    """Starts the server in a thread; returns it (server_address has the
    port)."""
    srv = Server((host, port), scenario, token_file, client_token_file,
                 request_log)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if scenario.get("client_cert"):
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(ca)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    return srv


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--client-token-file")
    ap.add_argument("--request-log", default="/dev/null")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    with open(a.scenario) as f:
        sc = json.load(f)
    srv = serve(sc, a.cert, a.key, a.ca, a.token_file, a.client_token_file,
                a.request_log, a.port)
    print("listening on %d" % srv.server_address[1], flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


# The writes (PATCH, POST, DELETE): a module of their own.
import standin_writes  # noqa: E402
standin_writes.install(Handler, Server)


if __name__ == "__main__":
    sys.exit(main())
