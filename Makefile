# dra-operator: `make demo` and `make test` do all the set-up on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint fmt demo controlplane helm unit clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

controlplane:
	bash e2e/controlplane/build.sh

helm:
	bash e2e/helm/build.sh >/dev/null

.PHONY: oracle
oracle:
	bash tests/oracle/build.sh

# Issue #19: the chaos suite at full counts (tests/chaos; `make test` runs it lean). Figures
# go to chaos-figures.jsonl for docs/reliability.md. Hours: the soak alone churns 20,000 pods.
.PHONY: chaos
chaos: $(STAMP) controlplane
	CHAOS_FULL=1 CHAOS_FIGURES=chaos-figures.jsonl $(BIN)/pytest -q -p no:cacheprovider \
	  -o timeout=0 tests/chaos $(PYTEST_ARGS)

.PHONY: bench
bench: $(STAMP) ; $(BIN)/python bench/cel.py

# Issue #4: the allocator against upstream's Go allocator, in alternating rounds (~1.5 min).
.PHONY: bench-allocator
bench-allocator: $(STAMP) ; $(BIN)/python -m bench.allocator $(BENCH_ARGS)

# Issue #9: dra-operator against kube-scheduler + kube-controller-manager (~15 min).
.PHONY: bench-e2e
bench-e2e: $(STAMP) controlplane ; $(BIN)/python -m bench.scheduling $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/shellcheck $$(git ls-files -co --exclude-standard '*.sh') .ci/run
	$(BIN)/hadolint Dockerfile

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# pytest exits 5 when it collected no test: that is a failure here, never a pass.
test: $(STAMP) controlplane oracle helm lint
	$(BIN)/pytest -q -p no:cacheprovider $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

unit: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider tests/unit $(PYTEST_ARGS)

demo: $(STAMP) controlplane
	$(BIN)/dra-operator demo

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
