"""`parity bench` prints its progress and its table, not torch.compile's warnings: the two the
generated repos' pytest settings ignore (Dynamo tracing array-api-compat's lru_cache, a Triton
port's autograd.Function instantiated while traced) are ignored in the bench's process too."""

from __future__ import annotations

import subprocess
import sys

# The bench's main up to its first step (stopped there), then what the warnings come from.
SCRIPT = """
import functools
import warnings

import torch

from parity_tools import bench


def stop(argv):
    raise SystemExit(0)


bench.parse_args = stop
try:
    bench.main([])
except SystemExit:
    pass


@functools.lru_cache
def namespace(n):
    return n


def scaled(x):
    return x * namespace(2)


torch.compile(scaled, backend="eager")(torch.ones(3))


torch.autograd.Function()  # as torch.compile does while it traces one
warnings.warn("any other warning", UserWarning, stacklevel=1)
"""


def test_the_bench_ignores_the_warnings_its_compiles_give() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=False, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    assert "lru_cache" not in ran.stderr
    assert "should not be instantiated" not in ran.stderr
    assert "any other warning" in ran.stderr  # the others still show
