"""The harness as a pytest plugin, loaded wherever parity is installed (its ``pytest11`` entry
point; ``pytest -p no:parity`` leaves it out): required devices, hypothesis profiles, numerics
pinned for the session.

- Targets on a missing device (CUDA, MPS), or in a dtype that the test module's ``SPEC`` leaves
  out of its ``dtypes``, are skipped with the reason. ``--require-device cuda``
  or ``REQUIRE_DEVICE=cuda`` (comma-separated for several) turns those skips into failures, for
  runs that must exercise a GPU.
- Hypothesis profiles: ``fast`` by default (a few examples, the suite runs in seconds; a failing
  example is kept in ``.hypothesis/`` and replayed first, see docs/guide/tests.md, "When a test
  fails");
  ``ci``, chosen where the ``CI`` environment variable is set (as on GitHub Actions): the same
  examples on every run (derandomized, no example database), so a red CI run means changed code;
  ``thorough``: 300 examples a test, no example database (``nox -s tests_thorough``, or
  ``pytest --hypothesis-profile=thorough``, or ``HYPOTHESIS_PROFILE=thorough``).
- A stub from the scaffold, and a function without a branch for a backend (JAX switched on
  later), raise the package's ``NotYetImplemented``: their tests are reported as
  expected failures (XFAIL) with its message.
- Importing sets nothing but the garbage collector (paused while torch imports): hooks and
  session fixtures set the numerics the tests need (float32 matmuls in full precision, float64
  wherever it is asked for) and restore them afterwards.
- JAX keeps what XLA compiled in pytest's cache folder (``.pytest_cache/d/jax``; ``pytest
  --cache-clear`` empties it), so that a later run loads it instead of compiling again.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Generator, Iterator

import pytest

# No garbage collection while torch, hypothesis and the harness import: they make millions of
# objects that live to the end, and every full collection would walk them again.
# Frozen once imported, as `freeze_what_imports_made` freezes what later imports make.
gc.disable()
import torch
from hypothesis import HealthCheck, Phase, settings

import parity
from parity import report, summary
from parity.core import not_yet_implemented, tallied, teststatus
from parity.targets import missing_backend, missing_device
from parity.triton_backend import interpret_without_cuda

gc.freeze()
gc.enable()

REQUIRABLE_DEVICES = ("cuda", "mps")
#: What the run compared, per algorithm, backend, dtype and device (report.py).
ROWS = pytest.StashKey[report.Rows]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--require-device",
        action="append",
        default=[],
        choices=REQUIRABLE_DEVICES,
        help="fail, instead of skipping, the tests for this device when it is missing "
        "(repeat for several; default: $REQUIRE_DEVICE, comma-separated)",
    )
    parser.addoption(
        "--parity-report",
        metavar="PATH",
        help="write how close each port came (per algorithm, backend, dtype, device) to this "
        "JSON file, for the docs site (default: $PARITY_REPORT; none without either)",
    )


@pytest.hookimpl(tryfirst=True)  # before hypothesis loads --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    quick = [phase for phase in Phase if phase is not Phase.explain]
    # Each profile from hypothesis's defaults, never from the profile loaded last time (pytest
    # may configure several sessions in one process).
    # A draw the reference refuses is discarded, and another drawn (parity's "No vacuous pass"):
    # a narrow domain (singular matrices) discards many, which is no fault of the strategy.
    defaults = settings(
        settings.get_profile("default"), suppress_health_check=[HealthCheck.filter_too_much]
    )
    fast = settings(defaults, max_examples=10, deadline=None, phases=quick, print_blob=True)
    settings.register_profile("fast", fast)
    settings.register_profile("ci", fast, derandomize=True, database=None)
    settings.register_profile("thorough", defaults, max_examples=300, deadline=None, database=None)
    if "triton" in parity.BACKENDS:
        interpret_without_cuda()
    default = "ci" if os.environ.get("CI") else "fast"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))
    config.stash[ROWS] = rows = report.Rows()
    config.pluginmanager.register(rows, "parity-rows")  # its pytest_runtest_logreport
    unknown = required_devices(config) - set(REQUIRABLE_DEVICES)
    if unknown:
        message = f"REQUIRE_DEVICE: unknown {sorted(unknown)}; choose from {REQUIRABLE_DEVICES}"
        raise pytest.UsageError(message)


def required_devices(config: pytest.Config) -> set[str]:
    from_environment = os.environ.get("REQUIRE_DEVICE", "").split(",")
    from_option: list[str] = config.getoption("require_device")
    return {name.strip() for name in [*from_option, *from_environment] if name.strip()}


def pytest_report_header(config: pytest.Config) -> str:
    found = ["cpu"]
    if torch.cuda.is_available():
        found.append(f"cuda ({torch.cuda.get_device_name()})")
    if torch.backends.mps.is_available():
        found.append("mps")
    required = ", ".join(sorted(required_devices(config))) or "none"
    return f"devices: {', '.join(found)}; required: {required}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test whose `target` cannot run here, or fail it if its device is required."""
    freeze_what_imports_made()
    callspec = getattr(item, "callspec", None)
    target = callspec.params.get("target") if callspec is not None else None
    if not isinstance(target, parity.Target):
        return
    item.user_properties.append((report.ROW, report.row_of(item)))  # summed up at the end
    reason = missing_backend(target.backend)
    if reason is not None:
        pytest.skip(reason)
    reason = missing_device(target.backend, target.device, target.dtype)
    if reason is not None and target.device in required_devices(item.config):
        pytest.fail(f"{reason}, but --require-device or REQUIRE_DEVICE asks for it")
    if reason is not None:
        item.user_properties.append((summary.DEVICE_SKIP, reason))  # summed up at the end
        pytest.skip(reason)
    spec = getattr(getattr(item, "module", None), "SPEC", None)
    if isinstance(spec, parity.Spec) and target.dtype not in spec.dtypes:
        pytest.skip(f"{target.dtype}: not among the dtypes its SPEC supports {spec.dtypes}")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Where Triton was imported, give the frozen objects back to the garbage collector: at
    exit, its nanobind extension reports every object of its own still alive as a leak, dozens
    of lines. Elsewhere they stay frozen: collecting them all at exit takes a second."""
    del config
    if "triton" in sys.modules:
        gc.unfreeze()


# How many modules were loaded when `freeze_what_imports_made` last froze the heap.
FROZEN_AT = {"modules": 0}


def freeze_what_imports_made() -> None:
    """Put the objects made so far out of the garbage collector's sight (`gc.freeze`), once new
    modules have been imported (torch, its compiler, JAX, lazily, by the tests).

    Those millions of objects live until the end, but each full collection walks them all again.
    Freezing only after imports leaves later garbage to the collector.
    """
    if len(sys.modules) != FROZEN_AT["modules"]:
        gc.freeze()
        FROZEN_AT["modules"] = len(sys.modules)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Report what is not written yet (a stub, a missing backend branch) as an expected failure,
    with its message; fail a test that compared nothing (`parity.core.tallied`)."""
    try:
        with tallied(item):
            return (yield)
    except NotImplementedError as error:
        if not not_yet_implemented(error):
            raise
        pytest.xfail(str(error))
    return None  # hypothesis found no draw to run (`parity.core.tallied` lets that through)


def pytest_report_teststatus(report: pytest.TestReport | pytest.CollectReport) -> object:
    """``PASSED (10 compared)`` under ``pytest -v``: how many calls compared values."""
    return teststatus(report)


@pytest.hookimpl(wrapper=True, tryfirst=True)  # around the terminal's own summary
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> Generator[None]:
    """The tests skipped for a missing device as one line per reason, after the short summary
    (which leaves them out), and why tests were deselected."""
    skipped = terminalreporter.stats.get("skipped", [])
    devices = summary.device_skips(terminalreporter)
    terminalreporter.stats["skipped"] = [report for report in skipped if report not in devices]
    try:
        yield
    finally:
        lines = summary.device_lines(devices) + summary.deselected_lines(terminalreporter)
        for line in lines + terminalreporter.config.stash[ROWS].lines():
            terminalreporter.write_line(line)
        if skipped:
            terminalreporter.stats["skipped"] = skipped  # counted in the last line


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the parity report where asked (`report.report_path`); then freeze the heap:
    pytest's final garbage collections (five full passes, for unraisable exceptions) would
    otherwise walk every object the tests made."""
    path = report.report_path(session.config, os.environ)
    worker = hasattr(session.config, "workerinput")  # pytest-xdist's: the controller writes it
    if path is not None and ROWS in session.config.stash and not worker:
        session.config.stash[ROWS].write(path, session.config)
    gc.freeze()


@pytest.fixture(autouse=True, scope="session")
def _float32_without_tf32() -> Iterator[None]:
    """Full float32 precision in matmuls and convolutions (TF32 off) for the session.

    On Ampere and newer GPUs, PyTorch may round float32 matmul and convolution inputs to TF32
    (10 mantissa bits): results then differ from NumPy by ~1e-3, and float32 parity on CUDA
    would mean nothing.
    """
    matmul, cudnn = torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.set_float32_matmul_precision(matmul)
    torch.backends.cudnn.allow_tf32 = cudnn


@pytest.fixture(autouse=True, scope="session")
def _jax_float64(pytestconfig: pytest.Config) -> Iterator[None]:
    """JAX in float64 when asked (x64 on), float32 matmuls in full precision, and its
    compilations kept in pytest's cache (`_jax_compilation_cache`), for the session.

    Without x64, JAX silently computes float64 inputs in float32; on GPUs its default float32
    matmul precision may use TF32 or bfloat16 passes.
    """
    if "jax" not in parity.BACKENDS or missing_backend("jax"):
        yield  # not a backend of this repo, or not installed: no JAX targets run
        return
    import jax

    with jax.enable_x64(True), jax.default_matmul_precision("highest"):
        yield from _jax_compilation_cache(pytestconfig)


def _jax_compilation_cache(config: pytest.Config) -> Iterator[None]:
    """XLA's compilations on disk, in pytest's cache folder, for the session.

    XLA compiles each jitted function for each shape and dtype, most of a JAX test's time; JAX
    loads a kept one far faster. Its key holds the program, the
    compiler options, the device and JAX's version, so a changed function compiles again. Without
    pytest's cache (``-p no:cacheprovider``) every run compiles.
    """
    import jax

    cache = getattr(config, "cache", None)
    if cache is None:
        yield
        return
    settings = {
        "jax_compilation_cache_dir": str(cache.mkdir("jax")),
        "jax_persistent_cache_min_compile_time_secs": 0.0,  # JAX keeps only slower ones by default
        "jax_persistent_cache_min_entry_size_bytes": 0,
    }
    previous = {name: getattr(jax.config, name) for name in settings}
    for name, value in settings.items():
        jax.config.update(name, value)
    try:
        yield
    finally:
        for name, value in previous.items():
            jax.config.update(name, value)
