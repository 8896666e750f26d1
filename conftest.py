"""Root conftest: registers the shared fixtures in tests/support for every test directory.

Hypothesis runs without its per-example deadline and its too-slow health check: both are timing
assertions, and on a loaded machine a slow example would fail a test that found nothing wrong.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dra-operator", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("dra-operator")

pytest_plugins = [
    "tests.support.controlplane",
    "tests.support.kubelet_standin",
    "tests.support.oracle",
    "tests.support.operator",
]
