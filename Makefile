# GPU Planner. `make run` and `make test` work on a fresh machine with Python 3.11.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: run test test-postgres test-all bench lint install migrate catalog worker clean pdf-libs bandit audit docs checks lint-imports mypy

$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	@$(MAKE) --no-print-directory pdf-libs
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/python scripts/vendor_static.py
	touch $(STAMP)

install: $(STAMP)

# PDF reports: WeasyPrint needs Pango and a font. Installed from Debian when apt-get is usable
# (root or passwordless sudo); otherwise a note, and the other report formats still work.
PDF_DEBS := libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core poppler-utils
pdf-libs:
	@if ldconfig -p 2>/dev/null | grep -q libpangoft2-1.0 && fc-list 2>/dev/null | grep -qi dejavu; then :; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PDF_DEBS) >/dev/null; \
	elif command -v apt-get >/dev/null && sudo -n true 2>/dev/null; then \
	  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PDF_DEBS) >/dev/null; \
	else echo "PDF reports need $(PDF_DEBS) (not installed; XLSX, CSV and HTML still work)"; fi

.secret_key:
	$(BIN)/python -c "import secrets; print(secrets.token_urlsafe(50))" > .secret_key

migrate: install .secret_key
	SECRET_KEY_FILE=.secret_key $(BIN)/python manage.py migrate --noinput

catalog: migrate
	SECRET_KEY_FILE=.secret_key $(BIN)/python manage.py load_catalog

# Web server and two Celery workers on the embedded defaults (SQLite, filesystem broker): one
# takes every queue, one only "short" (plans, simulations: they never wait behind long sweeps).
# A worker's child is replaced once it grew past CELERY_WORKER_MAX_MEMORY_PER_CHILD KiB (4 GiB).
WORKER_MEMORY := --max-memory-per-child=$${CELERY_WORKER_MAX_MEMORY_PER_CHILD:-4194304}
run: catalog
	@echo ""
	@echo "GPU Planner: open http://127.0.0.1:$(PORT)/  (Ctrl-C stops the server and the worker)"
	@echo ""
	@SECRET_KEY_FILE=.secret_key DEBUG=1 $(BIN)/celery -A planner worker --loglevel=WARNING --concurrency=1 $(WORKER_MEMORY) & \
	  worker=$$!; \
	  SECRET_KEY_FILE=.secret_key DEBUG=1 $(BIN)/celery -A planner worker -Q short -n short@%h --loglevel=WARNING --concurrency=1 $(WORKER_MEMORY) & \
	  short=$$!; trap "kill $$worker $$short 2>/dev/null" EXIT INT TERM; \
	  SECRET_KEY_FILE=.secret_key DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

worker: install .secret_key
	SECRET_KEY_FILE=.secret_key $(BIN)/celery -A planner worker --loglevel=INFO --concurrency=1 $(WORKER_MEMORY)

# The whole suite: unit, integration (real Redis + worker) and browser (headless Chromium).
# Integration and browser tests skip with a reason when Redis or Chromium is absent.
CORES := simulator/core planner/core planner/plans/core planner/purchase_mix/core planner/capacity/core planner/reports/core planner/serving/core planner/storage/core pricing/importers pricing/canonical.py

# In parallel (pytest-xdist: PYTEST_WORKERS processes, each with its own test database, Redis
# database, Celery workers and Chromium); the ten slowest tests are printed at the end.
# The static checks (TEST_CHECKS) run first; `.ci/run` runs them beside the suite instead
# (`make checks` and `make test TEST_CHECKS=` at once).
# One more worker than cores: the integration tests spend much of their time waiting on leases
# and worker restarts (on 2 cores, 3 workers: 473-482 s; 2: 509 s; docs/development.md).
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
TEST_CHECKS ?= checks
test: install $(TEST_CHECKS)
	SECRET_KEY=test-only-secret $(BIN)/python -m pytest -m "" -q -n $(PYTEST_WORKERS) --dist loadgroup --durations=10

# Everything `make test` checks besides the tests: bandit, pip-audit, the layer contracts, mypy.
checks: bandit audit lint-imports mypy

lint-imports: install
	SECRET_KEY=test-only-secret $(BIN)/lint-imports pyproject.toml

# Incremental: mypy keeps its cache in .mypy_cache between runs (a cold run takes 10-30 s, a
# warm one under a second).
mypy: install
	$(BIN)/mypy --strict --ignore-missing-imports $(CORES)

# The key flows (plans, simulations, histories, reports, runs, a real worker) on PostgreSQL:
# a throwaway cluster from Debian's postgresql (installed when missing and apt-get can), on a
# free port. Skips with a message without PostgreSQL; REQUIRE_POSTGRES=1 (CI) makes it fail.
test-postgres: install
	.ci/postgres

# Security lint of the code; each skipped check has its reason in pyproject.toml [tool.bandit].
bandit: install
	$(BIN)/bandit -c pyproject.toml -r planner pricing simulator -q

# Known vulnerabilities in requirements.txt and what it pulls in (needs network to PyPI);
# fails on any finding.
audit: install
	$(BIN)/python scripts/audit_dependencies.py

lint: install mypy
	$(BIN)/ruff check .

bench: catalog
	SECRET_KEY_FILE=.secret_key $(BIN)/python manage.py collectstatic --noinput -v0
	SECRET_KEY_FILE=.secret_key $(BIN)/python benchmarks/run.py

# The manual (docs/, mkdocs.yml) into site/, offline; any warning (a broken link or anchor, a
# page missing from the nav) fails the build.
docs: install
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) var .secret_key site
