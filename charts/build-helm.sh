#!/usr/bin/env bash
# Builds helm (the Go module helm.sh/helm/v4 at $HELM_VERSION) from source into
#   ${NPU_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-lifecycle/helm}/<version>/helm
# and prints the binary's path on stdout (the last line; progress goes to stderr). A binary already there is used as
# it is: nothing is rebuilt, nothing is downloaded. Idempotent; one build at a time (flock), so concurrent builds
# (two Maven modules, two worktrees) wait for each other and then find the binary.
#
#   build-helm.sh [properties file]
#
# With a properties file, also writes npu.helm=<path> into it (the manifests tests read it: Manifests#helm).
# Needs Go >= 1.26 (helm v4.3.2's go.mod says go 1.26.0; /usr/local/go/bin is searched when no go is on PATH) and, for a first build, the
# Go module proxy (or a filled GOMODCACHE / GOFLAGS=-mod=mod with GOPROXY=off). Errors: no usable Go, or a failing
# `go build`, exit non-zero with a message naming what to install.
set -euo pipefail

HELM_VERSION=v4.3.2
out=${1:-}
root=${NPU_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-lifecycle/helm}
dir="$root/$HELM_VERSION"
bin="$dir/helm"

write_properties() {
  if [ -n "$out" ]; then
    mkdir -p "$(dirname "$out")"
    printf 'npu.helm=%s\nnpu.helm.version=%s\n' "$bin" "$HELM_VERSION" > "$out"
  fi
  echo "$bin"
}

if [ -x "$bin" ]; then
  write_properties
  exit 0
fi

mkdir -p "$root"
exec 9>"$root/.build.lock"
flock 9   # another build may have finished meanwhile
if [ -x "$bin" ]; then
  write_properties
  exit 0
fi

PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { echo "[ERROR] building helm $HELM_VERSION needs Go >= 1.26 and there is no 'go' on PATH \
nor in /usr/local/go/bin: install the upstream Go release tarball into /usr/local/go, then build again" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

tmp=$(mktemp -d "$root/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
echo "[INFO] building helm $HELM_VERSION with $(go env GOVERSION) into $dir (a first build downloads and compiles for minutes)" >&2
start=$(date +%s)
go mod init npu-lifecycle.local/helm-build >/dev/null 2>&1
go get "helm.sh/helm/v4@$HELM_VERSION" >&2
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
go build -trimpath -ldflags "$ldflags" -o "$tmp/helm" helm.sh/helm/v4/cmd/helm >&2
"$tmp/helm" version >&2
mkdir -p "$dir"
mv "$tmp/helm" "$bin.tmp.$$"
mv "$bin.tmp.$$" "$bin"
echo "[INFO] helm built in $(( $(date +%s) - start )) s" >&2
write_properties
