"""The roofline of `bench.py`'s rows: how close each call comes to what the machine can do.

A call must at least read its operands and write its result (a row's `bytes`), and some calls do
a known number of floating-point operations (`flops`): counted by PyTorch's `FlopCounterMode` on
the PyTorch port (matrix products, convolutions, attention; elementwise operations count 0, so
unknown), or declared by `benchmark_flops(size)` in the algorithm's test module. No call takes
less than its bytes at the machine's bandwidth, nor less than its operations at its operation
rate: the larger of the two times is the call's floor, and floor / median the fraction of the
peak the row reaches (1: as fast as the machine allows). A row's `bound` names the larger.

The peaks are measured in the same run, on each device, in the dtype and with the PyTorch threads
of the rows: the bandwidth by copies `dst.copy_(src)` (read and write bytes counted) over a ladder
of sizes, from ones that fit in the caches to four times the largest cache; the operation rate by
an n x n matrix product (2 n^3 operations), n doubled until one takes `MATMUL_SECONDS`. Each
number is the best of `REPETITIONS` repetitions.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from parity import Target

Row = dict[str, Any]
REPETITIONS = 5
# Each repetition of a copy lasts at least this long (many copies of a small array), so that
# the clock's resolution does not count.
REPETITION_SECONDS = 1e-3
# The copies: bytes moved (read + write) from FIRST_COPY, times COPY_STEP, up to four times the
# largest cache (BEYOND_CACHE where its size is unknown), so that the last comes from memory.
FIRST_COPY, COPY_STEP, BEYOND_CACHE = 32 * 2**10, 2, 64 * 2**20
MATMUL_SECONDS, LARGEST_MATMUL = 0.02, 8192


def nbytes(value: Any) -> int:
    """The bytes of an array (NumPy, PyTorch, JAX) or of the arrays in a tuple or list."""
    if isinstance(value, tuple | list):
        return sum(nbytes(item) for item in value)
    return int(value.nbytes) if hasattr(value, "nbytes") else int(np.asarray(value).nbytes)


def count_flops(
    function: Callable[..., Any], dtype: str, inputs: tuple[tuple[Any, ...], dict[str, Any]]
) -> int | None:
    """The floating-point operations PyTorch counts in one call of `function`'s PyTorch port on
    `inputs`, run on tensors without data (the meta device, where every port runs: its tests
    check it); None where it counts none or the port cannot run (a stub)."""
    operands, parameters = inputs
    target = Target("torch", dtype, "meta")
    arguments = [target.asarray(np.asarray(value)) for value in operands]
    try:
        with FlopCounterMode(display=False) as counter:
            function(*arguments, **parameters)
    except (NotImplementedError, RuntimeError):
        return None
    return int(counter.get_total_flops()) or None


# --- The peaks ------------------------------------------------------------------------------


def best_seconds(call: Callable[[], object], device: str) -> float:
    """The fastest time of one `call()`: best of `REPETITIONS`, each of as many calls as last
    `REPETITION_SECONDS`."""
    wait = getattr(torch, device).synchronize if device != "cpu" else lambda: None
    call()  # warm-up: the first call pays for allocations and, on a GPU, for starting
    wait()
    start = time.perf_counter()
    call()
    wait()
    calls = max(1, math.ceil(REPETITION_SECONDS / max(time.perf_counter() - start, 1e-9)))
    best = math.inf
    for _ in range(REPETITIONS):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        wait()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def largest_cache(device: str) -> int | None:
    """Bytes of the device's largest cache: a GPU's L2, the CPU's last level (Linux's sysfs)."""
    if device == "cuda":
        return int(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size)
    if device != "cpu":
        return None  # not told (Apple's GPUs)
    sizes = [
        path.read_text(encoding="utf-8").strip()
        for path in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size")
    ]
    return max((int(size[:-1]) * 2**10 for size in sizes if size.endswith("K")), default=None)


def copy_ladder(device: str, dtype: str, most_bytes: int) -> list[dict[str, float]]:
    """The bandwidth of `dst.copy_(src)` (bytes read + written per second) at each size of the
    ladder, up to four times the largest cache and at most `most_bytes` moved."""
    cache = largest_cache(device)
    last = min(4 * cache if cache else BEYOND_CACHE, most_bytes)
    element = torch.empty((), dtype=getattr(torch, dtype)).element_size()
    ladder, moved = [], FIRST_COPY
    while True:
        source = torch.ones(moved // 2 // element, dtype=getattr(torch, dtype), device=device)
        destination = torch.empty_like(source)
        seconds = best_seconds(functools.partial(destination.copy_, source), device)
        ladder.append({"bytes": float(moved), "bytes_per_s": moved / seconds})
        if moved >= last:
            return ladder
        moved = min(moved * COPY_STEP, last)


def matmul_peak(device: str, dtype: str) -> dict[str, Any]:
    """Operations per second of an n x n matrix product, n doubled until one takes
    `MATMUL_SECONDS` (long enough for the library's best kernel) or reaches `LARGEST_MATMUL`."""
    n = 256
    while True:
        a = torch.ones(n, n, dtype=getattr(torch, dtype), device=device)
        seconds = best_seconds(functools.partial(torch.matmul, a, a), device)
        if seconds >= MATMUL_SECONDS or n >= LARGEST_MATMUL:
            return {"flops_per_s": 2 * n**3 / seconds, "how": f"a @ a, a of {n} x {n}: 2 n^3"}
        n *= 2


def measure_peaks(devices: list[str], dtype: str, most_bytes: int) -> dict[str, Any]:
    """Per device, the bandwidth (the copy ladder and its best) and the operation rate, with what
    they were measured with."""
    peaks: dict[str, Any] = {}
    for device in devices:
        started = time.perf_counter()
        setting = {"device": device, "dtype": dtype, "threads": torch.get_num_threads()}
        setting["repetitions"] = REPETITIONS
        ladder = copy_ladder(device, dtype, most_bytes)
        bandwidth: dict[str, Any] = {"bytes_per_s": max(step["bytes_per_s"] for step in ladder)}
        bandwidth |= {"beyond_cache_bytes_per_s": ladder[-1]["bytes_per_s"], "ladder": ladder}
        bandwidth |= {"how": "dst.copy_(src), read + write bytes", **setting}
        compute = {**matmul_peak(device, dtype), **setting}
        peaks[device] = {"bandwidth": bandwidth, "compute": compute}
        peaks[device]["seconds"] = time.perf_counter() - started
    return peaks


# --- Each row against them ------------------------------------------------------------------


def bandwidth_ceiling(ladder: list[dict[str, float]], moved: float) -> float:
    """The copy bandwidth a call that moves `moved` bytes is read against: the copy's at that
    size (between the ladder's sizes, interpolated on log scales), or a larger copy's where that
    was faster.

    Not the copy from memory alone: a call whose data fit in a cache beats it, and its fraction
    would pass 1. Not the best copy of all: a call too large for the caches cannot reach it, and
    a port at memory speed would read as slow. A larger copy's counts because a small copy pays
    more for the call than for its bytes: the ceiling leaves that out, so that a small call's
    own overhead shows as a low fraction."""
    sizes = np.log([step["bytes"] for step in ladder])
    rates = np.log([step["bytes_per_s"] for step in ladder])
    own = float(np.exp(np.interp(np.log(moved), sizes, rates)))
    return max([own, *(step["bytes_per_s"] for step in ladder if step["bytes"] > moved)])


def uncounted(rows: list[Row]) -> list[str]:
    """The functions of `rows` with no known operation count: not on the roofline."""
    return sorted({row["function"] for row in rows if not row["flops"]})


def how_to_count(functions: list[str]) -> str:
    """How to declare the operation count of `functions`, in their test modules."""
    where = f"tests/test_{functions[0]}.py" if len(functions) == 1 else "tests/test_<name>.py"
    return f"Declare `def benchmark_flops(size: int) -> int` in {where}, beside benchmark_inputs"


def uncounted_note(rows: list[Row]) -> str | None:
    """The bench's note on the functions of `rows` with no operation count, or None."""
    if not (missing := uncounted(rows)):
        return None
    listed = ", ".join(missing)
    return f"No operation count for {listed}: not on the roofline. {how_to_count(missing)}."


def with_roofline(row: Row, peaks: dict[str, Any]) -> Row:
    """`row` with its achieved rates, its fraction of the peak and its bound.

    `of_peak` is capped at 1: a row above the ceiling moved less than its operands and result (a
    view, a cached or lazy result) or used more threads than measured (NumPy's BLAS has its own);
    `above_peak` keeps by how much, for the table to say so."""
    device = peaks[row["device"]]
    ceiling = bandwidth_ceiling(device["bandwidth"]["ladder"], row["bytes"])
    memory_floor = row["bytes"] / ceiling
    compute_floor = (row["flops"] or 0) / device["compute"]["flops_per_s"]
    fraction = max(memory_floor, compute_floor) / row["median_s"]
    flops_per_s = row["flops"] / row["median_s"] if row["flops"] else None
    return {
        **row,
        "bytes_per_s": row["bytes"] / row["median_s"],
        "flops_per_s": flops_per_s,
        "bandwidth_ceiling": ceiling,
        "of_peak": min(fraction, 1.0),
        "above_peak": fraction if fraction > 1 else None,
        "bound": "compute" if compute_floor > memory_floor else "memory",
    }
