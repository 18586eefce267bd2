# test/audit/ci.sh: `topogate audit` for CI (issue 47 item 4), sourced by
# run.sh (BIN, HERE, REPO, SHARED, TMP, PY, ok, not_ok, expect, golden).
#
#   - -o junit and -o sarif over the corpus and inputs/list.yaml against
#     golden reports (SOURCE_DATE_EPOCH=0; the host name replaced);
#   - every JUnit report valid against the Ant JUnit XSD (xmllint), every
#     SARIF report against the SARIF 2.1.0 schema (check_ci.py), their
#     ids recomputed from the documented fields, each finding in both;
#   - ids independent of the order of documents and files, and of the run;
#   - --baseline / --write-baseline: old findings pass, a new one fails,
#     the exit statuses, and files that cannot be read or written.

JUNIT_XSD=$REPO/test/data/junit/JUnit.xsd
SARIF_SCHEMA=$REPO/test/data/sarif/sarif-schema-2.1.0.json

# junit_valid NAME FILE: the Ant JUnit XSD accepts FILE.
junit_valid() {
	if xmllint --noout --schema "$JUNIT_XSD" "$2" >"$TMP/xmllint" 2>&1; then
		ok "$1: valid against JUnit.xsd"
	else
		not_ok "$1: valid against JUnit.xsd" "$(head -5 "$TMP/xmllint")"
	fi
}

# The report as the golden files hold it: the one line that names the
# machine made the same everywhere.
junit_golden_form() {
	sed 's/ hostname="[^"]*"/ hostname="HOST"/' "$1"
}

if ! command -v xmllint >/dev/null; then
	not_ok "xmllint" "not installed (Debian libxml2-utils, in TEST_DEPS)"
fi

ci_run() { # ci_run DIR OUT ARGS...: audit from DIR, stdout to OUT
	local dir=$1 out=$2
	shift 2
	(cd "$dir" && SOURCE_DATE_EPOCH=0 "$BIN" audit "$@") >"$out" 2>"$TMP/ci-err"
}

# --- the reports, and their schemas ----------------------------------------

for fmt in junit sarif; do
	ci_run "$SHARED/corpus" "$TMP/corpus.$fmt" -o $fmt manifests
	expect "corpus -o $fmt: exit status as text" 0 $?
	ci_run "$HERE" "$TMP/list.$fmt" -o $fmt inputs/list.yaml
	expect "list -o $fmt: exit status as text (a deny)" 1 $?
	[ -s "$TMP/ci-err" ] && not_ok "list -o $fmt wrote to stderr" "$(cat "$TMP/ci-err")"
done
junit_golden_form "$TMP/corpus.junit" >"$TMP/corpus.junit.xml"
junit_golden_form "$TMP/list.junit" >"$TMP/list.junit.xml"
golden corpus.junit.xml "$TMP/corpus.junit.xml"
golden list.junit.xml "$TMP/list.junit.xml"
golden corpus.sarif.json "$TMP/corpus.sarif"
golden list.sarif.json "$TMP/list.sarif"

ci_run "$HERE" "$TMP/inputs.junit" -o junit --fail-on warn inputs
expect "inputs -o junit --fail-on warn: exit status" 1 $?
ci_run "$HERE" "$TMP/inputs.sarif" -o sarif --fail-on never inputs
expect "inputs -o sarif --fail-on never: exit status" 0 $?
ci_run "$HERE" "$TMP/stdin.junit" -o junit - <"$HERE/inputs/list.yaml"
ci_run "$HERE" "$TMP/stdin.sarif" -o sarif - <"$HERE/inputs/list.yaml"
for name in corpus list inputs stdin; do
	junit_valid "$name -o junit" "$TMP/$name.junit"
	$PY "$HERE/check_ci.py" sarif "$SARIF_SCHEMA" "$TMP/$name.sarif" ||
		FAILED=$((FAILED + 1))
done
for name in corpus list stdin; do
	$PY "$HERE/check_ci.py" junit "$TMP/$name.junit" "$TMP/$name.sarif" ||
		FAILED=$((FAILED + 1))
done
# --fail-on warn: the mistakes of the list fail too; nothing else moves.
ci_run "$HERE" "$TMP/list-warn.junit" -o junit --fail-on warn inputs/list.yaml
junit_valid "list -o junit --fail-on warn" "$TMP/list-warn.junit"
expect "list --fail-on warn: failing cases" 2 \
	"$(grep -c '<failure ' "$TMP/list-warn.junit")"
expect "list --fail-on warn: nothing in system-out" 0 \
	"$(sed -n '/<system-out>/,/<\/system-out>/p' "$TMP/list-warn.junit" |
		grep -c ' line ')"
# --fail-on never: no case fails; every finding is in system-out.
ci_run "$HERE" "$TMP/list-never.junit" -o junit --fail-on never inputs/list.yaml
expect "list -o junit --fail-on never: exit status" 0 $?
junit_valid "list -o junit --fail-on never" "$TMP/list-never.junit"
expect "list --fail-on never: failing cases, findings listed" "0 7" \
	"$(grep -c '<failure ' "$TMP/list-never.junit") $(grep -c '^[0-9a-f]\{16\} ' "$TMP/list-never.junit")"
grep -q ' stdin' "$TMP/stdin.junit" && not_ok "stdin named <stdin>" "$(grep -m1 stdin "$TMP/stdin.junit")"
grep -q 'name="&lt;stdin&gt;"' "$TMP/stdin.junit" && ok "stdin is the suite <stdin>" ||
	not_ok "stdin is the suite <stdin>" "$(grep -m1 testsuite "$TMP/stdin.junit")"
expect "stdin SARIF results carry no location" 0 "$(grep -c '"locations"' "$TMP/stdin.sarif")"

# A path that is not a plain URI: percent-encoded in SARIF, as given in
# JUnit and in the id.
mkdir -p "$TMP/odd"
cp "$HERE/inputs/list.yaml" "$TMP/odd/my list&co.yaml"
ci_run "$TMP/odd" "$TMP/odd.sarif" -o sarif "my list&co.yaml"
ci_run "$TMP/odd" "$TMP/odd.junit" -o junit "my list&co.yaml"
expect "an odd path: its SARIF URI" 7 "$(grep -c '"uri":	"my%20list%26co.yaml"' "$TMP/odd.sarif")"
$PY "$HERE/check_ci.py" sarif "$SARIF_SCHEMA" "$TMP/odd.sarif" || FAILED=$((FAILED + 1))
junit_valid "an odd path -o junit" "$TMP/odd.junit"
$PY "$HERE/check_ci.py" junit "$TMP/odd.junit" "$TMP/odd.sarif" || FAILED=$((FAILED + 1))
grep -q 'classname="my list&amp;co.yaml"' "$TMP/odd.junit" && ok "an odd path: escaped in JUnit" ||
	not_ok "an odd path: escaped in JUnit" "$(grep -m1 classname "$TMP/odd.junit")"

# SOURCE_DATE_EPOCH sets the timestamp; without it, the clock (UTC).
grep -q 'timestamp="1970-01-01T00:00:00"' "$TMP/list.junit" &&
	ok "SOURCE_DATE_EPOCH=0: timestamp 1970-01-01T00:00:00" ||
	not_ok "SOURCE_DATE_EPOCH=0" "$(grep -m1 -o 'timestamp="[^"]*"' "$TMP/list.junit")"
(cd "$HERE" && env -u SOURCE_DATE_EPOCH "$BIN" audit -o junit inputs/list.yaml) \
	>"$TMP/now.junit" 2>/dev/null
expect_match "without SOURCE_DATE_EPOCH: today's date" \
	"timestamp=\"$(date -u +%Y-%m-%d)T" "$(grep -m1 '<testsuite ' "$TMP/now.junit")"

# --- ids: the same finding, the same id -------------------------------------

# The list's items reversed: every line moves, no id may.
mkdir -p "$TMP/order/inputs"
$PY - "$HERE/inputs/list.yaml" "$TMP/order/inputs/list.yaml" <<'EOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
doc["items"].reverse()
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
EOF
ci_run "$TMP/order" "$TMP/reversed.sarif" -o sarif inputs/list.yaml
if [ "$($PY "$HERE/check_ci.py" ids "$TMP/list.sarif")" = \
	"$($PY "$HERE/check_ci.py" ids "$TMP/reversed.sarif")" ] &&
	! diff -q "$HERE/inputs/list.yaml" "$TMP/order/inputs/list.yaml" >/dev/null; then
	ok "ids: items reversed (every line moved), the same ids"
else
	not_ok "ids: items reversed" "the ids differ"
fi
ci_run "$HERE" "$TMP/ab.sarif" -o sarif inputs/list.yaml inputs/kinds.yaml
ci_run "$HERE" "$TMP/ba.sarif" -o sarif inputs/kinds.yaml inputs/list.yaml
if [ "$($PY "$HERE/check_ci.py" ids "$TMP/ab.sarif")" = \
	"$($PY "$HERE/check_ci.py" ids "$TMP/ba.sarif")" ]; then
	ok "ids: files in the other order, the same ids"
else
	not_ok "ids: files in the other order" "the ids differ"
fi
ci_run "$HERE" "$TMP/again.sarif" -o sarif inputs/list.yaml
cmp -s "$TMP/list.sarif" "$TMP/again.sarif" && ok "ids: a second run, the same report" ||
	not_ok "ids: a second run" "the report differs"
# The same workload twice in one file: two ids, numbered by occurrence.
mkdir -p "$TMP/twice/inputs"
$PY - "$HERE/inputs/list.yaml" "$TMP/twice/inputs/list.yaml" <<'EOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
doc["items"].append(doc["items"][1])
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
EOF
ci_run "$TMP/twice" "$TMP/twice.sarif" -o sarif inputs/list.yaml
$PY "$HERE/check_ci.py" sarif "$SARIF_SCHEMA" "$TMP/twice.sarif" || FAILED=$((FAILED + 1))
expect "a workload twice: its findings twice, occurrence 1" 4 \
	"$(grep -c '"occurrence":	1' "$TMP/twice.sarif")"

# --- baselines ----------------------------------------------------------------

B=$TMP/baseline.txt
(cd "$HERE" && "$BIN" audit --write-baseline "$B" inputs/list.yaml) \
	>"$TMP/wb.txt" 2>"$TMP/ci-err"
expect "--write-baseline over a deny: exit status 0" 0 $?
cmp -s "$TMP/wb.txt" "$HERE/list.txt" && ok "--write-baseline: the text report unchanged" ||
	not_ok "--write-baseline: the text report" "differs from list.txt"
expect "--write-baseline: one line per finding" \
	"$($PY "$HERE/check_ci.py" ids "$TMP/list.sarif")" "$(grep -v '^#' "$B" | cut -d' ' -f1)"
golden list.baseline.txt "$B"

(cd "$HERE" && "$BIN" audit --baseline "$B" inputs/list.yaml) \
	>"$TMP/b.txt" 2>"$TMP/ci-err"
expect "--baseline, every finding in it: exit status 0" 0 $?
cmp -s "$TMP/b.txt" "$HERE/list.txt" && ok "--baseline: the text report unchanged" ||
	not_ok "--baseline: the text report" "differs from list.txt"
expect "--baseline: the note on stderr" \
	"topogate audit: baseline $B: 7 findings, 7 in the baseline, 0 new (0 failing at --fail-on)" \
	"$(cat "$TMP/ci-err")"
(cd "$HERE" && "$BIN" audit --baseline "$B" -o json inputs/list.yaml) \
	>"$TMP/b.json" 2>/dev/null
cmp -s "$TMP/b.json" "$HERE/list.json" && ok "--baseline: the JSON report unchanged" ||
	not_ok "--baseline: the JSON report" "differs from list.json"
(cd "$HERE" && "$BIN" audit --baseline "$B" --fail-on warn inputs/list.yaml) \
	>/dev/null 2>&1
expect "--baseline --fail-on warn, every finding in it: exit status 0" 0 $?
ci_run "$HERE" "$TMP/b.sarif" -o sarif --baseline "$B" inputs/list.yaml
$PY "$HERE/check_ci.py" sarif "$SARIF_SCHEMA" "$TMP/b.sarif" --baseline-state unchanged ||
	FAILED=$((FAILED + 1))
ci_run "$HERE" "$TMP/b.junit" -o junit --baseline "$B" inputs/list.yaml
junit_valid "-o junit --baseline" "$TMP/b.junit"
expect "-o junit --baseline: no failure" 0 "$(grep -c '<failure ' "$TMP/b.junit")"
expect "-o junit --baseline: the known deny listed as such" 2 \
	"$(grep -c ' deny line 43: .*(in the baseline)$' "$TMP/b.junit")"

# A new finding: the TrainJob copied under another name. Only its two
# denies fail at --fail-on deny; its mistakes are new but do not.
mkdir -p "$TMP/new/inputs"
$PY - "$HERE/inputs/list.yaml" "$TMP/new/inputs/list.yaml" <<'EOF'
import copy, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
job = copy.deepcopy(doc["items"][1])
job["metadata"]["name"] += "-copy"
doc["items"].append(job)
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
EOF
(cd "$TMP/new" && "$BIN" audit --baseline "$B" inputs/list.yaml) \
	>/dev/null 2>"$TMP/ci-err"
expect "--baseline, a new deny: exit status 1" 1 $?
expect "--baseline, a new deny: the note" \
	"topogate audit: baseline $B: 11 findings, 7 in the baseline, 4 new (2 failing at --fail-on)" \
	"$(head -1 "$TMP/ci-err")"
expect "--baseline, a new deny: both named, nothing else" \
	"2 2" "$(grep -c '^  new [0-9a-f]\{16\} deny inputs/list.yaml:[0-9]*: TrainJob ml-training/llama3-8b-sft-copy, ' "$TMP/ci-err") $(($(wc -l <"$TMP/ci-err") - 1))"
(cd "$TMP/new" && "$BIN" audit --baseline "$B" --fail-on never inputs/list.yaml) \
	>/dev/null 2>&1
expect "--baseline --fail-on never, a new deny: exit status 0" 0 $?
(cd "$TMP/new" && SOURCE_DATE_EPOCH=0 "$BIN" audit -o sarif --baseline "$B" inputs/list.yaml) \
	>"$TMP/new.sarif" 2>/dev/null
$PY "$HERE/check_ci.py" sarif "$SARIF_SCHEMA" "$TMP/new.sarif" --baseline-state mixed ||
	FAILED=$((FAILED + 1))
expect "-o sarif --baseline: the new findings marked new" 4 \
	"$(grep -c '"baselineState":	"new"' "$TMP/new.sarif")"
(cd "$TMP/new" && "$BIN" audit -o junit --baseline "$B" inputs/list.yaml) \
	>"$TMP/new.junit" 2>/dev/null
junit_valid "-o junit --baseline, a new deny" "$TMP/new.junit"
expect "-o junit --baseline: the new TrainJob alone fails" \
	'<testcase name="TrainJob ml-training/llama3-8b-sft-copy" classname="inputs/list.yaml" time="0">' \
	"$(grep -B1 '<failure ' "$TMP/new.junit" | sed -n 's/^ *\(<testcase \)/\1/p')"

# Fixed: the TrainJob gone, the rest known: passes, at warn too.
$PY - "$HERE/inputs/list.yaml" "$TMP/new/inputs/list.yaml" <<'EOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
del doc["items"][1]
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
EOF
(cd "$TMP/new" && "$BIN" audit --baseline "$B" --fail-on warn inputs/list.yaml) \
	>/dev/null 2>"$TMP/ci-err"
expect "--baseline, the deny fixed: exit status 0" 0 $?
expect "--baseline, the deny fixed: the note" \
	"topogate audit: baseline $B: 3 findings, 3 in the baseline, 0 new (0 failing at --fail-on)" \
	"$(cat "$TMP/ci-err")"

# Only the denies accepted: the mistakes still fail at warn, not at deny.
grep ' deny ' "$B" >"$TMP/denies.txt"
(cd "$HERE" && "$BIN" audit --baseline "$TMP/denies.txt" inputs/list.yaml) >/dev/null 2>&1
expect "--baseline of the denies: exit status 0" 0 $?
(cd "$HERE" && "$BIN" audit --baseline "$TMP/denies.txt" --fail-on warn inputs/list.yaml) \
	>/dev/null 2>&1
expect "--baseline of the denies --fail-on warn (mistakes new): exit status 1" 1 $?

# An empty baseline is no baseline: the same statuses as today.
for args in "--fail-on deny manifests" "--fail-on warn manifests"; do
	# shellcheck disable=SC2086
	(cd "$SHARED/corpus" && "$BIN" audit $args) >/dev/null 2>&1
	want=$?
	# shellcheck disable=SC2086
	(cd "$SHARED/corpus" && "$BIN" audit --baseline /dev/null $args) >/dev/null 2>&1
	expect "corpus $args: --baseline /dev/null, the same status ($want)" $want $?
done

# Bad baselines, bad combinations: usage errors (2), nothing written.
(cd "$HERE" && "$BIN" audit --baseline "$TMP/none.txt" inputs/list.yaml) >"$TMP/out" 2>"$TMP/ci-err"
expect "--baseline missing: exit status 2" 2 $?
expect "--baseline missing: no report" "" "$(cat "$TMP/out")"
grep -q "none.txt: No such file" "$TMP/ci-err" && ok "--baseline missing: named" ||
	not_ok "--baseline missing: named" "$(cat "$TMP/ci-err")"
printf '# ok\n%s\nnot-an-id deny x\n' "$(head -5 "$B" | tail -1)" >"$TMP/bad.txt"
(cd "$HERE" && "$BIN" audit --baseline "$TMP/bad.txt" inputs/list.yaml) >/dev/null 2>"$TMP/ci-err"
expect "--baseline with a bad line: exit status 2" 2 $?
expect "--baseline with a bad line: where" \
	"topogate audit: $TMP/bad.txt:3: not a finding id (16 hex digits, lower case, first on the line): 'not-an-id'" \
	"$(cat "$TMP/ci-err")"
"$BIN" audit --baseline "$B" --write-baseline "$TMP/x.txt" "$HERE/inputs/list.yaml" >/dev/null 2>&1
expect "--baseline with --write-baseline: exit status 2" 2 $?
"$BIN" audit --write-baseline "$TMP/no/such/dir.txt" "$HERE/inputs/list.yaml" >/dev/null 2>&1
expect "--write-baseline into a missing directory: exit status 2" 2 $?
"$BIN" audit --write-baseline "$TMP/partial.txt" "$HERE/inputs/list.yaml" "$TMP/missing.yaml" \
	>/dev/null 2>"$TMP/ci-err"
expect "--write-baseline with a path unread: exit status 2" 2 $?
[ -e "$TMP/partial.txt" ] && not_ok "--write-baseline with a path unread" "the file was written" ||
	ok "--write-baseline with a path unread: not written"
"$BIN" audit --review - -o sarif <"$REPO/deploy/examples/p4d-2x8-trainjob-worker.review.json" \
	>/dev/null 2>&1
expect "--review - -o sarif: exit status 2" 2 $?
"$BIN" audit --review - -o json <"$REPO/deploy/examples/p4d-2x8-trainjob-worker.review.json" \
	>/dev/null 2>&1
expect "--review - -o json (accepted, as before): exit status 0" 0 $?
