"""Root conftest: registers the shared fixtures in tests/support for every test directory."""

pytest_plugins = [
    "tests.support.controlplane",
    "tests.support.kubelet_standin",
    "tests.support.oracle",
    "tests.support.operator",
]
