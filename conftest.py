"""Root conftest: registers the shared fixtures in tests/support for every test directory.

Hypothesis runs without its per-example deadline and its too-slow health check: both are timing
assertions, and on a loaded machine a slow example would fail a test that found nothing wrong.
Property tests run a quarter of their examples in `make test` and all of them in `make
test-full` (tests/support/counts.py): the default here, each test's own count through
`property_examples`.
"""

from hypothesis import HealthCheck, settings
from tests.support.counts import property_examples

settings.register_profile(
    "dra-operator",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    max_examples=property_examples(settings.default.max_examples),
)
settings.load_profile("dra-operator")

pytest_plugins = [
    "tests.support.controlplane",
    "tests.support.kubelet_standin",
    "tests.support.oracle",
    "tests.support.operator",
]
