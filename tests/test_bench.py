"""The benchmark a repo is generated with: `parity bench`, behind `nox -s bench`.

In the single layout without JAX and the split one with it, with an algorithm scaffolded and
written, the benchmark times every public function on every backend, eager and compiled, and
writes a table, Markdown, JSON and a real PNG; bad input gets a message and exit status 2, no
traceback. Sizes and sampling are tiny here: these tests check what is written, not how fast.
Threads, load, PDF, baselines and `--compare`: test_bench_honest.py; the template's own benchmark
of the session: test_benchmarks.py.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.render import COMBINATIONS, TOOLS, Combination, Render
from tests.scaffolded import implement, scaffold, source, write_body
from tests.test_generated_repo import run_in

FUNCTIONS = ["cross_entropy", "log_softmax", "logsumexp", "softmax"]  # the package's __all__ once scaffolded
TINY = ["--sizes", "64,256", "--min-run-time", "0.01", "--threads", "1"]
NUMBERS = ["median_s", "q1_s", "q3_s", "first_call_s", "speedup", "bytes", "bytes_per_s", "of_peak"]
# A row's roofline (test_bench_roofline.py): 1 GB/s, a hundredth of its ceiling.
ROOFLINE = {"bytes_per_s": 1e9, "flops_per_s": None, "of_peak": 0.01, "above_peak": None, "bound": "memory"}


@pytest.fixture
def repo(rendered: Render, combination: Combination, tmp_path: Path) -> Path:
    """A private copy of the combination's render, with `logsumexp` scaffolded but not written."""
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    scaffold(repo, "logsumexp")
    return repo


def bench(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_in(repo, *TOOLS, "bench", *args, check=check)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's signature and IHDR chunk (the first, by the standard)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    length, chunk, width, height = struct.unpack(">I4sII", data[8:24])
    assert (length, chunk) == (13, b"IHDR"), f"{path}: no IHDR chunk first"
    return width, height


def refused(result: subprocess.CompletedProcess[str], message: str) -> None:
    """Exit status 2 with `message`, and no traceback."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
# The most backends and files; the fewest in `nox -s proofs` (Triton: test_a_triton_port_is_timed_beside_pytorch).
@pytest.mark.parametrize(
    "combination",
    [pytest.param(COMBINATIONS[0], marks=pytest.mark.proof, id=COMBINATIONS[0].id), COMBINATIONS[3]],
    ids=lambda combination: combination.id,
)
def test_times_every_function_and_backend(repo: Path, combination: Combination) -> None:
    implement(repo, combination, "logsumexp")
    result = bench(repo, *TINY)
    out = repo / "bench-results"
    results: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))

    assert results["functions"] == FUNCTIONS
    assert results["skipped"] == {}
    backends = {("numpy", "eager"), ("torch", "eager"), ("torch", "compiled")}
    if combination.jax:
        backends |= {("jax", "eager"), ("jax", "compiled")}
    for function in FUNCTIONS:
        rows = [row for row in results["rows"] if row["function"] == function]
        shared = {("numpy_shared", "eager")} if function == "log_softmax" else set()  # on NumPy's arrays too
        assert {(row["backend"], row["mode"], row["size"]) for row in rows} == {
            (backend, mode, size) for backend, mode in backends | shared for size in (64, 256)
        }
        assert all(row["device"] == "cpu" for row in rows)
    for row in results["rows"]:
        for key in NUMBERS:
            assert math.isfinite(row[key]), row
            assert row[key] > 0, row
        assert row["q1_s"] <= row["median_s"] <= row["q3_s"], row
        assert row["of_peak"] <= 1, row
        assert min(row["samples"], row["calls_per_sample"]) >= 1, row
        if row["backend"] == "numpy":
            assert row["speedup"] == 1.0

    assert set(results["peaks"]) == {"cpu"}  # the rows' fractions are of these (test_bench_roofline.py)
    # The plot is a real PNG of the size stated: per function, time above speedup over NumPy.
    plot = results["plot"]
    assert png_size(out / plot["file"]) == (plot["width"], plot["height"])
    assert (plot["width"], plot["height"]) == (3 * 480, 4 * 360)  # 4 functions: 3 columns, 2 rows
    machine = results["machine"]
    for what in ("float32 on cpu", f"torch {machine['versions']['torch']}", machine["cpu"]):
        assert what in plot["title"], plot["title"]
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert "](results.png)" in markdown
    assert f"({plot['width']}x{plot['height']} px)" in result.stdout
    for function in FUNCTIONS:
        assert f"| {function} | torch | cpu | compiled | 256 |" in markdown
        assert f"{function}  " in result.stdout  # the terminal table
    # Where it writes is ignored by git.
    run_in(repo, "git", "init", "-q")
    ignored = run_in(repo, "git", "check-ignore", "bench-results/results.json", check=False)
    assert ignored.returncode == 0, "bench-results/ is not in .gitignore"


@pytest.mark.slow
@pytest.mark.proof  # `nox -s proofs`, as the next: the default times every function above
@pytest.mark.parametrize("combination", [Combination("split", jax=False)], ids=lambda c: c.id)
def test_stubs_are_left_out_with_the_reason(repo: Path) -> None:
    cheap = ["--backend", "torch", "--sizes", "64", "--min-run-time", "0.01", "--threads", "1"]
    bench(repo, *cheap)
    results = json.loads((repo / "bench-results" / "results.json").read_text(encoding="utf-8"))
    assert results["functions"] == ["cross_entropy", "log_softmax", "softmax"]
    assert results["skipped"] == {"logsumexp": "not implemented yet: write _logsumexp_numpy, the NumPy reference"}
    # The reference written, the port not yet: the reference is timed, the port left out.
    implement(repo, Combination("split", jax=False), "logsumexp", ("numpy",))
    result = bench(repo, *cheap, "--only", "logsumexp")
    results = json.loads((repo / "bench-results" / "results.json").read_text(encoding="utf-8"))
    assert {(row["function"], row["backend"]) for row in results["rows"]} == {("logsumexp", "numpy")}
    port = "not implemented yet: write _logsumexp_pytorch, the PyTorch port"
    assert results["skipped"] == {"logsumexp on torch cpu": port}
    assert f"logsumexp on torch cpu left out: {port}" in result.stdout

    # An algorithm's own sizes: the quick profile takes four of them, the smallest and largest too.
    declared = (10, 20, 30, 40, 50, 60)
    with (repo / "tests" / "test_logsumexp.py").open("a", encoding="utf-8") as module:
        module.write(f"\nBENCHMARK_SIZES = {declared}\n")
    bench(repo, "--only", "logsumexp", "--backend", "numpy", "--min-run-time", "0.01")
    results = json.loads((repo / "bench-results" / "results.json").read_text(encoding="utf-8"))
    sizes = sorted(row["size"] for row in results["rows"])
    assert len(sizes) == 4
    assert set(sizes) <= set(declared)
    assert (sizes[0], sizes[-1]) == (10, 60)


@pytest.mark.slow
@pytest.mark.parametrize("combination", [Combination("split", jax=True)], ids=lambda c: c.id)
def test_bad_input_gets_a_message(repo: Path, tmp_path: Path) -> None:
    refused(bench(repo, "--only", "layer_norn", check=False), "unknown algorithm 'layer_norn': choose from")
    # The scaffold's stubs: the reference is not written yet.
    stub = bench(repo, "--only", "logsumexp", check=False)
    refused(stub, "logsumexp: not implemented yet: write _logsumexp_numpy")
    refused(bench(repo, "--compare", "missing.json", check=False), "--compare missing.json: neither a file nor")
    if not _has_cuda():
        refused(bench(repo, "--device", "cuda", check=False), "--device cuda: Requires: CUDA device")
    # A backend this repo was made without: how to add it.
    refused(bench(repo, "--backend", "triton", check=False), "--data triton=true` adds it")
    # A test module without benchmark_inputs: the message says what to add.
    (repo / "tests" / "test_logsumexp.py").write_text('"""Nothing to benchmark with."""\n', encoding="utf-8")
    refused(bench(repo, "--only", "logsumexp", check=False), "add one that returns the operands")
    # JAX enabled in the repo but not installed here.
    without_jax = without(tmp_path, repo, "jax")
    refused(run_in(repo, *without_jax, "--backend", "jax", check=False), "--backend jax: Requires: jax")
    # No matplotlib: everything but the plot, and a note that says how to get it.
    cheap = ["--backend", "numpy", "--sizes", "64", "--min-run-time", "0.01"]
    result = run_in(repo, *without(tmp_path, repo, "matplotlib"), *cheap)
    assert "No plot: matplotlib is not installed (pip install matplotlib)." in result.stdout
    results = json.loads((repo / "bench-results" / "results.json").read_text(encoding="utf-8"))
    assert results["plot"] is None
    assert not (repo / "bench-results" / "results.png").exists()


def without(tmp_path: Path, repo: Path, module: str) -> list[str]:
    """The command that runs the benchmark in `repo` as if `module` were not installed."""
    hidden = tmp_path / f"without-{module}"
    hidden.mkdir()
    hide = f"import sys\n\nsys.modules[{module!r}] = None  # imports fail, find_spec finds nothing\n"
    (hidden / "sitecustomize.py").write_text(hide, encoding="utf-8")
    return ["env", f"PYTHONPATH={hidden}{os.pathsep}{repo / 'src'}", *TOOLS, "bench"]


def _has_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


# A two-operand algorithm whose intermediate (n x m x d) grows faster than its inputs (n x d, m x d).
PAIRWISE = {
    "numpy": "diff = x[..., :, None, :] - y[..., None, :, :]\n    result: NDArray[np.floating] = (diff * diff).sum(-1)"
    "\n    return result",
    "pytorch": "diff = x[..., :, None, :] - y[..., None, :, :]\n    return (diff * diff).sum(-1)",
}


def results_of(repo: Path) -> dict[str, Any]:
    results: dict[str, Any] = json.loads((repo / "bench-results" / "results.json").read_text(encoding="utf-8"))
    return results


@pytest.mark.slow
@pytest.mark.proof
@pytest.mark.parametrize("combination", [Combination("single", jax=False)], ids=lambda c: c.id)
def test_sizes_stop_at_the_budgets(repo: Path, combination: Combination) -> None:
    """The memory a size would need is estimated before it runs, and sizes over either budget are
    skipped, with the reason, in the table; the ports run only where the reference did."""
    run_in(repo, *TOOLS, "new", "pairwise_sq_dist", "x:...nd", "y:...md")
    for backend, code in PAIRWISE.items():
        path = source(repo, combination, "pairwise_sq_dist", backend)
        write_body(path, f"_pairwise_sq_dist_{backend}", "    " + code)
    sizes = ["--sizes", "1000,10000,100000,1000000", "--min-run-time", "0.01", "--threads", "1"]
    bench(repo, "--only", "pairwise_sq_dist", "--backend", "torch", *sizes, "--memory-budget", "50MB")
    results = results_of(repo)
    assert {row["size"] for row in results["rows"]} == {1000, 10000}
    assert {(row["backend"], row["mode"]) for row in results["rows"]} == {
        ("numpy", "eager"),
        ("torch", "eager"),
        ("torch", "compiled"),
    }
    big, bigger = results["skipped_sizes"]
    # float32 n = m = d = 316: two intermediates of 316**3 numbers, 126 MB each.
    assert (big["size"], big["backend"]) == (100_000, "every backend")
    needed = float(big["reason"].removeprefix("would need about ").split(" MB")[0])
    assert 150 < needed < 400, big["reason"]
    assert big["reason"].endswith(", over the memory budget 50 MB; --memory-budget")
    assert (bigger["size"], bigger["reason"]) == (1_000_000, "larger than size 100,000, skipped for its memory")
    markdown = (repo / "bench-results" / "results.md").read_text(encoding="utf-8")
    assert "| pairwise_sq_dist | every backend |  |  | 100,000 |  | skipped |" in markdown
    assert "| pairwise_sq_dist | numpy | cpu | eager | 10,000 | 100x100, 100x100 |" in markdown

    bench(repo, "--only", "pairwise_sq_dist", "--backend", "numpy", *sizes, "--time-budget", "0.00001")
    results = results_of(repo)
    assert [row["size"] for row in results["rows"]] == [1000]
    assert [row["size"] for row in results["skipped_sizes"]] == [10_000, 100_000, 1_000_000]
    slow, slower, too_big = (row["reason"] for row in results["skipped_sizes"])
    assert slow.startswith("a call at size 1,000 took "), slow
    assert slow.endswith(", over the time budget 10 us; --time-budget"), slow
    assert slower == slow
    assert too_big.endswith(", over the memory budget 500 MB; --memory-budget"), too_big  # quick's


@pytest.mark.slow
def test_a_triton_port_is_timed_beside_pytorch(
    rendered: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Here in Triton's interpreter, asked for (on a GPU, the kernel): rows with their roofline,
    # the bytes of PyTorch's rows; the functions with no Triton port are left out, saying so.
    combination = Combination("single", jax=False, triton=True)
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    only = ["--only", "softmax", "--only", "cross_entropy"]
    result = bench(repo, *TINY, *only, "--backend", "triton", "--backend", "torch")
    assert "triton on cpu: timed in Triton's interpreter" in result.stderr
    results = json.loads((repo / "bench-results" / "results.json").read_text(encoding="utf-8"))
    rows = {(row["function"], row["backend"], row["mode"], row["size"]): row for row in results["rows"]}
    for mode in ("eager", "compiled"):
        for size in (64, 256):
            triton, torch = rows["softmax", "triton", mode, size], rows["softmax", "torch", mode, size]
            assert triton["bytes"] == torch["bytes"]
            assert 0 < triton["of_peak"] <= 1, triton
    assert not any(function == "cross_entropy" and backend == "triton" for function, backend, _, _ in rows)
    assert "_cross_entropy_triton" in results["skipped"]["cross_entropy on triton cpu"]
