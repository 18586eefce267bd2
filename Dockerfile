# topogate container image: `make image` (Podman or Docker; none runs on
# the project's own machines, see README "Install").
#
# Reproducible enough to work the first time: the base is pinned to a
# Debian 12 point release (the one the project is built and tested on), the
# build uses the project's own Makefile, and the runtime stage proves the
# binary finds its libraries by running it. For a bit-for-bit pin, build
# with --build-arg DEBIAN=debian:12.11-slim@sha256:<digest>.
ARG DEBIAN=debian:12.11-slim

FROM ${DEBIAN} AS build
WORKDIR /src
COPY . .
# `make deps` installs the Makefile's BUILD_DEPS, so this list never drifts
# from what the Makefile links.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends make \
 && make deps \
 && make BUILD=/out all \
 && /out/topogate version \
 && /out/topogate certgen --help

FROM ${DEBIAN} AS runtime
# Only the shared libraries the binaries link (libssl3 for certgen's
# libcrypto, libcurl3-gnutls for topogate-kubewatch); libgnutls30 comes
# with libmicrohttpd12, and the two runs below fail the build if a
# library is missing.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 \
      libcjson1 \
      libyaml-0-2 \
      libssl3 \
      libcurl3-gnutls \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
# topogate-certgen and topogate-kubewatch beside topogate: `topogate
# certgen` runs the first, `serve` the second for its cluster view.
COPY --from=build /out/topogate /out/topogate-certgen \
     /out/topogate-kubewatch /usr/local/bin/
RUN ["/usr/local/bin/topogate", "version"]
RUN ["/usr/local/bin/topogate", "certgen", "--help"]
# Its libraries found: a usage error (2) is the answer, a loader error is
# not.
RUN /usr/local/bin/topogate-kubewatch --bad-flag; [ $? -eq 2 ]
# Numeric, so Kubernetes can check runAsNonRoot without /etc/passwd. The
# process writes nothing to disk: readOnlyRootFilesystem works as is.
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/topogate"]
CMD ["version"]
