#!/usr/bin/env bash
# Builds the console from src/ into the directory given (pkg/console/dist by
# default) with the esbuild of package-lock.json: one JavaScript bundle, one
# stylesheet and the page. The output depends only on the sources and the
# lockfile, so a rebuild of an unchanged tree gives the same bytes.
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-../pkg/console/dist}
mkdir -p "$out"
esbuild=node_modules/.bin/esbuild
"$esbuild" src/main.js --bundle --minify --format=esm --target=es2020 --legal-comments=eof \
	--log-level=warning --outfile="$out/app.js"
"$esbuild" src/app.css --bundle --minify --log-level=warning --outfile="$out/app.css"
cp src/index.html "$out/index.html"
