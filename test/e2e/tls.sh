#!/bin/bash
# test/e2e/tls.sh BIN: what `BIN serve` accepts on its TLS listener.
#
# Versions: TLS 1.2 and 1.3 only (openssl s_client, with a control
# server proving this client can speak 1.0 and 1.1). Ciphers: every
# TLS 1.2 suite this openssl knows is tried alone and the accepted list
# must be exactly the AEAD + ECDHE ones; the weak classes this openssl
# can no longer offer (RC4, 3DES, export) are offered in a ClientHello
# written byte by byte, with a control hello that must get a ServerHello.
# Client certificates: with --client-ca, no certificate, a certificate
# from another CA, or one not meant for client use is refused in the
# handshake; the probe port needs none; a new client CA file is picked up.

set -u

. "$(dirname "$0")/../bin-arg.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-tls.XXXXXX")

. "$HERE/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

REVIEW=$HERE/review-plain.json

if ! mkcert tls; then
	echo "not ok - certificates: $(cat "$TMP/openssl.log")"
	exit 1
fi

# hello.py PORT SUITE-HEX... [--version HEX]: one raw ClientHello offering
# exactly these cipher suites (IANA numbers). Prints "accepted XXXX" with
# the suite the ServerHello chose, or "refused" (an alert, or a close).
cat >"$TMP/hello.py" <<'PYEOF'
import os, socket, struct, sys
args = sys.argv[2:]
version = 0x0303
if "--version" in args:
    i = args.index("--version")
    version = int(args[i + 1], 16)
    del args[i : i + 2]
suites = [int(a, 16) for a in args]
def ext(kind, data):
    return struct.pack(">HH", kind, len(data)) + data
def u16list(values, width=2):
    return struct.pack(">H", width * len(values)) + b"".join(
        struct.pack(">H", v) for v in values)
exts = (ext(0x000A, u16list([0x0017, 0x001D, 0x0018]))   # groups
        + ext(0x000B, b"\x01\x00")                        # point formats
        + ext(0x000D, u16list([0x0403, 0x0503, 0x0804, 0x0805, 0x0401,
                               0x0501, 0x0201, 0x0203]))  # signatures
        + ext(0xFF01, b"\x00"))                           # renegotiation
cs = u16list(suites)
body = (struct.pack(">H", version) + os.urandom(32) + b"\x00" + cs
        + b"\x01\x00" + struct.pack(">H", len(exts)) + exts)
hs = b"\x01" + struct.pack(">I", len(body))[1:] + body
record = b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(record)
got = b""
try:
    while len(got) < 5 + 4 + 2 + 32 + 1 + 32 + 2:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
except OSError:
    pass
if len(got) > 9 and got[0] == 0x16 and got[5] == 0x02:
    sid = got[5 + 4 + 2 + 32]
    at = 5 + 4 + 2 + 32 + 1 + sid
    print("accepted %04X" % struct.unpack(">H", got[at : at + 2]))
else:
    print("refused")
PYEOF
hello() {
	timeout 10 $PY "$TMP/hello.py" "$@" 2>&1
}

# tls PORT S_CLIENT-FLAGS...: 0 when the handshake agrees on a cipher;
# TMP/tls.out has the transcript. SECLEVEL=0 lets OpenSSL 3 offer what
# it still can: a refusal must be the server's doing.
tls() {
	local port=$1
	shift
	timeout 10 openssl s_client -connect "127.0.0.1:$port" \
		-CAfile "$TMP/tls.crt" "$@" </dev/null >"$TMP/tls.out" 2>&1
	grep -Eq '^New, TLSv[0-9.]+, Cipher is [A-Z0-9_-]+$' "$TMP/tls.out"
}

if ! start_server; then
	not_ok "serve: ready within 10 s" "$(tail -n 20 "$TMP/server.log")"
	exit 1
fi

# --- versions ------------------------------------------------------------------

for v in 1.2 1.3; do
	if tls "$PORT" "-tls${v/./_}" && grep -q "^New, TLSv$v, " "$TMP/tls.out"
	then
		ok "TLS $v is accepted"
	else
		not_ok "TLS $v is accepted" "$(tail -n 5 "$TMP/tls.out")"
	fi
done
for v in 1 1_1; do
	if tls "$PORT" "-tls$v" -cipher 'DEFAULT:@SECLEVEL=0'; then
		not_ok "TLS ${v/_/.} is refused" "$(grep -E '^New' "$TMP/tls.out")"
	else
		ok "TLS ${v/_/.} is refused"
	fi
done
# The refusals above mean something only if this client speaks 1.0/1.1.
cport=$(free_port)
openssl s_server -accept "127.0.0.1:$cport" -cert "$TMP/tls.crt" \
	-key "$TMP/tls.key" -cipher 'DEFAULT:@SECLEVEL=0' -www \
	>"$TMP/s_server.out" 2>&1 </dev/null &
control=$!
background $control
wait_for_text "$TMP/s_server.out" ACCEPT
for v in 1 1_1; do
	if tls "$cport" "-tls$v" -cipher 'DEFAULT:@SECLEVEL=0' &&
		grep -q "Protocol *: TLSv${v/_/.}" "$TMP/tls.out"; then
		ok "control: this openssl client speaks TLS ${v/_/.}"
	else
		not_ok "control: this openssl client speaks TLS ${v/_/.}" \
			"$(tail -n 3 "$TMP/tls.out")"
	fi
done
kill $control 2>/dev/null

expect "raw hello: the control (TLS 1.2, ECDHE-ECDSA-AES128-GCM) is accepted" \
	"accepted C02B" "$(hello "$PORT" C02B)"
expect "raw hello: SSL 3.0 is refused" refused \
	"$(hello "$PORT" C02B C009 002F --version 0300)"
expect "raw hello: TLS 1.0 is refused" refused \
	"$(hello "$PORT" C02B C009 002F --version 0301)"

# --- TLS 1.2 ciphers -------------------------------------------------------------

# sweep KEY: every TLS 1.2 suite this openssl can offer, one at a time;
# exactly ECDHE + AEAD ones for a KEY (ECDSA or RSA) certificate pass.
sweep() {
	local key=$1 c accepted=
	for c in $(openssl ciphers -tls1_2 -s 'ALL:COMPLEMENTOFALL:@SECLEVEL=0' |
		tr ':' ' '); do
		tls "$PORT" -tls1_2 -cipher "$c:@SECLEVEL=0" &&
			accepted="$accepted $c"
	done
	echo "# TLS 1.2 suites accepted with an $key certificate:$accepted"
	expect "$key: TLS 1.2 accepts exactly the ECDHE + AEAD suites" \
		" ECDHE-$key-AES256-GCM-SHA384 ECDHE-$key-CHACHA20-POLY1305 \
ECDHE-$key-AES128-GCM-SHA256" "$accepted"

	weak "$key: CBC with SHA-1" 'SHA1'
	weak "$key: CBC with SHA-256/384" 'CBC:!SHA1'
	weak "$key: NULL (no encryption)" 'eNULL'
	weak "$key: anonymous (no authentication)" 'aNULL'
	weak "$key: static RSA key exchange (no forward secrecy)" 'kRSA'
	weak "$key: DHE" 'kDHE'

	# What this openssl cannot offer any more, offered byte by byte.
	# RC4: ECDHE-ECDSA, ECDHE-RSA, RSA with SHA and MD5.
	expect "$key: raw hello: RC4 suites are refused" refused \
		"$(hello "$PORT" C007 C011 0005 0004)"
	# 3DES: ECDHE-ECDSA, ECDHE-RSA, RSA, DHE-RSA.
	expect "$key: raw hello: 3DES suites are refused" refused \
		"$(hello "$PORT" C008 C012 000A 0016)"
	# Export grade: RC4-40, RC2-40, DES-40.
	expect "$key: raw hello: export suites are refused" refused \
		"$(hello "$PORT" 0003 0006 0008 0014)"
	# NULL and anonymous, without openssl's help.
	expect "$key: raw hello: NULL and anonymous suites are refused" refused \
		"$(hello "$PORT" C006 C010 0002 003B 0018 001B C018 C019)"
}

# weak NAME SPEC: every suite of that class this openssl knows is refused.
weak() {
	local list c got=
	list=$(openssl ciphers -tls1_2 -s "$2:@SECLEVEL=0" 2>/dev/null | tr ':' ' ')
	if [ -z "$list" ]; then
		not_ok "$1 suites refused" "this openssl offers none to try"
		return
	fi
	for c in $list; do
		tls "$PORT" -tls1_2 -cipher "$c:@SECLEVEL=0" && got="$got $c"
	done
	expect "$1 suites are refused ($(echo $list | wc -w) tried)" "" "$got"
}

sweep ECDSA

# --- TLS 1.3 suites ---------------------------------------------------------------

accepted=
for c in TLS_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384 \
	TLS_CHACHA20_POLY1305_SHA256 TLS_AES_128_CCM_SHA256 \
	TLS_AES_128_CCM_8_SHA256; do
	tls "$PORT" -tls1_3 -ciphersuites "$c" && accepted="$accepted $c"
done
echo "# TLS 1.3 suites accepted:$accepted"
expect "TLS 1.3 accepts the GCM and ChaCha20 suites, not CCM" \
	" TLS_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384 \
TLS_CHACHA20_POLY1305_SHA256" "$accepted"
stop_server

# --- an RSA certificate (cert-manager's default key) ---------------------------------

openssl req -x509 -newkey rsa:2048 -sha256 -nodes -days 1 -subj /CN=localhost \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/tls.key" \
	-out "$TMP/tls.crt" 2>>"$TMP/openssl.log"
if start_server; then
	# The server's order wins: AES-128-GCM first, for either version.
	got=
	for v in 1_2 1_3; do
		tls "$PORT" "-tls$v" &&
			got="$got $(sed -n 's/^New, \(TLSv[0-9.]*\), Cipher is /\1 /p' \
				"$TMP/tls.out")"
	done
	expect "RSA: the server's choice for TLS 1.2 and 1.3" \
		" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 TLSv1.3 TLS_AES_128_GCM_SHA256" \
		"$got"
	sweep RSA
	stop_server
else
	not_ok "serve: ready with an RSA certificate" \
		"$(tail -n 5 "$TMP/server.log")"
fi

# --- client certificates -------------------------------------------------------------

mkcert tls
# ca NAME: a CA; client NAME CA EKU: a certificate it signs.
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-sha256 -nodes -days 1 -subj "/CN=$1" \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign \
		-keyout "$TMP/$1.key" -out "$TMP/$1.crt" 2>>"$TMP/openssl.log"
}
client() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-nodes -subj "/CN=$1" -keyout "$TMP/$1.key" -out "$TMP/$1.csr" \
		2>>"$TMP/openssl.log" &&
		printf 'extendedKeyUsage=%s\nkeyUsage=critical,digitalSignature\n' \
			"$3" >"$TMP/$1.ext" &&
		openssl x509 -req -in "$TMP/$1.csr" -CA "$TMP/$2.crt" \
			-CAkey "$TMP/$2.key" -CAcreateserial -days 1 -sha256 \
			-extfile "$TMP/$1.ext" -out "$TMP/$1.crt" 2>>"$TMP/openssl.log"
}
ca apiserver-ca && ca rogue-ca &&
	client apiserver apiserver-ca clientAuth &&
	client rogue rogue-ca clientAuth &&
	client wrong-use apiserver-ca serverAuth ||
	{ echo "not ok - client certificates: $(tail "$TMP/openssl.log")"; exit 1; }
cp "$TMP/apiserver-ca.crt" "$TMP/client-ca.crt"

"$BIN" serve -n --tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key" \
	--client-ca "$TMP/absent.crt" >/dev/null 2>"$TMP/check.err"
rc=$?
expect_match "serve -n: a missing --client-ca file is named" \
	"^1 .*absent\.crt.*No such file" "$rc $(cat "$TMP/check.err")"
"$BIN" serve -n --tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key" \
	--client-ca "$TMP/tls.key" >/dev/null 2>"$TMP/check.err"
rc=$?
expect_match "serve -n: a --client-ca file without a certificate is refused" \
	"^1 .*tls\.key': no PEM CA certificate" "$rc $(cat "$TMP/check.err")"

if ! start_server --client-ca "$TMP/client-ca.crt"; then
	not_ok "serve --client-ca: ready within 10 s" \
		"$(tail -n 20 "$TMP/server.log")"
	exit 1
fi
ok "serve --client-ca: ready, /readyz answered without a certificate"

# review VERSION [NAME]: the status code of a review sent with NAME's
# client certificate (none without NAME), or curl's exit code as "curl N".
review() {
	local v=$1 out
	shift
	out=$(curl -sS --max-time 10 --cacert "$TMP/tls.crt" \
		"--tlsv$v" --tls-max "$v" \
		${1:+--cert "$TMP/$1.crt" --key "$TMP/$1.key"} \
		-o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$REVIEW" "https://127.0.0.1:$PORT/mutate" 2>/dev/null)
	local rc=$?
	[ $rc = 0 ] && echo "$out" || echo "curl $rc"
}
for v in 1.2 1.3; do
	expect "TLS $v: the apiserver's certificate is let in" 200 \
		"$(review $v apiserver)"
	expect_match "TLS $v: no client certificate is refused" '^curl [0-9]+$' \
		"$(review $v)"
	expect_match "TLS $v: a certificate from another CA is refused" \
		'^curl [0-9]+$' "$(review $v rogue)"
	expect_match "TLS $v: a certificate not for client use is refused" \
		'^curl [0-9]+$' "$(review $v wrong-use)"
done
expect "the probe port needs no certificate" "ok 200" \
	"$(curl -s --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$PROBE/healthz")"
expect_match "no request reached the handler without a certificate" \
	'^topogate_http_requests_total\{code="200"\} 2$' \
	"$(curl -s --max-time 5 "http://127.0.0.1:$PROBE/metrics")"

# A new client CA is picked up like a new certificate.
cp "$TMP/rogue-ca.crt" "$TMP/client-ca.new" &&
	mv "$TMP/client-ca.new" "$TMP/client-ca.crt"
for _ in $(seq 1 100); do
	[ "$(review 1.3 rogue)" = 200 ] && break
	sleep 0.1
done
expect "a new --client-ca file: its clients are let in within 10 s" 200 \
	"$(review 1.3 rogue)"
expect_match "a new --client-ca file: the old CA's clients are not" \
	'^curl [0-9]+$' "$(review 1.3 apiserver)"
stop_server
expect "SIGTERM: exit 0" 0 "$SERVER_RC"

expect_no_sanitizer_report

finish tls
