#!/bin/bash
# test/chart/run.sh BIN RENDERER: the chart tests (`make chart-test`).
#
# BIN is build/topogate; RENDERER is `helm` when installed, else
# build/helm-render (../shared/tools/helm-render). For each values set in
# test/chart/values/, and for each Kubernetes version we have the API of
# (1.25, 1.26, 1.28, 1.30, 1.36: the oldest and newest of Chart.yaml's
# kubeVersion range and the versions where the templates change), it
# renders charts/topogate for that version, lints it, validates every
# object with k8s-validate --strict against that version's API, asserts the
# chart's properties (check.py), and loads the rendered policy with
# `topogate serve -n` and `topogate tables`. Then: the version range is
# enforced and the validation can fail; the certgen steps keep the CA
# through an upgrade (certgen_steps.py); schema typos are refused; check.py
# catches a broken rendering; each plain manifest (deploy/topogate*.yaml)
# is the chart rendered for the range its header names, and every version
# in that range accepts it; charts/topogate/policy.yaml is current;
# deploy/smoke-pod.yaml gets the answers NOTES.txt promises; and the
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
# SHARED overrides where ../shared is.
shared=${SHARED:-../shared}
validate=$shared/tools/k8s-validate
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

# The API of Kubernetes 1.MINOR (../shared/k8s/README.md): openapi/ is
# 1.36, openapi-1.NN/ the older ones.
newest_api=36
api_minors=(25 26 28 30 36)
schemas() {
	if [ "$1" = "$newest_api" ]; then
		echo "$shared/k8s/openapi"
	else
		echo "$shared/k8s/openapi-1.$1"
	fi
}

# Chart.yaml's kubeVersion: ">=1.25.0-0", perhaps with "<1.NN.0-0".
range=$(sed -n 's/^kubeVersion: *"\(.*\)"$/\1/p' "$chart/Chart.yaml")
oldest=$(printf '%s\n' "$range" | sed -n 's/^>=1\.\([0-9]*\)\..*/\1/p')
upper=$(printf '%s\n' "$range" | sed -n 's/.*<1\.\([0-9]*\)\..*/\1/p')
newest=${upper:+$((upper - 1))}
newest=${newest:-$newest_api}

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
cp "$out/tls.crt" "$out/ca.crt" # for --client-ca

# A clone alone has no renderer (helm, or build/helm-render from
# ../shared/tools/helm-render) and no API schemas of 1.25-1.30: all that
# renders or validates is skipped, in one line; the checks after it run.
if [ -x "$renderer" ] && [ -x "$validate" ] && [ -d "$(schemas "$oldest")" ]; then

# --- one case per values set -----------------------------------------------------

# name | values file | Kubernetes 1.x | extra render flags
cases=(
	"defaults|defaults.yaml|$newest_api|"
	"enforce|enforce.yaml|$newest_api|"
	"cert-manager|cert-manager.yaml|$newest_api|"
	"warn-fail|warn-fail.yaml|$newest_api|"
	"opt-in|opt-in.yaml|$newest_api|"
	"no-cluster-view|no-cluster-view.yaml|$newest_api|"
	"live-audit|live-audit.yaml|$newest_api|"
	"live-audit-sized|live-audit-sized.yaml|$newest_api|"
	"network-policy|network-policy.yaml|$newest_api|"
	"policy-override|policy-override.yaml|$newest_api|"
	"policy-whole|policy-whole.yaml|$newest_api|--set-file policy.yaml=test/chart/whole-policy.yaml"
)
for m in "${api_minors[@]}"; do
	[ "$m" = "$newest_api" ] || cases+=("kube-1.$m|defaults.yaml|$m|")
done
# The oldest version with the values that change the most objects.
for f in enforce cert-manager opt-in no-cluster-view network-policy; do
	cases+=("kube-1.$oldest-$f|$f.yaml|$oldest|")
done
for c in "${cases[@]}"; do
	IFS='|' read -r name file minor extra <<<"$c"
	values=test/chart/values/$file
	read -r -a extra_flags <<<"$extra"
	flags=(-f "$values" --kube-version "1.$minor.0" "${extra_flags[@]}")
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
	if "$validate" --strict --quiet --schemas "$(schemas "$minor")" \
		"$out/$name.yaml" >"$out/$name.valid"; then
		pass "$name: k8s-validate --strict, Kubernetes 1.$minor API" \
			"($(tail -n 1 "$out/$name.valid"))"
	else
		fail "$name: k8s-validate --strict, Kubernetes 1.$minor API"
		cat "$out/$name.valid"
	fi
	if POLICY_FILE=$policy_file KUBE_MINOR=$minor \
		"$py" test/chart/check.py render "$name" \
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

# --- the version range is enforced, and the validation can fail -------------------

if [ -n "$oldest" ] && [ -d "$(schemas "$oldest")" ] &&
	[ -d "$(schemas "$newest")" ] &&
	printf ' %s ' "${api_minors[@]}" | grep -q " $oldest .* $newest "; then
	pass "kubeVersion '$range': rendered and validated for its oldest" \
		"(1.$oldest) and newest (1.$newest) versions"
else
	fail "kubeVersion '$range': no API schemas for 1.$oldest or 1.$newest"
fi
if render --kube-version "1.$((oldest - 1)).0" >"$out/too-old.yaml" \
	2>"$out/too-old.err"; then
	fail "the chart renders for 1.$((oldest - 1)), outside '$range'"
else
	pass "the chart refuses 1.$((oldest - 1)): $(head -c 100 "$out/too-old.err")"
fi
# The newest rendering against the oldest API: the fields the old
# apiserver does not know must be errors, as they are for a real one.
if "$validate" --strict --quiet --schemas "$(schemas "$oldest")" \
	"$out/defaults.yaml" >"$out/newest-on-oldest.valid"; then
	fail "the 1.$newest rendering passes the 1.$oldest API: the check" \
		"cannot see a field that is too new"
elif grep -q 'matchConditions: unknown field' "$out/newest-on-oldest.valid" &&
	grep -q 'sleep: unknown field' "$out/newest-on-oldest.valid"; then
	pass "the 1.$newest rendering fails the 1.$oldest API" \
		"(matchConditions, preStop sleep: unknown fields)"
else
	fail "the 1.$newest rendering fails the 1.$oldest API for other reasons:"
	cat "$out/newest-on-oldest.valid"
fi

# --- the certgen steps keep the CA through an upgrade ------------------------------

# certgen_steps.py runs the certgen Job's command line, as rendered, for an
# install and then an upgrade, and checks what the kubectl steps would
# send; the patched objects must pass k8s-validate too.
for name in defaults opt-in no-cluster-view "kube-1.$oldest"; do
	dir=$out/certgen-$name
	mkdir -p "$dir"
	if "$py" test/chart/certgen_steps.py "$out/$name.yaml" "$bin" "$dir" \
		>"$dir/patched.yaml" 2>"$dir/stderr" &&
		"$validate" --strict --quiet "$dir/patched.yaml" >"$dir/valid"; then
		pass "$name: certgen steps: install makes the CA, upgrade keeps it" \
			"(same caBundle on all $(grep -c caBundle "$dir/patched.yaml")" \
			"entries, new serving certificate); the pods' Secret has no CA key"
	else
		fail "$name: certgen steps:"
		cat "$dir/stderr" "$dir/valid" 2>/dev/null || true
	fi
	# The Deployment's own command line, with its mounts mapped to these
	# files (the throw-away pair when certgen failed), must pass
	# `serve -n`: every flag exists, the files load.
	tls=$dir/install/out
	[ -f "$tls/tls.crt" ] || tls=$out
	"$py" - "$out/$name.yaml" "$tls" "$out/$name.policy.yaml" \
		>"$dir/serve" <<'EOF'
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
		fail "$name: serve ${args[*]} -n: $(printf '%s' "$msg" | head -n 1)"
	fi
done

# The upgrade check must be able to fail: a certgen that never finds its
# CA (its --ca-dir emptied before each run) makes a new CA every time.
if [ -f "$out/certgen-defaults/upgrade/out/ca-secret.yaml" ]; then
	cat >"$out/forgetful" <<EOF
#!/bin/bash
args=("\$@")
for ((i = 0; i + 1 < \${#args[@]}; i++)); do
	[ "\${args[i]}" = --ca-dir ] && rm -f "\${args[i + 1]}"/*
done
exec "$(realpath "$bin")" "\$@"
EOF
	chmod +x "$out/forgetful"
	mkdir -p "$out/certgen-forgetful"
	if "$py" test/chart/certgen_steps.py "$out/defaults.yaml" \
		"$out/forgetful" "$out/certgen-forgetful" >/dev/null \
		2>"$out/certgen-forgetful/stderr"; then
		fail "certgen_steps.py passed a certgen that makes a new CA each run"
	elif grep -q "the CA bundle changed" "$out/certgen-forgetful/stderr"; then
		pass "certgen_steps.py catches a certgen that makes a new CA each run"
	else
		fail "certgen_steps.py failed a forgetful certgen for another reason:"
		cat "$out/certgen-forgetful/stderr"
	fi
fi

# --- the live audit's memory needs a limit it can add to --------------------------

if render --kube-version "1.$newest_api.0" --set liveAudit.enabled=true \
	--set resources.limits.memory=512M >"$out/mem.out" 2>&1; then
	fail "liveAudit.expectedPods added to a limit of 512M"
elif grep -q 'resources.limits.memory "512M" is not a whole number of Mi or Gi' "$out/mem.out"; then
	pass "liveAudit.expectedPods refuses a limit not in Mi or Gi, naming it"
else
	fail "liveAudit.expectedPods with 512M: $(cat "$out/mem.out")"
fi
if render --kube-version "1.$newest_api.0" --set liveAudit.enabled=true \
	--set liveAudit.expectedPods=0 --set resources.limits.memory=512M \
	>"$out/mem0.out" 2>&1 && grep -q 'memory: 512M$' "$out/mem0.out"; then
	pass "liveAudit.expectedPods 0 leaves the limit as written"
else
	fail "liveAudit.expectedPods 0 with 512M: $(tail -3 "$out/mem0.out")"
fi

# --- the schema refuses typos ------------------------------------------------------

typo() { # what-must-be-named flags...
	local word=$1
	shift
	if render --kube-version "1.$newest_api.0" "$@" >"$out/typo.out" 2>&1; then
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
typo enable --set clusterView.enable=false
typo expectedPod --set liveAudit.expectedPod=100
typo tokenExpirationSeconds --set clusterView.tokenExpirationSeconds=60
typo failurePolicy --set webhook.jobs.failurePolicy=fail
typo rotateOnUpgrade --set certs.hook.rotateOnUpgrade=false
typo renewSchedule --set certs.hook.renewSchedule=monthly

# --- check.py catches a broken rendering --------------------------------------------

# The same assertions, run against renderings that break one property each:
# check.py must fail, naming it.
caught() { # what-the-failure-names what-was-broken
	if KUBE_MINOR=$newest_api "$py" test/chart/check.py render mutant \
		"$out/mutant.yaml" test/chart/values/defaults.yaml \
		"$out/mutant.policy" >"$out/mutant.out"; then
		fail "check.py passed a rendering with $2"
	elif grep -q -- "$1" "$out/mutant.out"; then
		pass "check.py catches $2"
	else
		fail "check.py failed $2 without naming $1: $(cat "$out/mutant.out")"
	fi
}
mutant() { # what-the-failure-names flags...
	local word=$1
	shift
	render --kube-version "1.$newest_api.0" "$@" >"$out/mutant.yaml"
	caught "$word" "$*"
}
# Breaks what values cannot: PYTHON edits `objs`, the default rendering's
# objects; find(kind, name) returns one of them.
edited() { # what-the-failure-names what-was-broken python
	"$py" - "$out/defaults.yaml" "$3" >"$out/mutant.yaml" <<'EOF'
import sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
def find(kind, name=None):
    return [o for o in objs if o["kind"] == kind and
            (name is None or o["metadata"]["name"] == name)][0]
def pod(o):
    t = o["spec"]
    return (t["jobTemplate"]["spec"] if o["kind"] == "CronJob" else t)[
        "template"]["spec"]
exec(sys.argv[2])
print(yaml.safe_dump_all(objs))
EOF
	caught "$1" "$2"
}
mutant failurePolicy --set webhook.failurePolicy=Fail
mutant "jobs.topogate.io: failurePolicy" --set webhook.jobs.failurePolicy=Fail
mutant "mode: audit" --set mode=enforce
mutant "Pod Security" --set webhook.namespaces.podSecurityExclude=null
mutant "opt-in" --set webhook.namespaces.optIn=true
mutant "replicas" --set replicaCount=1
mutant "probe" --set ports.probe=9090 --set service.metricsPort=9090
mutant "webhook entries" --set webhook.jobs.enabled=false
mutant "cluster view" --set clusterView.enabled=false
mutant "expirationSeconds" --set clusterView.tokenExpirationSeconds=7200
mutant "renewal CronJobs" --set certs.hook.renewSchedule=
edited "cluster view: reads" "the view's ClusterRole reading secrets" \
	'find("ClusterRole", "topogate-cluster-view")["rules"][0]["resources"].append("secrets")'
edited "cluster view: verbs" "the view's ClusterRole with list only" \
	'find("ClusterRole", "topogate-cluster-view")["rules"][1]["verbs"] = ["list"]'
edited "cluster view: 2 bindings" "a second binding for the webhook's ServiceAccount" \
	'import copy; b = copy.deepcopy(find("ClusterRoleBinding", "topogate-cluster-view")); b["metadata"]["name"] = "x"; objs.append(b)'
edited "read-only" "the token mounted writable" \
	'[m.pop("readOnly") for m in pod(find("Deployment"))["containers"][0]["volumeMounts"] if m["name"] == "kube-api-access"]'
edited "the pod automounts" "automountServiceAccountToken on the webhook pod" \
	'pod(find("Deployment"))["automountServiceAccountToken"] = True'
edited "the CA is not reused" "a certgen Job without --ca-dir" \
	'a = pod(find("Job", "topogate-certgen"))["initContainers"][0]["args"]; i = a.index("--ca-dir"); del a[i:i + 2]'
edited "the CA is not reused" "the CA Secret volume not optional (first install hangs)" \
	'[v["secret"].pop("optional") for v in pod(find("Job", "topogate-certgen"))["volumes"] if v["name"] == "ca"]'
edited "not stored" "certgen not writing the CA Secret back" \
	'a = pod(find("Job", "topogate-certgen"))["initContainers"][0]["args"]; a[a.index("--ca-secret-name") + 1] = "other"'
edited "apply both Secrets" "the apply step without the CA Secret" \
	'pod(find("Job", "topogate-certgen"))["containers"][0]["args"].remove("--filename=/out/ca-secret.yaml")'
edited "mount the CA Secret" "the webhook pods mounting the CA Secret" \
	'pod(find("Deployment"))["volumes"][0]["secret"]["secretName"] = "topogate-ca"'
edited "alone" "the caBundle Job mounting the whole CA Secret" \
	'[v["secret"].pop("items") for v in pod(find("Job", "topogate-cabundle"))["volumes"] if v["name"] == "cabundle"]'
edited "helm install --wait" "the certgen Job as a post-install hook" \
	'find("Job", "topogate-certgen")["metadata"]["annotations"]["helm.sh/hook"] = "post-install,post-upgrade"'
edited "unlike the install Job" "the renewal CronJob's certgen for other days" \
	'a = pod(find("CronJob"))["initContainers"][0]["args"]; a[a.index("--days") + 1] = "3650"'
edited "Role/topogate-certgen" "the hook Role on every Secret" \
	'find("Role", "topogate-certgen")["rules"][0].pop("resourceNames")'
edited "preStop sleep missing" "no preStop sleep on 1.$newest_api" \
	'pod(find("Deployment"))["containers"][0].pop("lifecycle")'

# --- the plain manifests: one file per range of Kubernetes versions ------------------

# Each deploy/topogate*.yaml names its range in its first line ("# For
# Kubernetes 1.30 and newer." or "# For Kubernetes 1.25 to 1.29."). It must
# be the chart rendered for that range (render-deploy.sh), pass the API of
# every version in the range we have, fail the version just below it (so
# the range says something), and the files together must cover Chart.yaml's
# range with no gap; the README names each file with its range.
plain_ranges=()
for f in deploy/topogate*.yaml; do
	head1=$(head -n 1 "$f")
	lo=$(printf '%s\n' "$head1" | sed -n 's/^# For Kubernetes 1\.\([0-9]*\) .*/\1/p')
	hi=$(printf '%s\n' "$head1" | sed -n 's/^# For Kubernetes 1\.[0-9]* to 1\.\([0-9]*\)\.$/\1/p')
	if [ -z "$lo" ] || { [ -z "$hi" ] &&
		[ "$head1" != "# For Kubernetes 1.$lo and newer." ]; }; then
		fail "$f: first line '$head1' names no Kubernetes range"
		continue
	fi
	plain_ranges+=("$lo ${hi:-open} $f")
	if [ -n "$hi" ]; then phrase="Kubernetes 1.$lo to 1.$hi"; else
		phrase="Kubernetes 1.$lo and newer"; fi
	if test/chart/render-deploy.sh "$renderer" "1.$lo" ${hi:+"1.$hi"} \
		>"$out/plain.yaml" &&
		diff -u "$f" "$out/plain.yaml" >"$out/plain.diff"; then
		pass "$f is the chart's defaults for $phrase"
	else
		fail "$f differs from the chart (make deploy-manifests):"
		head -n 40 "$out/plain.diff"
	fi
	below=""
	for m in "${api_minors[@]}"; do
		if [ "$m" -lt "$lo" ]; then
			below=$m
		elif [ -z "$hi" ] || [ "$m" -le "$hi" ]; then
			if "$validate" --strict --quiet --schemas "$(schemas "$m")" \
				deploy/namespace.yaml "$f" >"$out/plain.valid"; then
				pass "$f: Kubernetes 1.$m API accepts every field"
			else
				fail "$f: Kubernetes 1.$m API, inside its range:"
				cat "$out/plain.valid"
			fi
		fi
	done
	if [ -n "$below" ] && [ "$below" -ge "$oldest" ]; then
		if "$validate" --strict --quiet --schemas "$(schemas "$below")" \
			"$f" >/dev/null; then
			fail "$f: Kubernetes 1.$below accepts it too: its range" \
				"could start lower"
		else
			pass "$f: Kubernetes 1.$below API refuses it, as its range says"
		fi
	fi
	if grep -q "\`$f\`" README.md && grep -qF "$phrase" README.md; then
		pass "README names $f and '$phrase'"
	else
		fail "README does not name \`$f\` and '$phrase'"
	fi
done
# Sorted by their oldest version, the ranges must run from Chart.yaml's
# oldest with no gap, the last one open.
want=$oldest
covered=yes
while read -r lo hi f; do
	[ "$lo" = "$want" ] || covered=no
	if [ "$hi" = open ]; then want=open; else want=$((hi + 1)); fi
done < <(printf '%s\n' "${plain_ranges[@]}" | sort -n)
if [ "$covered" = yes ] && [ "$want" = open ]; then
	pass "the plain manifests cover Kubernetes 1.$oldest and newer, no gap:" \
		"$(printf '%s\n' "${plain_ranges[@]}" | sort -n | awk '{ printf "%s ", $3 }')"
else
	fail "the plain manifests' ranges do not cover 1.$oldest and newer:" \
		"${plain_ranges[*]}"
fi
if "$validate" --strict --quiet --schemas "$(schemas "$oldest")" \
	deploy/namespace.yaml deploy/smoke-pod.yaml >"$out/deploy.valid" &&
	"$validate" --strict --quiet deploy/namespace.yaml deploy/smoke-pod.yaml \
		>>"$out/deploy.valid"; then
	pass "deploy/namespace.yaml, deploy/smoke-pod.yaml: k8s-validate" \
		"--strict, Kubernetes 1.$oldest and 1.$newest_api"
else
	fail "deploy/namespace.yaml, deploy/smoke-pod.yaml"
	cat "$out/deploy.valid"
fi

else
	why="no API schemas at $(schemas "$oldest")"
	[ -x "$validate" ] || why="no $validate"
	[ -x "$renderer" ] || why="no chart renderer: helm or $renderer, built from $shared/tools/helm-render"
	echo "# skipped: chart render, lint, k8s-validate per Kubernetes version," \
		"certgen steps, plain manifests ($why; ../shared has them)"
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
if [ -z "$missing" ] && [ "${#pkgs[@]}" -ge 4 ]; then
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

# The dashboard and the alerts (test/chart/values/monitoring.yaml) name
# only metrics that `serve --live-audit` exports: its /metrics, with a
# kubeconfig whose apiserver is not there (the series are there at start).
cat >"$out/nowhere.kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: t
contexts: [{name: t, context: {cluster: s, user: u}}]
clusters: [{name: s, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
KC
probe=$((20000 + RANDOM % 20000))
"$bin" serve --listen 127.0.0.1:$((probe + 1)) --probe-listen 127.0.0.1:$probe \
	--tls-cert "$out/tls.crt" --tls-key "$out/tls.key" \
	--kubeconfig "$out/nowhere.kubeconfig" --live-audit \
	>"$out/metrics-serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$probe/metrics" >"$out/metrics.txt" 2>/dev/null &&
		grep -q '^# TYPE topogate_liveaudit_pods ' "$out/metrics.txt" &&
		grep -q '^# TYPE topogate_view_synced ' "$out/metrics.txt" && break
	sleep 0.1
done
kill "$serve_pid" 2>/dev/null
wait "$serve_pid" 2>/dev/null
# Its objects validate (but the PrometheusRule: no schema of the Prometheus
# Operator's CRD here; metrics_named.py checks its shape).
if render -f test/chart/values/monitoring.yaml >"$out/monitoring-objs.yaml" &&
	"$py" -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
print(yaml.safe_dump_all([d for d in docs if d["kind"] != "PrometheusRule"]))' \
		"$out/monitoring-objs.yaml" >"$out/monitoring-core.yaml" &&
	"$validate" --strict --quiet --schemas "$(schemas "$newest_api")" \
		"$out/monitoring-core.yaml" >"$out/monitoring.valid"; then
	pass "monitoring: k8s-validate --strict ($(tail -n 1 "$out/monitoring.valid"))"
else
	fail "monitoring: render or k8s-validate"
	cat "$out/monitoring.valid"
fi
if "$py" test/chart/metrics_named.py "$out/monitoring-objs.yaml" \
		"$out/metrics.txt" >"$out/metrics-named.txt"; then
	pass "every metric the dashboard and alerts name is exported" \
		"($(grep -c '^ok' "$out/metrics-named.txt") names)"
else
	fail "the dashboard or alerts name a metric serve does not export"
	cat "$out/metrics-named.txt"
fi

if [ "$failed" -ne 0 ]; then
	echo "chart tests: $failed failed"
	exit 1
fi
echo "chart tests: all passed"
