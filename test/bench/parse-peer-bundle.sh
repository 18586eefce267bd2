#!/bin/bash
# test/bench/parse-peer-bundle.sh DIR DECIDE_BENCH SIMDJSON_PEER FIXTURE...
# Packs parse-peer.sh with the two programs, every library they load (the
# loader and libc too: the device's own may be older) and the fixtures
# into DIR, for the 16-core device, where nothing is installed. `make
# bench-parse-bundle` makes build/parsepeer; on the device, from the
# project root:
#   CPU=2 ROUNDS=9 build/parsepeer/run.sh   # the table on stdout
set -euo pipefail
D=$1 ours=$2 peer=$3
shift 3
repo=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$D"
mkdir -p "$D/real" "$D/bin" "$D/lib" "$D/fixtures"
cp "$ours" "$peer" "$D/real/"
cp "$@" "$D/fixtures/"
cp "$repo/test/bench/parse-peer.sh" "$D/"
ldd "$ours" "$peer" | awk '/=> \//{print $3} /ld-linux/{print $1}' |
	sort -u | xargs cp -L -t "$D/lib/"
# Each program through the packed loader, so the packed libraries are
# the ones it runs with.
for p in "$ours" "$peer"; do
	name=$(basename "$p")
	cat >"$D/bin/$name" <<EOF
#!/bin/sh
here=\$(cd "\$(dirname "\$0")/.." && pwd)
exec "\$here/lib/ld-linux-x86-64.so.2" --library-path "\$here/lib" "\$here/real/$name" "\$@"
EOF
	chmod +x "$D/bin/$name"
done
cat >"$D/run.sh" <<EOF
#!/bin/sh
here=\$(cd "\$(dirname "\$0")" && pwd)
exec "\$here/parse-peer.sh" "\$here/bin/$(basename "$ours")" \\
	"\$here/bin/$(basename "$peer")" "\$here"/fixtures/*.json
EOF
chmod +x "$D/run.sh"
du -sh "$D"
