# test/e2e/lib.sh: results, ports, certificates and the server for run.sh.
# Sourced; expects BIN and TMP to be set.

PASSED=0
FAILED=0
SERVER_PID=
BACKGROUND=" "

ok() {
	PASSED=$((PASSED + 1))
	echo "ok - $1"
}

# not_ok NAME DETAILS
not_ok() {
	FAILED=$((FAILED + 1))
	echo "not ok - $1: $2"
}

# expect NAME WANT GOT
expect() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "want '$2', got '$3'"
	fi
}

# expect_match NAME EXTENDED-REGEX TEXT
expect_match() {
	if printf '%s' "$3" | grep -Eq -- "$2"; then
		ok "$1"
	else
		not_ok "$1" "no /$2/ in '$(printf '%s' "$3" | head -c 400)'"
	fi
}

# expect_log NAME ERE: a line of the server's log matches ERE within 5 s.
# The server writes its log from a queue, a batch every 50 ms
# (lib/logring.h): a line is there soon after its event, not at once.
expect_log() {
	if wait_for_text "$TMP/server.log" "$2"; then
		ok "$1"
	else
		not_ok "$1" "no /$2/ in the server log after 5 s"
	fi
}

# A metav1.Status body with the given code, as review_error_body() makes.
is_status() {
	printf '%s' "$1" | grep -Eq '"kind" *: *"Status"' &&
		printf '%s' "$1" | grep -Eq "\"code\" *: *$2[,}]"
}

# Remembers a helper process for the exit trap.
background() {
	BACKGROUND="$BACKGROUND$1 "
}

# metric SERIES: its value on the probe listener ($PROBE), from the line
# that starts with SERIES exactly (labels and all).
metric() {
	curl -s --max-time 5 "http://127.0.0.1:$PROBE/metrics" |
		awk -v s="$1" 'index($0, s " ") == 1 { print $2 }'
}

# wait_metric SERIES VALUE: up to 10 s for the metric to read VALUE.
wait_metric() {
	for _ in $(seq 1 100); do
		[ "$(metric "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_for_text FILE ERE: up to 5 s for a line matching ERE in FILE.
wait_for_text() {
	for _ in $(seq 1 50); do
		grep -Eq -- "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# standin_credentials: TMP/api.crt and api.key, the stand-in apiserver's
# self-signed certificate for 127.0.0.1, and TMP/token, the bearer token
# it takes.
standin_credentials() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-sha256 -nodes -days 1 -subj /CN=kube-apiserver \
		-addext subjectAltName=IP:127.0.0.1 \
		-keyout "$TMP/api.key" -out "$TMP/api.crt" 2>>"$TMP/openssl.log"
	echo "token-1" >"$TMP/token"
}

# standin_start SCENARIO SUITE [ARG...]: the stand-in apiserver
# (test/kube/standin.py) on SCENARIO, serving TMP/api.crt and api.key and
# taking TMP/token, with ARG... passed on; sets STANDIN and API_PORT and
# writes TMP/kubeconfig for it, as kubectl writes one. A large scenario
# takes a while to load: up to 60 s. One that does not start ends SUITE.
standin_start() {
	local scenario=$1 suite=$2
	shift 2
	: >"$TMP/standin.out"
	/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/../kube/standin.py" \
		--scenario "$scenario" \
		--cert "$TMP/api.crt" --key "$TMP/api.key" --ca "$TMP/api.crt" \
		--token-file "$TMP/token" "$@" \
		>"$TMP/standin.out" 2>>"$TMP/standin.log" &
	STANDIN=$!
	background $STANDIN
	for _ in $(seq 1 600); do
		grep -q "listening on" "$TMP/standin.out" && break
		sleep 0.1
	done
	API_PORT=$(sed -n 's/^listening on //p' "$TMP/standin.out")
	if [ -z "$API_PORT" ]; then
		not_ok "stand-in apiserver" "did not start: $(cat "$TMP/standin.log")"
		finish "$suite"
	fi
	cat >"$TMP/kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: t
contexts:
- name: t
  context: {cluster: s, user: u}
clusters:
- name: s
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $TMP/api.crt
users:
- name: u
  user:
    tokenFile: $TMP/token
KC
}

# A port on 127.0.0.1 that nothing answers on (20000-59999).
free_port() {
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# mkcert NAME: TMP/NAME.crt and TMP/NAME.key, self-signed ECDSA P-256
# for 127.0.0.1 and localhost.
mkcert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-sha256 -nodes -days 1 -subj /CN=localhost \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost \
		-keyout "$TMP/$1.key" -out "$TMP/$1.crt" 2>>"$TMP/openssl.log"
}

# Polls /readyz for up to 10 s (a sanitizer build starts slowly).
wait_ready() {
	local i
	for i in $(seq 1 100); do
		kill -0 "$SERVER_PID" 2>/dev/null || return 1
		if [ "$(curl -s --max-time 1 -o /dev/null -w '%{http_code}' \
			"http://127.0.0.1:$PROBE/readyz")" = 200 ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# start_server [FLAGS...]: `BIN serve` on fresh ports with TMP/tls.*;
# sets SERVER_PID, PORT and PROBE. Logs go to TMP/server.log.
start_server() {
	local try
	for try in 1 2 3; do
		PORT=$(free_port) && PROBE=$(free_port) || return 1
		[ "$PORT" != "$PROBE" ] || continue
		"$BIN" serve --listen "127.0.0.1:$PORT" \
			--probe-listen "127.0.0.1:$PROBE" \
			--tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key" "$@" \
			>>"$TMP/server.out" 2>>"$TMP/server.log" &
		SERVER_PID=$!
		wait_ready && return 0
		# Another process may have taken a port meanwhile: try again.
		stop_server
	done
	return 1
}

# Sends SIGTERM and waits up to 5 s, then SIGKILL. Sets SERVER_RC (the
# exit status, or "timeout") and STOP_SECONDS.
stop_server() {
	local i start
	SERVER_RC=none
	[ -n "$SERVER_PID" ] || return 0
	start=$(date +%s%N)
	kill -TERM "$SERVER_PID" 2>/dev/null
	for i in $(seq 1 50); do
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
		SERVER_RC=timeout
	else
		wait "$SERVER_PID" 2>/dev/null
		SERVER_RC=$?
	fi
	STOP_SECONDS=$((($(date +%s%N) - start) / 1000000000))
	SERVER_PID=
}

# The server's log holds no ASan/UBSan/TSan report.
expect_no_sanitizer_report() {
	local sanitizer='ERROR: [A-Za-z]+Sanitizer|WARNING: ThreadSanitizer|runtime error:'
	if grep -Eq "$sanitizer" "$TMP/server.log"; then
		not_ok "no sanitizer report" "$(grep -E -A 20 'Sanitizer|runtime error' \
			"$TMP/server.log" | head -n 40)"
	else
		ok "no sanitizer report"
	fi
}

# finish NAME: the tally; on a failure, the end of the server log and
# exit 1.
finish() {
	echo "$1: $PASSED passed, $FAILED failed"
	if [ "$FAILED" -gt 0 ]; then
		echo "--- server log (last 30 lines)"
		tail -n 30 "$TMP/server.log"
		exit 1
	fi
}

cleanup() {
	local p
	stop_server
	for p in $BACKGROUND; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
