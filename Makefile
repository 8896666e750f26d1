# dra-operator: `make demo` and `make test` do all the set-up on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint fmt demo controlplane helm unit wheel clean node-runtime node-packages

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

# The pinned releases (e2e/controlplane/v1.<minor>/): 1.37 is the primary one; the older ones
# build only kube-apiserver (the primary's etcd and kubectl serve them) and run the e2e suite
# (1.27-1.30 serve only v1alpha2: there e2e/test_classic.py and test_discovery.py run, on 1.30
# also test_named_resources.py, and the rest skip).
K8S_OTHER := 1.36
K8S_OLDER := 1.35 1.34 1.33 1.32 1.31 1.30 1.29 1.28 1.27
controlplane:
	bash e2e/controlplane/build.sh 1.37
	bash e2e/controlplane/build.sh $(K8S_OTHER)
	for release in $(K8S_OLDER); do bash e2e/controlplane/build.sh $$release || exit 1; done

helm:
	bash e2e/helm/build.sh >/dev/null

# Real nodes (`controlplane up --nodes N`): containerd 2.x built from its module, and the Debian
# packages a node runs with (installed when missing: CI is a fresh machine, run as root).
node-runtime:
	bash e2e/node/build.sh

NODE_PACKAGES := runc containernetworking-plugins busybox-static iproute2 iptables
node-packages:
	@missing=$$(for p in $(NODE_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

.PHONY: oracle
oracle:
	bash tests/oracle/build.sh 1.36
	bash tests/oracle/build.sh 1.37
	bash tests/oracle/scheduler/build.sh

# The routing races at full counts (20 per install) and on each release of ROUTING_RELEASES
# with its install (tests/integration/test_routing.py; `make test` runs 3 races, one release),
# and the upgrades from the previous chart and layout with more pods arriving
# (tests/integration/test_routing_upgrade.py; `make test` runs them lean).
# kube-scheduler and kube-controller-manager of 1.34 and 1.35 are built here when missing
# (`make controlplane` builds only their kube-apiserver).
# Each race's counts go to routing-figures.jsonl for docs/coexistence.md.
ROUTING_RELEASES ?= 1.34 1.35 1.36 1.37
.PHONY: upstream-releases test-routing
upstream-releases: $(STAMP) controlplane
	for release in $(ROUTING_RELEASES); do \
	  bash e2e/controlplane/build.sh $$release kube-apiserver kube-scheduler \
	    kube-controller-manager || exit 1; \
	done
test-routing: upstream-releases
	ROUTING_FULL=1 ROUTING_RELEASES="$(ROUTING_RELEASES)" ROUTING_FIGURES=routing-figures.jsonl \
	  $(BIN)/pytest -q -p no:cacheprovider -o timeout=0 tests/integration/test_routing.py \
	  tests/integration/test_routing_upgrade.py $(PYTEST_ARGS)

# The chaos suite at full counts (tests/chaos; `make test` runs it lean). Figures
# go to chaos-figures.jsonl for docs/reliability.md. About 75 min on a loaded 2-core machine,
# half of it the soak's 20,000 pods.
.PHONY: chaos
chaos: $(STAMP) controlplane
	CHAOS_FULL=1 CHAOS_FIGURES=chaos-figures.jsonl $(BIN)/pytest -q -p no:cacheprovider \
	  -o timeout=0 tests/chaos $(PYTEST_ARGS)

.PHONY: bench
bench: $(STAMP) ; $(BIN)/python bench/cel.py

# The allocator against upstream's Go allocator, in alternating rounds (~1.5 min).
.PHONY: bench-allocator
bench-allocator: $(STAMP) ; $(BIN)/python -m bench.allocator $(BENCH_ARGS)

# One scheduling decision's cost in process at 20, 100 and 500 nodes (~1 min, no API server).
.PHONY: bench-decision
bench-decision: $(STAMP) ; $(BIN)/python -m bench.decision_cost $(BENCH_ARGS)

# dra-operator against kube-scheduler + kube-controller-manager (3 min 29 s at bef722a, 2026-11-22).
.PHONY: bench-e2e
bench-e2e: $(STAMP) controlplane ; $(BIN)/python -m bench.scheduling $(BENCH_ARGS)

# 20, 100 and 500 nodes, with the limit system beside ours and upstream (docs/benchmarks.md).
SCALE_ARGS ?= --sizes 20,100,500 --systems upstream,ours,limit --plot /tmp/bench-scale.png --markdown /tmp/bench-scale.md
.PHONY: bench-scale
bench-scale: $(STAMP) controlplane ; $(BIN)/python -m bench.scheduling $(SCALE_ARGS) $(BENCH_ARGS)

# The scheduler's CPU per pod at 20, 500, 2,000 and 5,000 nodes × 8 devices, in process: no API
# server, the decision and the cache updates only (docs/benchmarks.md; several minutes).
.PHONY: bench-decision-scaling
bench-decision-scaling: $(STAMP) ; $(BIN)/python -m bench.decision_scaling $(BENCH_ARGS)

# ClusterLoader2's dra-steady-state at 5,000 nodes × 8 devices: fill 36,000 pods as fast
# as each system goes, then 5 pods/s for 5 min; upstream's fill alone takes most of an hour.
STEADY_ARGS ?= --sizes 5000 --workloads s --systems upstream,ours,limit --churn-rate 5 --churn-seconds 300 --plot /tmp/bench-steady.png --markdown /tmp/bench-steady.md
.PHONY: bench-steady
bench-steady: $(STAMP) controlplane ; $(BIN)/python -m bench.scheduling $(STEADY_ARGS) $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/shellcheck $$(git ls-files -co --exclude-standard '*.sh') .ci/run
	$(BIN)/hadolint Dockerfile

# The simulated driver's gRPC modules, from our .proto files (tests/unit/driver/test_proto.py
# fails when they are stale).
PROTOS := $(wildcard operator/dra_operator/driver/_proto/*.proto)
.PHONY: proto
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -I operator --python_out=operator --pyi_out=operator \
	  --grpc_python_out=operator $(PROTOS)

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The image from the Dockerfile, without a Docker engine (buildah; as root): e2e/image/build.sh.
# Reused while the Dockerfile, the build context and the base are unchanged.
IMAGE_PACKAGES := buildah mmdebstrap
.PHONY: image
image:
	@missing=$$(for p in $(IMAGE_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	bash e2e/image/build.sh >/dev/null

# The wheel: python -m build, twine check, a clean venv's dra-operator and kubectl-dra.
wheel: $(STAMP)
	bash .ci/check-wheel.sh

# The operator deployed from the image (`make image`) on real nodes, installed with deploy/
# (kustomize) or with the Helm chart (DRA_OPERATOR_E2E_INSTALL=helm): `make test` runs these e2e
# files against each install (e2e/test_deployed.py: probes, Lease, rolling restart, deploy/
# replaced by the chart, helm upgrade; e2e/test_upgrade.py: the previous chart and layout
# upgraded while pods arrive); `make e2e-deployed` runs every e2e file against both.
DEPLOYED_E2E := e2e/test_deployed.py e2e/test_upgrade.py
HELM_E2E := e2e/test_real_nodes.py
.PHONY: e2e-deployed
e2e-deployed: $(STAMP) controlplane node-runtime node-packages helm image
	for how in kustomize helm; do \
	  DRA_OPERATOR_E2E_OPERATOR=deployed DRA_OPERATOR_E2E_INSTALL=$$how $(BIN)/pytest -q \
	    -p no:cacheprovider -m controlplane e2e $(PYTEST_ARGS) || exit 1; \
	done

# The control-plane files run again on $(K8S_OTHER), each for what it checks that differs between
# releases (served versions and their shapes, feature gates, admission and routing policies,
# upstream binaries of the release). Every other file runs once, on the primary release: a new
# file too, unless it is added here. `make test-full` runs tests/integration and e2e whole there.
OTHER_RELEASE_TESTS += tests/integration/test_api_versions.py  # every served resource.k8s.io version, converted
OTHER_RELEASE_TESTS += tests/integration/test_extended_resources.py  # DRAExtendedResource beta on 1.36, GA on 1.37
OTHER_RELEASE_TESTS += tests/integration/test_gang_scheduling.py  # PodGroups v1alpha2 and 1.36's gang cycle on 1.36, v1beta1 on 1.37
OTHER_RELEASE_TESTS += tests/integration/test_kubectl.py  # the release's kubectl against its DRA API
OTHER_RELEASE_TESTS += tests/integration/test_manifests.py  # deploy/, the chart and the admission policies on the release's admission and CEL
OTHER_RELEASE_TESTS += tests/integration/test_model_shapes.py  # parsers and renderers against each served version
OTHER_RELEASE_TESTS += tests/integration/test_operator_run.py  # discovery of served versions and the release's features
OTHER_RELEASE_TESTS += tests/integration/test_poolstatus.py  # DRAResourcePoolStatus (v1alpha3) as the release serves it
OTHER_RELEASE_TESTS += tests/integration/test_scheduler.py::test_a_claim_skipping_node_operations_needs_a_node_declaring_the_feature  # a 1.37-only field, dropped on 1.36
OTHER_RELEASE_TESTS += tests/integration/test_scheduler_taint_rules.py  # DeviceTaintRule v1beta2 on 1.36, v1 on 1.37
OTHER_RELEASE_TESTS += tests/integration/test_upstream_components.py  # the release's kube-scheduler and KCM with its DRA gates
OTHER_RELEASE_TESTS += e2e/test_discovery.py  # the newest version and features the operator picks on the release
OTHER_RELEASE_TESTS += e2e/test_eviction.py  # `dra-operator taint --via rule` through the release's DeviceTaintRule version
OTHER_RELEASE_TESTS += e2e/test_real_nodes.py  # the release's kubelet preparing what the operator allocated

# Fails when pytest collected no test (exit 5): a stage that runs nothing must not pass.
PYTEST_STAGE = rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; \
  exit 1; fi; [ $$rc -eq 0 ] || exit $$rc

# Everything on the primary release (races, property tests and chaos bursts at lean counts),
# then the deployed operator's scenarios, then the release-sensitive files on $(K8S_OTHER), then
# the e2e scenarios on each of $(K8S_OLDER).
test: $(STAMP) controlplane node-runtime node-packages oracle helm lint wheel image
	$(BIN)/pytest -q -p no:cacheprovider $(PYTEST_ARGS); $(PYTEST_STAGE)
	DRA_OPERATOR_E2E_OPERATOR=deployed $(BIN)/pytest -q -p no:cacheprovider -m controlplane \
	  $(DEPLOYED_E2E) $(PYTEST_ARGS); $(PYTEST_STAGE)
	DRA_OPERATOR_E2E_OPERATOR=deployed DRA_OPERATOR_E2E_INSTALL=helm $(BIN)/pytest -q \
	  -p no:cacheprovider -m controlplane $(HELM_E2E) $(PYTEST_ARGS); $(PYTEST_STAGE)
	$(BIN)/pytest -q -p no:cacheprovider -m controlplane --k8s-version $(K8S_OTHER) \
	  $(OTHER_RELEASE_TESTS) $(PYTEST_ARGS); $(PYTEST_STAGE)
	for release in $(K8S_OLDER); do \
	  $(BIN)/pytest -q -p no:cacheprovider -m controlplane --k8s-version $$release e2e; \
	  $(PYTEST_STAGE); \
	done

# `make test` at full counts: the routing races (20) and upgrades on every release, the chaos
# suite's full bursts and soak, property tests at their full examples, and tests/integration and
# e2e whole on $(K8S_OTHER). Well over CI's 90 minutes; run it before a release.
.PHONY: test-full
test-full: upstream-releases
	DRA_OPERATOR_TEST_FULL=1 CHAOS_FULL=1 ROUTING_FULL=1 ROUTING_RELEASES="$(ROUTING_RELEASES)" \
	  $(MAKE) test OTHER_RELEASE_TESTS="tests/integration e2e" PYTEST_ARGS="-o timeout=0 $(PYTEST_ARGS)"

unit: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider tests/unit $(PYTEST_ARGS)

demo: $(STAMP) controlplane node-runtime node-packages
	$(BIN)/dra-operator demo

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
