# cardflow. `make run` starts the service locally; `make test` proves it.
GO      ?= go
GOFILES  = $(shell find cmd pkg internal functions schemas -name '*.go' 2>/dev/null)
NODE_ACS = tools/adaptivecards
# Runs a command with DynamoDB Local started and DYNAMODB_ENDPOINT set.
DYNAMODB_LOCAL = tools/dynamodblocal/run.sh
DYNAMODB_PORT ?= 8000
# Runs a command with moto's server started and MOTO_ENDPOINT set.
MOTO = tools/moto/run.sh
MOTO_PORT ?= 5000

.PHONY: run check test fmt-check vet lint node-deps openapi-lint bench dynamodb-local bench-dynamodb moto moto-server bench-rie

## run: bin/cardflow, then the service on 127.0.0.1:$PORT (3000; HOST=0.0.0.0 for every
## interface) with the embedded store in $CARDFLOW_DATA_DIR (.cardflow); CARDFLOW_STORE=dynamodb
## DYNAMODB_ENDPOINT=http://localhost:8000 keeps records in DynamoDB instead. On a terminal the
## server runs as a job of its own (bash -m), so Ctrl-C reaches it and not make: it stops
## cleanly and make exits 0.
run:
	$(GO) build -o bin/cardflow ./cmd/cardflow
	@if [ -t 0 ]; then bash -mc 'bin/cardflow serve; exit $$?'; else bin/cardflow serve; fi

## check: the quick tier: gofmt, go vet, golangci-lint, eslint on the console, and the tests with the race detector
## that need no emulator (-short); the output names each suite skipped and why
check: fmt-check vet lint console-lint
	env -u DYNAMODB_ENDPOINT -u MOTO_ENDPOINT -u CARDFLOW_STRICT_TESTS $(GO) test -race -short ./...

## test: gofmt, go vet, golangci-lint and every test with the race detector, tools included; the
## DynamoDB store's tests run against DynamoDB Local (needs Java; Maven for the first download),
## the EventBridge Scheduler and Step Functions adapters' against moto, and every Lambda
## function under AWS's Runtime Interface Emulator (from SAM CLI; needs Python 3 with venv).
## CARDFLOW_STRICT_TESTS=1 turns a missing dependency into a failure instead of a skip
test: fmt-check vet lint node-deps console-check console-lint openapi-lint template-check moto
	CARDFLOW_STRICT_TESTS=1 $(DYNAMODB_LOCAL) $(MOTO) $(GO) test -race -count=1 ./...

fmt-check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## lint: golangci-lint (pinned, installed into .cache) with .golangci.yml
GOLANGCI_LINT_VERSION = v2.15.0
GOLANGCI_LINT         = .cache/golangci-lint/$(GOLANGCI_LINT_VERSION)/golangci-lint
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	GOBIN=$(CURDIR)/$(dir $@) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## node-deps: Microsoft's adaptivecards parser and adaptivecards-templating, used by the
## differential tests of the card validator and of card templates
node-deps: $(NODE_ACS)/node_modules/.package-lock.json

$(NODE_ACS)/node_modules/.package-lock.json: $(NODE_ACS)/package-lock.json
	@command -v node >/dev/null || { echo "make test needs Node.js (node and npm) for the differential tests of pkg/cards"; exit 1; }
	npm ci --prefix $(NODE_ACS) --no-audit --no-fund

## console: the browser console's bundle in pkg/console/dist (committed, so that go build
## needs no Node.js) from console/src, with the esbuild, Preact, htm, dagre and adaptivecards
## of console/package-lock.json; axe-core, from the same lockfile, is for the browser test only
NODE_CONSOLE = console
node-deps: $(NODE_CONSOLE)/node_modules/.package-lock.json

$(NODE_CONSOLE)/node_modules/.package-lock.json: $(NODE_CONSOLE)/package-lock.json
	@command -v node >/dev/null || { echo "make test needs Node.js (node and npm) to build and test the console"; exit 1; }
	npm ci --prefix $(NODE_CONSOLE) --no-audit --no-fund

.PHONY: console console-check console-lint console-screenshots
console: $(NODE_CONSOLE)/node_modules/.package-lock.json
	$(NODE_CONSOLE)/build.sh

## console-check: the committed bundle is what console/src builds to
console-check: $(NODE_CONSOLE)/node_modules/.package-lock.json
	@tmp=$$(mktemp -d) && $(NODE_CONSOLE)/build.sh $$tmp && diff -r $$tmp pkg/console/dist >/dev/null; rc=$$?; rm -rf $$tmp; \
	if [ $$rc -ne 0 ]; then echo "pkg/console/dist is not what console/src builds to: run make console and commit it"; exit 1; fi

## console-lint: ESLint (console/eslint.config.mjs, the recommended rules) over console/src
console-lint: $(NODE_CONSOLE)/node_modules/.package-lock.json
	cd $(NODE_CONSOLE) && node_modules/.bin/eslint --max-warnings 0 src

## console-screenshots: the browser test of the console (chromium), writing docs/console-*.png
## and printing the inbox's first-load figures for BENCHMARKS.md
console-screenshots: $(NODE_CONSOLE)/node_modules/.package-lock.json
	@out=$$(CARDFLOW_STRICT_TESTS=1 CARDFLOW_CONSOLE_SCREENSHOTS=docs $(GO) test -count=1 -run '^TestConsoleInBrowser$$' -v ./cmd/cardflow/ 2>&1); rc=$$?; \
	if [ $$rc -ne 0 ]; then echo "$$out"; exit $$rc; fi; echo "$$out" | sed -n 's/.*console: //p'

## openapi-lint: Redocly CLI (pinned in tools/openapilint) lints openapi.yaml with its
## recommended rules, warnings as errors (redocly.yaml)
NODE_LINT = tools/openapilint
node-deps: $(NODE_LINT)/node_modules/.package-lock.json

$(NODE_LINT)/node_modules/.package-lock.json: $(NODE_LINT)/package-lock.json
	@command -v node >/dev/null || { echo "make test needs Node.js (node and npm) to lint openapi.yaml"; exit 1; }
	npm ci --prefix $(NODE_LINT) --no-audit --no-fund

openapi-lint: node-deps
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true $(NODE_LINT)/node_modules/.bin/redocly lint --config redocly.yaml openapi.yaml

## bench: every Go benchmark (DynamoDB ones against DynamoDB Local) and a load test of
## `cardflow serve` with profiles; figures go to BENCHMARKS.md, profiles to bench/.
## BENCH_FLAGS adds go test flags, LOAD_FLAGS cardflow-load flags ("--duration 5s")
bench:
	tools/bench/run.sh

## dynamodb-local: DynamoDB Local on $DYNAMODB_PORT (8000), in memory, until interrupted
dynamodb-local:
	$(DYNAMODB_LOCAL) --port $(DYNAMODB_PORT)

## moto-server: moto's server mode on 127.0.0.1:$MOTO_PORT (5000) until interrupted
moto-server: moto
	$(MOTO) --port $(MOTO_PORT)

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

## SAP CAP (tools/sapcap): SAP's OData server with a purchase-order service over V4 and, through
## SAP's community adapter, V2, for pkg/sap's tests of the ERP client
NODE_SAPCAP = tools/sapcap
node-deps: $(NODE_SAPCAP)/node_modules/.package-lock.json

$(NODE_SAPCAP)/node_modules/.package-lock.json: $(NODE_SAPCAP)/package-lock.json
	@command -v node >/dev/null || { echo "make test needs Node.js (node and npm) to test the ERP client against SAP CAP"; exit 1; }
	npm ci --prefix $(NODE_SAPCAP) --no-audit --no-fund

## sapcap: the CAP purchase-order service on 127.0.0.1:$SAPCAP_PORT (4004) until interrupted,
## user cardflow, password sapcap-pa55; SAPCAP_CSRF=0 drops the CSRF check SAP puts before it
SAPCAP_PORT ?= 4004
.PHONY: sapcap
sapcap: $(NODE_SAPCAP)/node_modules/.package-lock.json
	cd $(NODE_SAPCAP) && node_modules/.bin/cds-serve --port $(SAPCAP_PORT)

## bench-sfn: state transitions, Lambda requests and durations, DynamoDB request units and
## the cost per 1,000 executions of the sample approval, on the fake Step Functions and DynamoDB Local
bench-sfn:
	$(DYNAMODB_LOCAL) $(GO) test -run '^$$' -bench ExecutionCost -benchtime 30x -count 3 ./pkg/sfnrunner/

# --- AWS: the Lambda functions, template.yaml checks, deployment ---

# One Lambda function per directory of functions/; its logical id in
# template.yaml is the name with a capital first letter and "Function".
LAMBDAS      := $(notdir $(wildcard functions/*))
LAMBDA_BUILD  = CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags "-s -w"
ucfirst       = $(shell printf %s '$(1)' | awk '{print toupper(substr($$0,1,1)) substr($$0,2)}')
# SAM CLI and cfn-lint, pinned, in a virtualenv of their own.
AWS_TOOLS         = .cache/awstools
SAM_CLI_VERSION   = 1.170.0
CFN_LINT_VERSION  = 1.58.0
SAM               = SAM_CLI_TELEMETRY=0 $(AWS_TOOLS)/bin/sam
AWS_TOOLS_STAMP   = $(AWS_TOOLS)/.installed-$(SAM_CLI_VERSION)-$(CFN_LINT_VERSION)

.PHONY: build deploy template-check aws-tools

## build-<LogicalId>: one function's bootstrap in $(ARTIFACTS_DIR), for sam build (BuildMethod: makefile)
define lambda_target
.PHONY: build-$(call ucfirst,$(1))Function
build-$(call ucfirst,$(1))Function:
	$$(LAMBDA_BUILD) -o $$(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
endef
$(foreach f,$(LAMBDAS),$(eval $(call lambda_target,$(f))))

## build: every function's bootstrap (linux/arm64) in bin/<function>/
build:
	@for f in $(LAMBDAS); do echo "bin/$$f/bootstrap"; $(LAMBDA_BUILD) -o bin/$$f/bootstrap ./functions/$$f || exit 1; done

## template-check: cfn-lint, sam validate --lint and sam build of template.yaml, all offline;
## then no function's bootstrap may be over 40 MB
template-check: aws-tools
	$(AWS_TOOLS)/bin/cfn-lint template.yaml
	$(SAM) validate --lint --region us-east-1
	$(SAM) build --build-in-source --build-dir .aws-sam/build
	tools/lambdasize/check.sh .aws-sam/build

## deploy: sam build, then sam deploy with samconfig.toml to the stack cardflow-$(STAGE)
## (STAGE=dev, REGION=eu-central-1, LOG_LEVEL=INFO unless given); DEPLOY_PARAMS adds
## parameters ("TeamsSigningSecretName=teams-signing TeamsPublicUrl=https://...")
STAGE     ?= dev
REGION    ?= eu-central-1
LOG_LEVEL ?= INFO
DEPLOY_PARAMS ?=
deploy: aws-tools
	$(SAM) build --build-in-source
	$(SAM) deploy --stack-name cardflow-$(STAGE) --region $(REGION) --parameter-overrides Stage=$(STAGE) LogLevel=$(LOG_LEVEL) $(DEPLOY_PARAMS)

## aws-tools: SAM CLI and cfn-lint from PyPI into .cache/awstools (once)
aws-tools: $(AWS_TOOLS_STAMP)

$(AWS_TOOLS_STAMP):
	@command -v python3 >/dev/null || { echo "make test needs Python 3 (with venv) for SAM CLI and cfn-lint"; exit 1; }
	rm -rf $(AWS_TOOLS)
	python3 -m venv $(AWS_TOOLS)
	$(AWS_TOOLS)/bin/pip install -q --disable-pip-version-check aws-sam-cli==$(SAM_CLI_VERSION) cfn-lint==$(CFN_LINT_VERSION)
	touch $@

## bench-rie: each function's init and first-invoke duration as AWS's Lambda Runtime
## Interface Emulator (SAM CLI's) reports them, against DynamoDB Local and moto
bench-rie: aws-tools moto
	$(DYNAMODB_LOCAL) $(MOTO) $(GO) test -count=1 -run '^TestRuntimeInterfaceEmulator$$' -v ./cmd/cardflow-samevents/internal/samlocal/ | sed -n 's/.*rie: //p'

# moto's server mode, pinned, in a virtualenv of its own: EventBridge Scheduler
# and Step Functions for the tests of their adapters (tools/moto/run.sh).
MOTO_DIR     = .cache/moto
MOTO_VERSION = 5.2.5
MOTO_STAMP   = $(MOTO_DIR)/.installed-$(MOTO_VERSION)

## moto: moto[server] from PyPI into .cache/moto (once)
moto: $(MOTO_STAMP)

$(MOTO_STAMP):
	@command -v python3 >/dev/null || { echo "make test needs Python 3 (with venv) for moto"; exit 1; }
	rm -rf $(MOTO_DIR)
	python3 -m venv $(MOTO_DIR)
	$(MOTO_DIR)/bin/pip install -q --disable-pip-version-check 'moto[server]==$(MOTO_VERSION)'
	touch $@
## fuzz: every Go fuzz target of the module (any func Fuzz... in a test file), $FUZZTIME (30s) each
FUZZTIME ?= 30s
.PHONY: fuzz schemathesis
fuzz:
	FUZZTIME=$(FUZZTIME) tools/fuzz/run.sh

## schemathesis: Schemathesis (pinned, installed into .cache/) against a fresh `cardflow serve`
## and openapi.yaml: every endpoint, every check, stateful links; the seed of
## tools/schemathesis/schemathesis.toml and FRESH_SEEDS (2) random ones, each printed;
## SEED=N runs seed N alone (replays a printed one)
schemathesis:
	tools/schemathesis/run.sh
