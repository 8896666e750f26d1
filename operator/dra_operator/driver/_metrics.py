"""The driver's metrics, in a registry of its own (a driver and an operator may share a test
process). Exposed on `--metrics-port` when given; docs/driver.md lists them."""

from __future__ import annotations

from prometheus_client import Counter, Gauge
from prometheus_client.registry import CollectorRegistry

__all__ = ["DriverMetrics"]


class DriverMetrics:
    """Counters of the prepare decisions and the number of claims held."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.prepare_errors = Counter(
            "dra_operator_driver_prepare_refusals_total",
            "Claims the simulated driver refused to prepare, by reason (device_in_use: the "
            "device is already prepared for another claim).",
            ["reason"],
            registry=self.registry,
        )
        self.prepared_claims = Gauge(
            "dra_operator_driver_prepared_claims",
            "Claims the simulated driver holds prepared (its checkpoint).",
            registry=self.registry,
        )
        self.slice_writes = Counter(
            "dra_operator_driver_slice_writes_total",
            "ResourceSlice writes of the simulated driver, by verb (create, update, delete).",
            ["verb"],
            registry=self.registry,
        )

    def refusals(self, reason: str) -> float:
        """The refusal count for `reason` so far (for tests and the summary log)."""
        value = self.registry.get_sample_value(
            "dra_operator_driver_prepare_refusals_total", {"reason": reason}
        )
        return value or 0.0
