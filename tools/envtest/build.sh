#!/usr/bin/env bash
# Build one Kubernetes version's envtest binaries from their Go modules (tools/envtest/<version>/:
# etcd plus every main package under its cmd/) into ${KOPF_ENVTEST_CACHE:-~/.cache/kopf/envtest}/<version>/
# (once: skipped when all are present), then print that directory.
# Usage: tools/envtest/build.sh [VERSION]   (default: the one in tools/envtest/VERSION, v1.34.4).
# `make envtest` runs it for the default version and `make envtest-sharding` for 1.37.2; it needs Go
# (at least the go directive of that version's go.mod: GOTOOLCHAIN=local) and the Go module proxy.
set -euo pipefail
export GOTOOLCHAIN=local CGO_ENABLED=0
here="$(cd "$(dirname "$0")" && pwd)"
version="${1:-$(cat "$here/VERSION")}"
version="v${version#v}"                   # v1.34.4
src="$here/${version#v}"
[ -f "$src/go.mod" ] || { echo "tools/envtest/build.sh: no tools/envtest/${version#v}/go.mod (make it with gen-gomod.sh $version)" >&2; exit 1; }
cache="${KOPF_ENVTEST_CACHE:-$HOME/.cache/kopf/envtest}"
out="$cache/${version#v}"
cmds=()
for d in "$src"/cmd/*/; do cmds+=("$(basename "$d")"); done
bins=(etcd "${cmds[@]}")

present=1
for b in "${bins[@]}"; do [ -x "$out/$b" ] || present=0; done
if [ "$present" = 1 ]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "tools/envtest/build.sh: Go is not installed (needed to build $version)" >&2; exit 1; }
major="${version#v}"; major="${major%%.*}"
minor="${version#v*.}"; minor="${minor%%.*}"
stamp=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  stamp+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  stamp+=" -X $pkg.gitCommit=unknown -X $pkg.gitTreeState=clean"
  stamp+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
tmp="$(mktemp -d "$cache/.build-XXXXXX" 2>/dev/null || { mkdir -p "$cache"; mktemp -d "$cache/.build-XXXXXX"; })"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "building $version (${bins[*]}) into $out (the first build takes long; see README)" >&2
(cd "$src" && go build -trimpath -ldflags "-s -w$stamp" -o "$tmp/" "${cmds[@]/#/./cmd/}")
(cd "$src/etcd" && go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" .)
echo "built in $((SECONDS - start)) s" >&2
mkdir -p "$out"
for b in "${bins[@]}"; do mv -f "$tmp/$b" "$out/$b"; done
echo "$out"
