"""How far `bench.py` grows a function's inputs: until a call would take longer than the time
budget or need more memory than the memory budget, so that no size can eat the machine.

Memory is estimated before a size runs, from the NumPy reference at a tenth and a hundredth of
that size: `tracemalloc` sees every buffer NumPy allocates, so the peak of one call is measured
exactly there, and a power law through the two points (an exponent between 1 and 3) scales it
up tenfold. An algorithm whose intermediate grows faster than its inputs (pairwise distances:
n x m x d numbers for inputs of n x d and m x d) thus shows its growth before it is run big.
The ports, assumed to hold the same intermediates, run only at the sizes the reference ran.

Time is measured: each backend and mode stops growing once a call (the median) took longer than
the time budget. So that one step cannot cost minutes, a size is also skipped where the times
at the two sizes before (their lower quartiles, which a busy machine disturbs least), scaled the
same way (an exponent between 1 and 2), say a call would take more than ten budgets.
"""

from __future__ import annotations

import math
import re
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The exponents that sizes' costs are assumed to grow with: memory up to the cube of the input
# (an n x n x n intermediate from inputs of n x n); time up to its square, as a busy machine's
# noise would otherwise predict more than it costs. A size predicted to take more than OVERSHOOT
# time budgets is not run.
MEMORY_GROWTH, TIME_GROWTH, OVERSHOOT = (1.0, 3.0), (1.0, 2.0), 10.0
UNITS = {"": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_bytes(text: str) -> int:
    """`512MB`, `2GB`, `1.5GiB` or a number of bytes; ValueError with an example otherwise."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmg]i?b)?\s*", text.lower())
    if not match or float(match.group(1)) <= 0:
        msg = f"{text!r}: expected an amount of memory such as 512MB or 2GB"
        raise ValueError(msg)
    return round(float(match.group(1)) * UNITS[match.group(2) or ""])


def size_text(count: float) -> str:
    """Bytes in a readable unit: 4.0 GB, 131 kB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            value = count / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{count:.0f} B"


def power_law(
    low: tuple[int, float], high: tuple[int, float], size: int, exponents: tuple[float, float]
) -> float:
    """The value at `size` of `value = c * size**p` through the points (size, value) `low` and
    `high`, with p within `exponents` (at least 1: small sizes are dominated by fixed costs)."""
    (size_low, value_low), (size_high, value_high) = low, high
    exponent = exponents[0]
    if size_high > size_low and value_low > 0 and value_high > 0:
        fitted = math.log(value_high / value_low) / math.log(size_high / size_low)
        exponent = min(max(fitted, exponents[0]), exponents[1])
    return float(value_high * (size / size_high) ** exponent)


@dataclass
class Growth:
    """The budgets of one function, and what it cost at the sizes measured so far."""

    seconds: float  # the time budget of one call (its median)
    bytes: int  # the memory budget of one call (the reference's peak, estimated)
    peak_of: Callable[[int], int]  # the reference's peak bytes at a size, measured
    peaks: dict[int, int] = field(default_factory=dict)
    memory_skips: dict[int, str] = field(default_factory=dict)

    def estimated_bytes(self, size: int) -> float | None:
        """The reference's peak at `size`, from its peaks at size / 100 and size / 10 (None for
        sizes under 100, too small to matter)."""
        low, high = size // 100, size // 10
        if low < 1:
            return None
        for probe in (low, high):
            if probe not in self.peaks:
                self.peaks[probe] = self.peak_of(probe)
        return power_law((low, self.peaks[low]), (high, self.peaks[high]), size, MEMORY_GROWTH)

    def too_big(self, size: int) -> str | None:
        """Why `size` is skipped for every backend, or None. Once one size is, so are larger."""
        if size in self.memory_skips:
            return self.memory_skips[size]
        smaller = [skipped for skipped in self.memory_skips if skipped < size]
        estimate = None if smaller else self.estimated_bytes(size)
        if smaller:
            reason = f"larger than size {min(smaller):,}, skipped for its memory"
        elif estimate is not None and estimate > self.bytes:
            reason = (
                f"would need about {size_text(estimate)}, over the memory budget "
                f"{size_text(self.bytes)}; --memory-budget"
            )
        else:
            return None
        self.memory_skips[size] = reason
        return reason

    def too_slow(self, rows: list[dict[str, Any]], size: int) -> str | None:
        """Why `size` is skipped for one backend and mode, given its rows so far (smaller sizes:
        `size`, `median_s` and `q1_s`)."""
        budget = f"time budget {seconds_text(self.seconds)}; --time-budget"
        if not rows:
            return None
        if rows[-1]["median_s"] > self.seconds:
            took = seconds_text(rows[-1]["median_s"])
            return f"a call at size {rows[-1]['size']:,} took {took}, over the {budget}"
        low, high = (
            (row["size"], row["q1_s"])
            for row in (rows[-2] if len(rows) > 1 else rows[-1], rows[-1])
        )
        estimate = power_law(low, high, size, TIME_GROWTH)
        if estimate <= OVERSHOOT * self.seconds:
            return None
        about = seconds_text(estimate)
        return f"would take about {about} a call, over {OVERSHOOT:.0f} times the {budget}"


def seconds_text(seconds: float) -> str:
    """Seconds to two digits: 0.5 s, 20 ms, 10 us."""
    if seconds >= 0.1:
        return f"{seconds:.2g} s"
    return f"{seconds * 1e3:.2g} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.2g} us"


def traced_peak(call: Callable[[], object]) -> int:
    """The most bytes allocated at once during `call()`, as tracemalloc sees them: NumPy's
    arrays (it reports their buffers to tracemalloc), not PyTorch's or JAX's."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
