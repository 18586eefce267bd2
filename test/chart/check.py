#!/usr/bin/python3
"""Asserts the properties of a rendered topogate chart.

    check.py render CASE RENDERED.yaml VALUES.yaml POLICY_OUT
        checks the objects of one rendering and writes the policy of its
        ConfigMap to POLICY_OUT (run.sh then loads it with topogate);
    check.py policy CASE VALUES.yaml LOADED.yaml
        checks what topogate loaded (`topogate tables -o yaml`) against
        the values' mode and overrides.

Expectations come from the values file and the chart's values.yaml, merged
as Helm merges them, so each case states only what differs. Prints one line
per failed property and exits 1 when any failed.
"""
import copy
import os
import sys

import yaml

CHART = "charts/topogate"
RELEASE, NAMESPACE = "topogate", "topogate-system"
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


def check_deployment(objs, values):
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
    return dep, labels, ports


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


def check_webhook(objs, values, svc, case, kube_minor):
    mwc = one(objs, "MutatingWebhookConfiguration")
    hooks = mwc.get("webhooks", [])
    want_names = ["pods.topogate.io"] + (
        ["jobs.topogate.io"] if values["webhook"]["jobs"]["enabled"] else [])
    check([h["name"] for h in hooks] == want_names,
          f"webhook entries {[h['name'] for h in hooks]}, want {want_names}")
    fp = values["webhook"]["failurePolicy"] or (
        "Fail" if values["mode"] == "enforce" else "Ignore")
    ns = values["webhook"]["namespaces"]
    for h in hooks:
        n = h["name"]
        check(h["admissionReviewVersions"] == ["v1"], f"{n}: not [v1]")
        check(h["sideEffects"] == "None", f"{n}: sideEffects")
        check(h["reinvocationPolicy"] == "IfNeeded", f"{n}: reinvocation")
        check(h["timeoutSeconds"] == values["webhook"]["timeoutSeconds"],
              f"{n}: timeoutSeconds")
        check(h["failurePolicy"] == fp,
              f"{n}: failurePolicy {h['failurePolicy']}, want {fp} "
              f"(mode {values['mode']})")
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
                      ("kubeflow.org", "v2beta1", "mpijobs")},
              f"jobs entry resources {sorted(got)}")
        check(all(r["operations"] == ["CREATE", "UPDATE"]
                  for r in hooks[1]["rules"]), "jobs entry operations")
    return mwc


def check_rbac_rule(rule, where, resource, name, allowed_verbs):
    for field in ("apiGroups", "resources", "verbs", "resourceNames"):
        check("*" not in rule.get(field, []), f"{where}: wildcard {field}")
    check(rule.get("resources") == [resource],
          f"{where}: resources {rule.get('resources')}")
    check(rule.get("resourceNames") == [name],
          f"{where}: resourceNames {rule.get('resourceNames')}, want [{name}]")
    check(set(rule.get("verbs", [])) <= allowed_verbs,
          f"{where}: verbs {rule.get('verbs')} beyond {allowed_verbs}")


def check_certs(objs, values, mwc):
    tls = f"{RELEASE}-tls"
    mwc_name = mwc["metadata"]["name"]
    hook_kinds = {"ServiceAccount", "Role", "RoleBinding", "ClusterRole",
                  "ClusterRoleBinding", "Job"}
    if values["certs"]["method"] == "certManager":
        check(not by_kind(objs, "Job") and not by_kind(objs, "Role") and
              not by_kind(objs, "ClusterRole"), "certgen hook rendered")
        issuers = {i["metadata"]["name"]: i["spec"]
                   for i in by_kind(objs, "Issuer")}
        certs = {c["metadata"]["name"]: c["spec"]
                 for c in by_kind(objs, "Certificate")}
        ca = [c for c in certs.values() if c.get("isCA")]
        check(len(ca) == 1 and "selfSigned" in issuers.get(
            ca[0]["issuerRef"]["name"], {}), "no self-signed CA Certificate")
        serving_name = [k for k, c in certs.items() if c.get("secretName")
                        == tls]
        check(len(serving_name) == 1, f"no Certificate for Secret {tls}")
        if serving_name and ca:
            serving = certs[serving_name[0]]
            issuer = issuers.get(serving["issuerRef"]["name"], {})
            check(issuer.get("ca", {}).get("secretName") ==
                  ca[0]["secretName"], "serving certificate not from the CA")
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
    hooks = [o for o in objs if o["kind"] in hook_kinds and
             o["metadata"]["name"].endswith("-certgen")]
    want_hook = "post-install,post-upgrade" if values["certs"]["hook"][
        "rotateOnUpgrade"] else "post-install"
    check({o["kind"] for o in hooks} == hook_kinds,
          f"certgen hook objects: {sorted(o['kind'] for o in hooks)}")
    for o in hooks:
        a = o["metadata"].get("annotations", {})
        where = f"{o['kind']}/{o['metadata']['name']}"
        check(a.get("helm.sh/hook") == want_hook, f"{where}: hook events")
        check(a.get("helm.sh/hook-delete-policy") ==
              "before-hook-creation,hook-succeeded", f"{where}: delete policy")
    role = [o for o in hooks if o["kind"] == "Role"]
    crole = [o for o in hooks if o["kind"] == "ClusterRole"]
    if role:
        check(role[0]["metadata"]["namespace"] == NAMESPACE,
              "Role outside the release namespace")
        check(len(role[0]["rules"]) == 1, "Role has more than one rule")
        check_rbac_rule(role[0]["rules"][0], "Role", "secrets", tls,
                        {"get", "create", "patch"})
    if crole:
        check(len(crole[0]["rules"]) == 1, "ClusterRole has more than 1 rule")
        r = crole[0]["rules"][0]
        check(r.get("apiGroups") == ["admissionregistration.k8s.io"],
              "ClusterRole apiGroups")
        check_rbac_rule(r, "ClusterRole", "mutatingwebhookconfigurations",
                        mwc_name, {"get", "patch"})
    sa = [o for o in hooks if o["kind"] == "ServiceAccount"]
    sa_name = sa[0]["metadata"]["name"] if sa else None
    for kind, ref in (("RoleBinding", "Role"),
                      ("ClusterRoleBinding", "ClusterRole")):
        b = [o for o in hooks if o["kind"] == kind]
        if b:
            check(b[0]["roleRef"]["kind"] == ref and b[0]["subjects"] ==
                  [{"kind": "ServiceAccount", "name": sa_name,
                    "namespace": NAMESPACE}], f"{kind} binds the wrong thing")
    job = [o for o in hooks if o["kind"] == "Job"]
    if not job:
        return
    pod = job[0]["spec"]["template"]["spec"]
    check(pod.get("serviceAccountName") == sa_name, "Job runs as another SA")
    locked_down(pod, "certgen Job")
    init = pod.get("initContainers", [])
    check([c["name"] for c in init] == ["certgen", "apply-secret"] and
          [c["name"] for c in pod["containers"]] == ["patch-cabundle"],
          "certgen Job steps out of order")
    if len(init) != 2:
        return
    a = init[0]["args"]

    def arg(flag):
        return a[a.index(flag) + 1] if flag in a else None

    check(a[0] == "certgen", "first init container does not run certgen")
    check(arg("--service") == RELEASE and arg("--namespace") == NAMESPACE,
          "certgen names another Service")
    check(arg("--secret-name") == tls, "certgen writes another Secret")
    check(arg("--webhook-config") == mwc_name, "certgen patches another "
          "webhook configuration")
    check(arg("--webhooks") == str(len(mwc["webhooks"])),
          f"certgen --webhooks {arg('--webhooks')}, the configuration has "
          f"{len(mwc['webhooks'])} entries")
    check(arg("--out") == "/out", "certgen --out is not /out")
    check(init[1]["args"][:2] == ["apply", "--server-side"] and
          "--filename=/out/secret.yaml" in init[1]["args"],
          "Secret not applied server-side from /out/secret.yaml")
    p = pod["containers"][0]["args"]
    check(p[:3] == ["patch", "mutatingwebhookconfiguration", mwc_name] and
          "--type=json" in p and "--patch-file=/out/cabundle-patch.json" in p,
          f"caBundle patch command: {p}")


def check_policy_text(objs, values, case, out):
    cm = one(objs, "ConfigMap")
    text = cm.get("data", {}).get("policy.yaml", "")
    p = values["policy"]
    untouched = not (p["yaml"] or p["settings"] or p["namespaces"] or
                     p["instanceTypes"]) and values["mode"] == "enforce"
    with open("deploy/policy.yaml") as f:
        default = f.read()
    if untouched:
        check(text == default, "default policy ConfigMap is not "
              "deploy/policy.yaml verbatim")
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
        kube_minor = 36
        if case.startswith("kube-1."):
            kube_minor = int(case.split(".")[1])
        _, labels, ports = check_deployment(objs, values)
        svc = check_service_pdb(objs, labels, ports, values)
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
