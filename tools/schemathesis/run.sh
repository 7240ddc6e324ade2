#!/usr/bin/env bash
# Schemathesis against a local server: builds cardflow, and for each seed
# starts `cardflow serve` on a free port with a fresh data directory and runs
# Schemathesis (pinned in requirements.txt, installed into
# .cache/schemathesis) with the demo key against openapi.yaml, every check
# (--checks all) and every phase, the stateful one included. Extra arguments
# go to `st run`.
#
#   tools/schemathesis/run.sh                      the CI run: the seed of schemathesis.toml, then
#                                                  FRESH_SEEDS (default 2) random seeds, each printed
#   SEED=7 tools/schemathesis/run.sh               that seed alone (replays a printed one)
#   FRESH_SEEDS=0 tools/schemathesis/run.sh        the fixed seed alone
#   tools/schemathesis/run.sh --max-examples 20    a quicker one
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fail() { echo "schemathesis: $*" >&2; exit 1; }

command -v python3 >/dev/null 2>&1 || fail "Python 3.10 or newer is needed (Debian/Ubuntu: apt-get install python3 python3-venv)"

# The virtual environment is keyed by the requirements, so a new pin installs afresh.
venv="$root/.cache/schemathesis/$(sha256sum "$here/requirements.txt" | cut -c1-12)"
if [ ! -x "$venv/bin/st" ]; then
	echo "schemathesis: installing into ${venv#"$root"/}" >&2
	rm -rf "$venv"
	python3 -m venv "$venv" || fail "python3 -m venv failed (Debian/Ubuntu: apt-get install python3-venv)"
	"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt" ||
		{ rm -rf "$venv"; fail "pip could not install $(cat "$here/requirements.txt")"; }
fi

work=$(mktemp -d)
pid=
stop_server() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=
	fi
}
stop() {
	stop_server
	rm -rf "$work"
}
trap stop EXIT

(cd "$root" && go build -o "$work/cardflow" ./cmd/cardflow)

# run_seed runs Schemathesis once, with a seed, against a server of its
# own, so that a seed replays from the same empty service.
run_seed() {
	local seed=$1 run="$work/run-$1"
	shift
	mkdir -p "$run"
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# Teams is configured, bot and links, so that its two endpoints exist and
	# are tested too; the secrets are test values from the environment.
	CARDFLOW_DEPLOYMENT_SECRET_TEAMS_SIGNING=schemathesis-signing-key-of-32-characters CARDFLOW_DEPLOYMENT_SECRET_TEAMS_APP=schemathesis-app-secret \
		"$work/cardflow" serve --addr "127.0.0.1:$port" --data-dir "$run/data" \
		--public-url "http://127.0.0.1:$port" --teams-signing-secret teams-signing \
		--teams-app-id 00000000-0000-0000-0000-000000000001 --teams-app-secret teams-app \
		>"$run/server.out" 2>"$run/server.log" &
	pid=$!
	for _ in $(seq 1 200); do
		[ -s "$run/data/demo-key" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || { cat "$run/server.log" >&2; fail "cardflow serve exited"; }
		sleep 0.1
	done
	[ -s "$run/data/demo-key" ] || fail "cardflow serve did not start within 20 seconds"

	# Schemathesis and Hypothesis keep caches in the working directory: the
	# run's own, so every run starts from the seed alone.
	local status=0
	(cd "$run" && "$venv/bin/st" --config-file "$here/schemathesis.toml" run "$root/openapi.yaml" \
		--url "http://127.0.0.1:$port" -H "x-api-key: $(cat "$run/data/demo-key")" \
		--checks all --phases examples,coverage,fuzzing,stateful --seed "$seed" "$@") || status=$?
	stop_server
	if grep -q 'level=ERROR' "$run/server.log"; then
		echo "schemathesis: the server logged errors:" >&2
		grep 'level=ERROR' "$run/server.log" | head -20 >&2
		status=1
	fi
	return $status
}

if [ -n "${SEED:-}" ]; then
	seeds=("$SEED")
else
	# The fixed seed finds again what it found before; fresh ones look
	# where no run has looked.
	seeds=("$(sed -n 's/^seed = //p' "$here/schemathesis.toml")")
	for _ in $(seq 1 "${FRESH_SEEDS:-2}"); do
		seeds+=("$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')")
	done
fi

failed=()
for seed in "${seeds[@]}"; do
	echo "schemathesis: seed $seed (replay: make schemathesis SEED=$seed)" >&2
	run_seed "$seed" "$@" || failed+=("$seed")
done
if [ ${#failed[@]} -gt 0 ]; then
	fail "failures with seeds ${failed[*]} of ${seeds[*]}; replay one with: make schemathesis SEED=N"
fi
echo "schemathesis: no failures with seeds ${seeds[*]}" >&2
