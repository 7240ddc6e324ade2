#!/usr/bin/env bash
# moto's server mode: AWS's EventBridge Scheduler and Step Functions APIs on
# loopback, for the tests of the adapters that call them.
#
#   tools/moto/run.sh COMMAND [ARG...]  start it on a free port, run COMMAND
#                                      with MOTO_ENDPOINT set, stop it
#   tools/moto/run.sh --port PORT       serve in the foreground until interrupted
#
# `make moto` installs moto (pinned in the Makefile) into .cache/moto; without
# it this fails, saying so.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
server="$root/.cache/moto/bin/moto_server"

fail() { echo "moto: $*" >&2; exit 1; }

[ $# -gt 0 ] || fail "usage: $0 COMMAND [ARG...] | --port PORT"
[ -x "$server" ] || fail "moto is not installed in .cache/moto: run \`make moto\`"

if [ "$1" = "--port" ]; then
	[ $# -eq 2 ] || fail "usage: $0 --port PORT"
	echo "moto: serving on http://127.0.0.1:$2 until interrupted (state is kept in memory only)" >&2
	exec "$server" -H 127.0.0.1 -p "$2"
fi

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

log=$(mktemp)
pid=
stop() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -f "$log"
}
trap stop EXIT
trap 'exit 130' INT TERM

# Another process may take the port between the check and the start; then
# the server exits and the next port is tried.
for attempt in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 40000))
	listening "$port" && continue
	"$server" -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		listening "$port" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	listening "$port" && break
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
	[ "$attempt" -lt 5 ] || { cat "$log" >&2; fail "moto did not start"; }
done

export MOTO_ENDPOINT="http://127.0.0.1:$port"
echo "moto: moto $("$root/.cache/moto/bin/python" -c 'import moto; print(moto.__version__)') on $MOTO_ENDPOINT" >&2
"$@"
