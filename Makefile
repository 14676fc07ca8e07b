# The two commands of the README: `make demo` and `make test`.
# Each creates .venv with the interpreter it finds, installs what it needs, then runs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CONSTRAINTS := constraints/torch-cpu.txt
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
TORCH_STAMP := $(VENV)/.installed-torch-$(shell cat pyproject.toml $(CONSTRAINTS) | cksum | cut -d' ' -f1)

.PHONY: demo test lint bench clean chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[dev,distributed]"
	$(BIN)/python -m compileall -q src/mipkit  # byte code now: a command's first run does not compile mipkit
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# `make test` adds the torch extra, pinned to the release the tests were run with; a CPU-only build of it is
# taken where pip offers one (see $(CONSTRAINTS)), so the torch tests run without a GPU stack; and the synth
# extra (mbi, ctgan, rdt), so the AIM / MST / CTGAN adapters are tested too.
$(TORCH_STAMP): $(STAMP) $(CONSTRAINTS)
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev,distributed,torch,synth]"
	$(BIN)/python -m compileall -q src/mipkit
	rm -f $(VENV)/.installed-torch-*
	touch $(TORCH_STAMP)

# A headless browser for tests/docs/test_site_browser.py: Debian's chromium, installed when it is missing and
# we are root with apt (quiet; once there, nothing runs). Without it that test is skipped, saying why.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 \
	  || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
	  || echo "chromium could not be installed: tests/docs/test_site_browser.py will be skipped"

demo: $(STAMP)
	$(BIN)/mipkit demo --out runs/demo

test: $(TORCH_STAMP) chromium
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports --no-cache
	$(BIN)/mkdocs build --strict --site-dir build/site
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
