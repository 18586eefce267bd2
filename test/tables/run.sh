#!/bin/bash
# test/tables/run.sh BIN: `topogate tables` against reviewed output.
#
# Each test/tables/<name>.args holds the arguments of one run on a line
# (empty: the embedded policy); <name>.txt is its reviewed stdout, which
# must match byte for byte. UPDATE=1 rewrites the .txt files: read every
# changed line before committing. The embedded policy printed with -o yaml
# must also load back and print the same bytes.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
UPDATE=${UPDATE:-0}
PASSED=0 FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-tables.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

ok() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok - $1: $2"; }

cd "$REPO" || exit 2
for a in "$HERE"/*.args; do
	name=$(basename "$a" .args)
	read -r -a args <"$a" || true
	if ! "$BIN" tables "${args[@]}" >"$TMP/$name.txt" 2>"$TMP/err"; then
		not_ok "$name" "tables failed: $(head -c 300 "$TMP/err")"
		continue
	fi
	if [ "$UPDATE" = 1 ]; then
		cmp -s "$TMP/$name.txt" "$HERE/$name.txt" ||
			echo "updated: test/tables/$name.txt"
		cp "$TMP/$name.txt" "$HERE/$name.txt"
	fi
	if cmp -s "$TMP/$name.txt" "$HERE/$name.txt"; then
		ok "$name"
	else
		not_ok "$name" "differs from test/tables/$name.txt"
		diff "$HERE/$name.txt" "$TMP/$name.txt" | head -20
	fi
done

# print -> parse -> print: the YAML reads back to the same bytes.
"$BIN" tables -o yaml >"$TMP/a.yaml" &&
	"$BIN" tables --policy "$TMP/a.yaml" -o yaml >"$TMP/b.yaml"
if [ "$(sed 1d "$TMP/a.yaml")" = "$(sed 1d "$TMP/b.yaml")" ]; then
	ok "tables -o yaml reads back the same"
else
	not_ok "tables -o yaml" "a second print differs"
fi

echo "# tables: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
