# syntax=docker/dockerfile:1
# The A2A delegation conformance harness as a container: both binaries (a2a-harness,
# a2a-delegator) plus a2a-mock, and the scenario catalog (also embedded in a2a-harness).
#
#   docker build -t a2a-harness .
#   docker run --rm -v "$PWD:/work" a2a-harness run --out /work/reports/run
#   docker run --rm -v "$PWD:/work" a2a-harness run \
#       --delegator 'python3 /work/my_delegator.py' --out /work/reports/mine
#
# The default command runs the catalog against the reference delegator. Your delegator runs
# inside the container, so it needs its runtime there: build FROM this image and add it
# (see docs/ci/README.md).

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p a2a-harness -p a2a-delegator -p a2a-mock-agents --bins \
 && mkdir -p /out \
 && cp target/release/a2a-harness target/release/a2a-delegator target/release/a2a-mock /out/

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates python3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /usr/local/bin/
COPY scenarios /usr/local/share/a2a-harness/scenarios
WORKDIR /work
ENTRYPOINT ["a2a-harness"]
CMD ["run", "--out", "/work/reports/run"]
