# The two commands of the quick start: `make demo` and `make test`.
# Both set up a fresh machine (virtualenv + requirements) before running.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE ?= 1

.PHONY: setup starter demo test test-fast lint bench browser docs

# When make started: `make setup` prints how long it took at its end.
SETUP_START := $(shell date +%s)

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@echo "==> installing the requirements (a few minutes; pip shows each one)"
	$(BIN)/pip install --progress-bar off -r requirements-dev.txt
	touch $(STAMP)

# The starter scorer every project's training starts from (silver pairs of
# many document styles and human-labelled NLI pairs, no label of yours; a few
# minutes on a CPU, once per machine). Real documents of the styles you
# expect make it travel: STARTER_DOCUMENTS names documents JSONL files (by
# default the court opinions beside this repository, where they are), less
# the opinions the real-documents benchmark measures on (bench/README.md).
# NLI_DATA names NLI pairs JSONL files (by default the shared pairs, where
# they are) that teach it entailment; without them it says so and learns
# from silver pairs alone.
# The tool runs on every `make setup`: it hashes its recipe and the bytes of
# its inputs (well under a second) and trains only a build this machine has
# never made; one it has made is left as it is or copied from the scorer
# cache (SCORER_CACHE, by default ~/.cache/safepassage/scorers), so a pull, a
# checkout or a second clone never trains it twice.
STARTER := var/scorers/starter
STARTER_DOCUMENTS ?= $(wildcard ../shared/data/caselaw/opinions.jsonl)
NLI_DATA ?= $(wildcard ../shared/data/nli/pairs.jsonl)
BENCHMARK_ROWS := bench/data/caselaw_claims.jsonl

STARTER_BUILD = $(BIN)/python -m tools.starter_scorer --out $(STARTER) \
	$(addprefix --documents ,$(STARTER_DOCUMENTS)) \
	$(addprefix --nli ,$(NLI_DATA)) \
	$(addprefix --exclude ,$(BENCHMARK_ROWS))

starter: $(STAMP)
	$(STARTER_BUILD)

# Local development settings (a generated SECRET_KEY) so that `manage.py`
# commands run as the README writes them; the environment wins, and a
# deployment never reads this file. DEBUG is asked for on the command line
# (as `make demo` does), never here.
DEV_ENV := var/dev.env
$(DEV_ENV):
	mkdir -p var
	printf '# Local development settings made by make setup; the environment wins.\nSECRET_KEY=%s\n' \
		"$$($(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))')" > $@

setup: $(STAMP) $(DEV_ENV) starter
	@echo "==> set up in $$(( $$(date +%s) - $(SETUP_START) )) s"

# Debian's Chromium for the browser tests (Playwright drives it; no download).
browser:
	test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium; }

# The JavaScript linter (package.json pins it); Debian's Node where none is.
ESLINT := node_modules/.bin/eslint
$(ESLINT): package.json package-lock.json
	command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	npm ci --silent --no-audit --no-fund
	touch $@

lint: setup $(ESLINT)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline annotator
	$(ESLINT) frontend/static/js

# The manual (docs/, mkdocs.yml) into var/site/, its API page written first
# from the schema the app serves (a test fails when that page is stale).
docs: setup
	$(BIN)/python manage.py spectacular --format openapi-json --file var/openapi.json
	$(BIN)/python -m tools.api_docs var/openapi.json docs/api.md
	$(BIN)/mkdocs build --strict

# `make demo PORT=8001` serves on another port. The demo serves first: the
# starter scorer, where it is built or in the scorer cache, is in place
# before it (a copy of seconds); where only training builds it, it builds
# beside it (its log in var/log/starter.log; Ctrl-C stops it too, and the
# next run picks it up), and the demo's own first scorer trains from what is
# built when it starts.
PORT ?= 8000
demo: $(STAMP) $(DEV_ENV)
	@mkdir -p var/log
	@if $(STARTER_BUILD) --no-train; then :; else \
		echo "==> building the starter scorer beside the demo (log: var/log/starter.log)"; \
		$(STARTER_BUILD) > var/log/starter.log 2>&1 & fi; \
	starter=$$!; \
	DEBUG=1 $(BIN)/python manage.py demo --port $(PORT); status=$$?; \
	test -z "$$starter" || kill $$starter 2>/dev/null; exit $$status

test: lint browser
	$(BIN)/python -m pytest --durations=20

# The fast lane while working: the library, the tools and the repository's
# own rules (no database, no worker, no browser).
FAST_TESTS := tests/pipeline tests/tools $(wildcard tests/test_*.py)
test-fast: lint
	$(BIN)/python -m pytest -q $(filter-out tests/test_readme.py,$(FAST_TESTS))

bench: setup
	$(BIN)/python bench/bench_align.py
	$(BIN)/python bench/bench_scorer.py
	$(BIN)/python bench/bench_quality.py
