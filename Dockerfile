# simbench's container image: the name the Kubernetes manifests in deploy/
# run (ghcr.io/simbench/simbench), built by `make image`.
#
# Two stages: the Go toolchain builds a static binary (CGO_ENABLED=0, no libc
# to match at run time), then only that binary goes onto distroless's static
# base, which runs it as the unprivileged user nonroot (uid 65532): no shell,
# no package manager, nothing else to patch. The manifests' pod security
# context runs as the same uid and gives it the results volume (fsGroup).

FROM golang:1.26-bookworm AS build
WORKDIR /src
# the module graph first: a layer cached until go.mod or go.sum change
COPY go.mod go.sum ./
RUN go mod download && go mod verify
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/simbench ./cmd/simbench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/simbench /usr/local/bin/simbench
USER 65532:65532
WORKDIR /data
ENTRYPOINT ["/usr/local/bin/simbench"]
CMD ["--help"]
