#!/bin/bash
# test/bench/manycore-ab.sh [BUNDLE_DIR]: the bundle of
# ../shared/bench/manycore with two topogate builds side by side.
#
# build-bundle.sh archives the committed tree (`git archive HEAD`): that
# build stays bin/topogate ("before"); with BEFORE=REF, the commit REF
# does (a temporary clone at REF is archived instead). The working tree,
# built here with `make`, becomes bin/topogate-new ("after"); with
# FLOOR=1 the working tree's build/bench/topogate-floor does instead (serve
# with a fixed "allowed" for every review: the transport's own cost,
# test/bench/floor_review.c). The instruments topogate-floor,
# topogate-noparse (the parse of a body read before costs nothing,
# test/bench/noparse_review.c), topogate-checkonly (such a body is only
# checked, test/bench/checkonly_review.c) and topogate-twice (a first
# review before each, test/bench/twice_review.c, also as topogate-twice-copy,
# -first-large-pod-shuffled, -first-large-pod-valuefrom and
# -first-p4d-training) go into bin/ too, for
# turns.sh's SERVERS, once test/bench/instruments-check.sh has passed them; and
# decide_bench, whose parse turns.sh times around each turn; and apiload
# (test/bench/apiload, Go's client) for together.sh's TESTS=go. The
# bundle's copy of drive.py learns a server "topogate-new" (port 8451,
# probes 8452, on --tg-null-cpu, its log to a file like topogate's).
# Then, on the many-core machine, from the project root:
#   build/benchbundle/ab.sh       # results in $OUT/ab.tar.gz and its log
#   build/benchbundle/probe.sh    # per thread and per syscall, $OUT/probe.txt
#   build/benchbundle/same.sh     # both builds in turn on one CPU, $OUT/same.txt
#   build/benchbundle/turns.sh    # builds and nginx in turn on one CPU, $OUT/turns.txt
#   build/benchbundle/together.sh # builds and nginx at once on one CPU, $OUT/together.txt
#   build/benchbundle/neighbours.sh # does a busy CPU slow another one?
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
D=${1:-$repo/build/benchbundle}
SHARED=${SHARED:-$repo/../shared}
src=$repo
if [ -n "${BEFORE:-}" ]; then
	src=$(mktemp -d)
	git clone -q "$repo" "$src"
	git -C "$src" checkout -q --detach "$BEFORE"
fi
"$SHARED/bench/manycore/build-bundle.sh" "$src" "$D"
[ "$src" = "$repo" ] || rm -rf "$src"
new=build/ab/topogate
[ "${FLOOR:-0}" = 1 ] && new=build/ab/bench/topogate-floor
instruments=(floor noparse checkonly twice)
make -s -C "$repo" BUILD=build/ab all "${instruments[@]/#/build/ab/bench/topogate-}" \
	build/ab/bench/decide_bench
# The instruments must measure what they say (a new way into the review
# had made the floor a second topogate from the eighth round to the tenth).
"$repo/test/bench/instruments-check.sh" "$repo/build/ab/topogate" \
	"${instruments[@]/#/$repo/build/ab/bench/topogate-}" \
	"$SHARED"/bench/fixtures/*.json
cp "$repo/$new" "$D/bin/topogate-new"
cp "${instruments[@]/#/$repo/build/ab/bench/topogate-}" \
	"$repo/build/ab/bench/decide_bench" "$D/bin/"
# topogate-twice under the names that pick its first review
# (test/bench/twice_review.c), and the large pod's twin bodies for two:
# other strings, and another structure too. Hard links: the bundle must
# stay under the device's 64 MiB.
python3 "$repo/test/bench/shuffle_env.py" "$D/fixtures/large-pod.json" \
	"$D/fixtures/large-pod-shuffled.json"
python3 "$repo/test/bench/shuffle_env.py" --value-from \
	"$D/fixtures/large-pod.json" "$D/fixtures/large-pod-valuefrom.json"
for name in copy first-large-pod-shuffled first-large-pod-valuefrom \
	first-p4d-training; do
	ln -f "$D/bin/topogate-twice" "$D/bin/topogate-twice-$name"
done
python3 - "$D/drive.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
def rep(a, b):
    global s
    if a not in s:
        raise SystemExit("drive.py changed: cannot find %r" % a)
    s = s.replace(a, b, 1)
rep('"topogate-null": 8449}', '"topogate-null": 8449, "topogate-new": 8451}')
rep('"topogate-null": 8450}', '"topogate-null": 8450, "topogate-new": 8452}')
rep('''    logs["go"] = os.path.join(work, "go-%s.log" % tag)''',
    '''    if "topogate-new" in SERVERS:  # a second build, its log to a file as topogate's
        logs["topogate-new"] = os.path.join(work, "topogate-new-%s.log" % tag)
        procs["topogate-new"] = subprocess.Popen(
            pinned(str(a.tg_null_cpu), "topogate-new", "serve", "--listen", "127.0.0.1:%d" % PORTS["topogate-new"],
                   "--probe-listen", "127.0.0.1:%d" % PROBES["topogate-new"], "--tls-cert", crt, "--tls-key", key),
            stdout=subprocess.DEVNULL, stderr=open(logs["topogate-new"], "w"), env=ENV)
    logs["go"] = os.path.join(work, "go-%s.log" % tag)''')
rep('([a.tg_null_cpu] if "topogate-null" in SERVERS else [])',
    '([a.tg_null_cpu] if ("topogate-null" in SERVERS or "topogate-new" in SERVERS) else [])')
open(p, "w").write(s)
PY
cp "$repo/test/bench/manycore-ab-run.sh" "$D/ab.sh"
cp "$repo/test/bench/manycore-probe.sh" "$D/probe.sh"
cp "$repo/test/bench/manycore-same.sh" "$D/same.sh"
cp "$repo/test/bench/manycore-turns.sh" "$D/turns.sh"
cp "$repo/test/bench/manycore-together.sh" "$D/together.sh"
cp "$repo/test/bench/manycore-servers.sh" "$D/servers.sh"
cp "$repo/test/bench/manycore-neighbours.sh" "$D/neighbours.sh"
cp "$repo/test/bench/turns_table.py" "$D/turns-table.py"
chmod +x "$D/ab.sh" "$D/probe.sh" "$D/same.sh" "$D/turns.sh" "$D/together.sh" \
	"$D/neighbours.sh"
# apiload for together.sh's TESTS=go: Go's own client, built static, where
# Go is installed (make bench installs golang-1.19-go).
go=$(command -v go || echo /usr/lib/go-1.19/bin/go)
if [ -x "$go" ]; then
	(cd "$repo/test/bench/apiload" && CGO_ENABLED=0 GOCACHE="$repo/build/gocache" \
		"$go" build -o "$D/bin/apiload" .)
else
	echo "manycore-ab.sh: no Go here: the bundle has no apiload (TESTS=go)" >&2
fi
# strace for probe.sh's system call counts, with the libraries it loads.
if command -v strace >/dev/null; then
	cp "$(command -v strace)" "$D/bin/"
	ldd "$(command -v strace)" | awk '/=> \//{print $3}' | grep -v '/libc\.so' |
		xargs -r cp -L -t "$D/lib/"
fi
du -sh "$D"
