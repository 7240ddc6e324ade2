#!/usr/bin/env bash
# make bench: every Go benchmark of the project, then a load test of a local
# server, with profiles; the figures replace the generated section of
# BENCHMARKS.md (between the markers), leaving the rest of the file alone.
#
#   BENCH_FLAGS   extra flags for go test (default: -benchtime 1s)
#   LOAD_FLAGS    extra flags for cardflow-load, e.g. "--duration 5s --executions 1000"
#
# Go benchmarks run one package at a time (-p 1), with DynamoDB Local
# running for the DynamoDB store's. The load test starts `cardflow serve` on
# a fresh data directory with profiles on a loopback port and runs
# cardflow-load against it as a second process. Profiles go to bench/, the
# raw outputs to .cache/bench/.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=.cache/bench
mkdir -p "$out/bin" bench
rm -f bench/*.pprof bench/*.top.txt

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
load_before=$(loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

go build -o "$out/bin/" ./cmd/cardflow ./cmd/cardflow-load

# Every package with a benchmark, found afresh so new ones are measured too.
mapfile -t pkgs < <(grep -rl --include='*_test.go' -E '^func Benchmark' cmd pkg internal | xargs -n1 dirname | sort -u | sed 's|^|./|')
echo "bench: go test -bench in ${pkgs[*]}" >&2
# shellcheck disable=SC2086
tools/dynamodblocal/run.sh go test -p 1 -run '^$' -bench . -benchmem ${BENCH_FLAGS:-} "${pkgs[@]}" | tee "$out/gotest.txt"

# The load test, against a fresh server (tools/bench/load.sh); its report,
# server log and load averages go to .cache/bench/load/.
load_status=0
# shellcheck disable=SC2086
tools/bench/load.sh "$out/bin" "$out/load" --profile-dir bench --markdown "$out/load.md" ${LOAD_FLAGS:-} || load_status=$?

for f in bench/*.cpu.pprof bench/*.block.pprof bench/*.mutex.pprof; do
	[ -e "$f" ] || continue
	go tool pprof -top -nodecount=30 "$f" >"${f%.pprof}.top.txt" 2>/dev/null
done
go tool pprof -sample_index=alloc_space -top -nodecount=30 bench/allocs.pprof >bench/allocs.top.txt 2>/dev/null

# The generated section.
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
section="$out/section.md"
{
	echo "<!-- make bench: begin (generated; edit outside the markers) -->"
	echo "## Latest \`make bench\`"
	echo
	echo "Date: $started. Machine: $cpu, $(nproc) cores, $mem memory, $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $(loadavg)."
	echo
	echo '```sh'
	echo "make bench    # tools/bench/run.sh${BENCH_FLAGS:+ BENCH_FLAGS=\"$BENCH_FLAGS\"}${LOAD_FLAGS:+ LOAD_FLAGS=\"$LOAD_FLAGS\"}"
	echo '```'
	echo
	echo "### Load test of \`cardflow serve\`"
	echo
	echo "\`cardflow-load\` in a second process on loopback against \`cardflow serve\` (fresh data directory, demo key, embedded store); both share the machine's cores."
	echo
	cat "$out/load.md"
	echo
	echo "Profiles of the server during each run: \`bench/*.cpu.pprof\` and \`bench/allocs.pprof\` (\`go tool pprof -http :8080 bench/<file>\`), their top functions in \`bench/*.top.txt\`."
	echo
	echo "### Go benchmarks"
	echo
	echo '```text'
	grep -E '^(cpu:|pkg:|Benchmark)' "$out/gotest.txt" | awk '!(/^cpu:/ && seen++)'
	echo '```'
	echo "<!-- make bench: end -->"
} >"$section"

if grep -q '^<!-- make bench: begin' BENCHMARKS.md; then
	awk -v section="$section" '
		/^<!-- make bench: begin/ { while ((getline line < section) > 0) print line; skip = 1; next }
		/^<!-- make bench: end -->/ { skip = 0; next }
		!skip' BENCHMARKS.md >"$out/BENCHMARKS.md"
else
	{ cat BENCHMARKS.md; echo; cat "$section"; } >"$out/BENCHMARKS.md"
fi
mv "$out/BENCHMARKS.md" BENCHMARKS.md
echo "bench: figures written to BENCHMARKS.md, profiles to bench/" >&2
exit "$load_status"
