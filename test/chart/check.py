#!/usr/bin/python3
"""Asserts the properties of a rendered topogate chart.

    check.py render CASE RENDERED.yaml VALUES.yaml POLICY_OUT
        checks the objects of one rendering and writes the policy of its
        ConfigMap to POLICY_OUT (run.sh then loads it with topogate);
        KUBE_MINOR (environment, default 36) is the Kubernetes 1.x it was
        rendered for;
    check.py policy CASE VALUES.yaml LOADED.yaml
        checks what topogate loaded (`topogate tables -o yaml`) against
        the values' mode and overrides.

Expectations come from the values file and the chart's values.yaml, merged
as Helm merges them, so each case states only what differs. Prints one line
per failed property and exits 1 when any failed.
"""
import copy
import os
import re
import sys

import yaml

CHART = "charts/topogate"
RELEASE, NAMESPACE = "topogate", "topogate-system"
# The directory the in-cluster client reads (token, ca.crt, namespace).
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# What the cluster view may read, and how: issue 12, "Install"; and
# Trainer's runtimes, which a TrainJob's pods come from; DRA's classes,
# slices and claim templates (issue 46); NFD's NodeResourceTopologies
# (each node's kubelet Topology Manager policy).
VIEW_RULES = {("", "nodes"), ("kueue.x-k8s.io", "resourceflavors"),
              ("kueue.x-k8s.io", "clusterqueues"),
              ("kueue.x-k8s.io", "localqueues"),
              ("trainer.kubeflow.org", "clustertrainingruntimes"),
              ("trainer.kubeflow.org", "trainingruntimes"),
              ("resource.k8s.io", "deviceclasses"),
              ("resource.k8s.io", "resourceslices"),
              ("resource.k8s.io", "resourceclaimtemplates"),
              ("topology.node.k8s.io", "noderesourcetopologies")}
VIEW_VERBS = {"get", "list", "watch"}
# liveAudit.enabled: its own ClusterRole, these rules exactly.
LIVE_RULES = {("", "pods"): {"get", "list", "watch"},
              ("wgpolicyk8s.io", "policyreports"):
              {"get", "list", "watch", "create", "patch", "update", "delete"},
              ("", "events"): {"create", "delete"}}
LIVE_SUFFIX = "-live-audit"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def merged_values(path):
    def merge(base, over):
        for k, v in over.items():
            if isinstance(v, dict) and isinstance(base.get(k), dict):
                merge(base[k], v)
            elif v is None:
                base.pop(k, None)
            else:
                base[k] = copy.deepcopy(v)
        return base

    with open(f"{CHART}/values.yaml") as f:
        values = yaml.safe_load(f)
    with open(path) as f:
        over = yaml.safe_load(f) or {}
    values = merge(values, over)
    # run.sh passes a whole policy with --set-file policy.yaml=FILE and
    # names the same file here.
    if os.environ.get("POLICY_FILE"):
        with open(os.environ["POLICY_FILE"]) as f:
            values["policy"]["yaml"] = f.read()
    return values


def by_kind(objs, kind):
    return [o for o in objs if o["kind"] == kind]


def one(objs, kind):
    found = by_kind(objs, kind)
    check(len(found) == 1, f"expected one {kind}, found {len(found)}")
    return found[0] if found else {}


def expr(selector, key):
    return [e for e in selector.get("matchExpressions", []) if e["key"] == key]


def locked_down(pod_spec, where):
    pod_sc = pod_spec.get("securityContext", {})
    check(pod_sc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
          f"{where}: pod seccompProfile is not RuntimeDefault")
    check(pod_sc.get("runAsNonRoot") is True,
          f"{where}: pod runAsNonRoot is not true")
    check(isinstance(pod_sc.get("runAsUser"), int) and pod_sc["runAsUser"] > 0,
          f"{where}: pod runAsUser is not a non-zero number")
    check(not pod_spec.get("hostIPC") and not pod_spec.get("hostNetwork")
          and not pod_spec.get("hostPID"), f"{where}: uses a host namespace")
    containers = pod_spec.get("containers", []) + pod_spec.get(
        "initContainers", [])
    check(containers, f"{where}: no containers")
    for c in containers:
        sc = c.get("securityContext", {})
        name = f"{where} container {c['name']}"
        check(sc.get("readOnlyRootFilesystem") is True,
              f"{name}: root filesystem is writable")
        check(sc.get("allowPrivilegeEscalation") is False,
              f"{name}: allowPrivilegeEscalation is not false")
        check(sc.get("capabilities", {}).get("drop") == ["ALL"],
              f"{name}: capabilities do not drop ALL")
        check(not sc.get("capabilities", {}).get("add"),
              f"{name}: adds capabilities")
        check(not sc.get("privileged"), f"{name}: privileged")
        check(sc.get("runAsUser", 1) != 0, f"{name}: runs as root")
        res = c.get("resources", {})
        check(res.get("requests", {}).get("memory")
              and res.get("limits", {}).get("memory"),
              f"{name}: memory request or limit missing")
        check(res.get("requests", {}).get("cpu"), f"{name}: no cpu request")
        for m in c.get("volumeMounts", []):
            check("subPath" not in m, f"{name}: subPath mount {m['name']} "
                  "(the kubelet never updates those)")


def check_deployment(objs, values, kube_minor):
    dep = one(objs, "Deployment")
    spec = dep.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    check(spec.get("replicas") == 2 == values["replicaCount"],
          f"Deployment replicas {spec.get('replicas')}, want 2")
    check(spec.get("strategy", {}).get("rollingUpdate", {})
          .get("maxUnavailable") == 0, "rollout may drop below replicas")
    check(pod.get("automountServiceAccountToken") is False,
          "webhook pod mounts a service account token")
    sa = [s for s in by_kind(objs, "ServiceAccount")
          if s["metadata"]["name"] == pod.get("serviceAccountName")]
    check(len(sa) == 1, "webhook ServiceAccount not rendered")
    check(sa and sa[0].get("automountServiceAccountToken") is False,
          "webhook ServiceAccount automounts its token")
    locked_down(pod, "Deployment")

    labels = spec["template"]["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in
              spec["selector"]["matchLabels"].items()),
          "Deployment selector does not match its pod labels")
    tsc = pod.get("topologySpreadConstraints", [])
    host = [t for t in tsc if t["topologyKey"] == "kubernetes.io/hostname"]
    check(host and host[0]["whenUnsatisfiable"] == "DoNotSchedule"
          and host[0]["labelSelector"]["matchLabels"].items()
          <= labels.items(), "replicas not spread over nodes")

    c = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    args = c["args"]
    probe_port = values["ports"]["probe"]
    check(ports.get("probe") == probe_port,
          f"container port 'probe' is {ports.get('probe')}, want {probe_port}")
    check(args[args.index("--probe-listen") + 1] == f":{probe_port}",
          "--probe-listen does not match the probe port")
    check(args[args.index("--listen") + 1] == f":{ports.get('webhook')}",
          "--listen does not match the webhook port")
    for probe, path in (("livenessProbe", "/healthz"),
                        ("readinessProbe", "/readyz")):
        get = c.get(probe, {}).get("httpGet", {})
        check(get.get("path") == path and get.get("port") in
              ("probe", probe_port), f"{probe} not {path} on the probe port")
        check(get.get("scheme", "HTTP") == "HTTP", f"{probe} is not HTTP")
    check(("--client-ca" in args) == bool(values["serve"]["clientCA"]),
          "--client-ca does not follow serve.clientCA")

    # Fields that exist only from some Kubernetes version on: present from
    # that version, absent before it (strict decoding refuses them).
    sleep = c.get("lifecycle", {}).get("preStop", {}).get("sleep")
    check(bool(sleep) == (kube_minor >= 30),
          f"preStop sleep {'missing' if not sleep else 'rendered'} for "
          f"1.{kube_minor} (1.30+)")
    for field, since in (("nodeTaintsPolicy", 26), ("matchLabelKeys", 27)):
        has = bool(host) and field in host[0]
        check(has == (kube_minor >= since),
              f"topologySpreadConstraints.{field} "
              f"{'rendered' if has else 'missing'} for 1.{kube_minor} "
              f"(1.{since}+)")

    vols = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    cert_dir = args[args.index("--tls-cert") + 1].rsplit("/", 1)[0]
    policy_dir = args[args.index("--policy") + 1].rsplit("/", 1)[0]
    check(vols.get(mounts.get(cert_dir), {}).get("secret", {})
          .get("secretName") == f"{RELEASE}-tls",
          "--tls-cert is not in the mounted TLS Secret")
    cm = one(objs, "ConfigMap")
    check(vols.get(mounts.get(policy_dir), {}).get("configMap", {})
          .get("name") == cm["metadata"]["name"],
          "--policy is not in the mounted policy ConfigMap")
    check_cluster_view(objs, values, dep)
    check_live_audit(objs, values, dep)
    return dep, labels, ports


def check_cluster_view(objs, values, dep):
    """clusterView.enabled: get/list/watch on nodes and three Kueue
    resources, nothing else, through a projected token that expires;
    off: no rights, no token, --no-cluster-view."""
    on = values["clusterView"]["enabled"]
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    sa = pod.get("serviceAccountName")
    me = {"kind": "ServiceAccount", "name": sa, "namespace": NAMESPACE}
    bindings = [b for b in by_kind(objs, "ClusterRoleBinding") +
                by_kind(objs, "RoleBinding") if me in b.get("subjects", [])
                and not b["metadata"]["name"].endswith(LIVE_SUFFIX)]
    roles = {(r["kind"], r["metadata"]["name"]): r
             for r in by_kind(objs, "ClusterRole") + by_kind(objs, "Role")}
    got = set()
    for b in bindings:
        where = f"cluster view: {b['kind']}/{b['metadata']['name']}"
        check(b["kind"] == "ClusterRoleBinding" and
              b["roleRef"]["kind"] == "ClusterRole",
              f"{where}: not a ClusterRoleBinding to a ClusterRole")
        check(not b["metadata"].get("annotations", {}).get("helm.sh/hook"),
              f"{where}: a hook (deleted after install)")
        role = roles.get((b["roleRef"]["kind"], b["roleRef"]["name"]))
        if not check(role, f"{where}: binds a role that is not rendered"):
            continue
        for r in role.get("rules", []):
            check(set(r.get("verbs", [])) == VIEW_VERBS,
                  f"cluster view: verbs {r.get('verbs')}, want "
                  f"{sorted(VIEW_VERBS)}")
            check(not r.get("resourceNames") and
                  not r.get("nonResourceURLs"),
                  "cluster view: resourceNames or nonResourceURLs")
            got |= {(g, res) for g in r.get("apiGroups", [])
                    for res in r.get("resources", [])}
    if on:
        check(len(bindings) == 1,
              f"cluster view: {len(bindings)} bindings for the webhook's "
              "ServiceAccount, want 1")
        check(got == VIEW_RULES, f"cluster view: reads {sorted(got)}, want "
              f"{sorted(VIEW_RULES)}")
    else:
        check(not bindings, "cluster view off, yet the webhook's "
              "ServiceAccount is bound to a role")

    token_vols = [v for v in pod.get("volumes", []) for s in
                  v.get("projected", {}).get("sources", [])
                  if "serviceAccountToken" in s]
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    check(pod.get("automountServiceAccountToken") is False,
          "cluster view: the pod automounts its token")
    check(("--no-cluster-view" in c["args"]) == (not on),
          "cluster view: --no-cluster-view does not follow "
          "clusterView.enabled")
    if not on:
        check(not token_vols, "cluster view off, yet a token is projected")
        check(SA_DIR not in mounts, f"cluster view off, yet {SA_DIR} is "
              "mounted")
        return
    if not check(len(token_vols) == 1, "cluster view: "
                 f"{len(token_vols)} projected token volumes, want 1"):
        return
    v = token_vols[0]
    m = mounts.get(SA_DIR, {})
    check(m.get("name") == v["name"] and m.get("readOnly") is True,
          f"cluster view: token volume not mounted read-only at {SA_DIR}")
    src = {k: s[k] for s in v["projected"]["sources"] for k in s}
    tok = src.get("serviceAccountToken", {})
    check(tok.get("path") == "token" and tok.get("expirationSeconds") ==
          values["clusterView"]["tokenExpirationSeconds"] and
          "audience" not in tok,
          f"cluster view: token {tok}, want path token, expirationSeconds "
          f"{values['clusterView']['tokenExpirationSeconds']}, the "
          "apiserver's audience")
    check(src.get("configMap") == {"name": "kube-root-ca.crt", "items":
                                   [{"key": "ca.crt", "path": "ca.crt"}]},
          f"cluster view: CA source {src.get('configMap')}")
    check(src.get("downwardAPI") == {"items": [{"path": "namespace",
          "fieldRef": {"apiVersion": "v1",
                       "fieldPath": "metadata.namespace"}}]},
          f"cluster view: namespace source {src.get('downwardAPI')}")


def check_live_audit(objs, values, dep):
    """liveAudit.enabled: --live-audit, and one ClusterRole bound to the
    webhook's ServiceAccount with LIVE_RULES exactly; off: neither."""
    on = values.get("liveAudit", {}).get("enabled", False)
    c = dep["spec"]["template"]["spec"]["containers"][0]
    check(("--live-audit" in c["args"]) == on,
          "live audit: --live-audit does not follow liveAudit.enabled")
    # Its memory: the limit of values.yaml/the values file, plus
    # expectedPods x 4 KiB rounded up to a MiB when on (docs/operating.md
    # #memory), written in Mi; off, or expectedPods 0: as written.
    want = values["resources"]["limits"]["memory"]
    pods = values.get("liveAudit", {}).get("expectedPods", 0)
    if on and pods:
        base = int(want[:-2]) * (1024 if want.endswith("Gi") else 1)
        want = f"{base + -(-pods * 4 // 1024)}Mi"
    got = c.get("resources", {}).get("limits", {}).get("memory")
    check(got == want, f"live audit: memory limit {got}, want {want} "
          f"(liveAudit.expectedPods {pods})")
    roles = [r for r in by_kind(objs, "ClusterRole")
             if r["metadata"]["name"].endswith(LIVE_SUFFIX)]
    binds = [b for b in by_kind(objs, "ClusterRoleBinding")
             if b["metadata"]["name"].endswith(LIVE_SUFFIX)]
    if not on:
        check(not roles and not binds, "live audit off, yet its RBAC is "
              "rendered")
        return
    if not (check(len(roles) == 1 and len(binds) == 1,
                  f"live audit: {len(roles)} roles, {len(binds)} bindings, "
                  "want 1 and 1")):
        return
    got = {}
    for r in roles[0].get("rules", []):
        check(not r.get("resourceNames") and not r.get("nonResourceURLs"),
              "live audit: resourceNames or nonResourceURLs")
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                got.setdefault((g, res), set()).update(r.get("verbs", []))
    check(got == LIVE_RULES, f"live audit: rules {got}, want {LIVE_RULES}")
    sa = dep["spec"]["template"]["spec"].get("serviceAccountName")
    check(binds[0]["roleRef"]["name"] == roles[0]["metadata"]["name"] and
          {"kind": "ServiceAccount", "name": sa, "namespace": NAMESPACE}
          in binds[0].get("subjects", []),
          "live audit: the binding is not of its role to the webhook's "
          "ServiceAccount")


def check_service_pdb(objs, labels, ports, values):
    svc = one(objs, "Service")
    check(svc["spec"]["selector"].items() <= labels.items(),
          "Service selector does not match the pods")
    https = [p for p in svc["spec"]["ports"]
             if p["port"] == values["service"]["port"]]
    check(https and https[0]["targetPort"] in ("webhook", ports["webhook"]),
          "Service port does not reach the webhook port")
    pdb = one(objs, "PodDisruptionBudget")
    check(pdb.get("spec", {}).get("minAvailable") == 1,
          "PodDisruptionBudget minAvailable is not 1")
    check(pdb.get("spec", {}).get("selector", {}).get("matchLabels", {})
          .items() <= labels.items(), "PDB selector does not match the pods")
    return svc


def check_network_policy(objs, labels, ports, values):
    """Off: none. On: the webhook port from the apiserver's CIDRs alone,
    the probe port from probeCIDRs alone, for these pods."""
    nps = by_kind(objs, "NetworkPolicy")
    want = values.get("networkPolicy", {})
    if not want.get("enabled"):
        check(not nps, "NetworkPolicy rendered while networkPolicy is off")
        return
    check(len(nps) == 1, "not exactly one NetworkPolicy")
    if len(nps) != 1:
        return
    spec = nps[0]["spec"]
    check(spec["podSelector"]["matchLabels"].items() <= labels.items(),
          "NetworkPolicy selects other pods")
    check(spec.get("policyTypes") == ["Ingress"],
          "NetworkPolicy should restrict ingress only")
    by_port = {}
    for rule in spec.get("ingress", []):
        cidrs = [f["ipBlock"]["cidr"] for f in rule.get("from", [])]
        for p in rule.get("ports", []):
            by_port.setdefault(p["port"], []).extend(cidrs)
    check(by_port.get(ports["webhook"]) == want["apiserverCIDRs"],
          "webhook port not limited to the apiserver's CIDRs")
    check(by_port.get(ports["probe"], []) == want.get("probeCIDRs", []),
          "probe port not limited to probeCIDRs")
    check(set(by_port) <= {ports["webhook"], ports["probe"]},
          "NetworkPolicy opens another port")


def check_webhook(objs, values, svc, case, kube_minor):
    mwc = one(objs, "MutatingWebhookConfiguration")
    hooks = mwc.get("webhooks", [])
    want_names = ["pods.topogate.io"] + (
        ["jobs.topogate.io"] if values["webhook"]["jobs"]["enabled"] else [])
    check([h["name"] for h in hooks] == want_names,
          f"webhook entries {[h['name'] for h in hooks]}, want {want_names}")
    fp_pods = values["webhook"]["failurePolicy"] or (
        "Fail" if values["mode"] == "enforce" else "Ignore")
    want_fp = {"pods.topogate.io": fp_pods,
               "jobs.topogate.io": values["webhook"]["jobs"]["failurePolicy"]}
    ns = values["webhook"]["namespaces"]
    for h in hooks:
        n = h["name"]
        check(h["admissionReviewVersions"] == ["v1"], f"{n}: not [v1]")
        check(h["sideEffects"] == "None", f"{n}: sideEffects")
        check(h["reinvocationPolicy"] == "IfNeeded", f"{n}: reinvocation")
        check(h["timeoutSeconds"] == values["webhook"]["timeoutSeconds"],
              f"{n}: timeoutSeconds")
        check(h["failurePolicy"] == want_fp.get(n),
              f"{n}: failurePolicy {h['failurePolicy']}, want "
              f"{want_fp.get(n)} (mode {values['mode']})")
        s = h["clientConfig"].get("service", {})
        check(s == {"name": svc["metadata"]["name"], "namespace": NAMESPACE,
                    "path": "/mutate", "port": values["service"]["port"]},
              f"{n}: clientConfig.service is {s}")
        check("url" not in h["clientConfig"], f"{n}: uses a url")

        sel = h.get("namespaceSelector", {})
        names = expr(sel, "kubernetes.io/metadata.name")
        check(names and names[0]["operator"] == "NotIn" and
              {NAMESPACE, *ns["exclude"]} == set(names[0]["values"]),
              f"{n}: namespaceSelector does not exclude the release "
              f"namespace and {ns['exclude']}")
        check(expr(sel, ns["optOutLabel"]) ==
              [{"key": ns["optOutLabel"], "operator": "NotIn",
                "values": ["true"]}], f"{n}: no namespace opt-out label")
        pss = expr(sel, "pod-security.kubernetes.io/enforce")
        if ns["podSecurityExclude"]:
            check(pss and pss[0]["operator"] == "NotIn" and
                  set(pss[0]["values"]) == set(ns["podSecurityExclude"]),
                  f"{n}: Pod Security levels not excluded")
            check({"baseline", "restricted"} <= set(pss[0]["values"])
                  if pss else False,
                  f"{n}: baseline/restricted namespaces are sent")
        else:
            check(not pss, f"{n}: Pod Security exclusion present")
        optin = expr(sel, ns["optInLabel"])
        if ns["optIn"]:
            check(optin == [{"key": ns["optInLabel"], "operator": "In",
                             "values": ["true"]}], f"{n}: opt-in missing")
        else:
            check(not optin, f"{n}: opt-in selector without optIn")
        check(expr(h.get("objectSelector", {}), values["webhook"]
                   ["objectOptOutLabel"]) ==
              [{"key": values["webhook"]["objectOptOutLabel"],
                "operator": "NotIn", "values": ["true"]}],
              f"{n}: no objectSelector opt-out")
        for r in h["rules"]:
            check("*" not in r["apiGroups"] + r["apiVersions"] +
                  r["resources"] + r["operations"], f"{n}: wildcard rule")

    pods = hooks[0] if hooks else {}
    check(pods.get("rules") == [{"apiGroups": [""], "apiVersions": ["v1"],
                                 "resources": ["pods"],
                                 "operations": ["CREATE"],
                                 "scope": "Namespaced"}],
          "pods entry rules are not pods CREATE")
    conds = pods.get("matchConditions")
    if kube_minor >= 28:
        check(conds and len(conds) == 1, "pods entry has no matchConditions")
        e = conds[0]["expression"] if conds else ""
        for r in values["webhook"]["gpuResources"]:
            check(f"'{r}'" in e, f"matchConditions do not name {r}")
        for part in ("object.spec.containers", "object.spec.initContainers",
                     "c.resources.limits", "c.resources.requests"):
            check(part in e, f"matchConditions do not look at {part}")
    else:
        check(conds is None, f"matchConditions rendered for 1.{kube_minor}")
    if len(hooks) > 1:
        got = {(g, v, res) for r in hooks[1]["rules"]
               for g in r["apiGroups"] for v in r["apiVersions"]
               for res in r["resources"]}
        check(got == {("trainer.kubeflow.org", "v1alpha1", "trainjobs"),
                      ("kubeflow.org", "v1", "pytorchjobs"),
                      ("kubeflow.org", "v2beta1", "mpijobs"),
                      ("ray.io", "v1", "rayjobs"),
                      ("ray.io", "v1", "rayclusters")},
              f"jobs entry resources {sorted(got)}")
        check(all(r["operations"] == ["CREATE", "UPDATE"]
                  for r in hooks[1]["rules"]), "jobs entry operations")
    return mwc


def check_rbac_rule(rule, where, resource, names, allowed_verbs):
    for field in ("apiGroups", "resources", "verbs", "resourceNames"):
        check("*" not in rule.get(field, []), f"{where}: wildcard {field}")
    check(rule.get("resources") == [resource],
          f"{where}: resources {rule.get('resources')}")
    check(sorted(rule.get("resourceNames", [])) == sorted(names),
          f"{where}: resourceNames {rule.get('resourceNames')}, want {names}")
    check(set(rule.get("verbs", [])) <= allowed_verbs,
          f"{where}: verbs {rule.get('verbs')} beyond {allowed_verbs}")


def hook_of(o):
    return o["metadata"].get("annotations", {}).get("helm.sh/hook")


def pod_of(o):
    """The pod spec of a Deployment, Job or CronJob."""
    t = o["spec"]
    if o["kind"] == "CronJob":
        t = t["jobTemplate"]["spec"]
    return t["template"]["spec"]


def check_certgen_rbac(objs, name, want_hook, tls, ca, mwc_name):
    """The ServiceAccount NAME of certgen pods, and all it may do."""
    kinds = {"ServiceAccount", "Role", "RoleBinding", "ClusterRole",
             "ClusterRoleBinding"}
    mine = {o["kind"]: o for o in objs
            if o["kind"] in kinds and o["metadata"]["name"] == name}
    check(set(mine) == kinds, f"certgen RBAC {name}: {sorted(mine)}")
    for o in mine.values():
        a = o["metadata"].get("annotations", {})
        where = f"{o['kind']}/{name}"
        check(a.get("helm.sh/hook") == want_hook,
              f"{where}: hook events {a.get('helm.sh/hook')}, want {want_hook}")
        if want_hook:
            check(a.get("helm.sh/hook-delete-policy") ==
                  "before-hook-creation,hook-succeeded",
                  f"{where}: delete policy")
            check(int(a.get("helm.sh/hook-weight", "0")) < 0,
                  f"{where}: not created before the Jobs (hook-weight)")
    role, crole = mine.get("Role"), mine.get("ClusterRole")
    if role:
        check(role["metadata"]["namespace"] == NAMESPACE,
              "Role outside the release namespace")
        check(len(role["rules"]) == 1, "Role has more than one rule")
        check_rbac_rule(role["rules"][0], f"Role/{name}", "secrets",
                        [tls, ca], {"get", "create", "patch"})
    if crole:
        check(len(crole["rules"]) == 1, "ClusterRole has more than 1 rule")
        r = crole["rules"][0]
        check(r.get("apiGroups") == ["admissionregistration.k8s.io"],
              "ClusterRole apiGroups")
        check_rbac_rule(r, f"ClusterRole/{name}",
                        "mutatingwebhookconfigurations", [mwc_name],
                        {"get", "patch"})
    for kind, ref in (("RoleBinding", "Role"),
                      ("ClusterRoleBinding", "ClusterRole")):
        b = mine.get(kind)
        if b:
            check(b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io",
                                   "kind": ref, "name": name} and
                  b["subjects"] == [{"kind": "ServiceAccount", "name": name,
                                     "namespace": NAMESPACE}],
                  f"{kind}/{name} binds the wrong thing")


def check_certgen_pod(o, sa, steps, tls, ca, mwc):
    """One certgen pod: runs as SA, its containers are STEPS in order
    (init containers, then the main one), and each step reads and writes
    what the next one and the webhook pods expect."""
    where = f"{o['kind']}/{o['metadata']['name']}"
    pod = pod_of(o)
    check(pod.get("serviceAccountName") == sa, f"{where}: runs as "
          f"{pod.get('serviceAccountName')}, want {sa}")
    locked_down(pod, where)
    names = [c["name"] for c in pod.get("initContainers", []) +
             pod.get("containers", [])]
    check(names == steps and len(pod.get("containers", [])) == 1,
          f"{where}: steps {names}, want {steps} (the last one main)")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mwc_name = mwc["metadata"]["name"]

    def mounted(c, path):
        """The volume mounted at PATH (or above it) in container C."""
        for m in c.get("volumeMounts", []):
            if path == m["mountPath"] or path.startswith(m["mountPath"] + "/"):
                return vols.get(m["name"], {}), m
        return {}, {}

    for c in pod.get("initContainers", []) + pod.get("containers", []):
        a = c.get("args", [])

        def arg(flag):
            return a[a.index(flag) + 1] if flag in a else None

        if c["name"] == "certgen":
            check(a[:1] == ["certgen"], f"{where}: certgen does not run "
                  "certgen")
            check(arg("--service") == RELEASE and arg("--namespace") ==
                  NAMESPACE, f"{where}: certgen names another Service")
            check(arg("--secret-name") == tls, f"{where}: certgen writes "
                  "another Secret")
            check(arg("--out") == "/out", f"{where}: certgen --out")
            check(arg("--webhook-config") == mwc_name,
                  f"{where}: certgen patches another configuration")
            check(arg("--webhooks") == str(len(mwc["webhooks"])),
                  f"{where}: certgen --webhooks {arg('--webhooks')}, the "
                  f"configuration has {len(mwc['webhooks'])} entries")
            # The CA is kept: read from Secret <release>-ca (mounted,
            # optional: absent on a first install) and written back to it.
            v, m = mounted(c, arg("--ca-dir") or "--ca-dir missing")
            check(v.get("secret", {}).get("secretName") == ca and
                  v["secret"].get("optional") is True and
                  "items" not in v["secret"] and m.get("readOnly") is True,
                  f"{where}: certgen --ca-dir {arg('--ca-dir')} is not "
                  f"Secret {ca}, optional, read-only: the CA is not reused")
            check(arg("--ca-secret-name") == ca, f"{where}: certgen "
                  f"--ca-secret-name {arg('--ca-secret-name')}, want {ca}: "
                  "the CA is not stored for the next run")
        elif c["name"] == "apply-secrets":
            check(a[:2] == ["apply", "--server-side"] and
                  {"--filename=/out/secret.yaml",
                   "--filename=/out/ca-secret.yaml"} <= set(a),
                  f"{where}: does not apply both Secrets server-side: {a}")
        elif c["name"] == "patch-cabundle":
            f = (arg("--patch-file") or
                 next((x.split("=", 1)[1] for x in a
                       if x.startswith("--patch-file=")), ""))
            check(a[:3] == ["patch", "mutatingwebhookconfiguration",
                            mwc_name] and "--type=json" in a,
                  f"{where}: caBundle patch command: {a}")
            v, m = mounted(c, f)
            if "certgen" in steps:
                check(f == "/out/cabundle-patch.json" and "emptyDir" in v,
                      f"{where}: patches from {f}, not certgen's /out")
            else:
                # Only the patch from the CA's Secret, never its key; not
                # optional, so the pod waits for it.
                check(v.get("secret", {}).get("secretName") == ca and
                      v["secret"].get("items") ==
                      [{"key": "cabundle-patch.json",
                        "path": "cabundle-patch.json"}] and
                      not v["secret"].get("optional") and
                      f == m.get("mountPath", "") + "/cabundle-patch.json",
                      f"{where}: patch file {f} is not the stored "
                      f"cabundle-patch.json of Secret {ca} (alone)")
    for v in vols.values():
        if v.get("secret", {}).get("secretName") == ca and \
                "items" not in v["secret"]:
            check("certgen" in steps, f"{where}: mounts the CA key without "
                  "running certgen")
    return pod


def check_certs(objs, values, mwc):
    tls = f"{RELEASE}-tls"
    ca = f"{RELEASE}-ca"
    mwc_name = mwc["metadata"]["name"]
    certgen_objs = [o for o in objs if "-certgen" in o["metadata"]["name"] or
                    o["kind"] in ("Job", "CronJob")]
    if values["certs"]["method"] == "certManager":
        check(not certgen_objs, "certgen objects rendered: "
              f"{sorted(o['kind'] for o in certgen_objs)}")
        issuers = {i["metadata"]["name"]: i["spec"]
                   for i in by_kind(objs, "Issuer")}
        certs = {c["metadata"]["name"]: c["spec"]
                 for c in by_kind(objs, "Certificate")}
        cas = [c for c in certs.values() if c.get("isCA")]
        check(len(cas) == 1 and "selfSigned" in issuers.get(
            cas[0]["issuerRef"]["name"], {}), "no self-signed CA Certificate")
        serving_name = [k for k, c in certs.items() if c.get("secretName")
                        == tls]
        check(len(serving_name) == 1, f"no Certificate for Secret {tls}")
        if serving_name and cas:
            serving = certs[serving_name[0]]
            issuer = issuers.get(serving["issuerRef"]["name"], {})
            check(issuer.get("ca", {}).get("secretName") ==
                  cas[0]["secretName"], "serving certificate not from the CA")
            svc = f"{RELEASE}.{NAMESPACE}.svc"
            check(svc in serving.get("dnsNames", []), f"{svc} not a SAN")
            check(mwc["metadata"].get("annotations", {}).get(
                "cert-manager.io/inject-ca-from") ==
                f"{NAMESPACE}/{serving_name[0]}", "no CA injection")
        return
    check(not by_kind(objs, "Certificate") and not by_kind(objs, "Issuer"),
          "cert-manager objects without certs.method=certManager")
    check(not mwc["metadata"].get("annotations", {}).get(
        "cert-manager.io/inject-ca-from"), "inject-ca-from without cert-manager")

    hook_sa = f"{RELEASE}-certgen"
    check_certgen_rbac(objs, hook_sa,
                       "pre-install,pre-upgrade,post-install,post-upgrade",
                       tls, ca, mwc_name)
    jobs = {j["metadata"]["name"]: j for j in by_kind(objs, "Job")}
    check(set(jobs) == {f"{RELEASE}-certgen", f"{RELEASE}-cabundle"},
          f"certgen Jobs {sorted(jobs)}")
    pre, post = jobs.get(f"{RELEASE}-certgen"), jobs.get(f"{RELEASE}-cabundle")
    certgen_args = None
    if pre:
        # Pre-install: the Secret the pods mount exists before they start,
        # so `helm install --wait` can wait for them.
        check(hook_of(pre) == "pre-install,pre-upgrade",
              f"certgen Job hook {hook_of(pre)}, want pre-install,pre-upgrade "
              "(helm install --wait needs the Secret before the pods)")
        p = check_certgen_pod(pre, hook_sa, ["certgen", "apply-secrets"],
                              tls, ca, mwc)
        certgen_args = p["initContainers"][0]["args"]
    if post:
        check(hook_of(post) == "post-install,post-upgrade",
              f"caBundle Job hook {hook_of(post)}, want "
              "post-install,post-upgrade (the configuration exists only then)")
        check_certgen_pod(post, hook_sa, ["patch-cabundle"], tls, ca, mwc)
    for j in jobs.values():
        a = j["metadata"].get("annotations", {})
        check(a.get("helm.sh/hook-delete-policy") ==
              "before-hook-creation,hook-succeeded",
              f"Job/{j['metadata']['name']}: delete policy")

    renew = f"{RELEASE}-certgen-renew"
    crons = by_kind(objs, "CronJob")
    schedule = values["certs"]["hook"]["renewSchedule"]
    if schedule:
        check([c["metadata"]["name"] for c in crons] == [renew],
              f"renewal CronJobs {[c['metadata']['name'] for c in crons]}")
        check_certgen_rbac(objs, renew, None, tls, ca, mwc_name)
        for c in crons[:1]:
            check(c["spec"]["schedule"] == schedule and
                  c["spec"].get("concurrencyPolicy") == "Forbid" and
                  not hook_of(c), f"renewal CronJob: schedule "
                  f"{c['spec']['schedule']}, concurrency, or a hook")
            p = check_certgen_pod(c, renew, ["certgen", "apply-secrets",
                                             "patch-cabundle"], tls, ca, mwc)
            check(p["initContainers"][0]["args"] == certgen_args,
                  "renewal CronJob runs certgen unlike the install Job")
    else:
        check(not crons and not [o for o in objs if o["metadata"]["name"]
                                 == renew], "renewal objects without "
              "certs.hook.renewSchedule")
    # The CA key reaches only certgen pods; the webhook pods mount the
    # serving Secret alone.
    for o in by_kind(objs, "Deployment"):
        names = [v.get("secret", {}).get("secretName")
                 for v in pod_of(o).get("volumes", [])]
        check(ca not in names, "the webhook pods mount the CA Secret")


def check_policy_text(objs, values, case, out):
    cm = one(objs, "ConfigMap")
    text = cm.get("data", {}).get("policy.yaml", "")
    p = values["policy"]
    untouched = not (p["yaml"] or p["settings"] or p["namespaces"] or
                     p["instanceTypes"])
    with open("deploy/policy.yaml") as f:
        default = f.read()
    if untouched:
        # Only the mode line changes; the comments that give each entry's
        # source stay.
        want = re.sub(r"""(?m)^mode:[ \t]*["']?[A-Za-z]*["']?""",
                      f"mode: {values['mode']}", default, count=1)
        check(text == want, "default policy ConfigMap is not "
              f"deploy/policy.yaml verbatim with mode: {values['mode']}")
    else:
        check(text != default, "override values left the policy unchanged")
    with open(out, "w") as f:
        f.write(text)


def check_loaded_policy(values, loaded_path):
    with open(loaded_path) as f:
        loaded = yaml.safe_load(f)
    p = values["policy"]
    check(loaded["mode"] == values["mode"],
          f"loaded mode {loaded['mode']}, want {values['mode']}")
    s = p["settings"]
    for k in ("unknownInstanceType", "optOut", "overrideUserValues"):
        if k in s:
            check(loaded[k] == s[k], f"loaded {k} {loaded[k]}, want {s[k]}")
    for k, v in s.get("inject", {}).items():
        check(loaded["inject"][k] == v, f"loaded inject.{k} {loaded['inject'][k]}")
    untouched = [k for k in loaded["inject"] if k not in s.get("inject", {})]
    check(all(loaded["inject"][k] is True for k in untouched),
          "inject keys not overridden changed")
    nss = {n["name"]: n for n in loaded["namespaces"]}
    for want in p["namespaces"]:
        got = nss.get(want["name"])
        if not check(got, f"namespace {want['name']} not loaded"):
            continue
        if "mode" in want:
            check(got.get("mode") == want["mode"],
                  f"namespace {want['name']} mode {got.get('mode')}")
        for k, v in want.get("inject", {}).items():
            check(got["inject"][k] == v, f"namespace {want['name']} inject.{k}")
    types = {t["name"]: t for t in loaded["instanceTypes"]}
    with open("deploy/policy.yaml") as f:
        base = {t["name"]: t for t in yaml.safe_load(f)["instanceTypes"]}
    for want in p["instanceTypes"]:
        got = types.get(want["name"])
        if not check(got, f"instance type {want['name']} not loaded"):
            continue
        for k, v in want.items():
            if k != "env":
                check(str(got[k]) == str(v), f"{want['name']}.{k} is "
                      f"{got[k]}, want {v}")
        for k, v in base.get(want["name"], {}).items():
            if k not in want and k != "env":
                check(str(got[k]) == str(v), f"{want['name']}.{k} lost its "
                      f"value {v} (got {got[k]})")
    if not p["yaml"]:
        check(set(base) <= set(types), "table entries lost in the merge")
        return
    whole = yaml.safe_load(p["yaml"])
    check(set(types) == {t["name"] for t in whole["instanceTypes"]},
          f"whole policy: loaded types {sorted(types)}")
    for want in whole.get("namespaces") or []:
        check(nss.get(want["name"], {}).get("mode") == want.get("mode"),
              f"whole policy: namespace {want['name']} not as in the file")
    check(loaded["unknownInstanceType"] == whole["unknownInstanceType"],
          "whole policy: unknownInstanceType not from the file")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "render":
        case, rendered, values_path, policy_out = sys.argv[2:]
        values = merged_values(values_path)
        with open(rendered) as f:
            objs = [o for o in yaml.safe_load_all(f) if o]
        kube_minor = int(os.environ.get("KUBE_MINOR", "36"))
        _, labels, ports = check_deployment(objs, values, kube_minor)
        svc = check_service_pdb(objs, labels, ports, values)
        check_network_policy(objs, labels, ports, values)
        mwc = check_webhook(objs, values, svc, case, kube_minor)
        check_certs(objs, values, mwc)
        check_policy_text(objs, values, case, policy_out)
    elif len(sys.argv) == 5 and sys.argv[1] == "policy":
        case, values_path, loaded = sys.argv[2:]
        check_loaded_policy(merged_values(values_path), loaded)
    else:
        sys.exit(__doc__)
    for f in failures:
        print(f"FAIL {sys.argv[2]}: {f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
