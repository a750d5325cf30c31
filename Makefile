# Convida. The two commands of the README: `make run` and `make test`.
GO ?= go
PKGS ?= ./...
EXERCISED ?= $(CURDIR)/.data/openapi-exercised
TEST_TIMEOUT ?= 20m

.PHONY: run test services chromium build vet fuzz bench lint-openapi reset

## run: start the whole pipeline in one process (embedded Kafka broker). It builds bin/standalone
## first, saying so: `go build -v` names each module it downloads and each package it compiles, so
## a first build (minutes) shows it is at work. `exec` puts the program in the shell's place, so
## make waits on it alone: Ctrl-C drains the program, which exits 0, and make prints no error line
## (make itself, interrupted too, then ends as interrupted: status 130 in the shell).
run: services
	@echo "make run: building bin/standalone (go build -v lists what it compiles; a first build downloads and compiles every module, a few minutes; later builds take seconds)"
	@$(GO) build -v -o bin/standalone ./cmd/standalone
	@exec bin/standalone

## reset: start over: drop the DATABASE_URL database (default convida, on this machine only) and
## remove DATA_DIR (default .data) together, saying what it removes; the next `make run` makes a
## new key and a new demo merchant. Stop `make run` first (reset refuses while it runs).
reset: services
	$(GO) run ./cmd/standalone reset

## test: every test, with the race detector, against real PostgreSQL, Redis and the embedded broker
test: services chromium
	$(GO) vet ./...
	@$(MAKE) --no-print-directory lint-openapi
	@rm -rf $(EXERCISED) && mkdir -p $(EXERCISED)
	OPENAPI_EXERCISED_DIR=$(EXERCISED) $(GO) test -race -count=1 -short -timeout $(TEST_TIMEOUT) $(PKGS)
	@# The load tests (-short skips them) run alone: they measure latency,
	@# which the rest of the suite running beside them would distort.
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run 'Load' ./pkg/e2e
	@# Every response the OpenAPI document lists was received and validated by some test.
	OPENAPI_EXERCISED_DIR=$(EXERCISED) OPENAPI_COVERAGE_CHECK=1 $(GO) test -count=1 -run 'TestEveryDocumentedResponseExercised' ./pkg/openapi
	@$(MAKE) --no-print-directory test-dates

## test-dates: the date-sensitive tests (every test that reads the test clock, listed by
## scripts/dated-tests.sh) again with the clock pinned (CONVIDA_TEST_NOW, pkg/testenv/clock.go) at
## each of PINNED_INSTANTS: the last second of November and the first of December in São Paulo,
## a São Paulo evening that is already 2027 in UTC, a leap day. `make test` has run them at the
## real now already.
PINNED_INSTANTS ?= 2026-11-30T23:59:59-03:00 2026-12-01T00:00:01-03:00 2026-12-31T23:30:00-03:00 2028-02-29T12:00:00-03:00
.PHONY: test-dates
test-dates: services chromium
	@bash scripts/dated-tests.sh > /dev/null
	@set -e; pkgs=$$(bash scripts/dated-tests.sh | cut -f1 | tr '\n' ' '); \
	run=$$(bash scripts/dated-tests.sh | cut -f2 | sed 's/^\^(//; s/)\$$//' | paste -sd'|'); \
	for at in $(PINNED_INSTANTS); do \
		echo "test-dates: CONVIDA_TEST_NOW=$$at go test -run '^($$run)\$$' $$pkgs"; \
		CONVIDA_TEST_NOW=$$at $(GO) test -race -count=1 -short -timeout $(TEST_TIMEOUT) -run "^($$run)\$$" $$pkgs; \
	done

## lint-openapi: lint the OpenAPI document as the API serves it with an independent linter,
## Redocly CLI's recommended rules with warnings as errors (pkg/openapi/redocly.yaml); installs
## @redocly/cli into .tools on first use; skipped, with a line saying so, without npm
REDOCLY_VERSION ?= 2.77.0
REDOCLY := .tools/node_modules/.bin/redocly
lint-openapi:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "lint-openapi: SKIPPED, npm is not installed: the OpenAPI document was not linted"; exit 0; fi; \
	if [ ! -x $(REDOCLY) ] && ! npm install --prefix .tools --no-audit --no-fund --silent @redocly/cli@$(REDOCLY_VERSION); then \
		echo "lint-openapi: SKIPPED, npm could not install @redocly/cli: the OpenAPI document was not linted"; exit 0; fi; \
	OPENAPI_JSON_OUT=$(CURDIR)/.tools/openapi.json $(GO) test -count=1 -run '^TestWriteDocument$$' ./pkg/openapi >/dev/null && \
	REDOCLY_SUPPRESS_UPDATE_NOTICE=true REDOCLY_TELEMETRY=off \
		$(REDOCLY) lint --config pkg/openapi/redocly.yaml --format=stylish .tools/openapi.json

## chromium: make sure Debian's Chromium is installed (the dashboard's browser tests drive it)
chromium:
	@bash scripts/ensure-chromium.sh

## services: make sure PostgreSQL and Redis are up (start or install them)
services:
	@bash scripts/ensure-services.sh

build:
	$(GO) build -o bin/ ./cmd/...

## fuzz: run each fuzz target for FUZZTIME (the seed corpora also run in `make test`)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseReais -fuzztime=$(FUZZTIME) ./pkg/money/
	$(GO) test -run='^$$' -fuzz=FuzzGuru -fuzztime=$(FUZZTIME) ./pkg/inbound/
	$(GO) test -run='^$$' -fuzz=FuzzYampi -fuzztime=$(FUZZTIME) ./pkg/inbound/

## bench: the load tests in sequence on one in-process pipeline (docs/benchmarks.md): ORDERS sales
## end to end over MEMBERS members once per level of CONCURRENCY senders (32, what a platform holds,
## then 512, a burst; each level after the first on a freshly seeded merchant, and a table of the
## levels side by side at the end), then balance reads at increasing concurrency, then REDEMPTIONS
## redeem round trips against a fake Yampi, then DELIVERIES signed webhooks to a local receiver
## beside a bare HTTP loop
ORDERS ?= 50000
MEMBERS ?= 5000
CONCURRENCY ?= 32,512
REDEMPTIONS ?= 2000
DELIVERIES ?= 100000
bench: services
	$(GO) run ./cmd/bench -mode all -orders $(ORDERS) -members $(MEMBERS) -concurrency $(CONCURRENCY) \
		-redemptions $(REDEMPTIONS) -deliveries $(DELIVERIES)

## bench-compare: REF's cmd/standalone and the working tree's, each its own process on a fresh database,
## their sales phase run alternately ROUNDS times each at 32 senders (COMPARE_ORDERS over COMPARE_MEMBERS,
## seeded through the API), then side by side: orders/s, answer and order→credit p99, CPU per order of the
## service and of PostgreSQL from /proc, the load generator excluded (docs/benchmarks.md)
REF ?=
ROUNDS ?= 3
COMPARE_ORDERS ?= 20000
COMPARE_MEMBERS ?= 1000
.PHONY: bench-compare
bench-compare: services
	@if [ -z "$(REF)" ]; then echo "bench-compare: name the commit to compare with: make bench-compare REF=<commit>"; exit 2; fi
	$(GO) run ./cmd/bench -compare $(REF) -rounds $(ROUNDS) -orders $(COMPARE_ORDERS) -members $(COMPARE_MEMBERS) -concurrency 32

## bench-sales, bench-reads, bench-redeems, bench-dispatch: one of them alone (each on a fresh database)
.PHONY: bench-sales bench-reads bench-redeems bench-dispatch
bench-sales: services
	$(GO) run ./cmd/bench -mode sales -orders $(ORDERS) -members $(MEMBERS) -concurrency $(CONCURRENCY)
bench-reads: services
	$(GO) run ./cmd/bench -mode reads -members $(MEMBERS)
bench-redeems: services
	$(GO) run ./cmd/bench -mode redeems -members $(MEMBERS) -redemptions $(REDEMPTIONS)
bench-dispatch: services
	$(GO) run ./cmd/bench -mode dispatch -members 100 -deliveries $(DELIVERIES)
