# Outflow. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO          ?= go
SQLC        := $(GO) tool -modfile=tools/go.mod sqlc
STATICCHECK := $(GO) tool -modfile=tools/go.mod staticcheck
REDOCLY     := npx --yes @redocly/cli@2.77.0
VERSION     ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

PG_DIR        := .data/pg
PG_PORT       ?= 55432
PG_TEST_DIR   := .data/pgtest
PG_TEST_PORT  ?= 55433
SECRET_FILE   := .data/secret-key

# The superuser URL of the test cluster: the one given, or the local cluster (started on demand).
TEST_DB = $${OUTFLOW_TEST_DATABASE_URL:-$$(scripts/pg up $(PG_TEST_DIR) $(PG_TEST_PORT) test)}

.PHONY: help
help: ## Show this list
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_\/-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Run the server (API + workers) on 127.0.0.1:8080 with a local Postgres under .data/pg
	@mkdir -p .data
	@[ -s $(SECRET_FILE) ] || (umask 077; head -c 32 /dev/urandom | base64 > $(SECRET_FILE))
	@export DATABASE_URL="$${DATABASE_URL:-$$(scripts/pg up $(PG_DIR) $(PG_PORT))}"; \
	 export OUTFLOW_SECRET_KEY="$${OUTFLOW_SECRET_KEY:-$$(cat $(SECRET_FILE))}"; \
	 $(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/outflow ./cmd/outflow; \
	 echo "outflow: Postgres at $$DATABASE_URL; create a key with: DATABASE_URL=$$DATABASE_URL bin/outflow admin bootstrap --email you@example.com --password '...' --org 'My Org'"; \
	 exec bin/outflow serve

.PHONY: e2e
e2e: ## Run the account flows end to end against a fresh `outflow serve` on the local Postgres
	@mkdir -p .data
	@[ -s $(SECRET_FILE) ] || (umask 077; head -c 32 /dev/urandom | base64 > $(SECRET_FILE))
	@export DATABASE_URL="$${DATABASE_URL:-$$(scripts/pg up $(PG_DIR) $(PG_PORT))}"; \
	 export OUTFLOW_SECRET_KEY="$$(cat $(SECRET_FILE))" OUTFLOW_HTTP_ADDR=127.0.0.1:18080; \
	 $(GO) build -o bin/outflow ./cmd/outflow; \
	 bin/outflow serve > .data/e2e.log 2>&1 & pid=$$!; trap "kill $$pid" EXIT; \
	 for i in $$(seq 1 50); do curl -sf http://127.0.0.1:18080/healthz >/dev/null && break; sleep 0.2; done; \
	 scripts/e2e-accounts http://127.0.0.1:18080 .data/e2e.log

.PHONY: stop-db
stop-db: ## Stop the local Postgres clusters started by `make run` and `make test`
	@scripts/pg stop $(PG_DIR)
	@scripts/pg stop $(PG_TEST_DIR)

.PHONY: test
test: ## Run every test against a local Postgres under .data/pgtest (fsync off)
	@export OUTFLOW_TEST_DATABASE_URL="$(TEST_DB)"; \
	 $(GO) test -count=1 -timeout 30m ./...

.PHONY: test/race
test/race: ## Run every test with the race detector
	@export OUTFLOW_TEST_DATABASE_URL="$(TEST_DB)"; \
	 $(GO) test -count=1 -race ./...

.PHONY: generate
generate: ## Regenerate the ogen API (gen/api), the sqlc queries (gen/db) and the agent tool definitions (gen/toolspec)
	$(GO) tool ogen --config ogen.yml --target gen/api --package api --clean openapi/openapi.yaml
	$(SQLC) generate
	$(GO) run ./internal/agents/tools/toolgen openapi/openapi.yaml gen/toolspec

.PHONY: schema
schema: ## Rewrite schema.sql from what the migrations produce
	@scripts/schema-dump "$(TEST_DB)" schema.sql

.PHONY: layers
layers: ## Fail if an import runs against the layers, or another house rule (internal/house) breaks
	$(GO) test -count=1 ./internal/house/

.PHONY: verify
verify: ## Fail if schema.sql, generated code or go.mod drift from their sources, a house rule breaks, or lint fails
	@$(MAKE) --no-print-directory schema
	@$(MAKE) --no-print-directory generate >/dev/null
	@$(GO) mod tidy -diff
	@(cd tools && $(GO) mod tidy -diff)
	@untracked=$$(git ls-files --others --exclude-standard -- schema.sql gen); \
	 if ! git diff --quiet -- schema.sql gen || [ -n "$$untracked" ]; then \
	   echo "verify: schema.sql or generated code differs from what the migrations and generators produce:"; \
	   git --no-pager diff --stat -- schema.sql gen; echo "$$untracked"; exit 1; \
	 fi
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory lint
	@echo "verify: clean"

.PHONY: lint
lint: ## gofmt, go vet, staticcheck and the OpenAPI linter
	@out=$$(find . \( -path ./gen -o -path ./.data -o -path ./tools -o -path ./.git \) -prune -o -name '*.go' -print | xargs gofmt -l); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@command -v npx >/dev/null || { echo "lint: installing Node.js for the OpenAPI linter"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
	$(REDOCLY) lint --format=summary openapi/openapi.yaml

.PHONY: bench
bench: ## Run the benchmarks, one package at a time so none measures under another's load, as ratios to in-run baselines
	@export OUTFLOW_TEST_DATABASE_URL="$(TEST_DB)"; \
	 $(GO) test -p 1 -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./... | tee /dev/stderr | scripts/bench-ratios
