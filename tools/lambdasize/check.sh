#!/usr/bin/env bash
# Fails when a function's bootstrap in a sam build directory is over 40 MB
# (40,000,000 bytes), the most any cardflow Lambda function may weigh, and
# names the largest function either way.
set -euo pipefail
dir=${1:-.aws-sam/build}
limit=40000000
status=0 largest=0 largest_name=
for f in "$dir"/*/bootstrap; do
	[ -e "$f" ] || { echo "no bootstrap files under $dir; run sam build first" >&2; exit 1; }
	size=$(stat -c %s "$f")
	name=$(basename "$(dirname "$f")")
	if ((size > limit)); then
		echo "$name: bootstrap is $size bytes, over the $limit-byte limit" >&2
		status=1
	fi
	if ((size > largest)); then largest=$size largest_name=$name; fi
done
echo "largest bootstrap: $largest_name, $largest bytes (limit $limit)"
exit $status
