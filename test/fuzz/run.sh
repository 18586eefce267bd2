#!/bin/bash
# test/fuzz/run.sh DIR SECONDS [NAME...]: the libFuzzer targets in DIR.
#
# For each NAME (default: every DIR/fuzz_* binary):
# 1. every file in test/fuzz/regressions/NAME/ runs once and must pass:
#    each is an input that once crashed, kept after the fix;
# 2. the target runs for SECONDS from the checked-in seeds in
#    test/fuzz/corpus/NAME/ with test/fuzz/NAME.dict. New inputs go to
#    DIR/corpus/NAME (kept between `make fuzz` runs; KEEP=0, as
#    fuzz-smoke sets it, starts from the seeds alone in a scratch dir).
#
# A crash, leak, timeout or sanitizer report fails the run; the input is
# copied to DIR/crashes/NAME/ with libFuzzer's log, to be fixed and then
# kept as a regression. Prints `ok - ...`/`not ok - ...` per target with
# the number of inputs run; exits 1 if any failed.

set -u

if [ $# -lt 2 ]; then
	echo "usage: $0 DIR SECONDS [NAME...]" >&2
	exit 2
fi
DIR=$(cd "$1" && pwd) || exit 2
SECONDS_EACH=$2
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
KEEP=${KEEP:-1}
# Past this an input is a hang: a review is decided in well under 10 ms.
TIMEOUT=${FUZZ_TIMEOUT:-10}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for bin in "$DIR"/fuzz_*; do
		[ -x "$bin" ] && names+=("${bin##*/fuzz_}")
	done
fi
if [ ${#names[@]} -eq 0 ]; then
	echo "not ok - no fuzz targets in $DIR"
	exit 1
fi

# Leaks count as failures; a 2 GiB RSS cap catches runaway allocation.
OPTS=(-timeout="$TIMEOUT" -rss_limit_mb=2048 -malloc_limit_mb=2048
	-detect_leaks=1 -print_final_stats=1)
# The smoke in `make test` (KEEP=0) uses a fixed seed, so a CI run walks
# the paths it walked before and a failure reproduces; `make fuzz`
# explores with a fresh seed each run. SEED= overrides.
if [ "${KEEP:-1}" = 0 ] || [ -n "${SEED:-}" ]; then
	OPTS+=(-seed="${SEED:-20261121}")
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
for name in "${names[@]}"; do
	bin=$DIR/fuzz_$name
	seeds=$HERE/corpus/$name
	regress=$HERE/regressions/$name
	dict=$HERE/$name.dict
	log=$TMP/$name.log

	if [ ! -x "$bin" ]; then
		echo "not ok - $name: no $bin"
		failed=1
		continue
	fi

	# 1. Regressions: each file once.
	files=()
	if [ -d "$regress" ]; then
		for f in "$regress"/*; do
			[ -f "$f" ] && files+=("$f")
		done
	fi
	if [ ${#files[@]} -gt 0 ]; then
		if "$bin" "${OPTS[@]}" "${files[@]}" >"$log" 2>&1; then
			echo "ok - $name: ${#files[@]} regression inputs pass"
		else
			echo "not ok - $name: a regression input fails again"
			grep -E 'ERROR|runtime error|Running:' "$log" | head -20 |
				sed 's/^/#   /'
			failed=1
			continue
		fi
	fi

	# 2. Fuzz from the seeds for SECONDS.
	if [ "$KEEP" = 1 ]; then
		work=$DIR/corpus/$name
	else
		work=$TMP/corpus-$name
	fi
	mkdir -p "$work" "$TMP/artifacts-$name"
	dictopt=()
	[ -f "$dict" ] && dictopt=(-dict="$dict")
	"$bin" "${OPTS[@]}" "${dictopt[@]}" -max_total_time="$SECONDS_EACH" \
		-artifact_prefix="$TMP/artifacts-$name/" "$work" "$seeds" \
		>"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		echo "ok - $name: ${runs:-?} inputs in ${SECONDS_EACH}s, ${cov:-cov: ?}," \
			"$(find "$work" -type f | wc -l) in corpus, no crash"
	else
		mkdir -p "$DIR/crashes/$name"
		cp "$TMP/artifacts-$name"/* "$log" "$DIR/crashes/$name/" 2>/dev/null
		echo "not ok - $name: libFuzzer exited $rc after ${runs:-?} inputs;" \
			"input and log in $DIR/crashes/$name/"
		grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" |
			head -20 | sed 's/^/#   /'
		failed=1
	fi
done
exit $failed
