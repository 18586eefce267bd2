"""The stand-in apiserver's writes (test/kube/standin.py), for the live
audit: server-side apply and DELETE of namespaced PolicyReports, POST and
DELETE of core v1 Events. Written from the API documentation:

- https://kubernetes.io/docs/reference/using-api/server-side-apply/:
  PATCH with Content-Type application/apply-patch+yaml (YAML, of which
  JSON is a subset); "fieldManager" is required for an apply; an apply
  creates the object when it does not exist (201) and updates it
  otherwise (200); with one manager and force=true the applied
  configuration is what the object holds (fields it no longer sets go).
- https://kubernetes.io/docs/reference/using-api/api-concepts/
  ("Resource URIs"): /api/v1/namespaces/NS/events,
  /apis/GROUP/VERSION/namespaces/NS/RESOURCE/NAME; a create of a name
  that exists is 409 AlreadyExists, a delete or patch target that does
  not exist 404 NotFound (an apply creates it), a body whose namespace
  differs from the URL's 400 BadRequest, DELETE answers a Status.
- A group not served (the CRD absent or deleted) is 404 for every path
  under it; RBAC that does not allow a verb is 403 Forbidden.

The scenario adds: "policyreport": {"versions": ["v1alpha2"]} (the CRD
is served), "forbid": [{"resource": R, "verb": V}] (403 for that verb:
"list", "watch", "patch", "create", "delete"), and "state_file": where
the reports and Events are written as JSON after every change, for the
test to read.
"""

import json
import urllib.parse

import yaml


def _state(server):
    path = server.scenario.get("state_file")
    if not path:
        return
    cl = server.cluster
    with cl.lock:
        state = {"policyreports": cl.objects.get("policyreports", {}),
                 "events": getattr(cl, "events", {})}
        text = json.dumps(state, indent=1, sort_keys=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    import os
    os.replace(tmp, path)


def forbidden(handler, resource, verb):
    for f in handler.server.scenario.get("forbid", []):
        if f.get("resource") == resource and f.get("verb") == verb:
            handler.send_status(403, "Forbidden", "%s is forbidden: User "
                                "\"system:serviceaccount:topogate:topogate\" "
                                "cannot %s resource \"%s\"" %
                                (resource, verb, resource))
            return True
    return False


def _body(handler):
    n = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(n) if n else b""


def _authorized(handler):
    if handler.server.scenario.get("client_cert"):
        return True
    want = "Bearer " + handler.server.token()
    if handler.headers.get("Authorization") != want:
        handler.send_status(401, "Unauthorized", "Unauthorized")
        return False
    return True


def _route(handler):
    """(resource, namespace, name or None, query) of a write's path, or
    None after answering 404."""
    url = urllib.parse.urlsplit(handler.path)
    q = {k: v[-1] for k, v in
         urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
    parts = [p for p in url.path.split("/") if p]
    sc = handler.server.scenario
    if parts[:3] == ["api", "v1", "namespaces"] and len(parts) in (5, 6) \
            and parts[4] == "events":
        return "events", parts[3], parts[5] if len(parts) == 6 else None, q
    if parts[:2] == ["apis", "wgpolicyk8s.io"] and len(parts) in (6, 7) \
            and parts[3] == "namespaces" and parts[5] == "policyreports":
        served = sc.get("policyreport")
        if served and parts[2] in served.get("versions", []):
            return "policyreports", parts[4], \
                parts[6] if len(parts) == 7 else None, q
    handler.send_status(404, "NotFound", "the server could not find the "
                        "requested resource")
    return None


def _write(handler, verb, here, not_here):
    """What every write does first: read the body, authenticate, route,
    answer 405 not_here unless here(resource, name), and 403 where the
    scenario forbids verb. (body, resource, namespace, name, query), or
    None once answered."""
    body = _body(handler)
    if not _authorized(handler):
        return None
    r = _route(handler)
    if r is None:
        return None
    res, _, name, _ = r
    if not here(res, name):
        handler.send_status(405, "MethodNotAllowed", not_here)
        return None
    if forbidden(handler, res, verb):
        return None
    return (body,) + r


def do_PATCH(self):
    w = _write(self, "patch",
               lambda res, name: res == "policyreports" and name is not None,
               "not here")
    if w is None:
        return
    body, res, ns, name, q = w
    if self.headers.get("Content-Type") != "application/apply-patch+yaml":
        self.send_status(415, "UnsupportedMediaType", "apply only here")
        return
    if not q.get("fieldManager"):
        self.send_status(422, "Invalid", "PatchOptions.meta.k8s.io "
                         "\"\" is invalid: fieldManager: Required value: "
                         "is required for apply patch")
        return
    try:
        obj = yaml.safe_load(body)
    except yaml.YAMLError as e:
        self.send_status(400, "BadRequest", "error decoding YAML: %s" % e)
        return
    md = (obj or {}).get("metadata") or {}
    if obj.get("kind") != "PolicyReport" or \
            obj.get("apiVersion") != "wgpolicyk8s.io/" + \
            self.path.split("/")[3]:
        self.send_status(400, "BadRequest", "apiVersion and kind must be "
                         "those of the URL")
        return
    if md.get("name") != name or md.get("namespace", ns) != ns:
        self.send_status(400, "BadRequest", "the name or namespace of the "
                         "object does not match the request")
        return
    cl = self.server.cluster
    key = ns + "/" + name
    with cl.lock:
        existed = key in cl.objects["policyreports"]
        obj["metadata"]["namespace"] = ns
        stored = cl.put("policyreports", "MODIFIED" if existed else "ADDED",
                        obj)
    _state(self.server)
    self.send_json(200 if existed else 201, stored)


def do_POST(self):
    w = _write(self, "create",
               lambda res, name: res == "events" and name is None,
               "not here")
    if w is None:
        return
    body, res, ns, name, q = w
    try:
        obj = json.loads(body)
    except ValueError as e:
        self.send_status(400, "BadRequest", "not JSON: %s" % e)
        return
    md = obj.get("metadata") or {}
    if md.get("namespace", ns) != ns or \
            (obj.get("involvedObject") or {}).get("namespace", ns) != ns:
        self.send_status(400, "BadRequest", "the namespace of the provided "
                         "object does not match the namespace sent on the "
                         "request")
        return
    if not md.get("name") or obj.get("kind") != "Event":
        self.send_status(422, "Invalid", "an Event needs a name and kind")
        return
    cl = self.server.cluster
    with cl.lock:
        events = cl.__dict__.setdefault("events", {})
        key = ns + "/" + md["name"]
        exists = key in events
        if not exists:
            cl.rv += 1
            obj["metadata"]["namespace"] = ns
            obj["metadata"]["resourceVersion"] = str(cl.rv)
            events[key] = obj
            cl.__dict__.setdefault("events_created", []).append(key)
    if exists:
        self.send_status(409, "AlreadyExists", "events \"%s\" already "
                         "exists" % md["name"])
        return
    _state(self.server)
    self.send_json(201, obj)


def do_DELETE(self):
    w = _write(self, "delete", lambda res, name: name is not None,
               "no collection delete")
    if w is None:
        return
    _, res, ns, name, q = w
    cl = self.server.cluster
    key = ns + "/" + name
    with cl.lock:
        if res == "events":
            found = cl.__dict__.setdefault("events", {}).pop(key, None)
        elif key in cl.objects["policyreports"]:
            found = cl.put("policyreports", "DELETED",
                           {"metadata": {"name": name, "namespace": ns}})
        else:
            found = None
    if found is None:
        self.send_status(404, "NotFound", "%s \"%s\" not found" %
                         (res, name))
        return
    _state(self.server)
    self.send_json(200, {"kind": "Status", "apiVersion": "v1",
                         "metadata": {}, "status": "Success",
                         "details": {"name": name, "kind": res}})


def install(handler, server):
    handler.do_PATCH = do_PATCH
    handler.do_POST = do_POST
    handler.do_DELETE = do_DELETE
    orig = handler.do_GET

    def do_GET(self):
        # RBAC on the reads of the live audit's resources.
        path = urllib.parse.urlsplit(self.path).path
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        verb = "watch" if q.get("watch", [""])[-1] in ("1", "true") \
            else "list"
        res = "pods" if path == "/api/v1/pods" else \
            "policyreports" if path.startswith("/apis/wgpolicyk8s.io/") and \
            path.endswith("/policyreports") else None
        if res and self.server.scenario.get("client_cert") is None and \
                self.headers.get("Authorization") == \
                "Bearer " + self.server.token() and \
                forbidden(self, res, verb):
            return
        orig(self)
    handler.do_GET = do_GET
