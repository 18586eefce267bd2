#!/bin/bash
# test/nodes/run.sh BIN: `topogate nodes` over every Node object others
# wrote (../shared/corpus/nodes) and over this directory's clusters.
#
# corpus.txt is the reviewed text output of all of them, file by file;
# UPDATE=1 rewrites it (read every changed line before committing). The
# JSON output must parse and agree with the text on the kinds; bad input
# must get a one-line error and exit 2. SHARED overrides where ../shared
# is; without it the corpus part is skipped, and says so.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
# A clone alone: what the tests read of ../shared is in test/data.
[ -d "$SHARED" ] || SHARED=$REPO/test/data
UPDATE=${UPDATE:-0}
PASSED=0 FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-nodes.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

ok() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok - $1: $2"; }

files=("$HERE"/*.yaml)
if [ -d "$SHARED/corpus/nodes" ]; then
	files=("$SHARED"/corpus/nodes/*.yaml "${files[@]}")
else
	echo "# skipped: the corpus of Node objects ($SHARED/corpus/nodes is not here)"
fi

cd "$REPO" || exit 2
for f in "${files[@]}"; do
	name=${f#"$SHARED"/}
	name=${name#"$REPO"/}
	echo "== $name" >>"$TMP/corpus.txt"
	if ! "$BIN" nodes --nodes "$f" >>"$TMP/corpus.txt" 2>"$TMP/err"; then
		not_ok "$name" "exit status $? $(cat "$TMP/err")"
		continue
	fi
	if grep -Eq 'Sanitizer|runtime error:' "$TMP/err"; then
		not_ok "$name" "$(cat "$TMP/err")"
		continue
	fi
	# The JSON names the same kinds, with the same node counts.
	if "$BIN" nodes --nodes "$f" -o json >"$TMP/json" &&
		/usr/bin/python3 - "$TMP/json" "$BIN" "$f" <<'PY'; then
import json, subprocess, sys
doc = json.load(open(sys.argv[1]))
text = subprocess.run([sys.argv[2], "nodes", "--nodes", sys.argv[3]],
                      capture_output=True, text=True).stdout.splitlines()
rows = [l.split()[0] for l in text[1:] if not l.startswith("#")]
assert [k["name"].split()[0] for k in doc["kinds"]] == rows, (doc, rows)
assert sum(k["nodes"] for k in doc["kinds"]) == doc["nodes"]
PY
		ok "$name"
	else
		not_ok "$name" "-o json does not agree with the text"
	fi
done

# A file not there, and one that is not YAML: one line, exit 2.
"$BIN" nodes --nodes "$TMP/none.yaml" >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$TMP/err")" -ge 1 ]; then
	ok "a missing --nodes file: exit 2, $(head -n 1 "$TMP/err")"
else
	not_ok "a missing --nodes file" "exit $rc"
fi
printf 'items: [\n' >"$TMP/bad.yaml"
"$BIN" nodes --nodes "$TMP/bad.yaml" >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 2 ] && grep -q bad.yaml "$TMP/err"; then
	ok "broken YAML: exit 2, $(head -n 1 "$TMP/err")"
else
	not_ok "broken YAML" "exit $rc: $(cat "$TMP/err")"
fi

if [ -d "$SHARED/corpus/nodes" ]; then
	if [ "$UPDATE" = 1 ]; then
		cp "$TMP/corpus.txt" "$HERE/corpus.txt"
		echo "updated: test/nodes/corpus.txt"
	fi
	if diff -u "$HERE/corpus.txt" "$TMP/corpus.txt" >"$TMP/diff"; then
		ok "corpus.txt"
	else
		not_ok "corpus.txt" "differs from the reviewed output
$(sed 's/^/#   /' "$TMP/diff")"
	fi
fi

echo "# nodes: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
