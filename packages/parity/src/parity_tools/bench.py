"""Time every public function of the package on every backend, eager and compiled.

    parity bench                       # quick profile, every device found
    parity bench --profile thorough    # more sizes, longer measurements
    parity bench --only softmax --device cuda
    parity bench --save-baseline       # keep this run as this commit's baseline
    parity bench --compare main        # each row's ratio to main's baseline

The functions are the package's `__all__`. Each one's inputs come from `benchmark_inputs(size)`
in its test module, tests/test_<name>.py, at the sizes that module declares in `BENCHMARK_SIZES`
(or the profile's); a size counts the elements of the largest operand. Every backend runs in the
same dtype (`--dtype`): the NumPy reference, then the ports on each device, eager and compiled
(`torch.compile`, and `jax.jit` where the repo has JAX); a Triton port on CUDA, beside the
PyTorch port itself (`what_runs`). Sizes grow until a call would take
longer than the time budget or need more memory than the memory budget (`bench_sizes.py`); the
report lists those skipped.

`torch.utils.benchmark` times the calls: it warms up, waits for the device, takes many samples
and reports their median and interquartile range (IQR). The first call, which compiles, is
timed on its own. PyTorch uses one CPU thread unless `--threads` says more, as that timer does
by default: where other programs keep the CPUs busy, a call split over several threads waits for
the slowest, and can take a hundred times longer than on one. The load average is recorded, and
a busy machine is named in a warning. Results go to bench-results/ (see `bench_report.py`);
comparisons with an earlier commit's baseline are `bench_compare.py`'s.

Whether a time is good: after the rows, the run measures each device's peaks (bandwidth and
operation rate) in the same dtype and threads, and reads every row against them (`roofline.py`):
the bytes it must move and, where known, its operations (`benchmark_flops(size)` in the test
module, else PyTorch's count of the port's), as a fraction of what the machine allows.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils import benchmark

import parity
from parity import Target
from parity.backends import called_as_public, implementation, shared_implementation
from parity.core import DEVICES
from parity.targets import missing_backend, missing_device

from . import bench_compare, bench_report, bench_sizes, roofline
from .repo import repo_package, repo_root

ROOT = repo_root()
TESTS = ROOT / "tests"
BASELINES = ROOT / "bench-results" / "baselines"
# The inputs come from the algorithms' test modules (`benchmark_inputs`).
sys.path.insert(0, str(TESTS))

Inputs = Callable[[int], tuple[tuple[Any, ...], dict[str, Any]]]
Flops = Callable[[int], int]


@dataclass(frozen=True)
class Profile:
    """Input sizes (elements of the largest operand), seconds of samples per measurement, and
    the budgets of one call: sizes that would exceed them are skipped."""

    sizes: tuple[int, ...]
    min_run_time: float
    most_sizes: int  # of an algorithm's own BENCHMARK_SIZES: smallest, largest, between
    time_budget: float  # seconds, the median of one call
    memory_budget: int  # bytes, the NumPy reference's peak in one call


# What --backend asks for: the reference and the ports; a shared (Array API) implementation is
# timed on NumPy's arrays too, whenever the reference is.
BACKENDS = ("numpy", "torch", "jax", "triton")
PROFILES = {
    "quick": Profile(
        tuple(10**k for k in range(3, 7)), 0.1, 4, time_budget=0.5, memory_budget=500 * 10**6
    ),
    "thorough": Profile(
        tuple(10**k for k in range(2, 8)), 1.0, 100, time_budget=2.0, memory_budget=2 * 10**9
    ),
}


# The backends whose rows are PyTorch's tensors: compiled by torch.compile, waited for on a GPU.
TORCH_TENSORS = ("torch", "triton")
# A size skipped for the budgets: by every backend (the reference's sizes), or by one port.
SKIP_KEYS = ("function", "size", "backend", "device", "mode", "reason")


class Skipped(Exception):
    """A function or a port that cannot be timed; the message says why."""


def parse_args(argv: list[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        description="Time every public function on every backend, eager and compiled."
    )
    parser.add_argument("--profile", choices=PROFILES, default="quick", help="default: quick")
    parser.add_argument("--only", action="append", metavar="NAME", help="this function only")
    parser.add_argument("--backend", action="append", choices=BACKENDS, help="repeatable")
    parser.add_argument("--device", action="append", choices=DEVICES, help="repeatable")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--sizes", type=sizes, help="comma-separated, replaces the profile's")
    parser.add_argument(
        "--threads",
        type=threads,
        default=1,
        help="PyTorch's CPU threads (default 1: steady on a busy machine; more on a quiet one)",
    )
    parser.add_argument("--min-run-time", type=float, help="seconds of samples per measurement")
    parser.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="skip sizes where a call would take longer (quick: 0.5, thorough: 2)",
    )
    parser.add_argument(
        "--memory-budget",
        type=memory,
        metavar="SIZE",
        help="skip sizes where a call would need more, e.g. 4GB (quick: 500MB, thorough: 2GB)",
    )
    parser.add_argument("--output", type=Path, default=ROOT / "bench-results", metavar="FOLDER")
    parser.add_argument(
        "--compare",
        metavar="COMMIT|OLD.json",
        help="an earlier run: a commit with a saved baseline (e.g. main), or a results.json",
    )
    parser.add_argument(
        "--save-baseline",
        action="store_true",
        help=f"keep this run as the baseline of this commit, in {BASELINES.relative_to(ROOT)}/",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.2,
        help="ignore changes of the median under this fraction (default 0.2: 20%%)",
    )
    return parser, parser.parse_args(argv)


def sizes(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(item) for item in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        msg = f"{text!r}: expected positive integers such as 1000,100000"
        raise argparse.ArgumentTypeError(msg)
    return values


def threads(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        msg = f"{text!r}: expected a number of threads such as 1 or 4"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def memory(text: str) -> int:
    try:
        return bench_sizes.parse_bytes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def functions(parser: argparse.ArgumentParser, only: list[str] | None) -> dict[str, Any]:
    """The public functions to time, by name: `only` those, if given."""
    name = repo_package()
    try:
        package = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        parser.error(f"cannot import {name}: install it (pip install -e .) or use nox -s bench")
    public = {name: getattr(package, name) for name in package.__all__}
    for name in only or []:
        if name not in public:
            parser.error(f"unknown algorithm {name!r}: choose from {', '.join(sorted(public))}")
    return {name: public[name] for name in sorted(only or public)}


def targets(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Target]:
    """The NumPy reference, then each port on each device. A backend or device asked for by
    name that is missing is an error; others are left out, with a note when asked for."""
    found = [Target("numpy", args.dtype)]
    missing: dict[str, str] = {}  # why each device asked for is not usable
    triton = ("triton",) if "triton" in parity.BACKENDS else ()  # on CPU only where interpreted
    for backend in [name for name in args.backend or (*parity.PORTS, *triton) if name != "numpy"]:
        if backend not in parity.BACKENDS:  # asked for by name: the repo has no such extra
            parser.error(
                f"--backend {backend}: this repo has no {backend} backend (pyproject.toml has no "
                f"`{backend}` extra); `copier update --defaults --data {backend}=true` adds it"
            )
        reason = missing_backend(backend)
        if reason is not None and args.backend:
            parser.error(f"--backend {backend}: {reason}")
        if reason is not None:
            note(f"{backend} left out: {reason}")
            continue
        for target in parity.targets([backend], [args.dtype], args.device or DEVICES):
            reason = missing_device(backend, target.device, args.dtype)
            if reason is None and backend == "triton" and target.device == "cpu":
                note("triton on cpu: timed in Triton's interpreter (TRITON_INTERPRET=1), no kernel")
            if reason is None:
                found.append(target)
            elif args.device:
                note(f"{backend} on {target.device} left out: {reason}")
                missing.setdefault(target.device, reason)
    for device in args.device or []:
        if device != "cpu" and all(target.device != device for target in found):
            reason = missing.get(device, "no backend asked for runs there")
            parser.error(f"--device {device}: {reason}. Leave --device out to use what is here")
    return found


def note(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def inputs_of(name: str) -> tuple[Inputs, tuple[int, ...] | None, Flops | None]:
    """`benchmark_inputs`, `BENCHMARK_SIZES` and `benchmark_flops` (None where absent) of
    tests/test_<name>.py."""
    path = TESTS / f"test_{name}.py"
    spec = importlib.util.spec_from_file_location(f"test_{name}", path)
    if not path.exists() or spec is None or spec.loader is None:
        msg = f"no tests/test_{name}.py, where its benchmark_inputs(size) would be"
        raise Skipped(msg)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "benchmark_inputs"):
        msg = (
            f"tests/test_{name}.py has no benchmark_inputs(size): add one that returns the "
            f"operands (NumPy arrays) and keyword arguments of one call of {name} at about "
            "`size` elements, e.g. `return (x,), {}`"
        )
        raise Skipped(msg)
    declared = getattr(module, "BENCHMARK_SIZES", None)
    flops = getattr(module, "benchmark_flops", None)
    return module.benchmark_inputs, None if declared is None else tuple(declared), flops


def sizes_for(args: argparse.Namespace, declared: tuple[int, ...] | None) -> tuple[int, ...]:
    """`--sizes`, else the algorithm's own (at most the profile's number), else the profile's."""
    profile = PROFILES[args.profile]
    if args.sizes:
        return tuple(args.sizes)
    if not declared:
        return profile.sizes
    ordered = sorted(declared)
    picks = np.linspace(0, len(ordered) - 1, min(profile.most_sizes, len(ordered)))
    return tuple(sorted({ordered[round(pick)] for pick in picks}))


def what_runs(function: Any, target: Target) -> Any:
    """What `target`'s rows time: the public `function`, or one port of it called as `function`
    is (NotImplementedError where it has none). The shared implementation on NumPy's arrays; the
    Triton port; and, where a Triton port would take the public function's CUDA tensors, the
    PyTorch port, so that the kernel is timed beside PyTorch itself."""
    if target.backend == "torch" and implementation(function, "triton") is not None:
        return called_as_public(function, "pytorch")
    port = {"numpy_shared": "array_api", "triton": "triton"}.get(target.backend)
    return function if port is None else called_as_public(function, port)


def modes(target: Target) -> list[str]:
    return ["eager"] if target.backend in {"numpy", "numpy_shared"} else ["eager", "compiled"]


def compiled(function: Any, target: Target, parameters: dict[str, Any]) -> Any:
    """`function` compiled for `target`, and the keyword arguments to call it with."""
    if target.backend in TORCH_TENSORS:
        torch.compiler.reset()  # a fresh start: each size compiles from scratch, and once
        return torch.compile(function, dynamic=False), parameters
    if target.backend == "jax":
        import functools

        import jax

        return jax.jit(functools.partial(function, **parameters)), {}
    raise ValueError(target.backend)


def unchanged(result: Any) -> Any:
    return result


def measure(
    function: Any,
    target: Target,
    mode: str,
    inputs: tuple[tuple[Any, ...], dict[str, Any]],
    run_time: float,
    budget: float,
) -> dict[str, Any]:
    """Seconds of the first call, then the median and quartiles of many, at one size: at least
    `bench_report.MIN_SAMPLES` samples where a call takes at most `budget` seconds."""
    operands, parameters = inputs
    arguments = [target.asarray(np.asarray(value)) for value in operands]
    call, parameters = (
        compiled(function, target, parameters) if mode == "compiled" else (function, parameters)
    )
    wait = unchanged  # the timer waits for PyTorch's devices itself
    if target.backend == "jax":
        import jax

        wait = jax.block_until_ready  # JAX returns before the result is computed
    start = time.perf_counter()
    result = wait(call(*arguments, **parameters))
    if target.backend in TORCH_TENSORS and target.device != "cpu":
        getattr(torch, target.device).synchronize()
    first_call = time.perf_counter() - start
    timer = benchmark.Timer(
        stmt="wait(call(*arguments, **parameters))",
        globals={"wait": wait, "call": call, "arguments": arguments, "parameters": parameters},
        num_threads=torch.get_num_threads(),  # as many threads as PyTorch uses outside the timer
    )
    samples = timer.blocked_autorange(min_run_time=run_time)
    times = list(samples.times)
    while len(times) < bench_report.MIN_SAMPLES and float(np.median(times)) <= budget:
        times += timer.timeit(samples.number_per_run).times
    q1, median, q3 = np.percentile(times, [25, 50, 75])
    return {
        "backend": target.backend,
        "device": target.device,
        "mode": mode,
        "shapes": [list(np.shape(value)) for value in operands],
        # The least a call moves: its operands (in the row's dtype) and its result, once each.
        "bytes": roofline.nbytes(arguments) + roofline.nbytes(result),
        "median_s": float(median),
        "q1_s": float(q1),
        "q3_s": float(q3),
        "samples": len(times),
        "calls_per_sample": samples.number_per_run,
        "first_call_s": first_call,
    }


def reference_peak(
    function: Any, target: Target, inputs: tuple[tuple[Any, ...], dict[str, Any]]
) -> int:
    """The NumPy reference's peak bytes in one call on `inputs` (see bench_sizes.py)."""
    operands, parameters = inputs
    arguments = [target.asarray(np.asarray(value)) for value in operands]
    return bench_sizes.traced_peak(lambda: function(*arguments, **parameters))


def time_function(
    name: str,
    function: Any,
    targets: list[Target],
    args: argparse.Namespace,
    skipped: dict[str, str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every target and mode of `function` at each size that fits the budgets: the rows, and
    the sizes skipped with the reason. The NumPy reference (the first target) decides the sizes
    of every port: they are compared with it. A port that raises NotImplementedError (a stub) is
    left out, the reason in `skipped`; so is the function when its reference is one. A shared
    (Array API) implementation is timed on NumPy's arrays too (`numpy_shared`), after the
    reference, beside its other libraries."""
    benchmark_inputs, declared, declared_flops = inputs_of(name)
    profile = PROFILES[args.profile]
    run_time = args.min_run_time or profile.min_run_time
    reference = targets[0]
    growth = bench_sizes.Growth(
        seconds=args.time_budget or profile.time_budget,
        bytes=args.memory_budget or profile.memory_budget,
        peak_of=lambda size: reference_peak(function, reference, benchmark_inputs(size)),
    )
    if shared_implementation(function) is not None:
        targets = [targets[0], Target("numpy_shared", targets[0].dtype), *targets[1:]]
    rows, skips, compared = [], [], set()  # compared: the sizes the reference was timed at
    flops: dict[int, int | None] = {}  # per size: the same for every backend
    for target in targets:
        try:
            timed_function = what_runs(function, target)
            for mode in modes(target):  # eager first: a stub raises there, not in a compiler
                timed: list[dict[str, Any]] = []  # this target's and mode's rows
                for size in sizes_for(args, declared):
                    if target is not reference and size not in compared:
                        continue  # skipped by the reference, which says why
                    reason = growth.too_big(size) or growth.too_slow(timed, size)
                    if reason is not None:
                        where = (target.backend, target.device, mode)
                        if target is reference:
                            where = ("every backend", "", "")
                        record = (name, size, *where, reason)
                        skips.append(dict(zip(SKIP_KEYS, record, strict=True)))
                        note(f"{name} {target} {mode} n={size}: skipped, {reason}")
                        continue
                    inputs = benchmark_inputs(size)
                    row = measure(timed_function, target, mode, inputs, run_time, growth.seconds)
                    if size not in flops:  # declared in the test module, else counted
                        declared_count = declared_flops(size) if declared_flops else None
                        counted = declared_count or roofline.count_flops(
                            function, args.dtype, inputs
                        )
                        flops[size] = counted
                    rows.append({"function": name, "size": size, "flops": flops[size], **row})
                    timed.append(rows[-1])
                    if target is reference:
                        compared.add(size)
                    median = bench_report.duration(row["median_s"])
                    note(f"{name} {target} {mode} n={size}: {median}")
        except NotImplementedError as error:
            if target.backend == "numpy":
                raise Skipped(str(error)) from None
            skipped[f"{name} on {target.backend} {target.device}"] = str(error)
            note(f"{name} on {target} left out: {error}")
    return rows, skips


def speedups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with `speedup`: the NumPy reference's median at its size over its own."""
    reference = {
        (row["function"], row["size"]): row["median_s"] for row in rows if row["backend"] == "numpy"
    }
    return [
        {**row, "speedup": reference[row["function"], row["size"]] / row["median_s"]}
        for row in rows
    ]


def time_all(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    chosen: dict[str, Any],
    timed_on: list[Target],
) -> tuple[list[dict[str, Any]], dict[str, str], list[dict[str, Any]]]:
    """The rows of every function, why any function or port was left out, and the sizes
    skipped for the budgets."""
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    sizes_skipped: list[dict[str, Any]] = []
    for name, function in chosen.items():
        try:
            timed, too_large = time_function(name, function, timed_on, args, skipped)
        except Skipped as reason:
            if args.only:
                parser.error(f"{name}: {reason}")
            note(f"{name} left out: {reason}")
            skipped[name] = str(reason)
            continue
        rows += timed
        sizes_skipped += too_large
    return rows, skipped, sizes_skipped


# What torch.compile warns of for every function it traces, which the generated repos' pytest
# settings (filterwarnings) ignore too: Dynamo tracing array-api-compat's namespace lookup, which
# caches with lru_cache (20 warnings of 6-8 lines before the table), and a Triton port's
# autograd.Function instantiated while traced. The bench prints its progress and its table.
IGNORED_WARNINGS = [
    ("Dynamo detected a call to a `functools.lru_cache`-wrapped function", UserWarning),
    ("<class 'torch.autograd.function.Function'> should not be instantiated", DeprecationWarning),
]


def ignore_compile_warnings() -> None:
    """Ignore `IGNORED_WARNINGS` in this process (the bench's)."""
    for message, category in IGNORED_WARNINGS:
        warnings.filterwarnings("ignore", message=re.escape(message), category=category)


def main(argv: list[str] | None = None) -> int:
    ignore_compile_warnings()
    parser, args = parse_args(argv)
    chosen = functions(parser, args.only)
    timed_on = targets(parser, args)
    code = bench_compare.commit(ROOT)
    try:  # before minutes of timing: an earlier run or a baseline that cannot be had
        old = bench_compare.find(args.compare, ROOT, BASELINES) if args.compare else None
        if args.save_baseline:
            bench_compare.check_baseline(code)
    except ValueError as error:
        parser.error(str(error))
    torch.set_num_threads(args.threads)
    load_before = bench_report.load_average()
    if warning := bench_report.busy(load_before, args.threads, bench_report.usable_cpus()):
        note(f"warning: {warning}")
    if any(target.backend == "jax" for target in timed_on):
        import jax

        # As in the tests: without x64, float64 and int64 inputs lose bits.
        # Untyped where JAX is installed; Any where not (unused-ignore).
        jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call, unused-ignore]
    started = time.perf_counter()
    rows, skipped, sizes_skipped = time_all(parser, args, chosen, timed_on)
    if not rows:
        parser.exit(1, "bench: nothing timed: every function was left out (see above)\n")
    memory_budget = args.memory_budget or PROFILES[args.profile].memory_budget
    devices = sorted({row["device"] for row in rows})
    peaks = roofline.measure_peaks(devices, args.dtype, memory_budget)
    for device, peak in peaks.items():
        bandwidth, compute = peak["bandwidth"]["bytes_per_s"], peak["compute"]["flops_per_s"]
        note(f"peaks on {device}: {bandwidth / 1e9:.1f} GB/s, {compute / 1e9:.1f} GFLOP/s")
    results = {
        "command": " ".join(["parity", "bench", *(sys.argv[1:] if argv is None else argv)]),
        "profile": args.profile,
        "dtype": args.dtype,
        "machine": bench_report.machine(load_before),
        "git": code,
        "seconds": time.perf_counter() - started,
        "functions": sorted({row["function"] for row in rows}),
        "budget": {
            "seconds": args.time_budget or PROFILES[args.profile].time_budget,
            "bytes": memory_budget,
        },
        "skipped": skipped,
        "skipped_sizes": sizes_skipped,
        "peaks": peaks,
        "rows": [roofline.with_roofline(row, peaks) for row in speedups(rows)],
    }
    comparison: list[str] = []
    if old is not None:
        results["comparison"] = bench_compare.compare(old, results, args.threshold)
        comparison = bench_compare.lines(results["comparison"])
    bench_report.write(results, args.output, comparison)
    if args.save_baseline:
        saved = bench_compare.save_baseline(results, BASELINES)
        print(f"Saved as the baseline of {code['commit'][:12]}: {saved.relative_to(ROOT)}")
    return 0
