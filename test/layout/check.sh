#!/usr/bin/env bash
# test/layout/check.sh: each folder includes only the folders it may.
#
# The floors run one way: cmd -> webhook, clusterview, kube -> lib, json
# -> policy -> base. policy/ is pure: it includes no folder of I/O and no
# system header that does I/O or threads beyond C's own. The rule of each
# folder is the one its README states; the link-time guard (unit tests
# link policy/ and base/ alone) stays beside this.
set -euo pipefail -o noglob
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
# With a folder argument, that tree is checked instead of this one (the
# self-test below gives it one that breaks a rule).
cd "${1:-$(dirname "$0")/../..}"

# folder: the folders it may include besides itself ("*": any).
rules='
base:
json: base
lib: base policy policy/table policy/k8s
kube: base lib
clusterview: base lib kube webhook policy policy/view policy/table policy/audit policy/k8s
webhook: base json lib policy policy/table policy/view policy/k8s
cmd: *
policy/k8s: base
policy/table: base policy/k8s
policy/kinds: base policy policy/k8s policy/table
policy/view: base policy/k8s policy/kinds policy/table
policy/pod: base policy policy/k8s policy/kinds policy/table policy/view
policy/jobs: base policy policy/k8s policy/kinds policy/pod policy/table
policy: base policy/k8s policy/table policy/kinds policy/view policy/pod policy/jobs
policy/audit: base policy policy/k8s policy/table policy/kinds policy/view policy/pod policy/jobs
'
# Outside json/, json/jsonread.h is the one header of the reader: its
# arena, its checks and its skim are json/'s own. A test of those insides
# may include them; each such file is named here with what it includes.
json_inside='
test/unit/test_webhook_jsoncheck.c: json/jsoncheck.h
test/unit/test_webhook_jsonskim.c: json/jsonskim.h json/jsonskim.c
test/unit/test_webhook_jsonstops.c: json/jsonread.c
test/bench/checkonly_review.c: json/jsonread.c
'
# System headers that mean I/O, threads or a transport: never in the pure
# floors (policy/, base/).
io_headers='microhttpd.h|curl/|gnutls/|openssl/|pthread.h|unistd.h|fcntl.h|sys/socket.h|sys/stat.h|poll.h|time.h|signal.h|dirent.h'

fails=0
allowed() {  # allowed FOLDER TARGET
	local line list
	line=$(printf '%s\n' "$rules" | grep "^$1:") || return 1
	list=${line#*:}
	[ "$1" = "$2" ] && return 0
	for a in $list; do
		[ "$a" = '*' ] || [ "$a" = "$2" ] && return 0
	done
	return 1
}
folders=$(printf '%s\n' "$rules" | sed -n 's/^\([a-z0-9/]*\):.*/\1/p')
for d in $folders; do
	for f in $(set +f; echo "$d"/*.[ch]); do
		[ -e "$f" ] || continue
		while IFS= read -r inc; do
			t=$(dirname "$inc")
			if [ "$t" = . ]; then
				echo "not ok - $f: #include \"$inc\" does not name its folder"
				fails=$((fails + 1))
			elif [ ! -e "$inc" ]; then
				echo "not ok - $f: #include \"$inc\": no such file from the root"
				fails=$((fails + 1))
			elif ! allowed "$d" "$t"; then
				echo "not ok - $f: $d/ may not include $t/ ($inc)"
				fails=$((fails + 1))
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
		case $d in
		policy*|base)
			if grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*<($io_headers)" "$f"; then
				echo "not ok - $f: a pure floor includes an I/O header"
				fails=$((fails + 1))
			fi ;;
		esac
	done
done
# Every include of json/ from outside it, tests too, is json/jsonread.h.
for f in $(set +f; find . \( -path ./build -o -path ./json -o -path ./.git \) \
		-prune -o \( -name '*.[ch]' -o -name '*.cpp' \) -print | sed 's|^\./||'); do
	while IFS= read -r inc; do
		[ "$inc" = json/jsonread.h ] && continue
		if line=$(printf '%s\n' "$json_inside" | grep "^$f:"); then
			case " ${line#*:} " in *" $inc "*) continue ;; esac
		fi
		echo "not ok - $f: #include \"$inc\": outside json/ only json/jsonread.h"
		fails=$((fails + 1))
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(json\/[^"]*\)".*/\1/p' "$f")
done
# Every folder with C sources has a rule and a README.
for f in $(set +f; find . -path ./test -prune -o -path ./build -prune \
		-o -name '*.[ch]' -print | sed 's|^\./||'); do
	d=$(dirname "$f")
	grep -qx -- "$d" <<<"$folders" || {
		echo "not ok - $d/ has no include rule in test/layout/check.sh"
		fails=$((fails + 1)); }
done
for d in $folders; do
	[ -s "$d/README.md" ] || { echo "not ok - $d/ has no README.md"
		fails=$((fails + 1)); }
done
if [ "$fails" -gt 0 ]; then
	echo "not ok - layout: $fails include(s) cross a floor they may not"
	exit 1
fi
[ -n "${1:-}" ] && exit 0
# The check can fail: a policy/ file that calls into webhook/ is caught,
# and so is a webhook/ file that opens json/ by another door.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/policy" "$tmp/webhook" "$tmp/json"
echo '#include "webhook/server.h"' >"$tmp/policy/stray.c"
echo '#include "json/jsonarena.h"' >"$tmp/webhook/stray.c"
touch "$tmp/webhook/server.h" "$tmp/json/jsonarena.h"
if out=$("$self" "$tmp" 2>&1) || ! grep -q 'policy/ may not include webhook/' <<<"$out"; then
	echo "not ok - layout: a policy/ file including webhook/ went unnoticed"
	exit 1
fi
if ! grep -q 'webhook/stray.c: #include "json/jsonarena.h": outside json/ only' <<<"$out"; then
	echo "not ok - layout: a webhook/ file including json/jsonarena.h went unnoticed"
	exit 1
fi
echo "ok - layout: every include of $(printf '%s\n' "$folders" | wc -l)" \
	"folders stays within what its README allows"

# Every citation of a doc's section in the tree, and every source key of
# docs/facts/ and the tables, resolves; links.py proves it fails on a
# broken one.
/usr/bin/python3 "$(dirname "$self")/links.py"
