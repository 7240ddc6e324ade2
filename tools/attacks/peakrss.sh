#!/usr/bin/env bash
# The server's peak memory under one attack:
#
#   tools/attacks/peakrss.sh SCRIPT [ARG...]
#
# builds bin/cardflow, starts `cardflow serve` on a fresh data directory and
# a loopback port, creates keys of the organization `attack` and runs SCRIPT
# with these set:
#
#   CARDFLOW_URL  the server's address
#   ADMIN_KEY     scopes read,execute,admin
#   READ_KEY      scope read, acting for ann@example.com
#   EXEC_KEY      scopes read,execute, acting for dan@example.com
#   OTHER_KEY     scopes read,execute,admin of another organization, `bystander`
#
# Then it prints the server's peak resident memory (VmHWM of
# /proc/PID/status) in MB, and exits with SCRIPT's status. The figures in
# RELIABILITY.md's "Attacks tried" come from it.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 SCRIPT [ARG...]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$root" && go build -o bin/cardflow ./cmd/cardflow)
bin=$root/bin/cardflow
data=$(mktemp -d)
log=$data/server.log
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$data"
}
trap cleanup EXIT
export CARDFLOW_DATA_DIR=$data
"$bin" serve --addr 127.0.0.1:0 >/dev/null 2>"$log" &
pid=$!
addr=
for _ in $(seq 300); do
	addr=$(sed -n 's/.*msg="cardflow listening" addr=\([^ ]*\).*/\1/p' "$log")
	[ -n "$addr" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
	sleep 0.1
done
[ -n "$addr" ] || { echo "peakrss: the server did not start listening within 30s" >&2; exit 1; }
key() { "$bin" keys create --org "$1" --workspace main --scopes "$2" "${@:3}" 2>/dev/null; }
export CARDFLOW_URL=http://$addr
ADMIN_KEY=$(key attack read,execute,admin --name attack-admin)
READ_KEY=$(key attack read --actor ann@example.com)
EXEC_KEY=$(key attack read,execute --actor dan@example.com)
OTHER_KEY=$(key bystander read,execute,admin --name bystander-admin)
export ADMIN_KEY READ_KEY EXEC_KEY OTHER_KEY
status=0
"$@" || status=$?
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
echo "server peak RSS: $((hwm / 1024)) MB ($1)"
exit "$status"
