"""Read a `Metrics` object the way Prometheus does: render the page, parse it back."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from dra_operator.observability import Metrics

Series = tuple[str, tuple[tuple[str, str], ...]]


def scrape(metrics: Metrics) -> dict[Series, float]:
    """Every sample on the page, keyed by sample name and sorted label pairs."""
    page = metrics.render().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
    }


def value(metrics: Metrics, series: str, /, **labels: str) -> float | None:
    """The sample `series{labels}`, or None when the page lacks it."""
    return scrape(metrics).get((series, tuple(sorted(labels.items()))))
