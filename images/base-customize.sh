#!/bin/sh
# mmdebstrap --customize-hook of the images' base (build-images.sh): runs once per architecture when the base is built,
# with the finished Debian root file system as $1 and its Debian architecture as $2. Everything here must give the same
# bytes from the same packages, so that the base layer (and the images) are reproducible.
#
#   base-customize.sh <rootfs> <arch>
#
# Exits non-zero (and mmdebstrap fails, naming this hook) when the Java trust store cannot be rewritten.
set -eu
root=${1:?usage: base-customize.sh <rootfs> <arch>}
arch=${2:?usage: base-customize.sh <rootfs> <arch>}

# The Java trust store. ca-certificates-java writes /etc/ssl/certs/java/cacerts as a JKS store, and JKS stamps every
# entry with the time it was added: two builds would differ there only. Rewritten with the image's own keytool (under
# qemu-user for a foreign architecture) as PKCS#12 without certificate encryption and without MAC, which has no time,
# salt or random IV: the same certificates give the same bytes. The JVM reads it as its default trust store
# (lib/security/cacerts is a link to it) with or without the store password.
keytool=/usr/lib/jvm/java-17-openjdk-$arch/bin/keytool
store=/etc/ssl/certs/java/cacerts
if [ ! -s "$root$store" ]; then
  echo "base-customize.sh: $store is missing or empty: ca-certificates-java did not make the Java trust store" >&2
  exit 1
fi
rm -f "$root$store.p12"
chroot "$root" "$keytool" -J-Dkeystore.pkcs12.certProtectionAlgorithm=NONE -J-Dkeystore.pkcs12.macAlgorithm=NONE \
  -importkeystore -noprompt -srckeystore "$store" -srcstoretype JKS -srcstorepass changeit \
  -destkeystore "$store.p12" -deststoretype PKCS12 -deststorepass changeit >/dev/null 2>&1 \
  || { echo "base-customize.sh: keytool could not rewrite $store as PKCS#12 (arch $arch)" >&2; exit 1; }
mv "$root$store.p12" "$root$store"
chmod 0644 "$root$store"

# The control plane's user (the Deployment's runAsUser 10001): in the base so that both images name it the same way.
# The node agent runs as root. No password (locked), no login shell; its home is the runtime home.
echo 'npu-lifecycle:x:10001:10001:npu-lifecycle:/var/lib/npu-lifecycle:/usr/sbin/nologin' >> "$root/etc/passwd"
echo 'npu-lifecycle:x:10001:' >> "$root/etc/group"
echo 'npu-lifecycle:!*:::::::' >> "$root/etc/shadow"
echo 'npu-lifecycle:!::' >> "$root/etc/gshadow"

# Files copied from the build machine or naming it: the container runtime provides /etc/hostname and /etc/resolv.conf.
rm -f "$root/etc/hostname" "$root/etc/resolv.conf" "$root/etc/machine-id" "$root/var/lib/dbus/machine-id"
