#!/bin/bash
# test/bench/cold-lines.sh COLD_REVIEW FIXTURE...
# How many cache lines one review touches when it starts cold: callgrind's
# cache simulator on cold_review, which writes 16 MiB between reviews (the
# simulated last level is 8 MiB, so it starts empty), with a 4 KiB
# first-level instruction cache so that every line of code a review runs
# is counted, not only those a 32 KiB one would have lost. A run of 40
# reviews less one of 20, over 20: the first call's one-time setup drops
# out. Prints per review: instructions, lines of code, lines of data read
# and written, all from memory. These do not move with the machine's load;
# at 1,000 reviews/s, where each review starts with caches others have
# used, they are what the review pays for (git history: test/bench/issue-15-rounds.md,
# issue 15's seventh round). `make bench-lines` runs it on
# ../shared/bench/fixtures.
set -euo pipefail
bin=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
totals() {
	valgrind --tool=callgrind --cache-sim=yes --I1=4096,1,64 \
		--D1=32768,8,64 --LL=8388608,16,64 --toggle-collect=review_respond_in_place \
		--callgrind-out-file="$out/cg" "$bin" -n "$1" -e 16384 "$2" \
		>/dev/null 2>&1
	callgrind_annotate --show-percs=no --show=Ir,ILmr,DLmr,DLmw "$out/cg" |
		awk '/PROGRAM TOTALS/ {
			gsub(",", "")
			for (i = 1; i <= 4; i++)
				if ($i == ".")
					$i = 0
			print $1, $2, $3, $4
		}'
}
echo "| fixture | instructions | lines of code | data lines read | data lines written | lines in all |"
echo "|---|---|---|---|---|---|"
for f in "$@"; do
	read -r i1 c1 r1 w1 < <(totals 20 "$f")
	read -r i2 c2 r2 w2 < <(totals 40 "$f")
	awk -v f="$(basename "$f")" -v i=$((i2 - i1)) -v c=$((c2 - c1)) \
		-v r=$((r2 - r1)) -v w=$((w2 - w1)) 'BEGIN {
		printf "| %s | %d | %d | %d | %d | %d |\n", f, i / 20, c / 20,
			r / 20, w / 20, (c + r + w) / 20 }'
done
