#!/bin/sh
# Adds the API bundle as built from the current sources to this baseline repository as release VERSION, and removes
# the older baselines. Run it when the API as it is now becomes the reference, i.e. after a release.
#
# Usage: bundles/api/baseline/refresh.sh VERSION [maven options, e.g. -Dmaven.repo.local=/path/to/repo]
#   VERSION: a release version above every version already here and below the project version (0.0.1, 0.0.2,
#   ...): a version is never replaced in place, because every local Maven repository keeps the copy it resolved.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 VERSION [maven options]" >&2; exit 2; }
version=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dir="$here/io/npulifecycle/io.npulifecycle.api"
if [ -e "$dir/$version" ]; then
  echo "refresh: $version is already in $here; choose a higher version" >&2
  exit 2
fi
mvn -B -q "$@" -f "$root/pom.xml" -pl bundles/api -Dbnd.baseline.skip=true package
jar=$(ls "$root"/bundles/api/target/io.npulifecycle.api-*.jar | grep -v -e sources -e javadoc | head -1)
pom=$(mktemp)
trap 'rm -f "$pom"' EXIT
cat > "$pom" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.npulifecycle</groupId>
  <artifactId>io.npulifecycle.api</artifactId>
  <version>$version</version>
  <packaging>jar</packaging>
  <description>Baseline of the API bundle for bnd-baseline-maven-plugin (never a dependency): see bundles/api/baseline/README.md.</description>
</project>
POM
for old in "$dir"/*/; do
  [ -d "$old" ] && rm -rf "$old"
done
rm -f "$dir"/maven-metadata.xml*
mvn -B -q "$@" org.apache.maven.plugins:maven-deploy-plugin:3.1.3:deploy-file -Dfile="$jar" -DpomFile="$pom" \
  -Durl="file://$here" -DrepositoryId=npu-lifecycle-api-baseline
echo "refresh: $jar is now the baseline io.npulifecycle:io.npulifecycle.api:$version in $here"
