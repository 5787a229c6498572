# kai-gitops image for the in-cluster CronJob (deploy/) and for CI PR checks.
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ) -t "$IMAGE" . && docker push "$IMAGE"
# with IMAGE your registry's name for it; the Kustomize `images:` entry `kai-gitops` points the CronJob at
# it (docs/deployment.md#the-image).
# Runs as a non-root user with a read-only root filesystem: everything it writes (the bare clone cache,
# temp files) goes under /tmp, which the CronJob mounts as an emptyDir. The embedded Rego engine
# (regorus, from the celine-regorus wheel) is part of the install, so no OPA server is needed.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
# A C compiler and libyaml's headers build the native YAML reader (reconciler/yamlio/_native_reader.c).
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev libyaml-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY reconciler ./reconciler
COPY policies ./policies
# Wheels for the project and every dependency; the final stage installs only from these.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ARG PYTHON_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
# Where the source is: the Git URL of kai-gitops you build from (--build-arg SOURCE=…).
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="kai-gitops" \
      org.opencontainers.image.description="GitOps reconciler and policy checker for NVIDIA KAI Scheduler and NVCA configuration" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.base.name="${PYTHON_IMAGE}"
COPY --from=build /wheels /wheels
# Byte-code is compiled at install time (pip's default), so a read-only site-packages costs nothing at
# start-up; the import check fails the build if the embedded engine, libgit2 or the native YAML reader (and
# the libyaml it links) did not come with it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libyaml-0-2 \
 && rm -rf /var/lib/apt/lists/* \
 && pip install --no-cache-dir --no-index --find-links=/wheels kai-gitops \
 && rm -rf /wheels \
 && python -c "import regorus, pygit2, reconciler.cli, reconciler.yamlio._native_reader" \
 && useradd --uid 65532 --user-group --no-create-home --home-dir /tmp --shell /usr/sbin/nologin kai-gitops
ENV HOME=/tmp \
    XDG_CACHE_HOME=/tmp/.cache \
    KAI_GITOPS_CACHE=/tmp/kai-gitops-cache \
    TMPDIR=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["kai-gitops"]
CMD ["--help"]
