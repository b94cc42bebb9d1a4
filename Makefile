# The two commands of the README:
#   make report   install the toolkit (no test extras), then build report.html from the sample
#   make test     install with the test extras (and a headless browser), then lint and test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: report test install install-test browser tools bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# what the report needs: the toolkit and its core dependencies
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $(STAMP)

# the rest for the tests (notebooks, engines, pytest, playwright, ...)
$(TEST_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(TEST_STAMP)

install: $(STAMP)

install-test: $(TEST_STAMP)

report: install
	$(BIN)/cctx-research report --out report.html

# The report test renders HTML in headless Chromium; install Debian's when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium (Debian package) for the report rendering test"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "warning: chromium could not be installed; the rendering test will be skipped"; }

# The sync tests run a real EVM node (anvil) and compile their contract with solc-js, both
# from the npm registry, into .tools/ (pinned; installed once, again when the pins change).
TOOLS_STAMP := .tools/.installed-anvil-1.7.1-solc-0.8.37
$(TOOLS_STAMP):
	@command -v npm >/dev/null 2>&1 || { \
	  echo "installing npm (Debian package) for the sync tests' node tools"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null) \
	  || echo "warning: npm could not be installed; the sync tests will be skipped"; }
	npm install --prefix .tools --no-audit --no-fund --loglevel=error \
	  @foundry-rs/anvil-linux-amd64@1.7.1 solc@0.8.37
	touch $(TOOLS_STAMP)

tools: $(TOOLS_STAMP)

# The suite in parallel (WORKERS below). A scope (a test module, a doc page,
# or one test of a module of independent long tests) runs on one worker; the scopes with
# a slow test start first (tests/conftest.py).
# One worker more than cores below four (at most 4): much of the suite waits on browsers,
# kernels and the node, and a third worker fills that time (2 cores: 15 min 08 s with three
# workers against 17 min 10 s with two, benchmarks/README.md "The test suite").
WORKERS := $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$((n < 4 ? n + 1 : 4)))
PYTEST_PARALLEL := -n $(WORKERS) --dist loadscope --no-loadscope-reorder

# The suite starts over a hundred Python processes (workers, kernels, the CLI, the benchmarks'
# smoke runs); each compiled the toolkit's sources again where PYTHONDONTWRITEBYTECODE is set,
# and each worker rewrote every test module's asserts again. Their bytecode is kept under
# .venv/pycache (never beside the sources), so it is compiled once.
PYTEST_BYTECODE := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache

test: install-test browser tools
	$(BIN)/ruff check .
	$(PYTEST_BYTECODE) $(BIN)/python -m pytest $(PYTEST_PARALLEL)

bench: install-test
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) .tools .pytest_cache .ruff_cache .hypothesis
