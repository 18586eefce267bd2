#!/bin/bash
# test/e2e/run.sh BIN: a real HTTPS client against `BIN serve`.
#
# Starts BIN (a plain or a sanitizer build) on free ports of 127.0.0.1
# with a throw-away certificate, and checks with curl and openssl what
# the apiserver and the kubelet would see: status codes for what is not a
# review, the body cap, malformed input, keep-alive, slow clients, the
# probes and metrics, TLS versions, `serve -n`, and shutdown on SIGTERM.
# client.py does what curl cannot: send headers without their body,
# trickle a request one byte a second, and watch an idle connection.
#
# Prints `ok - name` or `not ok - name: details` per check; exits 1 if
# any failed. Every wait is bounded, and every process started here is
# killed on exit.

set -u

. "$(dirname "$0")/../bin-arg.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-e2e.XXXXXX")

. "$HERE/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# curl as the apiserver's client: verifies the certificate, 10 s at most.
CURL=(curl -sS --max-time 10 --cacert "$TMP/tls.crt")

# post PATH CONTENT-TYPE FILE [CURL-FLAGS...]: prints the status code;
# the body goes to TMP/body.
post() {
	local path=$1 ctype=$2 file=$3
	shift 3
	"${CURL[@]}" -o "$TMP/body" -w '%{http_code}' -H "Content-Type: $ctype" \
		"$@" --data-binary "@$file" "https://127.0.0.1:$PORT$path"
}

if ! mkcert tls || ! mkcert other; then
	echo "not ok - certificates: $(cat "$TMP/openssl.log")"
	exit 1
fi
head -c $((4 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$TMP/4mib.json"
printf '%2000s' '' | tr ' ' '[' >"$TMP/nested.json"
printf '{"apiVersion": "admission.k8s.io/v1", "kind": ' >"$TMP/malformed.json"
printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}' \
	>"$TMP/norequest.json"
sed 's/"uid": "[^"]*",//' "$HERE/review-plain.json" >"$TMP/nouid.json"
REVIEW=$HERE/review-plain.json
# A whole-node pod: its answer carries a patch, over 1,400 bytes.
GPU_REVIEW=$HERE/../golden/cases/p4d-2x8-trainjob-whole-node-mutate.in.json

# --- serve -n ----------------------------------------------------------------

check() {
	"$BIN" serve -n "$@" >"$TMP/check.out" 2>"$TMP/check.err"
}

check --tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key"
expect "serve -n: good files print configuration OK" \
	"0 configuration OK" "$? $(cat "$TMP/check.out")"

check --tls-key "$TMP/tls.key"
rc=$?
expect_match "serve -n: no --tls-cert is named" \
	"^1 .*missing --tls-cert" "$rc $(cat "$TMP/check.err")"

check --tls-cert "$TMP/absent.crt" --tls-key "$TMP/tls.key"
rc=$?
expect_match "serve -n: a missing certificate file is named" \
	"^1 .*absent\.crt.*No such file" "$rc $(cat "$TMP/check.err")"

check --tls-cert "$TMP/tls.crt" --tls-key "$TMP/other.key"
rc=$?
expect_match "serve -n: a key that does not match the certificate" \
	"^1 .*other\.key' does not match the certificate" \
	"$rc $(cat "$TMP/check.err")"

printf 'instanceTypes: [\n  - {name: p4d.24xlarge\n' >"$TMP/bad-policy.yaml"
check --tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key" \
	--policy "$TMP/bad-policy.yaml"
rc=$?
expect_match "serve -n: a bad policy file says file:line:col" \
	"^1 .*bad-policy\.yaml:[0-9]+:[0-9]+: " "$rc $(cat "$TMP/check.err")"

if [ "$(wc -l <"$TMP/check.err")" = 1 ]; then
	ok "serve -n: the error is one line"
else
	not_ok "serve -n: the error is one line" "$(cat "$TMP/check.err")"
fi

# --- the admission listener --------------------------------------------------

if ! start_server; then
	not_ok "serve: ready within 10 s" "$(tail -n 20 "$TMP/server.log")"
	exit 1
fi
ok "serve: ready within 10 s"

code=$("${CURL[@]}" -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' \
	"https://127.0.0.1:$PORT/mutate")
expect "GET /mutate is 405" 405 "$code"
expect_match "405 says Allow: POST" '^Allow: POST' \
	"$(tr -d '\r' <"$TMP/headers")"
is_status "$(cat "$TMP/body")" 405 && ok "405 has a Status body" ||
	not_ok "405 has a Status body" "$(cat "$TMP/body")"

expect "POST /validate is 404" 404 \
	"$(post /validate application/json "$REVIEW")"
is_status "$(cat "$TMP/body")" 404 && ok "404 has a Status body" ||
	not_ok "404 has a Status body" "$(cat "$TMP/body")"
expect "GET / is 404" 404 "$("${CURL[@]}" -o /dev/null -w '%{http_code}' \
	"https://127.0.0.1:$PORT/")"

expect "text/plain is 415" 415 "$(post /mutate text/plain "$REVIEW")"
is_status "$(cat "$TMP/body")" 415 && ok "415 has a Status body" ||
	not_ok "415 has a Status body" "$(cat "$TMP/body")"

code=$(post '/mutate?timeout=10s' 'application/json; charset=utf-8' "$REVIEW")
expect "application/json; charset=utf-8 is 200" 200 "$code"
expect_match "the response carries the request's uid" \
	'"response" *: *\{ *"uid" *: *"e2e-plain-0001"' "$(cat "$TMP/body")"
expect "Application/JSON (any case) is 200" 200 \
	"$(post /mutate 'Application/JSON' "$REVIEW")"

# --- the body cap ------------------------------------------------------------

# curl waits for "100 Continue" before a big body: the 413 comes first and
# no byte of the body is sent. (With `-H Expect:` curl sends the body at
# once, and the reset of a connection closed with unread data can beat
# the 413 to curl: a race of the client's making, so not tested.)
expect "Content-Length of 4 MiB is 413, and no body is sent" "413 0" \
	"$("${CURL[@]}" -o "$TMP/body" -w '%{http_code} %{size_upload}' \
		-H 'Content-Type: application/json' -H 'Expect: 100-continue' \
		--data-binary "@$TMP/4mib.json" "https://127.0.0.1:$PORT/mutate")"
is_status "$(cat "$TMP/body")" 413 && ok "413 has a Status body" ||
	not_ok "413 has a Status body" "$(cat "$TMP/body")"
expect "Content-Length of 4 MiB and no body at all is 413" 413 \
	"$(timeout 10 $PY "$HERE/client.py" headers-only "$PORT" "$TMP/tls.crt")"
expect "a chunked body over 3 MiB is 413" 413 \
	"$(post /mutate application/json "$TMP/4mib.json" \
		-H 'Transfer-Encoding: chunked')"

# --- malformed reviews -------------------------------------------------------

for c in malformed norequest nouid nested; do
	case $c in
	malformed) name="malformed JSON" ;;
	norequest) name="a review without request" ;;
	nouid) name="a review without request.uid" ;;
	nested) name="2000 nested [" ;;
	esac
	code=$(post /mutate application/json "$TMP/$c.json")
	body=$(cat "$TMP/body")
	if [ "$code" = 400 ] && is_status "$body" 400; then
		ok "$name is 400 with a Status body"
	else
		not_ok "$name is 400 with a Status body" "$code $body"
	fi
done

# --- keep-alive --------------------------------------------------------------

u="https://127.0.0.1:$PORT/mutate"
got=$("${CURL[@]}" -H 'Content-Type: application/json' \
	--data-binary "@$REVIEW" -o /dev/null -o /dev/null -o /dev/null \
	-w '%{http_code}:%{num_connects} ' "$u" "$u" "$u")
expect "three reviews on one keep-alive connection" \
	"200:1 200:0 200:0 " "$got"
# Answers the client does not read for a second pile up in the socket:
# each one's header and body still arrive whole and in order.
expect "300 pipelined reviews, read late, are answered alike" \
	"300 answers, 200 x300, 1 distinct" \
	"$(timeout 30 $PY "$HERE/client.py" pipeline "$PORT" "$TMP/tls.crt" \
		"$GPU_REVIEW" 300)"
# The connection's 16 KiB buffer holds the headers: a bearer token fits,
# and 12 KiB of them; past the buffer they are refused whole, and the
# server goes on.
expect "a review with 12 KiB of headers is 200" 200 \
	"$(post /mutate application/json "$REVIEW" \
		-H "Authorization: Bearer $(head -c 12288 /dev/zero | tr '\0' t)")"
expect "a review with 17 KiB of headers is 431" 431 \
	"$(post /mutate application/json "$REVIEW" \
		-H "Authorization: Bearer $(head -c 17408 /dev/zero | tr '\0' t)")"
expect "and the next review is 200" 200 \
	"$(post /mutate application/json "$REVIEW")"

# --- a slow client -----------------------------------------------------------

timeout 40 $PY "$HERE/client.py" trickle "$PORT" "$TMP/tls.crt" \
	>"$TMP/trickle.out" 2>&1 &
trickle=$!
background $trickle
# Beside it, the apiserver's way: a review, then an idle connection.
timeout 40 $PY "$HERE/client.py" idle "$PORT" "$TMP/tls.crt" "$REVIEW" \
	>"$TMP/idle.out" 2>&1 &
idle=$!
background $idle
# And a connection dialled for the pool, its handshake done, unused.
timeout 40 $PY "$HERE/client.py" pooled "$PORT" "$TMP/tls.crt" "$REVIEW" \
	>"$TMP/pooled.out" 2>&1 &
pooled=$!
background $pooled
wait_for_text "$TMP/trickle.out" connected
sleep 2
got=$(post /mutate application/json "$REVIEW" --max-time 1)
if [ "$got" = 200 ] && kill -0 $trickle 2>/dev/null; then
	ok "a slow client does not hold up a review beside it"
else
	not_ok "a slow client does not hold up a review beside it" \
		"$got; trickle: $(cat "$TMP/trickle.out")"
fi
wait $trickle
# The trickle never completes its first request head: SERVER_FIRST_MS
# (3 s from accept) ends it; the watchdog looks every 0.25 s. (A slow
# body, after a whole head, gets SERVER_TIMEOUT + 1: test/stress.)
expect_match "a slow client is dropped 3 s after connecting (no head)" \
	'closed after 3\.[0-9] s' "$(cat "$TMP/trickle.out")"
wait $pooled
expect_match "a handshaken connection unused for 5 s is kept (3 s is the handshake's)" \
	'^open after 5 s HTTP/1.1 200 OK$' \
	"$(tr '\n' ' ' <"$TMP/pooled.out" | sed 's/ $//')"
wait $idle
# Kept far longer than the apiserver's 90 s (SERVER_KEPT_S): its pool is
# not cut, and answers the next review.
expect_match "an idle keep-alive connection is kept 12 s and answers again" \
	'^HTTP/1.1 200 OK open after 12 s idle HTTP/1.1 200 OK$' \
	"$(tr '\n' ' ' <"$TMP/idle.out" | sed 's/ $//')"
expect "only the slow client is reported as dropped" 1 \
	"$(grep -c 'admission: dropped 1 connection (last from 127.0.0.1): no whole request head' \
		"$TMP/server.log")"

# --- probes and metrics ------------------------------------------------------

p="http://127.0.0.1:$PROBE"
expect "/healthz is 200 ok" "ok 200" \
	"$(curl -s --max-time 5 -w ' %{http_code}' "$p/healthz")"
expect "/readyz is 200 ready" "ready 200" \
	"$(curl -s --max-time 5 -w ' %{http_code}' "$p/readyz")"
expect "probe port: other paths are 404" 404 \
	"$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$p/mutate")"

metrics=$(curl -s --max-time 5 -D "$TMP/mheaders" "$p/metrics")
expect_match "/metrics is Prometheus text 0.0.4" \
	'^Content-Type: text/plain; version=0\.0\.4' "$(tr -d '\r' <"$TMP/mheaders")"
expect_match "/metrics counts the reviews" \
	'^topogate_reviews_total\{decision="ignore",instance_type="none"\} [1-9]' \
	"$metrics"
expect_match "/metrics counts the 400s as decision=error" \
	'^topogate_reviews_total\{decision="error",instance_type="none"\} 4$' \
	"$metrics"
expect_match "/metrics counts responses by code" \
	'^topogate_http_requests_total\{code="413"\} 3$' "$metrics"
expect_match "/metrics has the duration histogram" \
	'^topogate_review_duration_seconds_count [1-9]' "$metrics"
expect_match "/metrics names the policy" \
	'^topogate_policy_info\{origin="embedded",digest="[0-9a-f]{16}",'\
'mode="enforce"\} 1$' \
	"$metrics"
expect_match "/metrics names the build" \
	'^topogate_build_info\{version="[^"]+"\} 1$' "$metrics"

# --- TLS versions ------------------------------------------------------------

# tls VERSION PORT: 0 when a handshake offering only that version agrees
# on a cipher; TMP/tls.out says which protocol. SECLEVEL=0 lets OpenSSL 3
# offer TLS 1.1 at all: refusing it must be the server's doing.
tls() {
	timeout 10 openssl s_client "-$1" -cipher 'DEFAULT:@SECLEVEL=0' \
		-connect "127.0.0.1:$2" -CAfile "$TMP/tls.crt" \
		-verify_return_error </dev/null >"$TMP/tls.out" 2>&1
	grep -Eq '^New, TLSv[0-9.]+, Cipher is [A-Z0-9_-]+$' "$TMP/tls.out"
}

tls tls1_2 "$PORT" && grep -q 'Protocol *: TLSv1.2$' "$TMP/tls.out" &&
	ok "TLS 1.2 works" || not_ok "TLS 1.2 works" "$(tail -n 5 "$TMP/tls.out")"
tls tls1_3 "$PORT" && grep -q '^New, TLSv1.3, ' "$TMP/tls.out" &&
	ok "TLS 1.3 works" || not_ok "TLS 1.3 works" "$(tail -n 5 "$TMP/tls.out")"
if tls tls1_1 "$PORT"; then
	not_ok "TLS 1.1 is refused" "$(grep -E '^New|Protocol' "$TMP/tls.out")"
else
	ok "TLS 1.1 is refused"
fi
# The refusal above means something only if this client can speak 1.1.
cport=$(free_port)
openssl s_server -accept "127.0.0.1:$cport" -cert "$TMP/tls.crt" \
	-key "$TMP/tls.key" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' -www \
	>"$TMP/s_server.out" 2>&1 </dev/null &
control=$!
background $control
wait_for_text "$TMP/s_server.out" ACCEPT
if tls tls1_1 "$cport" && grep -q 'Protocol *: TLSv1.1$' "$TMP/tls.out"; then
	ok "control: this openssl client does speak TLS 1.1"
else
	not_ok "control: this openssl client does speak TLS 1.1" \
		"$(tail -n 3 "$TMP/tls.out")"
fi
kill $control 2>/dev/null

# --- a second server on the same port ----------------------------------------

timeout 10 "$BIN" serve --listen "127.0.0.1:$PORT" \
	--probe-listen "127.0.0.1:$(free_port)" --tls-cert "$TMP/tls.crt" \
	--tls-key "$TMP/tls.key" >/dev/null 2>"$TMP/inuse.err"
rc=$?
expect_match "a port in use: exit 1, one line that says so" \
	"^1 1 .*127\.0\.0\.1:$PORT.*in use" \
	"$rc $(wc -l <"$TMP/inuse.err") $(cat "$TMP/inuse.err")"

# --- SIGTERM -----------------------------------------------------------------

# An idle keep-alive connection must not hold up the exit.
(sleep 15 | timeout 20 openssl s_client -connect "127.0.0.1:$PORT" \
	-CAfile "$TMP/tls.crt" -quiet >/dev/null 2>&1) &
open=$!
background $open
sleep 0.5
stop_server
if [ "$SERVER_RC" = 0 ] && [ "$STOP_SECONDS" -le 3 ]; then
	ok "SIGTERM: exit 0 within 3 s, an idle connection open"
else
	not_ok "SIGTERM: exit 0 within 3 s, an idle connection open" \
		"status $SERVER_RC after $STOP_SECONDS s"
fi
expect_match "SIGTERM: the log says it stopped" ' info: stopped$' \
	"$(cat "$TMP/server.log")"
kill $open 2>/dev/null

expect_no_sanitizer_report
expect_match "one log line per review, with the fields" \
	' info: review uid=e2e-plain-0001 ns=default pod=web type=- '\
'known=- decision=ignore ops=0 us=[0-9]+$' \
	"$(cat "$TMP/server.log")"

finish e2e
