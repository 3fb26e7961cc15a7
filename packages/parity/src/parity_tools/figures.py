"""What `bench.py`'s plots share: matplotlib where installed, the panels' size, and saving a
figure as PNG and PDF under a title that says what the numbers were measured with."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

PANEL_INCHES, DPI = (4.8, 3.6), 100
TITLE_CHARS_PER_INCH = 12  # characters of a small (10 pt) font that fit in an inch


def pyplot() -> Any:
    """matplotlib's pyplot, drawing to files only (no window), or None where matplotlib is not
    installed: it is optional (a repo's `bench` group), and the report says how to get it."""
    try:
        import matplotlib as mpl
    except ModuleNotFoundError:
        return None
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(figure: Any, path: Path, title: str, inches: tuple[float, float]) -> tuple[int, int]:
    """`figure` under `title` (wrapped to the figure's width: one panel wide at least), as PNG at
    `path` and as PDF beside it; the PNG's width and height."""
    wrapped = [
        textwrap.fill(line, width=round(inches[0] * TITLE_CHARS_PER_INCH))
        for line in title.split("\n")
    ]
    figure.suptitle("\n".join(wrapped), fontsize="small")
    figure.savefig(path, dpi=DPI)  # no bbox_inches="tight": the size stays as stated
    figure.savefig(path.with_suffix(".pdf"))
    return round(inches[0] * DPI), round(inches[1] * DPI)
