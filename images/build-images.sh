#!/usr/bin/env bash
# Builds the node-agent and control-plane images for linux/amd64 and linux/arm64 without a container daemon, as OCI
# archives (an OCI image layout in a tar, `skopeo copy oci-archive:<file> docker://<ref>` pushes one):
#
#   <out>/npu-lifecycle-<image>-<version>-linux-<arch>.oci.tar    image = node-agent | control-plane, arch = amd64 | arm64
#   <out>/npu-lifecycle-<image>-<version>.oci.tar    both architectures under one tag (an OCI image index)
#   <out>/images.txt              every image reference the chart uses by default, one a line (for mirroring)
#   <out>/images-digests.txt      the same images pinned by digest, "<registry>/npu-lifecycle/<image>@sha256:<hex>" a
#                                 line: the digest of the multi-architecture index, which `skopeo copy --all` keeps
#                                 (the value of the chart's <image>.image.digest)
#   <out>/base-<arch>.packages    the Debian packages of the base, "name version" a line
#
#   build-images.sh <distribution tarball> <version> <out dir> <registry> <source date epoch> [skip] [arches]
#
# Layers, bottom up: the base (Debian bookworm made by mmdebstrap from Debian's packages: openjdk-17-jre-headless,
# curl, ca-certificates, util-linux for nsenter; the Java trust store rewritten reproducibly and the user
# npu-lifecycle, uid 10001, by base-customize.sh); the application (/opt/npu-lifecycle from the distribution tarball,
# without lib/harness and conf/helm/simulator-values.yaml: the simulator harness is for demo and scenario, never in a production image); the runtime home
# /var/lib/npu-lifecycle (root for the node agent; uid 10001, mode 0700, for the control plane). umoci assembles the
# OCI layout (`raw add-layer`, `config`, `gc`). Every time in a layer and in the image configuration is the source
# date epoch, every owner numeric, every tar sorted: the same tarball and the same base give the same digests.
#
# The base of an architecture is built once and kept in
#   ${NPU_IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-lifecycle/images}/base-<arch>-<key>/
# (an OCI layout holding the base layer alone), where <key> is the first 12 hex digits of the sha256 of everything the
# base is made from (suite, mirrors, packages, mmdebstrap options, the epoch, base-customize.sh): a warm build only
# adds the two small layers. The base takes Debian's current package versions when it is built; delete its folder to
# take newer ones (security updates). A foreign architecture's maintainer scripts run under qemu-user-static through
# binfmt_misc, which this script mounts and registers when the machine allows it.
#
# skip=true: nothing is built, <out>/images.error says so. Missing tools are installed with apt-get when the script
# runs as root on Debian (skopeo, umoci, mmdebstrap, jq, arch-test, qemu-user-static); when they cannot be, or a foreign
# architecture cannot run, <out>/images.error names what to install or enable and the script exits 0, so that the
# build goes on and the image tests fail with that message. A failing step of a build that could run exits non-zero.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
usage="usage: build-images.sh <distribution tarball> <version> <out dir> <registry> <source date epoch> [skip] [arches]"
tarball=${1:?$usage}
version=${2:?$usage}
out=${3:?$usage}
registry=${4?$usage}
epoch=${5:?$usage}
skip=${6:-false}
arches=${7:-amd64 arm64}
cache=${NPU_IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-lifecycle/images}
suite=bookworm
mirrors=("deb http://deb.debian.org/debian $suite main" "deb http://deb.debian.org/debian $suite-updates main"
  "deb http://deb.debian.org/debian-security $suite-security main")
packages=openjdk-17-jre-headless,ca-certificates,ca-certificates-java,curl,util-linux
images=(node-agent control-plane)

mkdir -p "$out"
rm -f "$out/images.error"
soft_fail() {
  echo "[ERROR] $1" >&2
  printf '%s\n' "$1" > "$out/images.error"
  exit 0
}
if [ "$skip" = true ]; then
  printf '%s\n' "the image build was skipped (-Dnpu.images.skip=true): no images in $out" > "$out/images.error"
  echo "images: skipped (-Dnpu.images.skip=true)"
  exit 0
fi
[ -f "$tarball" ] || { echo "build-images.sh: no distribution tarball at $tarball" >&2; exit 1; }
case "$epoch" in ''|*[!0-9]*) echo "build-images.sh: the source date epoch must be seconds since 1970, not '$epoch'" >&2; exit 1 ;; esac
iso=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

# ---- tools ----
qemu_arch() { case "$1" in amd64) echo x86_64 ;; arm64) echo aarch64 ;; *) echo "$1" ;; esac; }
host_arch=$(dpkg --print-architecture 2>/dev/null || echo unknown)
need=()
for t in umoci mmdebstrap skopeo jq; do command -v "$t" >/dev/null 2>&1 || need+=("$t"); done
foreign=false
for a in $arches; do
  if [ "$a" != "$host_arch" ]; then
    foreign=true
    command -v "qemu-$(qemu_arch "$a")-static" >/dev/null 2>&1 || need+=(qemu-user-static)
  fi
done
if [ "$foreign" = true ] && ! command -v arch-test >/dev/null 2>&1; then need+=(arch-test); fi
if [ ${#need[@]} -gt 0 ]; then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "images: installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null; } \
      || soft_fail "apt-get could not install ${need[*]} for the image build (images/build-images.sh)"
  else
    soft_fail "the image build needs ${need[*]} (Debian: apt-get install ${need[*]}); install them, or build with \
-Dnpu.images.skip=true to leave the images out"
  fi
fi

# A foreign architecture runs through binfmt_misc (qemu-user-static's F flag: the interpreter is opened at
# registration, so it also works inside a chroot). Registered here when the kernel has binfmt_misc but nothing
# registered it (no systemd-binfmt in a container).
enable_foreign() {
  local a=$1 q conf
  arch-test "$a" >/dev/null 2>&1 && return 0
  q=$(qemu_arch "$a")
  if [ "$(id -u)" = 0 ]; then
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
    conf=/usr/lib/binfmt.d/qemu-$q.conf
    if [ -e /proc/sys/fs/binfmt_misc/register ] && [ ! -e "/proc/sys/fs/binfmt_misc/qemu-$q" ] && [ -f "$conf" ]; then
      cat "$conf" > /proc/sys/fs/binfmt_misc/register 2>/dev/null || true
    fi
  fi
  arch-test "$a" >/dev/null 2>&1
}

# ---- the base of one architecture, cached ----
mmdebstrap_opts=(--variant=essential --include="$packages" --skip=output/dev
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*')
base_key() {
  { printf '%s\n' "$1" "$suite" "$packages" "$epoch" "${mirrors[@]}" "${mmdebstrap_opts[@]}"; cat "$here/base-customize.sh"; } \
    | sha256sum | cut -c1-12
}
# Only a base still to be built runs foreign programs: a warm build of a foreign architecture needs no binfmt_misc.
for a in $arches; do
  if [ "$a" != "$host_arch" ] && [ ! -f "$cache/base-$a-$(base_key "$a")/complete" ] && ! enable_foreign "$a"; then
    soft_fail "this machine cannot run $a programs (binfmt_misc with qemu-user-static), which the $a base's Debian \
maintainer scripts need: as root, 'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' and register \
/usr/lib/binfmt.d/qemu-$(qemu_arch "$a").conf (or systemctl restart systemd-binfmt), or build with -Dnpu.images.skip=true"
  fi
done

# Prints the folder of the base layout of architecture $1, building it first when missing.
base_layout() {
  local a=$1 key dir tmp mode
  key=$(base_key "$a")
  dir=$cache/base-$a-$key
  if [ -f "$dir/complete" ]; then echo "$dir"; return 0; fi
  mkdir -p "$cache"
  exec 9>"$cache/.lock-base-$a-$key"
  flock 9   # another build of the same base (a parallel Maven build) finishes it first
  if [ -f "$dir/complete" ]; then exec 9>&-; echo "$dir"; return 0; fi
  tmp=$(mktemp -d "$cache/.tmp-base-$a-XXXXXX")
  mode=root; [ "$(id -u)" = 0 ] || mode=unshare
  echo "images: building the $a base from Debian $suite packages (once; kept in $dir)" >&2
  if ! SOURCE_DATE_EPOCH=$epoch mmdebstrap --quiet --mode="$mode" --arch="$a" "${mmdebstrap_opts[@]}" \
      --setup-hook='mkdir -p "$1/usr/share/man/man1"' \
      --customize-hook="'$here/base-customize.sh' \"\$1\" $a" \
      --customize-hook="dpkg-query --admindir=\"\$1/var/lib/dpkg\" -W -f '\${Package} \${Version}\n' > '$tmp/packages'" \
      "$suite" "$tmp/rootfs.tar" "${mirrors[@]}" >&2; then
    rm -rf "$tmp"
    echo "build-images.sh: mmdebstrap could not build the $a base (output above)" >&2
    return 1
  fi
  umoci init --layout "$tmp/layout"
  umoci new --image "$tmp/layout:base"
  umoci raw add-layer --image "$tmp/layout:base" --history.created "$iso" \
    --history.created_by "mmdebstrap --variant=essential $suite ($a): ${packages//,/ }" "$tmp/rootfs.tar"
  umoci gc --layout "$tmp/layout"
  rm -f "$tmp/rootfs.tar"
  rm -rf "$dir"
  mv "$tmp/layout" "$dir"
  mv "$tmp/packages" "$dir/packages"
  rm -rf "$tmp"
  touch "$dir/complete"
  exec 9>&-
  echo "$dir"
}

# ---- the application layers ----
work=$(mktemp -d "${TMPDIR:-/tmp}/npu-lifecycle-images-XXXXXX")
trap 'rm -rf "$work"' EXIT
reproducible_tar() {   # reproducible_tar <archive> <dir> <owner> <members...>
  local archive=$1 dir=$2 owner=$3; shift 3
  tar --create --file "$archive" --directory "$dir" --sort=name --format=posix \
    --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' --mtime="@$epoch" \
    --owner="$owner" --group="$owner" --numeric-owner "$@"
}
mkdir -p "$work/app/opt"
tar -xzpf "$tarball" -C "$work/app/opt"
[ -x "$work/app/opt/npu-lifecycle/bin/npu-lifecycle" ] || { echo "build-images.sh: $tarball has no npu-lifecycle/bin/npu-lifecycle" >&2; exit 1; }
rm -rf "$work/app/opt/npu-lifecycle/lib/harness"
# test tooling too: the chart's values for a test machine's real node (the simulator instead of NPUs)
rm -f "$work/app/opt/npu-lifecycle/conf/helm/simulator-values.yaml"
chmod 0755 "$work/app/opt"
(umask 022; reproducible_tar "$work/app.tar" "$work/app" 0 opt)
for image in "${images[@]}"; do
  mkdir -p "$work/home-$image/var/lib/npu-lifecycle"
  owner=0; mode=0755
  if [ "$image" = control-plane ]; then owner=10001; mode=0700; fi
  chmod "$mode" "$work/home-$image/var/lib/npu-lifecycle"
  reproducible_tar "$work/home-$image.tar" "$work/home-$image" "$owner" --no-recursion var/lib/npu-lifecycle
done

# ---- the images ----
# the bases of the architectures at the same time (a cold build: downloads beside the other architecture's qemu work)
pids=()
for a in $arches; do base_layout "$a" >/dev/null & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || { echo "build-images.sh: a base could not be built (output above)" >&2; exit 1; }; done
rm -f "$out"/npu-lifecycle-*.oci.tar "$out"/base-*.packages "$out/images.txt" "$out/images-digests.txt"
for a in $arches; do
  base=$(base_layout "$a")
  cp "$base/packages" "$out/base-$a.packages"
  for image in "${images[@]}"; do
    layout=$work/layout-$image-$a
    # the base's blobs are hard links (umoci never rewrites a blob: it writes new ones and gc unlinks), the files
    # umoci rewrites are copies
    mkdir "$layout"
    cp -al "$base/blobs" "$layout/blobs"
    cp "$base/index.json" "$base/oci-layout" "$layout/"
    ref=$layout:base
    umoci raw add-layer --image "$ref" --history.created "$iso" \
      --history.created_by "npu-lifecycle $version: /opt/npu-lifecycle (the distribution without lib/harness)" "$work/app.tar"
    umoci raw add-layer --image "$ref" --history.created "$iso" \
      --history.created_by "the runtime home /var/lib/npu-lifecycle" "$work/home-$image.tar"
    if [ "$image" = control-plane ]; then
      user=10001:10001; role=control-plane
      title="npu-lifecycle control plane (upgrade orchestrator, uninstall)"
    else
      user=0:0; role=node
      title="npu-lifecycle node agent (health-watch, markers, rebooter, driver, node sync)"
    fi
    umoci config --image "$ref" --tag "$version" --no-history --created "$iso" --os linux --architecture "$a" \
      --author "npu-lifecycle" --config.user "$user" \
      --config.env "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
      --config.env "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-$a" --config.env "LANG=C.UTF-8" \
      --config.env "NPU_LIFECYCLE_HOME=/var/lib/npu-lifecycle" \
      --config.entrypoint /opt/npu-lifecycle/bin/npu-lifecycle \
      --config.cmd "$role" --config.cmd --no-shell --config.cmd --home --config.cmd /var/lib/npu-lifecycle \
      --config.label "org.opencontainers.image.title=npu-lifecycle/$image" \
      --config.label "org.opencontainers.image.description=$title" \
      --config.label "org.opencontainers.image.version=$version" \
      --config.label "org.opencontainers.image.base.name=debian:$suite (mmdebstrap, Debian packages)"
    umoci rm --image "$ref"
    umoci gc --layout "$layout"
    find "$layout" -type d -exec chmod 0755 {} +
    find "$layout" -type f -exec chmod 0644 {} +
    file=$out/npu-lifecycle-$image-$version-linux-$a.oci.tar
    reproducible_tar "$file.tmp" "$layout" 0 .
    mv "$file.tmp" "$file"
    echo "images: $file"
  done
done

# ---- one multi-architecture archive per image ----
# The per-architecture layouts' blobs (hard links) and an OCI image index naming each manifest with its platform,
# tagged <version>: `skopeo copy --all oci-archive:<file> docker://<ref>` pushes one tag that serves every node. The
# index is the one JSON written here (umoci and skopeo 1.9 make no index); jq writes it compactly, in the order of
# the architectures, so it is reproducible too.
for image in "${images[@]}"; do
  multi=$work/multi-$image
  mkdir -p "$multi/blobs/sha256"
  entries=()
  for a in $arches; do
    layout=$work/layout-$image-$a
    for f in "$layout"/blobs/sha256/*; do ln -f "$f" "$multi/blobs/sha256/"; done
    entries+=("$(jq -c --arg a "$a" '.manifests[0] | {mediaType, digest, size, platform: {architecture: $a, os: "linux"}}' "$layout/index.json")")
  done
  printf '%s\n' "${entries[@]}" | jq -c -s '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: .}' \
    | tr -d '\n' > "$work/index-$image.json"
  digest=$(sha256sum "$work/index-$image.json" | cut -d' ' -f1)
  printf '%s\n' "${registry:+$registry/}npu-lifecycle/$image@sha256:$digest" >> "$work/digests.txt"
  size=$(stat -c %s "$work/index-$image.json")
  cp "$work/index-$image.json" "$multi/blobs/sha256/$digest"
  cp "$work/layout-$image-${arches%% *}/oci-layout" "$multi/oci-layout"
  jq -n -c --arg d "sha256:$digest" --argjson s "$size" --arg v "$version" \
    '{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.index.v1+json", digest: $d, size: $s,
      annotations: {"org.opencontainers.image.ref.name": $v}}]}' | tr -d '\n' > "$multi/index.json"
  find "$multi" -type d -exec chmod 0755 {} +
  find "$multi" -type f -exec chmod 0644 {} +
  file=$out/npu-lifecycle-$image-$version.oci.tar
  reproducible_tar "$file.tmp" "$multi" 0 .
  mv "$file.tmp" "$file"
  rm -rf "$multi"
  echo "images: $file (${arches// /, })"
done
{
  for image in "${images[@]}"; do
    printf '%s\n' "${registry:+$registry/}npu-lifecycle/$image:$version"
  done
} > "$out/images.txt"
cp "$work/digests.txt" "$out/images-digests.txt"
echo "images: $out/images.txt, $out/images-digests.txt"
