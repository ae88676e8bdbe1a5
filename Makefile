# GPU Planner. `make run` and `make test` work on a fresh machine with Python 3.11.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: run test test-all bench lint install migrate catalog worker clean

$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/python scripts/vendor_static.py
	touch $(STAMP)

install: $(STAMP)

.secret_key:
	$(BIN)/python -c "import secrets; print(secrets.token_urlsafe(50))" > .secret_key

migrate: install .secret_key
	SECRET_KEY_FILE=.secret_key $(BIN)/python manage.py migrate --noinput

catalog: migrate
	SECRET_KEY_FILE=.secret_key $(BIN)/python manage.py load_catalog

# Web server and one Celery worker on the embedded defaults (SQLite, filesystem broker).
run: catalog
	@echo ""
	@echo "GPU Planner: open http://127.0.0.1:$(PORT)/  (Ctrl-C stops the server and the worker)"
	@echo ""
	@SECRET_KEY_FILE=.secret_key DEBUG=1 $(BIN)/celery -A planner worker --loglevel=WARNING --concurrency=1 & \
	  worker=$$!; trap "kill $$worker 2>/dev/null" EXIT INT TERM; \
	  SECRET_KEY_FILE=.secret_key DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

worker: install .secret_key
	SECRET_KEY_FILE=.secret_key $(BIN)/celery -A planner worker --loglevel=INFO --concurrency=1

# The whole suite: unit, integration (real Redis + worker) and browser (headless Chromium).
# Integration and browser tests skip with a reason when Redis or Chromium is absent.
CORES := simulator/core planner/core planner/plans/core planner/purchase_mix/core pricing/importers pricing/canonical.py

test: install
	SECRET_KEY=test-only-secret $(BIN)/lint-imports pyproject.toml
	$(BIN)/mypy --strict --ignore-missing-imports $(CORES)
	SECRET_KEY=test-only-secret $(BIN)/python -m pytest -m "" -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy --strict --ignore-missing-imports $(CORES)

bench: catalog
	SECRET_KEY_FILE=.secret_key $(BIN)/python manage.py collectstatic --noinput -v0
	SECRET_KEY_FILE=.secret_key $(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) var .secret_key
