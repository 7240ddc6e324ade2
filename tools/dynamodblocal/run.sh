#!/usr/bin/env bash
# DynamoDB Local for the DynamoDB store's tests and for local runs.
#
#   tools/dynamodblocal/run.sh COMMAND [ARG...]  start it in memory on a free port, run
#                                               COMMAND with DYNAMODB_ENDPOINT set, stop it
#   tools/dynamodblocal/run.sh --port PORT       serve in the foreground until interrupted
#
# The first run downloads DynamoDB Local and the jars it needs (pom.xml beside
# this script) from Maven Central with `mvn dependency:copy-dependencies` into
# .cache/dynamodb-local; later runs use that copy. It needs Java 11 or newer, and
# Maven for the download: without them it fails, saying what to install.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

fail() { echo "dynamodb-local: $*" >&2; exit 1; }

[ $# -gt 0 ] || fail "usage: $0 COMMAND [ARG...] | --port PORT"

command -v java >/dev/null 2>&1 ||
	fail "Java is not installed; DynamoDB Local needs Java 11 or newer (Debian/Ubuntu: apt-get install default-jre-headless)"

# The cache is keyed by the pom, so changing the version downloads afresh.
cache="$root/.cache/dynamodb-local/$(sha256sum "$here/pom.xml" | cut -c1-12)"
if [ ! -f "$cache/complete" ]; then
	command -v mvn >/dev/null 2>&1 ||
		fail "Maven is not installed; it downloads DynamoDB Local from Maven Central (Debian/Ubuntu: apt-get install maven)"
	echo "dynamodb-local: downloading DynamoDB Local from Maven Central into ${cache#"$root"/}" >&2
	rm -rf "$cache.partial"
	mkdir -p "$cache.partial"
	mvn -B -f "$here/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$cache.partial/lib" >"$cache.partial/mvn.log" 2>&1 || {
		grep -E 'ERROR' "$cache.partial/mvn.log" >&2 || cat "$cache.partial/mvn.log" >&2
		fail "downloading DynamoDB Local with Maven failed; check that Maven Central can be reached"
	}
	ls "$cache.partial/lib"/libsqlite4java-linux-amd64-*.so >/dev/null 2>&1 ||
		fail "the download has no sqlite4java native library for linux-amd64"
	rm -rf "$cache"
	mv "$cache.partial" "$cache"
	touch "$cache/complete"
fi

server=(java "-Djava.library.path=$cache/lib" -cp "$cache/lib/*"
	com.amazonaws.services.dynamodbv2.local.main.ServerRunner -inMemory -sharedDb -disableTelemetry)

if [ "$1" = "--port" ]; then
	[ $# -eq 2 ] || fail "usage: $0 --port PORT"
	echo "dynamodb-local: serving on http://localhost:$2 until interrupted (data is kept in memory only)" >&2
	# It writes a metadata file into its working directory.
	cd "$cache"
	exec "${server[@]}" -port "$2"
fi

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The server's working directory, for the metadata file it writes, and its log.
work=$(mktemp -d)
log="$work/server.log"
pid=
stop() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT TERM

# Another process may take the port between the check and the start; then
# the server exits and the next port is tried.
for attempt in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 40000))
	listening "$port" && continue
	(cd "$work" && exec "${server[@]}" -port "$port") >"$log" 2>&1 &
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
	[ "$attempt" -lt 5 ] || { cat "$log" >&2; fail "DynamoDB Local did not start"; }
done

export DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
echo "dynamodb-local: DynamoDB Local $(sed -n 's/^Version:[[:space:]]*//p' "$log") on $DYNAMODB_ENDPOINT" >&2
"$@"
