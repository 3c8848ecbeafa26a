# simbench — see README.md. `make demo` and `make test` are the two set-up commands.
GO      ?= go
BIN     := bin/simbench
FUZZTIME ?= 20s

.PHONY: all build test bench demo fuzz lint e2e e2e-serve image install-check clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/simbench

# One race-enabled pass: the timing acceptance tests keep five times
# their margins, which the race detector on a busy machine does not eat.
# GOGC=200 lets the heap grow twice as far between collections: the pass
# is CPU-bound on two cores, and the collector's share of it fell by a
# tenth (user time 5m35s against 6m17s, back to back). -p 3: three test
# binaries at once, not two, so that the packages which mostly wait on the
# wall clock (serve, livecal, the load generator's) overlap the CPU-bound
# ones instead of holding one of the two slots.
test: lint
	GOGC=200 $(GO) test -p 3 -race -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz:
	@set -e; for spec in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs grep -ho '^func Fuzz[A-Za-z0-9_]*' | sort -u | sed 's/^func //'); do \
		pkg=$$(dirname $$(grep -rl --include='*_test.go' "^func $$spec(" . | head -1)); \
		echo "fuzz $$pkg $$spec ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$spec$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

demo: build
	./scripts/demo.sh

# CPU real-engine tier (issue 6): builds Ollama once (cached under
# $XDG_CACHE_HOME/simbench, default ~/.cache/simbench), serves the generated tiny model, and
# runs `simbench validate --pipeline testdata/e2e/pipeline.yaml` on it. Artifacts go
# to $(E2E_ARTIFACTS); see scripts/e2e.sh for the other knobs (E2E_REPLAY).
E2E_ARTIFACTS ?= artifacts/e2e

e2e: e2e-serve build
	E2E_ARTIFACTS=$(E2E_ARTIFACTS) ./scripts/e2e.sh $(BIN)

# The tier without an engine (issue 44): `run` against `serve` agrees with `sim` of the same
# workload within the measured client overhead (TTFT and ITL avg within 2 % after it).
e2e-serve:
	$(GO) test -count=1 -v -run '^TestRunMatchesSim$$' ./serve/

# The container image the deploy/ manifests name (Dockerfile: a static binary on
# distroless, user nonroot). Without a Docker engine it says so and succeeds.
IMAGE ?= ghcr.io/simbench/simbench:latest

image:
	@if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
		docker build -t $(IMAGE) . ; \
	else \
		echo "make image: skipped: no Docker engine here (docker info failed); install-check builds the Dockerfile's static binary"; \
	fi

# The README's `go install` line on a clean GOPATH, offline, and the Dockerfile's build command.
install-check:
	./scripts/check_install.sh

clean:
	rm -rf bin artifacts
