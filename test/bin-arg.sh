# test/bin-arg.sh: sourced by the test runners, which all take one
# argument, the topogate binary under test. Sets BIN to its absolute path
# or exits 2 with a usage line.
if [ $# -ne 1 ]; then
	echo "usage: $0 BIN" >&2
	exit 2
fi
case $1 in
/*) BIN=$1 ;;
*) BIN=$PWD/$1 ;;
esac
if [ ! -x "$BIN" ]; then
	echo "$0: no executable at $1" >&2
	exit 2
fi
