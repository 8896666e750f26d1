# syntax=docker/dockerfile:1
# dra-operator image: `docker build -t dra-operator:0.1.0 .` (e2e/kind/run.sh does this).
#
# Two stages on the same slim Python, so the virtualenv built in the first runs unchanged in
# the second. Every dependency is installed as a prebuilt wheel at the version constraints.txt
# pins (--only-binary): no compiler is needed in either stage, and none is in the final image.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# The package's metadata and source: .dockerignore keeps everything else out of the context.
COPY pyproject.toml constraints.txt README.md LICENSE ./
COPY operator/ operator/
RUN python -m venv /opt/dra-operator \
 && python -m pip wheel --no-cache-dir --no-deps --wheel-dir /tmp/wheels . \
 && /opt/dra-operator/bin/pip install --no-cache-dir --only-binary=:all: \
      --constraint constraints.txt /tmp/wheels/dra_operator-*.whl

FROM ${PYTHON_IMAGE}
ARG PYTHON_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="dra-operator" \
      org.opencontainers.image.description="The whole Kubernetes Dynamic Resource Allocation control plane as one operator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${PYTHON_IMAGE}"
COPY --from=build /opt/dra-operator /opt/dra-operator
# The root filesystem is mounted read-only in the cluster: never try to write bytecode (it was
# compiled by pip at install), and keep HOME on the writable /tmp volume.
ENV PATH=/opt/dra-operator/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp
# A numeric non-root user with no passwd entry: Kubernetes can verify runAsNonRoot against it.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["dra-operator"]
CMD ["run"]
