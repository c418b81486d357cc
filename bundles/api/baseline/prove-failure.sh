#!/bin/sh
# Proves that the baseline check fails an incompatible API change made without a version bump: builds a copy of
# bundles/api in which the public method Mbeans.objectName(String, String...) is removed and the package version
# is left as it is, and succeeds only if that build fails with bnd's baseline report.
#
# Usage: bundles/api/baseline/prove-failure.sh [maven options, e.g. -o -Dmaven.repo.local=/path/to/repo]
# Exit status: 0 when the copy's build failed on the baseline (the report is printed), 1 otherwise.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bundles"
cp "$root/pom.xml" "$work/pom.xml"
cp -R "$root/.mvn" "$work/.mvn"
cp -R "$root/bundles/api" "$work/bundles/api"
rm -rf "$work/bundles/api/target"
src="$work/bundles/api/src/main/java/io/npulifecycle/api/management/Mbeans.java"
# the method: from its signature line to the first line that closes it at member indentation
awk '
  /^    public static String objectName\(String type, String\.\.\. keyValues\) \{$/ { skip = 1; found = 1; next }
  skip && /^    }$/ { skip = 0; next }
  !skip { print }
  END { if (!found) exit 3 }
' "$root/bundles/api/src/main/java/io/npulifecycle/api/management/Mbeans.java" > "$src" || {
  echo "prove-failure: Mbeans.objectName(String, String...) not found in $src: update this script" >&2
  exit 1
}
echo "prove-failure: building a copy of bundles/api without Mbeans.objectName(String, String...) in $work"
if mvn -B "$@" -f "$work/bundles/api/pom.xml" verify > "$work/build.log" 2>&1; then
  echo "prove-failure: FAILED: the build of the copy passed; the baseline check did not catch the removal" >&2
  exit 1
fi
if ! grep -q "Baseline problems detected" "$work/build.log"; then
  echo "prove-failure: FAILED: the build of the copy failed, but not on the baseline:" >&2
  tail -40 "$work/build.log" >&2
  exit 1
fi
sed -n '/Baseline problems detected/,/^\[ERROR\] *$/p' "$work/build.log" | grep -v '^\[ERROR\] *$'
echo "prove-failure: OK: the incompatible change without a version bump failed the build"
