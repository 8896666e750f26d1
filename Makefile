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

# The pinned releases (e2e/controlplane/v1.<minor>/): 1.37 is the primary one; the older ones
# build only kube-apiserver (the primary's etcd and kubectl serve them) and run the e2e suite.
K8S_OTHER := 1.36
K8S_OLDER := 1.35 1.34 1.33 1.32 1.31
controlplane:
	bash e2e/controlplane/build.sh 1.37
	bash e2e/controlplane/build.sh $(K8S_OTHER)
	for release in $(K8S_OLDER); do bash e2e/controlplane/build.sh $$release || exit 1; done

helm:
	bash e2e/helm/build.sh >/dev/null

.PHONY: oracle
oracle:
	bash tests/oracle/build.sh 1.36
	bash tests/oracle/build.sh 1.37

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
# Everything on the primary release, then the control-plane suites again on $(K8S_OTHER), then
# the e2e scenarios on each of $(K8S_OLDER).
test: $(STAMP) controlplane oracle helm lint
	$(BIN)/pytest -q -p no:cacheprovider $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; \
	  [ $$rc -eq 0 ] || exit $$rc
	$(BIN)/pytest -q -p no:cacheprovider -m controlplane --k8s-version $(K8S_OTHER) \
	  tests/integration e2e $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; \
	  [ $$rc -eq 0 ] || exit $$rc
	for release in $(K8S_OLDER); do \
	  $(BIN)/pytest -q -p no:cacheprovider -m controlplane --k8s-version $$release e2e; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; \
	  [ $$rc -eq 0 ] || exit $$rc; \
	done

unit: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider tests/unit $(PYTEST_ARGS)

demo: $(STAMP) controlplane
	$(BIN)/dra-operator demo

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
