# simbench — see README.md. `make demo` and `make test` are the two set-up commands.
GO      ?= go
BIN     := bin/simbench
FUZZTIME ?= 20s

.PHONY: all build test bench demo fuzz lint e2e clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/simbench

test: lint
	$(GO) test -race -count=1 ./...

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

clean:
	rm -rf bin artifacts
