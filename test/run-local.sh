#!/bin/bash
# test/run-local.sh BIN: what `make run` does. Serves on 127.0.0.1:8443
# (probes on :8080) with a throw-away self-signed ECDSA P-256 certificate
# made in build/run/, after printing how to send it a review.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 BIN" >&2
	exit 2
fi
bin=$1
dir=$(dirname "$bin")/run
mkdir -p "$dir"

# Kept while it is valid for another hour: restarts reuse it, so a
# --cacert in another terminal stays good.
if ! openssl x509 -in "$dir/tls.crt" -noout -checkend 3600 >/dev/null 2>&1 ||
	[ ! -s "$dir/tls.key" ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-sha256 -nodes -days 30 -subj /CN=localhost \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost \
		-keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
	chmod 600 "$dir/tls.key"
fi

example=deploy/examples/p4d-16x1-trainjob-worker.review.json
if [ ! -f "$example" ]; then
	example=$(ls deploy/examples/*.review.json 2>/dev/null | head -n 1)
	example=${example:-test/e2e/review-plain.json}
fi

# Prints the response without its patch, then the patch decoded.
decode='import base64, json, sys; r = json.load(sys.stdin)["response"]; '
decode+='p = r.pop("patch", None); print(json.dumps(r, indent=2)); '
decode+='p and print(json.dumps(json.loads(base64.b64decode(p)), indent=2))'

cat <<EOF
topogate: https://127.0.0.1:8443/mutate, probes on http://127.0.0.1:8080
(certificate: $dir/tls.crt; Ctrl-C stops)

Send a review:
  curl --cacert $dir/tls.crt -H 'Content-Type: application/json' \\
    --data @$example https://127.0.0.1:8443/mutate

Read the answer, with its JSON Patch decoded: append
  | python3 -c '$decode'

Metrics: curl http://127.0.0.1:8080/metrics

EOF
exec "$bin" serve --listen 127.0.0.1:8443 --probe-listen 127.0.0.1:8080 \
	--tls-cert "$dir/tls.crt" --tls-key "$dir/tls.key"
