# Convida. The two commands of the README: `make run` and `make test`.
GO ?= go
PKGS ?= ./...
TEST_TIMEOUT ?= 20m

.PHONY: run test services build vet fuzz bench

## run: start the whole pipeline in one process (embedded Kafka broker)
run: services
	$(GO) run ./cmd/standalone

## test: every test, with the race detector, against real PostgreSQL, Redis and the embedded broker
test: services
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

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

## bench: the end-to-end load test (ORDERS sales over MEMBERS members)
ORDERS ?= 50000
MEMBERS ?= 5000
bench: services
	$(GO) run ./cmd/bench -orders $(ORDERS) -members $(MEMBERS)
