#!/usr/bin/env bash
# The README's `go install` line on a clean machine, offline: a fresh clone of
# HEAD, an empty GOPATH, GOBIN and module cache in a temp directory, modules
# served from this machine's module cache as a file:// proxy (what the Go module
# proxy would serve; nothing else is reached). Checks, each with its own GOPATH:
#   1. in the clone, GOFLAGS=-mod=mod go install ./cmd/simbench
#   2. the README's line verbatim, `go install <module>/cmd/simbench@latest`, with
#      HEAD published as a release on a local file:// proxy beside the cache
#   3. the Dockerfile's build command (static: no program interpreter, no shared
#      libraries), since `docker build` needs an engine this machine may not have
# and that every binary runs (`simbench --help`). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
module=$(go list -m)
line=$(grep -o "go install ${module}/cmd/simbench@latest" README.md | head -1)
[ -n "$line" ] || { echo "check_install: README.md has no 'go install ${module}/cmd/simbench@latest' line" >&2; exit 1; }
cache=$(go env GOMODCACHE)/cache/download
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

clean_env() { # a fresh GOPATH (module cache, GOBIN) under $tmp/$1
	export GOPATH="$tmp/$1/gopath" GOBIN="$tmp/$1/bin" GOMODCACHE="$tmp/$1/gopath/pkg/mod"
	export GOPROXY="file://$tmp/proxy,file://$cache" GOSUMDB=off GOTOOLCHAIN=local GOFLAGS=
	mkdir -p "$GOPATH" "$GOBIN"
}
runs() { "$1" --help >/dev/null || { echo "check_install: $1 --help failed" >&2; exit 1; }; echo "check_install: ok: $2 → $1"; }

git clone -q "$repo" "$tmp/clone"
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
	echo "check_install: note: uncommitted changes are not in the clone (HEAD is checked)"

# 1. from the clean clone, against the local module
(cd "$tmp/clone" && clean_env local && GOFLAGS=-mod=mod go install ./cmd/simbench && runs "$GOBIN/simbench" "GOFLAGS=-mod=mod go install ./cmd/simbench")

# 2. the README's line: HEAD as release v0.0.1 of the module on a file:// proxy
v=v0.0.1 at="$tmp/proxy/$module/@v"
mkdir -p "$at"
echo "$v" >"$at/list"
printf '{"Version":"%s","Time":"%s"}\n' "$v" "$(git -C "$tmp/clone" log -1 --format=%cI)" >"$at/$v.info"
cp "$tmp/clone/go.mod" "$at/$v.mod"
git -C "$tmp/clone" archive --format=zip --prefix="$module@$v/" -o "$at/$v.zip" HEAD
(cd "$tmp" && clean_env remote && eval "$line" && runs "$GOBIN/simbench" "$line")

# 3. the Dockerfile's build command, run as its RUN line has it
build=$(grep -o 'CGO_ENABLED=0 go build .*' "$tmp/clone/Dockerfile" | sed "s| -o /out/simbench | -o $tmp/static/simbench |")
(cd "$tmp/clone" && clean_env docker && eval "$build")
if readelf -lW "$tmp/static/simbench" | grep -q INTERP || readelf -dW "$tmp/static/simbench" | grep -q NEEDED; then
	echo "check_install: the Dockerfile's binary is not static:" >&2; readelf -lW "$tmp/static/simbench" | grep -A1 INTERP >&2; exit 1
fi
runs "$tmp/static/simbench" "the Dockerfile's static build ($build)"
