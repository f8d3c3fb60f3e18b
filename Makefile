# The two commands a new user needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
PORT ?= 8501

.PHONY: run test venv install install-test system-deps bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# After installing, compile the engine's numba kernels into their cache (once, ~20 s to 90 s), and again after
# an update of the engine's sources (git pull): importing the engine drops kernels cached against other sources
# (frl_engine/kernel_cache.py), so the warm-up compiles them here rather than in a clinician's first fit.
ENGINE_SOURCES := $(wildcard frl_engine/*.py)
$(STAMP): pyproject.toml $(ENGINE_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m frl_engine.warmup
	touch $@

$(TEST_STAMP): pyproject.toml $(ENGINE_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m frl_engine.warmup
	touch $@ $(STAMP)

install: $(STAMP)
install-test: $(TEST_STAMP)

# Debian packages the browser test and the card preview need (Chromium, its driver, pdftoppm), and the
# PostgreSQL server the registry test starts a throw-away cluster of (tests/test_registry.py).
system-deps:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ] || ! command -v pdftoppm >/dev/null \
		|| ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver poppler-utils postgresql; \
	fi

run: install
	$(BIN)/streamlit run dashboard/app.py --server.port $(PORT)

# The tests run in two processes (pytest-xdist; up to 4 on a larger machine): about 13 minutes on 2 cores
# instead of 18 to 19 one after another.  `pytest tests/FILE.py` on its own runs one after another.
# The real-browser tests (-m browser, about 3 minutes) run after the others, one at a time and alone: the
# dashboard's jobs run at a lower priority (frl_engine.stopping.WORKER_NICE), so next to another test
# process at full priority a 3-second fit took minutes and timed out.  Both runs always run; either failing fails.
test: install-test system-deps
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 -m "not browser"; others=$$?; \
	$(BIN)/python -m pytest -q -m browser; browser=$$?; \
	exit $$(( others || browser ))

bench: install
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
