#!/usr/bin/env bash
# Builds the tablestore container image from this checkout: a static
# binary and deploy/Containerfile, with podman (or docker when podman is
# missing). Usage: deploy/build-image.sh [TAG]   (default tablestore:dev)
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-tablestore:dev}
engine=podman
command -v podman >/dev/null || engine=docker
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$ctx/tablestore" ./cmd/tablestore
mkdir "$ctx/data"
"$engine" build -f deploy/Containerfile -t "$tag" "$ctx"
"$engine" image inspect "$tag" --format '{{.Config.User}} {{.Config.Volumes}} {{.Config.ExposedPorts}}'
