# perfbot — see README.md.
GO ?= go
BIN := bin/perfbot

.PHONY: build test demo bench bench-bisect bench-ddmin lint clean

build:
	$(GO) build -o $(BIN) ./cmd/perfbot

test:
	$(GO) test -count=1 -timeout 15m ./...

# The main job on the embedded default: generate the testbed repository, find
# every change in its history, localize the hunks and write one Markdown issue
# per finding under demo-out/.
demo: build
	./$(BIN) demo --dir demo-out

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./store/ ./runner/
	$(GO) run ./cmd/bench-bisect -trials 200
	$(GO) run ./cmd/bench-ddmin -trials 200

bench-bisect:
	$(GO) run ./cmd/bench-bisect

bench-ddmin:
	$(GO) run ./cmd/bench-ddmin

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin demo-out
