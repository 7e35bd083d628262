# The two commands of the quick start: `make demo` and `make test`.
# Both set up a fresh machine (virtualenv + requirements) before running.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE ?= 1

.PHONY: setup demo test lint bench browser

$(STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $(STAMP)

setup: $(STAMP)

# Debian's Chromium for the browser tests (Playwright drives it; no download).
browser:
	test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium; }

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

demo: setup
	DEBUG=1 $(BIN)/python manage.py demo

test: lint browser
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python bench/bench_align.py
	$(BIN)/python bench/bench_scorer.py
	$(BIN)/python bench/bench_quality.py
