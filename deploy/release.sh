#!/usr/bin/env bash
# Builds every artifact a release publishes into OUTDIR, from one static
# build of cmd/tablestore per platform:
#
#   OUTDIR/tablestore_VERSION_OS_ARCH.tar.gz (.zip for windows)
#   OUTDIR/tablestore_VERSION.cdx.json     the bill of materials (CycloneDX)
#   OUTDIR/python/*.whl                    tablestore-testkit, one wheel a platform
#   OUTDIR/npm/*.tgz                       @tablestore/testkit and its platform packages
#   OUTDIR/image/tablestore_VERSION_linux_amd64.tar   (with podman or docker)
#   OUTDIR/SHA256SUMS                      every file above
#
# Usage: deploy/release.sh OUTDIR
# The version is TABLESTORE_VERSION when set, else the tag vX.Y.Z on HEAD,
# else 0.0.0-dev.gREV. TABLESTORE_PLATFORMS narrows the platforms (for a
# quick local run: "linux/amd64"); TABLESTORE_IMAGE=0 skips the image.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: deploy/release.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
root=$(pwd)

revision=$(git rev-parse HEAD)
version=${TABLESTORE_VERSION:-}
if [ -z "$version" ]; then
  tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null || true)
  if [ -n "$tag" ]; then
    version=${tag#v}
  else
    version="0.0.0-dev.g$(git rev-parse --short=7 HEAD)"
  fi
fi
platforms=${TABLESTORE_PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
# Archives carry one fixed time, so a rebuild of one commit is identical.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH=$epoch

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "release: tablestore $version ($revision) into $out"

# One build a platform; every artifact below reuses it.
ldflags="-s -w -X main.version=$version -X main.revision=$revision"
bins=()
for p in $platforms; do
  goos=${p%/*} goarch=${p#*/}
  exe=tablestore
  [ "$goos" = windows ] && exe=tablestore.exe
  mkdir -p "$work/bin/$goos-$goarch"
  echo "release: go build $goos/$goarch"
  (cd cmd/tablestore && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch \
    go build -trimpath -ldflags "$ldflags" -o "$work/bin/$goos-$goarch/$exe" .)
  bins+=("$work/bin/$goos-$goarch/$exe")
done

# Archives: the binary and the README under tablestore_VERSION_OS_ARCH/.
for p in $platforms; do
  goos=${p%/*} goarch=${p#*/}
  name=tablestore_${version}_${goos}_${goarch}
  mkdir -p "$work/archive/$name"
  cp "$work/bin/$goos-$goarch"/* README.md "$work/archive/$name/"
  touch -d "@$epoch" "$work/archive/$name" "$work/archive/$name"/*
  if [ "$goos" = windows ]; then
    rm -f "$out/$name.zip"
    (cd "$work/archive" && python3 - "$out/$name.zip" "$name"/* <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(sys.argv[2:]):
        z.write(f)
PY
    )
  else
    tar -C "$work/archive" --sort=name --owner=0 --group=0 --numeric-owner \
      --mtime="@$epoch" -cf - "$name" | gzip -n >"$out/$name.tar.gz"
  fi
done

echo "release: bill of materials"
python3 deploy/sbom.py "$version" "${bins[@]}" >"$out/tablestore_${version}.cdx.json"

echo "release: Python wheels"
mkdir -p "$out/python"
for p in $platforms; do
  python3 clients/python/build_wheel.py --version "$version" --platform "$p" \
    --binary "$work/bin/${p%/*}-${p#*/}"/tablestore* --out "$out/python"
done

echo "release: npm packages"
mkdir -p "$out/npm"
node clients/js/pack.js --version "$version" --bin-dir "$work/bin" --out "$out/npm" --work "$work/npm" $platforms

if [ "${TABLESTORE_IMAGE:-1}" != 0 ] && { command -v podman >/dev/null || command -v docker >/dev/null; } \
   && [ -f "$work/bin/linux-amd64/tablestore" ]; then
  echo "release: container image"
  mkdir -p "$out/image"
  TABLESTORE_BINARY="$work/bin/linux-amd64/tablestore" \
    TABLESTORE_IMAGE_ARCHIVE="$out/image/tablestore_${version}_linux_amd64.tar" \
    deploy/build-image.sh "tablestore:$version"
else
  echo "release: no podman or docker (or no linux/amd64 build): image skipped"
fi

(cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
echo "release: done; $(wc -l <"$out/SHA256SUMS") files in $out/SHA256SUMS"
