#!/usr/bin/env bash
# One load measurement of a build against a fresh server, for comparing
# builds run after run (make bench runs every benchmark instead):
#
#   go build -o BINDIR/ ./cmd/cardflow ./cmd/cardflow-load
#   tools/bench/load.sh BINDIR OUTDIR [cardflow-load flags, e.g. --run roundtrips --clients 1,32]
#
# It starts BINDIR/cardflow serve on a fresh data directory with profiles
# (CPU, block and mutex) on a loopback port, runs BINDIR/cardflow-load
# against it with the flags given, and writes to OUTDIR the report
# (load.txt, with the load averages before and after and the load
# generator's own CPU time), the server's log and the profiles.
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 BINDIR OUTDIR [cardflow-load flags]" >&2
	exit 2
fi
bin=$1 out=$2
shift 2
mkdir -p "$out"
data=$(mktemp -d)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
	rm -rf "$data"
}
trap cleanup EXIT
"$bin/cardflow" serve --addr 127.0.0.1:0 --pprof 127.0.0.1:0 --pprof-contention --data-dir "$data" >/dev/null 2>"$out/server.log" &
server_pid=$!
addr=
for _ in $(seq 300); do
	addr=$(sed -n 's/.*msg="cardflow listening" addr=\([^ ]*\).*/\1/p' "$out/server.log")
	[ -n "$addr" ] && break
	kill -0 "$server_pid" 2>/dev/null || { cat "$out/server.log" >&2; exit 1; }
	sleep 0.1
done
[ -n "$addr" ] || { echo "load.sh: the server did not start listening within 30s" >&2; exit 1; }
pprof=$(sed -n 's|.*msg="profiles served" addr=\(http://[^/]*\)/.*|\1|p' "$out/server.log")
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/load.txt"
status=0
"$bin/cardflow-load" --url "http://$addr" --data-dir "$data" --pid "$server_pid" --pprof "$pprof" \
	--profile-dir "$out" "$@" >>"$out/load.txt" 2>&1 || status=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
cat "$out/load.txt"
exit "$status"
