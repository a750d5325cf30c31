# Convida. The two commands of the README: `make run` and `make test`.
GO ?= go
PKGS ?= ./...
EXERCISED ?= $(CURDIR)/.data/openapi-exercised
TEST_TIMEOUT ?= 20m

.PHONY: run test services build vet fuzz bench

## run: start the whole pipeline in one process (embedded Kafka broker)
run: services
	$(GO) run ./cmd/standalone

## test: every test, with the race detector, against real PostgreSQL, Redis and the embedded broker
test: services
	$(GO) vet ./...
	@rm -rf $(EXERCISED) && mkdir -p $(EXERCISED)
	OPENAPI_EXERCISED_DIR=$(EXERCISED) $(GO) test -race -count=1 -short -timeout $(TEST_TIMEOUT) $(PKGS)
	@# The load tests (-short skips them) run alone: they measure latency,
	@# which the rest of the suite running beside them would distort.
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run 'Load' ./pkg/e2e
	@# Every response the OpenAPI document lists was received and validated by some test.
	OPENAPI_EXERCISED_DIR=$(EXERCISED) OPENAPI_COVERAGE_CHECK=1 $(GO) test -count=1 -run 'TestEveryDocumentedResponseExercised' ./pkg/openapi

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
## end to end over MEMBERS members, then balance reads at increasing concurrency, then REDEMPTIONS
## redeem round trips against a fake Yampi, then DELIVERIES signed webhooks to a local receiver
## beside a bare HTTP loop
ORDERS ?= 50000
MEMBERS ?= 5000
REDEMPTIONS ?= 2000
DELIVERIES ?= 100000
bench: services
	$(GO) run ./cmd/bench -mode all -orders $(ORDERS) -members $(MEMBERS) -redemptions $(REDEMPTIONS) -deliveries $(DELIVERIES)

## bench-sales, bench-reads, bench-redeems, bench-dispatch: one of them alone (each on a fresh database)
.PHONY: bench-sales bench-reads bench-redeems bench-dispatch
bench-sales: services
	$(GO) run ./cmd/bench -mode sales -orders $(ORDERS) -members $(MEMBERS)
bench-reads: services
	$(GO) run ./cmd/bench -mode reads -members $(MEMBERS)
bench-redeems: services
	$(GO) run ./cmd/bench -mode redeems -members $(MEMBERS) -redemptions $(REDEMPTIONS)
bench-dispatch: services
	$(GO) run ./cmd/bench -mode dispatch -members 100 -deliveries $(DELIVERIES)
