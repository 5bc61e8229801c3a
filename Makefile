# perfbot — see README.md.
GO ?= go
BIN := bin/perfbot

.PHONY: build test demo bench bench-bisect bench-ddmin bench-detect bench-cli bench-loadgen figures lint clean fuzz

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/perfbot

test:
	$(GO) test -count=1 -timeout 15m ./...

# The main job on the embedded default: generate the testbed repository, find
# every change in its history, localize the hunks and write one Markdown issue
# per finding under demo-out/, and a static copy of the dashboard under
# demo-out/dashboard/.
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

# Change detection on seeded nightly series (5 repeats a night) beside a
# Perfherder-style t-test and an Otava-style e-divisive: false alarms on
# quiet histories at 1%, 2% and 5% noise, nights until a 3%, 5% and 10%
# drop is alerted; checks the target at 2% noise.
bench-detect:
	$(GO) run ./cmd/bench-detect

# The whole cost of the real command: perfbot bisect on generated git
# repositories of 64 commits at 2% noise with one 5% regression (and some
# without a change), every benchmark run counted by the benchmark itself.
bench-cli: build
	$(GO) run ./cmd/bench-cli -perfbot $(BIN) -repos 20 -nochange 5

# The load generator's own cost against a trivial local server (a child
# process): CPU per request, and the highest Poisson rate it sustains.
bench-loadgen:
	$(GO) run ./cmd/bench-loadgen

# docs/figures.md from the benchmark programs' own output, with the date,
# the commit and the machine. FIGURES_TRIALS=N runs the programs that take
# -trials at N trials per row (sooner, less precise); FIGURES_SLOW=1 also
# runs bench-cli and bench-loadgen, which build and run bin/perfbot.
FIGURES_TRIALS ?=
FIGURES_SLOW ?=

figures: $(if $(FIGURES_SLOW),build)
	$(GO) run ./scripts/figures -o docs/figures.md -trials '$(FIGURES_TRIALS)' $(if $(FIGURES_SLOW),-slow -perfbot $(BIN))

# Every fuzz target (func FuzzX in a _test.go file) for FUZZTIME each, one
# after another; go test runs one -fuzz target at a time. A failing target
# does not stop the rest: every target runs, and the summary at the end
# names each failure (make then fails). Crashers land in the package's
# testdata/fuzz/FuzzX/ and stay there as seeds. Minimizing a new input may
# take a minute by default, during which nothing is fuzzed;
# FUZZMINIMIZETIME keeps it short.
FUZZTIME ?= 1m
FUZZMINIMIZETIME ?= 5s

fuzz:
	@ran=0; failed=""; \
	for file in $$(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do \
		pkg=./$$(dirname $${file#./}); \
		for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
			echo "== $$pkg $$name"; ran=$$((ran+1)); \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg \
				|| failed="$$failed $$pkg:$$name"; \
		done; \
	done; \
	echo "== fuzz: $$ran targets, $$(echo $$failed | wc -w) failed"; \
	for f in $$failed; do echo "FAIL $$f"; done; \
	test -z "$$failed"

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin demo-out
