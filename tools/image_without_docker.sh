#!/usr/bin/env bash
# Build the Dockerfile's image where there is no Docker engine and no container registry is reachable (Debian
# bookworm as root; Debian's package mirror and PyPI reachable), and leave it in podman's store as
# localhost/kai-gitops:<version>, which tests/real/test_image_run.py runs with a read-only root filesystem.
#
#   apt-get install -y --no-install-recommends buildah podman runc debootstrap uidmap fuse-overlayfs
#   tools/image_without_docker.sh
#
# The base: no registry serves python:3.11-slim-bookworm here, so debootstrap makes a bookworm root filesystem
# with Debian's python3.11 and pip, imported as localhost/debian-python:3.11-bookworm and passed as the
# Dockerfile's PYTHON_IMAGE build argument; the Dockerfile itself is built unchanged (buildah, chroot isolation).
# Debian marks its Python "externally managed" (PEP 668); the official image does not, so neither does the
# stand-in. The host's CA bundle is copied in so pip trusts what the host trusts (a TLS-intercepting proxy).
# Run it with podman's runc: crun refuses this machine's hybrid cgroup layout.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${KAI_GITOPS_IMAGE_WORK:-/var/tmp/kai-gitops-image}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/pyproject.toml" | head -1)"
base=localhost/debian-python:3.11-bookworm
image="localhost/kai-gitops:$version"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

mkdir -p "$work"
if ! podman image exists "$base"; then
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase --include=python3.11,python3-pip,python3-venv,python-is-python3,ca-certificates \
    bookworm "$work/rootfs" "$mirror" >&2
  rm -f "$work/rootfs/usr/lib/python3.11/EXTERNALLY-MANAGED"
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  cp /etc/ssl/certs/ca-certificates.crt "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["python3"]' - "$base" >&2
fi

# The committed tree only: what a clean checkout builds.
rm -rf "$work/context" && mkdir -p "$work/context"
git -C "$repo" archive HEAD | tar -x -C "$work/context"
buildah bud --isolation chroot --layers=false --build-arg PYTHON_IMAGE="$base" --build-arg VERSION="$version" \
  --build-arg REVISION="$(git -C "$repo" rev-parse HEAD)" --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  -t "$image" "$work/context" >&2
echo "$image"
