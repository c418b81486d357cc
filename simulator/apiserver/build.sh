#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, etcd, pki, kubenode and pause
# (this Go module) from source into
#   ${NPU_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-lifecycle/kube}/<k8s version>-<hash>/
# where <hash> is the first 12 hex digits of the sha256 of go.mod, go.sum, every .go file, this script and the list of
# binaries (so a folder built for another set of binaries is never taken for this one), and
# writes a Java properties file naming that folder (npu.kube.bin) for the tests (RealApiServer in simulator/cluster).
# A folder that is already complete is used as it is: nothing is rebuilt.
#
#   build.sh <properties file> [skip]
#
# skip=true, or no Go >= 1.26 on PATH: nothing is built, the properties file carries npu.kube.bin.error instead (the
# message says what to install) and the script exits 0, so that the build goes on and every real-server test fails
# with that message. A failing `go build` exits non-zero.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh <properties file> [skip]}
skip=${2:-false}
mkdir -p "$(dirname "$out")"

soft_fail() {
  echo "[ERROR] $1" >&2
  printf 'npu.kube.bin.error=%s\n' "$1" > "$out"
  exit 0
}

if [ "$skip" = true ]; then
  # a package build without tests (the README's demo command): nothing is wrong, so nothing is said at ERROR
  printf 'npu.kube.bin.error=%s\n' "the kube-apiserver build was skipped (-Dnpu.kube.skip=true): real-server tests cannot run" > "$out"
  exit 0
fi

need="Go >= 1.26 is needed to build kube-apiserver and etcd from source (simulator/apiserver/go.mod)"
command -v go >/dev/null 2>&1 || soft_fail "$need, and there is no 'go' on PATH: install Go 1.26 or later \
(apt-get install golang-go where the distribution ships >= 1.26; Debian 12 ships 1.19, too old: use the upstream \
release tarball in /usr/local/go), then build again"
export GOTOOLCHAIN=local   # never fetch another toolchain: the installed one must do
goversion=$(go env GOVERSION)
minor=$(printf '%s\n' "$goversion" | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
if [ -z "$minor" ] || [ "$minor" -lt 26 ]; then
  soft_fail "$need, and PATH has $goversion ($(command -v go)): install Go 1.26 or later, then build again"
fi

cd "$here"
# every binary the folder must hold: a folder without one of them is not complete and is rebuilt
binaries="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy etcd pki kubenode pause"
# static (no cgo): pause runs alone in its image; kubenode and pki need nothing but the standard library
static="pki kubenode pause"
k8s=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' go.mod)
[ -n "$k8s" ] || { echo "[ERROR] go.mod does not require k8s.io/kubernetes" >&2; exit 1; }
hash=$( { { echo go.mod; echo go.sum; echo build.sh; find . -name '*.go'; } | LC_ALL=C sort | xargs sha256sum; \
  echo "$binaries"; } | sha256sum | cut -c1-12)
root=${NPU_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-lifecycle/kube}
dir="$root/$k8s-$hash"

write_properties() {
  printf 'npu.kube.bin=%s\nnpu.kube.version=%s\n' "$dir" "$k8s" > "$out"
}
complete() {
  [ -f "$dir/.complete" ] || return 1
  local b
  for b in $binaries; do [ -x "$dir/$b" ] || return 1; done
}

if complete; then
  echo "[INFO] $binaries ($k8s) are up to date in $dir"
  write_properties
  exit 0
fi

mkdir -p "$root"
exec 9>"$root/.build.lock"
flock 9   # one build at a time; another build may have finished meanwhile
if complete; then
  write_properties
  exit 0
fi

minor_k8s=$(printf '%s\n' "$k8s" | cut -d. -f2)
ldflags="-X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=$minor_k8s -X k8s.io/component-base/version.gitTreeState=clean \
-X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
echo "[INFO] building $binaries ($k8s) with $goversion into $dir (a first build takes many minutes)"
start=$(date +%s)
dynamic=$(for b in $binaries; do case " $static " in *" $b "*) ;; *) printf './cmd/%s ' "$b" ;; esac; done)
go build -trimpath -ldflags "$ldflags" -o "$tmp/" $dynamic
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/" $(for b in $static; do printf './cmd/%s ' "$b"; done)
echo "$k8s $goversion $(date -u +%FT%TZ)" > "$tmp/.complete"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "[INFO] built in $(( $(date +%s) - start )) s"
write_properties
