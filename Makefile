# The two commands of the README: `make demo` and `make test`.
# Each creates .venv with the interpreter it finds, installs what it needs, then runs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CONSTRAINTS := constraints/torch-cpu.txt
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
TORCH_STAMP := $(VENV)/.installed-torch-$(shell cat pyproject.toml $(CONSTRAINTS) | cksum | cut -d' ' -f1)

.PHONY: demo test lint bench clean

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

demo: $(STAMP)
	$(BIN)/mipkit demo --out runs/demo

test: $(TORCH_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports --no-cache
	$(BIN)/mkdocs build --strict --site-dir build/site
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
