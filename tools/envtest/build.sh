#!/usr/bin/env bash
# Build etcd, kube-apiserver, kube-controller-manager and kubectl from their Go modules into
# ${KOPF_ENVTEST_CACHE:-~/.cache/kopf/envtest}/<version>/ (once: skipped when all are present),
# then print that directory. It is what `make envtest` runs; it needs Go and the Go module proxy.
set -euo pipefail
export GOTOOLCHAIN=local CGO_ENABLED=0
here="$(cd "$(dirname "$0")" && pwd)"
version="$(cat "$here/VERSION")"            # v1.34.4
cache="${KOPF_ENVTEST_CACHE:-$HOME/.cache/kopf/envtest}"
out="$cache/${version#v}"
bins=(etcd kube-apiserver kube-controller-manager kubectl)

present=1
for b in "${bins[@]}"; do [ -x "$out/$b" ] || present=0; done
if [ "$present" = 1 ]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "make envtest: Go is not installed (needed to build $version)" >&2; exit 1; }
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
echo "building $version into $out (the first build takes long; see README)" >&2
(cd "$here" && go build -trimpath -ldflags "-s -w$stamp" -o "$tmp/" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kubectl)
(cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" .)
echo "built in $((SECONDS - start)) s" >&2
mkdir -p "$out"
for b in "${bins[@]}"; do mv -f "$tmp/$b" "$out/$b"; done
echo "$out"
