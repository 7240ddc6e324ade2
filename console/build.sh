#!/usr/bin/env bash
# Builds the console from src/ into the directory given (pkg/console/dist by
# default) with the esbuild of package-lock.json: the JavaScript bundle
# app.js and its chunks, one stylesheet and the page. The output depends
# only on the sources and the lockfile, so a rebuild of an unchanged tree
# gives the same bytes.
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-../pkg/console/dist}
mkdir -p "$out"
esbuild=node_modules/.bin/esbuild
# Code splitting: what only one page imports dynamically (the dashboard and
# its chart library) goes into chunks/, named by content, which that page
# reads when it is opened. Chunks of an earlier build are removed first.
rm -rf "$out/chunks"
"$esbuild" src/main.js --bundle --splitting --minify --format=esm --target=es2020 --legal-comments=eof \
	--log-level=warning --outdir="$out" --entry-names=app --chunk-names='chunks/[name]-[hash]'
"$esbuild" src/app.css --bundle --minify --log-level=warning --outfile="$out/app.css"
cp src/index.html "$out/index.html"
