#!/usr/bin/env bash
# Every attack script of this folder under peakrss.sh, one fresh server each,
# and a table of the server's peak resident memory per attack:
#
#   tools/attacks/all.sh            # every attack
#   tools/attacks/all.sh cel-       # those whose name starts with cel-
#
# Each attack's own output goes to $OUT (default bench/attacks)/NAME.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$root/bench/attacks}
mkdir -p "$out"
printf '%-24s %8s  %s\n' attack "peak MB" status
for script in "$here"/"${1:-}"*.sh; do
	name=$(basename "$script" .sh)
	case $name in all | peakrss | cel-common) continue ;; esac
	env=()
	# step-addresses plays a deployment that lets workflows call loopback.
	[ "$name" = step-addresses ] && env=(CARDFLOW_OUTBOUND_ALLOW=127.0.0.1)
	if [ "$name" = link-replay ]; then
		# It serves on its own and reads the server's I/O, not its memory.
		env "${env[@]}" "$script" >"$out/$name.txt" 2>&1
		printf '%-24s %8s  %s\n' "$name" - "exit $?"
		continue
	fi
	env "${env[@]}" "$here/peakrss.sh" "$script" >"$out/$name.txt" 2>&1
	rc=$?
	mb=$(sed -n 's/^server peak RSS: \([0-9]*\) MB.*/\1/p' "$out/$name.txt")
	printf '%-24s %8s  %s\n' "$name" "${mb:--}" "exit $rc"
done
