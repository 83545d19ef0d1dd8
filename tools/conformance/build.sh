#!/usr/bin/env bash
# Build Kubernetes' e2e.test (the apimachinery suite only: conformance_test.go) at the version of the envtest
# binaries into ${KOPF_ENVTEST_CACHE:-~/.cache/kopf/envtest}/<version>/e2e.test (once: skipped when present),
# then print its path. It is what `make conformance` runs first; it needs Go and the Go module proxy.
set -euo pipefail
export GOTOOLCHAIN=local CGO_ENABLED=0
here="$(cd "$(dirname "$0")" && pwd)"
version="$(cat "$here/../envtest/VERSION")"   # v1.34.4: the same as the API server it tests
cache="${KOPF_ENVTEST_CACHE:-$HOME/.cache/kopf/envtest}"
out="$cache/${version#v}/e2e.test"
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null || { echo "make conformance: Go is not installed (needed to build e2e.test $version)" >&2; exit 1; }
grep -q "k8s.io/kubernetes $version" "$here/go.mod" || { echo "tools/conformance/go.mod is not at $version" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tmp="$(mktemp "$out.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
start=$SECONDS
echo "building e2e.test $version into $out (a warm Go build cache: about 6 minutes)" >&2
(cd "$here" && nice -n 10 go test -c -trimpath -ldflags "-s -w" -o "$tmp" .)
echo "built in $((SECONDS - start)) s" >&2
mv -f "$tmp" "$out"
echo "$out"
