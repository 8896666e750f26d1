"""The e2e suite: one code path for the local control plane and for a real cluster (kind).

Given KUBECONFIG it runs against that cluster; otherwise against the session control plane of
tests/support/controlplane.py. It is its own DRA driver (`_driver`): it publishes one
ResourceSlice per node it uses, so no real driver is installed. With
DRA_OPERATOR_E2E_OPERATOR=deployed the operator runs in the cluster (e2e/kind/run.sh installs
it from deploy/; without KUBECONFIG the suite installs the image of `make image` on its own
real nodes, `_install`); otherwise the suite starts `dra-operator run` for its namespaces.
docs/kind.md says what the scenarios check and how to run them.
"""
