# One command per habit. `make run` serves the app; `make test` runs the whole suite.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
PORT   ?= 8501
ADDRESS ?= 127.0.0.1

.PHONY: run test test-fast lint format chromium postgresql bench bench-accuracy bench-speed-accuracy bench-serving bench-aiconfigurator bench-capacity bench-acceptance bench-matrix bench-hostile bench-app validate-gpu clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.runtime-installed: requirements.txt | $(VENV)/bin/python
	$(PIP) install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.runtime-installed
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

## run: start the Streamlit app on http://localhost:$(PORT) with the embedded catalog
run: $(VENV)/.runtime-installed
	$(PY) -m ui._server --server.port $(PORT) --server.address $(ADDRESS) --server.headless true

## chromium: Debian's Chromium for browser tests and static chart export (root only, when missing)
chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian chromium"; \
	  (apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || \
	   (apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null)); \
	else echo "chromium missing and not root: browser tests will be skipped"; fi

## postgresql: Debian's PostgreSQL binaries for the store suite's throwaway server (root only, when missing)
postgresql:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian postgresql"; \
	  (apt-get install -y --no-install-recommends postgresql >/dev/null 2>&1 || \
	   (apt-get update >/dev/null && apt-get install -y --no-install-recommends postgresql >/dev/null)); \
	else echo "postgresql missing and not root: the store suite runs on SQLite only"; fi

## test: the whole suite (unit, app, CLI, browser; the store on SQLite and PostgreSQL)
test: $(VENV)/.dev-installed chromium postgresql
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=25

## test-fast: the pure core in about 30 s (no torch runs, subprocesses, app or browser; see the markers in pyproject.toml)
test-fast: $(VENV)/.dev-installed
	$(PY) -m pytest tests/core -m "not slow and not torch" -q

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## bench: every benchmark (prints, never asserts)
bench: bench-accuracy bench-speed-accuracy bench-serving bench-capacity bench-acceptance bench-matrix bench-hostile bench-app bench-search

bench-accuracy: $(VENV)/.runtime-installed
	$(PY) -m bench.memory_accuracy

bench-speed-accuracy: $(VENV)/.runtime-installed
	$(PY) -m bench.speed_accuracy

## bench-serving: the serving simulator against published serving measurements (and its wall time)
bench-serving: $(VENV)/.runtime-installed
	$(PY) -m bench.serving_accuracy

## bench-capacity: a replica's capacity against the run length behind it (nine replicas, two length mixes)
bench-capacity: $(VENV)/.runtime-installed
	$(PY) -m bench.capacity_convergence

## bench-aiconfigurator: refresh aiconfigurator's own estimates of the serving rows (installs its CLI, about 30 s a row)
bench-aiconfigurator: $(VENV)/.runtime-installed
	$(PIP) install --quiet -r requirements-bench.txt
	$(PY) -m bench.aiconfigurator_estimates

## bench-acceptance: the acceptance prior against the published pairs (and its refit)
bench-acceptance: $(VENV)/.runtime-installed
	$(PY) -m bench.acceptance_priors

## bench-matrix: wall time of the decision matrix (cold and warm)
bench-matrix: $(VENV)/.runtime-installed
	$(PY) -m bench.matrix_timing

## bench-hostile: engine-log parsing time on adversarial logs up to the 5,000,000-character cap
bench-hostile: $(VENV)/.runtime-installed
	$(PY) -m bench.log_parse_timing

## bench-app: speed of use: the params process and Fleet plan, each page through a real server and headless Chromium, and AppTest render times
bench-app: $(VENV)/.dev-installed chromium
	$(PY) -m bench.app_timing

## bench-search: the default design-space search as a process, its frontier against simulating every point, the
## Explore page's display of 100,000 points and its warm rerun
bench-search: $(VENV)/.runtime-installed
	$(PY) -m bench.search_timing

## validate-gpu: the prepared GPU validation (one NVIDIA GPU of >= 80 GB)
validate-gpu: $(VENV)/.runtime-installed
	$(PY) -m bench.validate_gpu

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
