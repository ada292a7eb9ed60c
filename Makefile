# Common targets; README.md names the same commands.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# Test processes (pytest-xdist). Each loads the embedding models and starts Celery
# workers of its own, so one per core suits a small machine: `make test TEST_WORKERS=4`.
TEST_WORKERS ?= 2

.PHONY: setup run demo test lint format bench

# Runs only when the requirements change (or nothing is installed yet). A venv
# without a working pip (`python -m venv` failed at ensurepip: Debian without
# the python3.X-venv package) is made again, and one that fails is removed.
$(VENV)/.installed: requirements/base.txt requirements/dev.txt
	$(PY) -m pip --version >/dev/null 2>&1 || { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); } || { rm -rf $(VENV); exit 1; }
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	touch $@

setup: $(VENV)/.installed

# run_stack starts a local redis-server when none answers, and stops only that one.
# It listens on BIND (default 127.0.0.1:8000): `BIND=0.0.0.0:8001 make run`.
run: setup
	$(PY) manage.py run_stack

# The services' logs go to $DATA_DIR/stack.log (default .data/stack.log); the terminal
# shows the transcript.
demo: setup
	$(PY) manage.py run_stack --demo

# What CI runs (.ci/run) on a fresh clone: the Debian packages the tests need
# (through sudo when not root), Redis, the compose file's check, lint, every test.
test: setup
	scripts/install-system-deps
	scripts/ensure-redis
	docker-compose -f docker/compose.yaml config >/dev/null
	$(MAKE) --no-print-directory lint
	$(VENV)/bin/pytest -n $(TEST_WORKERS) --dist worksteal

# Style, the apps' layering (import-linter's contracts in pyproject.toml) and
# types (mypy: strict on the services, the engine and the channel).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy .

format:
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: setup
	scripts/ensure-redis
	$(PY) benchmarks/run_all.py
