"""Root conftest: the control-plane harness serves both tests/ and e2e/."""

pytest_plugins = ["tests.support.controlplane"]
