#!/usr/bin/env bash
# Builds the tablestore container image from this checkout: a static
# binary and deploy/Containerfile, with podman (or docker when podman is
# missing). Usage: deploy/build-image.sh [TAG]   (default tablestore:dev)
# TABLESTORE_BINARY names a linux/amd64 binary built already (release.sh
# passes its own) instead of building one; TABLESTORE_IMAGE_ARCHIVE
# names a file to save the image into (docker-archive).
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-tablestore:dev}
engine=podman
command -v podman >/dev/null || engine=docker
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
if [ -n "${TABLESTORE_BINARY:-}" ]; then
  cp "$TABLESTORE_BINARY" "$ctx/tablestore"
else
  CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$ctx/tablestore" ./cmd/tablestore
fi
mkdir "$ctx/data"
# The docker format keeps HEALTHCHECK, which OCI's has no field for.
format=()
[ "$engine" = podman ] && format=(--format docker)
"$engine" build "${format[@]}" -f deploy/Containerfile -t "$tag" "$ctx"
"$engine" image inspect "$tag" --format '{{.Config.User}} {{.Config.Volumes}} {{.Config.ExposedPorts}} {{.Config.Healthcheck}}'
echo "image $tag: $("$engine" image inspect "$tag" --format '{{.Size}}') bytes"
if [ -n "${TABLESTORE_IMAGE_ARCHIVE:-}" ]; then
  rm -f "$TABLESTORE_IMAGE_ARCHIVE"
  "$engine" save -o "$TABLESTORE_IMAGE_ARCHIVE" "$tag"
fi
