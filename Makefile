# cardflow. `make run` starts the service locally; `make test` proves it.
GO      ?= go
GOFILES  = $(shell find cmd pkg -name '*.go' 2>/dev/null)
NODE_ACS = tools/adaptivecards
# Runs a command with DynamoDB Local started and DYNAMODB_ENDPOINT set.
DYNAMODB_LOCAL = tools/dynamodblocal/run.sh
DYNAMODB_PORT ?= 8000

.PHONY: run test fmt-check vet node-deps bench dynamodb-local bench-dynamodb

## run: the service on $PORT (3000) with the embedded store in $CARDFLOW_DATA_DIR (.cardflow);
## CARDFLOW_STORE=dynamodb DYNAMODB_ENDPOINT=http://localhost:8000 keeps records in DynamoDB instead
run:
	$(GO) run ./cmd/cardflow serve

## test: gofmt, go vet and every test with the race detector, tools included; the
## DynamoDB store's tests run against DynamoDB Local (needs Java; Maven for the first download)
test: fmt-check vet node-deps
	CARDFLOW_STRICT_TESTS=1 $(DYNAMODB_LOCAL) $(GO) test -race -count=1 ./...

fmt-check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## node-deps: Microsoft's adaptivecards parser and adaptivecards-templating, used by the
## differential tests of the card validator and of card templates
node-deps: $(NODE_ACS)/node_modules/.package-lock.json

$(NODE_ACS)/node_modules/.package-lock.json: $(NODE_ACS)/package-lock.json
	@command -v node >/dev/null || { echo "make test needs Node.js (node and npm) for the differential tests of pkg/cards"; exit 1; }
	npm ci --prefix $(NODE_ACS) --no-audit --no-fund

## bench: every Go benchmark (DynamoDB ones against DynamoDB Local) and a load test of
## `cardflow serve` with profiles; figures go to BENCHMARKS.md, profiles to bench/.
## BENCH_FLAGS adds go test flags, LOAD_FLAGS cardflow-load flags ("--duration 5s")
bench:
	tools/bench/run.sh

## dynamodb-local: DynamoDB Local on $DYNAMODB_PORT (8000), in memory, until interrupted
dynamodb-local:
	$(DYNAMODB_LOCAL) --port $(DYNAMODB_PORT)

## bench-dynamodb: a get and a list page of the DynamoDB store against DynamoDB Local
bench-dynamodb:
	$(DYNAMODB_LOCAL) $(GO) test -run '^$$' -bench . -benchmem -benchtime 3s -count 3 ./pkg/dynamostore/

## Step Functions runner: asl-validator and aws-local-stepfunctions check and run
## statemachine/runner.asl.json in pkg/sfnrunner's tests
NODE_SFN = tools/stepfunctions
node-deps: $(NODE_SFN)/node_modules/.package-lock.json

$(NODE_SFN)/node_modules/.package-lock.json: $(NODE_SFN)/package-lock.json
	@command -v node >/dev/null || { echo "make test needs Node.js (node and npm) to check the Step Functions definition"; exit 1; }
	npm ci --prefix $(NODE_SFN) --no-audit --no-fund

## bench-sfn: state transitions, Lambda requests and durations, DynamoDB request units and
## the cost per 1,000 executions of the sample approval, on the fake Step Functions and DynamoDB Local
bench-sfn:
	$(DYNAMODB_LOCAL) $(GO) test -run '^$$' -bench ExecutionCost -benchtime 30x -count 3 ./pkg/sfnrunner/
