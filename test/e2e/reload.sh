#!/bin/bash
# test/e2e/reload.sh BIN: certificate rotation and policy reload without
# a restart, against `BIN serve`.
#
# The files sit in the kubelet's layout for a mounted Secret or ConfigMap
# (NAME -> ..data/NAME, ..data -> a timestamped directory) and are
# changed the kubelet's way, by renaming a new ..data link over the old.
# Checks: a new handshake presents the new serial within a bounded wait
# while a request in flight on a connection opened before the swap is
# still answered; a bad certificate and a bad policy keep the old one
# serving and are counted; a new policy changes a decision; the expiry
# metric equals the certificate's notAfter. Every wait is bounded.

set -u

. "$(dirname "$0")/../bin-arg.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-reload.XXXXXX")

. "$HERE/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

NAME=topogate.e2e.svc
DENY=$ROOT/test/golden/cases/mpijob-worker-1gpu-deny.in.json

# B lives 30 days, so the two expiries differ.
for c in a:365 b:30; do
	if ! "$BIN" certgen --service topogate --namespace e2e \
		--out "$TMP/${c%:*}" --days "${c#*:}" >/dev/null \
		2>"$TMP/certgen.err"; then
		echo "not ok - certgen: $(cat "$TMP/certgen.err")"
		exit 1
	fi
done
serial() {
	openssl x509 -in "$1" -noout -serial | cut -d= -f2
}
not_after() {
	date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s
}
SERIAL_A=$(serial "$TMP/a/tls.crt")
SERIAL_B=$(serial "$TMP/b/tls.crt")
[ "$(not_after "$TMP/a/tls.crt")" != "$(not_after "$TMP/b/tls.crt")" ] ||
	not_ok "A and B expire at different times" "same notAfter"

# publish DIR VERSION FILE...: the kubelet's atomic update of a volume.
publish() {
	local dir=$1 version=$2
	shift 2
	mkdir -p "$dir/..$version"
	cp "$@" "$dir/..$version/"
	ln -sfn "..$version" "$dir/..data_tmp"
	mv -T "$dir/..data_tmp" "$dir/..data"
}
publish "$TMP" v1 "$TMP/a/tls.crt" "$TMP/a/tls.key"
ln -s ..data/tls.crt "$TMP/tls.crt"
ln -s ..data/tls.key "$TMP/tls.key"
CM=$TMP/cm
mkdir -p "$CM"
publish "$CM" p1 "$ROOT/deploy/policy.yaml"
ln -s ..data/policy.yaml "$CM/policy.yaml"

# The serial a fresh handshake presents.
live_serial() {
	timeout 5 openssl s_client -connect "127.0.0.1:$PORT" \
		-servername "$NAME" </dev/null 2>/dev/null |
		openssl x509 -noout -serial 2>/dev/null | cut -d= -f2
}
# decision FILE: "allowed" or "denied" for one review over HTTPS.
decision() {
	curl -sS --max-time 10 --cacert "$CA" --resolve "$NAME:$PORT:127.0.0.1" \
		-H 'Content-Type: application/json' --data-binary "@$1" \
		"https://$NAME:$PORT/mutate" |
		grep -Eo '"allowed" *: *(true|false)' |
		sed 's/.*true/allowed/; s/.*false/denied/'
}

if ! start_server --policy "$CM/policy.yaml"; then
	not_ok "serve: ready within 10 s" "$(tail -n 20 "$TMP/server.log")"
	exit 1
fi
ok "serve: ready with certificate and policy behind ..data links"
CA=$TMP/a/ca.crt

expect "before: a handshake presents serial A" "$SERIAL_A" "$(live_serial)"
expect "before: the expiry metric is A's notAfter" \
	"$(not_after "$TMP/a/tls.crt")" \
	"$(metric topogate_certificate_not_after_seconds)"
expect "before: enforce denies the fixture" denied "$(decision "$DENY")"

# --- rotation with a request in flight -----------------------------------------

# One keep-alive connection, opened on certificate A: a review, then a
# second review's headers and half its body; it waits for the go file,
# sends the rest, then a third review. Prints the three status codes.
$PY - "$PORT" "$TMP/a/ca.crt" "$NAME" "$ROOT/test/e2e/review-plain.json" \
	"$TMP/go" >"$TMP/inflight.out" 2>&1 <<'PYEOF' &
import os, socket, ssl, sys, time
port, ca, name, review, go = sys.argv[1:]
body = open(review, "rb").read()
head = (b"POST /mutate HTTP/1.1\r\nHost: %s\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % (name.encode(), len(body)))
ctx = ssl.create_default_context(cafile=ca)
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(port)), 5),
                    server_hostname=name)
s.settimeout(10)
f = s.makefile("rb")
def answer():
    status = f.readline().split()[1].decode()
    length = 0
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    f.read(length)
    return status
codes = []
s.sendall(head + body)
codes.append(answer())
s.sendall(head + body[: len(body) // 2])
print("half sent", flush=True)
deadline = time.monotonic() + 8
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.05)
s.sendall(body[len(body) // 2 :])
codes.append(answer())
s.sendall(head + body)
codes.append(answer())
print(" ".join(codes), flush=True)
PYEOF
inflight=$!
background $inflight
if ! wait_for_text "$TMP/inflight.out" "half sent"; then
	not_ok "in flight: a request half sent" "$(cat "$TMP/inflight.out")"
fi

start=$(date +%s%N)
publish "$TMP" v2 "$TMP/b/tls.crt" "$TMP/b/tls.key"
got=
for _ in $(seq 1 100); do
	got=$(live_serial)
	[ "$got" = "$SERIAL_B" ] && break
	sleep 0.1
done
ms=$((($(date +%s%N) - start) / 1000000))
expect "rotation: a new handshake presents serial B within 10 s" \
	"$SERIAL_B" "$got"
echo "# new serial seen after $ms ms"
touch "$TMP/go"
wait $inflight
expect "rotation: the connection opened on A answers its request in flight" \
	"200 200 200" "$(tail -n 1 "$TMP/inflight.out")"
CA=$TMP/b/ca.crt
expect "rotation: counted as reload ok" 1 \
	"$(metric 'topogate_reload_total{what="certificate",result="ok"}')"
expect "rotation: the expiry metric is B's notAfter" \
	"$(not_after "$TMP/b/tls.crt")" \
	"$(metric topogate_certificate_not_after_seconds)"
expect_log "rotation: logged with both serials" \
	"certificate reloaded: serial $SERIAL_B, not after .* \(was $SERIAL_A\)"

# --- a bad certificate keeps the good one -----------------------------------------

publish "$TMP" v3 "$TMP/b/tls.crt" "$TMP/a/tls.key"
if wait_metric 'topogate_reload_total{what="certificate",result="error"}' 1
then
	ok "a key that does not match: counted as reload error"
else
	not_ok "a key that does not match: counted as reload error" \
		"$(metric topogate_reload_total)"
fi
expect "a key that does not match: serial B still served" \
	"$SERIAL_B" "$(live_serial)"
expect_log "a key that does not match: logged, with the serial kept" \
	"certificate reload: .*tls\.key' does not match the certificate .*; serial $SERIAL_B stays in service"
expect "a review still answered after the failed reload" denied \
	"$(decision "$DENY")"

# --- policy reload ---------------------------------------------------------------

sed 's/^mode: enforce /mode: warn    /' "$ROOT/deploy/policy.yaml" \
	>"$TMP/warn.yaml"
grep -q '^mode: warn ' "$TMP/warn.yaml" ||
	not_ok "warn.yaml has mode: warn" "$(grep '^mode' "$TMP/warn.yaml")"
cp "$TMP/warn.yaml" "$TMP/policy.yaml"
publish "$CM" p2 "$TMP/policy.yaml"
if wait_metric 'topogate_reload_total{what="policy",result="ok"}' 1; then
	ok "policy: the new file is counted as reload ok"
else
	not_ok "policy: the new file is counted as reload ok" \
		"$(metric topogate_reload_total)"
fi
expect "policy: warn now allows the fixture enforce denied" allowed \
	"$(decision "$DENY")"
expect_match "policy: topogate_policy_info says mode warn" \
	'^topogate_policy_info\{origin="[^"]*/cm/policy\.yaml",digest="[0-9a-f]{16}",mode="warn"\} 1$' \
	"$(curl -s --max-time 5 "http://127.0.0.1:$PROBE/metrics")"

printf 'mode: warn\ninstanceTypes: [\n  - {name: p4d.24xlarge\n' \
	>"$TMP/policy.yaml"
publish "$CM" p3 "$TMP/policy.yaml"
if wait_metric 'topogate_reload_total{what="policy",result="error"}' 1; then
	ok "a bad policy: counted as reload error"
else
	not_ok "a bad policy: counted as reload error" \
		"$(metric topogate_reload_total)"
fi
expect "a bad policy: the warn policy still decides" allowed \
	"$(decision "$DENY")"
expect_log "a bad policy: logged as file:line:col: message" \
	'warn: policy reload: [^ ]*/cm/policy\.yaml:[0-9]+:[0-9]+: .*; policy [0-9a-f]{16} stays in service'

publish "$CM" p4 "$ROOT/deploy/policy.yaml"
if wait_metric 'topogate_reload_total{what="policy",result="ok"}' 2; then
	ok "a good policy after a bad one: reload ok"
else
	not_ok "a good policy after a bad one: reload ok" \
		"$(metric topogate_reload_total)"
fi
expect "back to enforce: the fixture is denied again" denied \
	"$(decision "$DENY")"

# Only what changed was reloaded, once each.
expect "no reload beyond the changes made" "2 1 1 1" \
	"$(metric 'topogate_reload_total{what="policy",result="ok"}') \
$(metric 'topogate_reload_total{what="policy",result="error"}') \
$(metric 'topogate_reload_total{what="certificate",result="ok"}') \
$(metric 'topogate_reload_total{what="certificate",result="error"}')"

stop_server
expect "SIGTERM: exit 0" 0 "$SERVER_RC"
expect_no_sanitizer_report

finish reload
