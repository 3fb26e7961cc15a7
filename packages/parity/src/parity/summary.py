"""What the end of a pytest run says about the harness's targets (plugin.py's hooks): the tests
skipped for a missing device as one line per reason, instead of a line each in the short
summary; why tests were deselected (the ``slow`` marker: ``-m slow`` runs them); and, in a
passed test's status, why it compared fewer calls than its examples."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

#: The user property that marks a test skipped for a missing device, with the reason.
DEVICE_SKIP = "parity_device_skip"


def device_skips(reporter: Any) -> list[pytest.TestReport]:
    """The reports of `reporter`'s skipped tests that skipped for a missing device."""
    return [
        report
        for report in reporter.stats.get("skipped", [])
        if DEVICE_SKIP in dict(getattr(report, "user_properties", ()))
    ]


def device_lines(reports: list[pytest.TestReport]) -> list[str]:
    """One line for the tests skipped for a missing device: how many, per reason."""
    if not reports:
        return []
    reasons = Counter(dict(report.user_properties)[DEVICE_SKIP] for report in reports)
    each = "; ".join(f"{count}: {reason}" for reason, count in reasons.most_common())
    return [f"parity: {len(reports)} targets skipped for a missing device ({each})"]


def deselected_lines(reporter: Any) -> list[str]:
    """A line on the tests deselected for the ``slow`` marker, and how to run them."""
    items = reporter.stats.get("deselected", [])
    slow = sum(
        1
        for item in items
        if getattr(item, "get_closest_marker", None) and item.get_closest_marker("slow")
    )
    if not slow:
        return []
    return [
        f"parity: {slow} deselected: marked slow (not run unless asked); `pytest -m slow` runs them"
    ]


def fewer_compared(compared: int, properties: dict[str, Any]) -> str:
    """Why a test compared fewer calls than its examples asked for, or "" where it did not."""
    asked = properties.get("examples")
    if not asked or compared >= asked:
        return ""
    reasons = []
    if refused := properties.get("refused"):
        reasons.append(
            f"{refused} draw{'s' * (refused > 1)} outside the reference's domain, redrawn"
        )
    if excused := properties.get("excused"):
        reasons.append(f"{excused} call{'s' * (excused > 1)} its dtype cannot hold")
    if not reasons:
        reasons.append("some examples made no call, or hypothesis found fewer distinct inputs")
    return f" of {asked} examples: {'; '.join(reasons)}"
