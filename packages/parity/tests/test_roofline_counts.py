"""The roofline plot says which functions it cannot place, for want of an operation count, and
how to declare one, rather than leaving its left panel empty; the bench's notes say it too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parity_tools import figures, roofline, roofline_plot

PEAK = {
    "compute": {"flops_per_s": 1e10, "device": "cpu"},
    "bandwidth": {
        "bytes_per_s": 2e10,
        "beyond_cache_bytes_per_s": 1e10,
        "device": "cpu",
        "ladder": [{"bytes": 2**15, "bytes_per_s": 2e10}, {"bytes": 2**26, "bytes_per_s": 1e10}],
    },
}


def row(function: str, flops: int | None) -> dict[str, Any]:
    timed: dict[str, Any] = {"function": function, "backend": "torch", "mode": "eager"}
    timed["device"] = "cpu"
    timed |= {"size": 1000, "bytes": 8000, "flops": flops, "median_s": 1e-5}
    return roofline.with_roofline(timed, {"cpu": PEAK})


def texts_of_the_roofline(rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> str:
    """The text on the roofline's panel (left) as plotted, its lines joined."""
    pytest.importorskip("matplotlib")
    drawn: list[Any] = []

    def keep(figure: Any, *_: object) -> tuple[int, int]:
        drawn.append(figure)
        return (1, 1)

    monkeypatch.setattr(figures, "save", keep)
    roofline_plot.plot(rows, {"cpu": PEAK}, Path("unused.png"), "title")
    panel = drawn[0].axes[0]
    said = " ".join([panel.get_title(), *(text.get_text() for text in panel.texts)])
    return " ".join(said.split())  # as read, whatever the lines it was wrapped to


def test_the_plot_names_the_functions_without_a_count(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = texts_of_the_roofline([row("matmul", 2000), row("softmax", None)], monkeypatch)
    assert "softmax" in shown
    assert "matmul" not in shown.replace("roofline of", "")
    assert "benchmark_flops(size: int) -> int" in shown
    assert "tests/test_softmax.py" in shown


def test_without_any_count_it_says_so_and_how(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [row("softmax", None), row("cross_entropy", None), row("softmax", None)]
    shown = texts_of_the_roofline(rows, monkeypatch)
    assert "cross_entropy, softmax" in shown
    assert "benchmark_flops" in shown


def test_the_notes_name_them() -> None:
    note = roofline.uncounted_note([row("matmul", 2000), row("softmax", None)])
    assert note is not None
    assert note.startswith("No operation count for softmax")
    assert "benchmark_flops(size: int) -> int" in note
    assert roofline.uncounted_note([row("matmul", 2000)]) is None
