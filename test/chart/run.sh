#!/bin/bash
# test/chart/run.sh BIN RENDERER: the chart tests (`make chart-test`).
#
# BIN is build/topogate; RENDERER is `helm` when installed, else
# build/helm-render (../shared/tools/helm-render). For each values set in
# test/chart/values/ (and two older Kubernetes versions) it renders
# charts/topogate, lints it, validates every object with k8s-validate
# --strict, asserts the chart's properties (check.py), and loads the
# rendered policy with `topogate serve -n` and `topogate tables`. Then:
# schema typos are refused, check.py catches a broken rendering,
# deploy/topogate.yaml and charts/topogate/policy.yaml are up to date,
# deploy/smoke-pod.yaml gets the answers NOTES.txt promises, and the
# Dockerfile names real Debian 12 packages.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 BIN RENDERER" >&2
	exit 2
fi
bin=$1
renderer=$2
out=$(dirname "$bin")/chart-test
py=/usr/bin/python3
validate=../shared/tools/k8s-validate
chart=charts/topogate
rm -rf "$out"
mkdir -p "$out"

failed=0
pass() { echo "ok   $*"; }
fail() {
	echo "FAIL $*"
	failed=$((failed + 1))
}

render() {
	if [ "$(basename "$renderer")" = helm ]; then
		"$renderer" template topogate "$chart" --namespace topogate-system "$@"
	else
		"$renderer" topogate "$chart" --namespace topogate-system "$@"
	fi
}

# --- the chart's copy of the policy ------------------------------------------

# The chart must hold its own copy (.Files.Get reads only inside the chart);
# `make deploy-manifests` refreshes it.
if cmp -s deploy/policy.yaml "$chart/policy.yaml"; then
	pass "charts/topogate/policy.yaml is deploy/policy.yaml"
else
	fail "charts/topogate/policy.yaml differs from deploy/policy.yaml" \
		"(run make deploy-manifests)"
fi

# --- throw-away certificate for `serve -n` -------------------------------------

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	-sha256 -nodes -days 1 -subj /CN=localhost \
	-keyout "$out/tls.key" -out "$out/tls.crt" 2>/dev/null

# --- one case per values set -----------------------------------------------------

# name | values file | extra render flags
cases=(
	"defaults|defaults.yaml|"
	"cert-manager|cert-manager.yaml|"
	"audit|audit.yaml|"
	"warn-fail|warn-fail.yaml|"
	"opt-in|opt-in.yaml|"
	"policy-override|policy-override.yaml|"
	"policy-whole|policy-whole.yaml|--set-file policy.yaml=test/chart/whole-policy.yaml"
	"kube-1.27|defaults.yaml|--kube-version 1.27.0"
	"kube-1.25|defaults.yaml|--kube-version 1.25.3"
)
for c in "${cases[@]}"; do
	IFS='|' read -r name file extra <<<"$c"
	values=test/chart/values/$file
	read -r -a extra_flags <<<"$extra"
	flags=(-f "$values" "${extra_flags[@]}")
	policy_file=""
	case $extra in --set-file\ policy.yaml=*) policy_file=${extra#*=} ;; esac

	if ! render "${flags[@]}" >"$out/$name.yaml" 2>"$out/$name.err"; then
		fail "$name: render: $(cat "$out/$name.err")"
		continue
	fi
	if "$renderer" lint --strict "$chart" --namespace topogate-system "${flags[@]}" \
		>"$out/$name.lint" 2>&1; then
		pass "$name: lint"
	else
		fail "$name: lint"
		cat "$out/$name.lint"
	fi
	if "$validate" --strict --quiet "$out/$name.yaml" >"$out/$name.valid"; then
		pass "$name: k8s-validate --strict ($(tail -n 1 "$out/$name.valid"))"
	else
		fail "$name: k8s-validate --strict"
		cat "$out/$name.valid"
	fi
	if POLICY_FILE=$policy_file "$py" test/chart/check.py render "$name" \
		"$out/$name.yaml" "$values" "$out/$name.policy.yaml"; then
		pass "$name: chart properties"
	else
		fail "$name: chart properties"
	fi
	if msg=$("$bin" serve -n --tls-cert "$out/tls.crt" \
		--tls-key "$out/tls.key" --policy "$out/$name.policy.yaml" 2>&1) &&
		[ "$msg" = "configuration OK" ]; then
		pass "$name: rendered policy loads (serve -n)"
	else
		fail "$name: rendered policy does not load: $msg"
	fi
	if "$bin" tables --policy "$out/$name.policy.yaml" -o yaml \
		>"$out/$name.loaded.yaml" 2>&1 &&
		POLICY_FILE=$policy_file "$py" test/chart/check.py policy "$name" \
			"$values" "$out/$name.loaded.yaml"; then
		pass "$name: loaded policy has the values' mode and overrides"
	else
		fail "$name: loaded policy"
	fi
done

# --- the certgen hook Job's steps fit together -----------------------------------

# Runs the Job's certgen command line, as rendered, into a directory, then
# checks what its two kubectl steps would send: the Secret the Deployment
# mounts, and a JSON Patch (applied with Python jsonpatch) that gives every
# webhook entry the printed CA bundle. The certificates' contents are
# test/certgen's business.
for name in defaults opt-in; do
	dir=$out/certgen-$name
	mkdir -p "$dir"
	if ! "$py" - "$out/$name.yaml" "$dir" >"$dir/args" <<'EOF'; then
import sys, yaml
job = [o for o in yaml.safe_load_all(open(sys.argv[1]))
       if o and o["kind"] == "Job"][0]
args = job["spec"]["template"]["spec"]["initContainers"][0]["args"]
args[args.index("--out") + 1] = sys.argv[2]
print("\n".join(args))
EOF
		fail "$name: no certgen Job to run"
		continue
	fi
	mapfile -t args <"$dir/args"
	if ! "$bin" "${args[@]}" >"$dir/bundle" 2>"$dir/stderr"; then
		fail "$name: certgen, as the Job runs it: $(cat "$dir/stderr")"
		continue
	fi
	if "$py" - "$out/$name.yaml" "$dir" >"$dir/patched.yaml" <<'EOF' &&
import json, sys, jsonpatch, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
d = sys.argv[2]
dep = [o for o in objs if o["kind"] == "Deployment"][0]
mounted = [v["secret"]["secretName"] for v in
           dep["spec"]["template"]["spec"]["volumes"] if "secret" in v]
secret = yaml.safe_load(open(d + "/secret.yaml"))
assert secret["kind"] == "Secret" and secret["type"] == "kubernetes.io/tls"
assert [secret["metadata"]["name"]] == mounted, (secret["metadata"], mounted)
assert secret["metadata"]["namespace"] == dep["metadata"]["namespace"]
assert {"tls.crt", "tls.key", "ca.crt"} <= set(secret["data"])
mwc = [o for o in objs if o["kind"] == "MutatingWebhookConfiguration"][0]
patched = jsonpatch.apply_patch(mwc, json.load(open(d + "/cabundle-patch.json")))
bundle = open(d + "/bundle").read().strip()
assert bundle and all(w["clientConfig"].get("caBundle") == bundle
                      for w in patched["webhooks"]), "caBundle not on every entry"
print("---\n" + yaml.safe_dump(secret) + "---\n" + yaml.safe_dump(patched))
EOF
		"$validate" --strict --quiet "$dir/patched.yaml" >"$dir/valid"; then
		pass "$name: certgen Job output: Secret mounted by the pods," \
			"caBundle on all $(grep -c caBundle "$dir/patched.yaml") entries"
	else
		fail "$name: certgen Job output does not fit the chart"
		cat "$dir/valid" 2>/dev/null
	fi
	# The Deployment's own command line, with its mounts mapped to these
	# files, must pass `serve -n` (every flag exists, the files load).
	"$py" - "$out/$name.yaml" "$dir" "$out/$name.policy.yaml" >"$dir/serve" <<'EOF'
import sys, yaml
dep = [o for o in yaml.safe_load_all(open(sys.argv[1]))
       if o and o["kind"] == "Deployment"][0]
args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
for a in args:
    a = a.replace("/etc/topogate/tls", sys.argv[2])
    a = a.replace("/etc/topogate/policy/policy.yaml", sys.argv[3])
    print(a.replace("/etc/topogate/client-ca", sys.argv[2]))
EOF
	mapfile -t args <"$dir/serve"
	if msg=$("$bin" "${args[@]}" -n 2>&1) && [ "$msg" = "configuration OK" ]; then
		pass "$name: the Deployment's serve command line passes serve -n"
	else
		fail "$name: serve ${args[*]} -n: $msg"
	fi
done

# --- the schema refuses typos ------------------------------------------------------

typo() { # what-must-be-named flags...
	local word=$1
	shift
	if render "$@" >"$out/typo.out" 2>&1; then
		fail "schema accepted $*"
	elif grep -q -- "$word" "$out/typo.out"; then
		pass "schema refuses $* ($word named)"
	else
		fail "schema refused $* without naming $word: $(cat "$out/typo.out")"
	fi
}
typo timeoutSecond --set webhook.timeoutSecond=3
typo hostIpc --set 'policy.namespaces[0].name=x' \
	--set 'policy.namespaces[0].inject.hostIpc=false'
typo mode --set mode=enforcing
typo method --set certs.method=cert-manager
typo failurePolicy --set webhook.failurePolicy=fail
typo optin --set webhook.namespaces.optin=true

# --- check.py catches a broken rendering --------------------------------------------

# The same assertions, run against renderings that break one property each:
# check.py must fail, naming it.
mutant() { # what-the-failure-names flags...
	local word=$1
	shift
	render "$@" >"$out/mutant.yaml"
	if "$py" test/chart/check.py render mutant "$out/mutant.yaml" \
		test/chart/values/defaults.yaml "$out/mutant.policy" >"$out/mutant.out"; then
		fail "check.py passed a rendering with $*"
	elif grep -q -- "$word" "$out/mutant.out"; then
		pass "check.py catches $*"
	else
		fail "check.py failed $* without naming $word: $(cat "$out/mutant.out")"
	fi
}
mutant failurePolicy --set webhook.failurePolicy=Ignore
mutant "Pod Security" --set webhook.namespaces.podSecurityExclude=null
mutant "opt-in" --set webhook.namespaces.optIn=true
mutant "replicas" --set replicaCount=1
mutant "probe" --set ports.probe=9090 --set service.metricsPort=9090
mutant "webhook entries" --set webhook.jobs.enabled=false

# --- deploy/ is the chart's defaults ----------------------------------------------------

if test/chart/render-deploy.sh "$renderer" >"$out/topogate.yaml" &&
	diff -u deploy/topogate.yaml "$out/topogate.yaml" >"$out/deploy.diff"; then
	pass "deploy/topogate.yaml is the chart's defaults"
else
	fail "deploy/topogate.yaml differs from the chart (make deploy-manifests):"
	head -n 40 "$out/deploy.diff"
fi
if "$validate" --strict --quiet deploy/namespace.yaml deploy/smoke-pod.yaml \
	>"$out/deploy.valid"; then
	pass "deploy/namespace.yaml, deploy/smoke-pod.yaml: k8s-validate --strict"
else
	fail "deploy/namespace.yaml, deploy/smoke-pod.yaml"
	cat "$out/deploy.valid"
fi

# --- the smoke test of NOTES.txt answers as promised --------------------------------------

"$py" - deploy/smoke-pod.yaml >"$out/smoke.review.json" <<'EOF'
import json, sys, yaml
pod = yaml.safe_load(open(sys.argv[1]))
pod["metadata"]["namespace"] = "topogate-smoke"
print(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {"uid": "5e0c3b52-0000-4000-8000-000000000001",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "topogate-smoke", "operation": "CREATE",
        "userInfo": {"username": "smoke"}, "object": pod, "dryRun": True}}))
EOF
smoke() { # mode expected-allowed
	"$bin" audit --review - --mode "$1" <"$out/smoke.review.json" |
		"$py" -c 'import json, sys
r = json.load(sys.stdin)["response"]
ok = r["allowed"] == (sys.argv[1] == "true")
ok = ok and ("fragmented layout" in (r.get("status", {}).get("message", "")
    + " ".join(r.get("warnings", []))))
sys.exit(0 if ok else 1)' "$2"
}
for m in "enforce false" "warn true" "audit true"; do
	read -r mode allowed <<<"$m"
	if smoke "$mode" "$allowed"; then
		pass "smoke pod, $mode: allowed=$allowed, says 'fragmented layout'"
	else
		fail "smoke pod, $mode: not allowed=$allowed with 'fragmented layout'"
	fi
done

# --- Dockerfile: real package names, pinned base, non-root -------------------------------

runtime=$(sed -n '/^FROM .* AS runtime/,$p' Dockerfile)
mapfile -t pkgs < <(printf '%s\n' "$runtime" |
	sed -n 's/^ *\(lib[a-z0-9.+-]*\) *\\\?$/\1/p')
missing=""
for p in "${pkgs[@]}"; do
	apt-cache show --no-all-versions "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -z "$missing" ] &&
	[ "${pkgs[*]}" = "libmicrohttpd12 libcjson1 libyaml-0-2 libssl3" ]; then
	pass "Dockerfile runtime packages exist in Debian 12: ${pkgs[*]}"
else
	fail "Dockerfile runtime packages: '${pkgs[*]}', unknown:$missing"
fi
# Every library the binary loads must come with those packages (their
# Depends, recursively), not by luck from the base image.
closure=$(apt-cache depends --recurse --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances "${pkgs[@]}" |
	grep -v '^ ' | sort -u)
unowned=""
for lib in $(ldd "$bin" "$bin-certgen" | awk '/=>/ { print $3 }'); do
	owner=$({ dpkg -S "$lib" || dpkg -S "$(readlink -f "$lib")"; } 2>/dev/null |
		head -n 1 | cut -d: -f1)
	printf '%s\n' "$closure" | grep -qx "$owner" || unowned="$unowned $lib($owner)"
done
if [ -z "$unowned" ]; then
	pass "every library of $bin and $bin-certgen comes with the runtime packages"
else
	fail "libraries outside the runtime packages' dependencies:$unowned"
fi
if grep -Eq '^ARG DEBIAN=debian:12\.[0-9]+-slim$' Dockerfile &&
	grep -Eq '^FROM \$\{DEBIAN\} AS build$' Dockerfile &&
	grep -Eq '^FROM \$\{DEBIAN\} AS runtime$' Dockerfile &&
	printf '%s\n' "$runtime" | grep -Eq '^USER [0-9]+:[0-9]+$' &&
	grep -q '^build/' .dockerignore; then
	pass "Dockerfile: pinned Debian 12 base, two stages, numeric non-root user"
else
	fail "Dockerfile: base image, stages, USER or .dockerignore"
fi

if [ "$failed" -ne 0 ]; then
	echo "chart tests: $failed failed"
	exit 1
fi
echo "chart tests: all passed"
