# kai-gitops image for the in-cluster CronJob (deploy/cronjob.yaml) and for CI PR checks.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY reconciler ./reconciler
COPY policies ./policies
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
RUN useradd --uid 65532 --create-home kai-gitops
COPY --from=build /install /usr/local
USER 65532
ENV KAI_GITOPS_CACHE=/tmp/kai-gitops-cache
ENTRYPOINT ["kai-gitops"]
CMD ["--help"]
