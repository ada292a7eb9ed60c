# Common targets; README.md names the same commands.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup run demo test lint format bench

$(VENV)/.installed: requirements/base.txt requirements/dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	touch $@

setup: $(VENV)/.installed

# run_stack starts a local redis-server when none answers, and stops only that one.
run: setup
	$(PY) manage.py run_stack

demo: setup
	$(PY) manage.py run_stack --demo

test: setup
	scripts/ensure-redis
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format:
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: setup
	scripts/ensure-redis
	$(PY) benchmarks/run_all.py
