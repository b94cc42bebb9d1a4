# The two commands of the README:
#   make report   install, then build report.html from the embedded sample
#   make test     install (with test extras and a headless browser), then lint and test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: report test install browser bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

report: install
	$(BIN)/cctx-research report --out report.html

# The report test renders HTML in headless Chromium; install Debian's when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium (Debian package) for the report rendering test"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "warning: chromium could not be installed; the rendering test will be skipped"; }

test: install browser
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
