"""Benchmark the template and the repos it generates, on this machine; write Markdown and JSON.

    python -m benchmarks.run --output benchmarks/results   (from the repo's root)

writes benchmarks/results.md and benchmarks/results.json. Sections (all by default):

    render      cookiecutter and copier rendering a whole repo, each as one process
    update      `copier update` of a generated repo from template v1.0.0 to v2.0.0
    cold-start  render, fresh virtualenv, install torch, install the repo, run its tests
    suite       the generated test suite per combination, installed in that environment
    dispatch    ns per call that a public function adds over its private implementation
    import      `import <package>` against `import numpy, torch`; whether JAX got imported
    compile     torch.compile graph breaks and recompilations; jax.jit traces
    bench       the generated repos' `nox -s bench` (quick profile): wall time, cold and warm
    inner-loop  `nox -s tests` run again: unchanged, after an edit, after a dependency change

Whether the generated tests ever fail correct code, under many seeds, is benchmarks/zoo.py's
measurement (`nox -s zoo`).

The template is this working tree, uncommitted files included. This interpreter needs numpy,
torch, jax, cookiecutter, copier, pyyaml and virtualenv (and pip's access to torch: set
TORCH_INDEX_URL as for the generated noxfile; empty means pip's own configuration).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from benchmarks import bench_session, inner_loop, packages, report, repos
from benchmarks.timing import run
from tests.render import ROOT, Combination
from tests.torch_index import torch_index_url

SECTIONS = ["render", "update", "cold-start", "suite", "dispatch", "import", "compile", "bench", "inner-loop"]
VERSIONS = ["python", "numpy", "torch", "jax", "cookiecutter", "copier", "virtualenv"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output", type=Path, help="write OUTPUT.md and OUTPUT.json (default: print Markdown only)")
    parser.add_argument("--sections", type=_choices(SECTIONS), default=SECTIONS, help="comma-separated: %(default)s")
    parser.add_argument(
        "--combinations",
        type=_choices(list(repos.BY_ID)),
        default=list(repos.BY_ID),
        help="comma-separated, of: %(default)s; render, update and cold-start use the first",
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs of each short process (render, update, import)")
    parser.add_argument(
        "--suite-repeat", type=int, default=4, help="runs of each generated suite (the first: pytest's cache empty)"
    )
    parser.add_argument("--calls", type=int, default=2000, help="calls per timing round (dispatch)")
    parser.add_argument("--rounds", type=int, default=1001, help="timing rounds (dispatch)")
    parser.add_argument("--processes", type=int, default=3, help="processes timing the dispatch, each on its own")
    parser.add_argument("--compile-calls", type=int, default=20, help="calls of each compiled function")
    parser.add_argument("--bench-repeat", type=int, default=2, help="warm runs of each `nox -s bench`")
    return parser.parse_args(argv)


def _choices(allowed: list[str]) -> Any:
    def parse(text: str) -> list[str]:
        chosen = [item.strip() for item in text.split(",") if item.strip()]
        unknown = sorted(set(chosen) - set(allowed))
        if unknown or not chosen:
            raise argparse.ArgumentTypeError(f"{unknown or 'nothing'} not among {', '.join(allowed)}")
        return [item for item in allowed if item in chosen]  # in the canonical order

    return parse


# Context of the run ---------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    return {
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(terse=True),
        "versions": {name: _version(name) for name in VERSIONS},
        "pip_cache": "off" if os.environ.get("PIP_NO_CACHE_DIR") else "as found",
        "load_average_after": _load_average(),
    }


def _load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages: other work on the machine slows every number."""
    return [round(load, 2) for load in os.getloadavg()] if hasattr(os, "getloadavg") else None


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def _version(name: str) -> str:
    if name == "python":
        return platform.python_version()
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def template_state() -> dict[str, Any]:
    """The commit of this working tree, and whether it has changes that are not committed."""
    status = run(["git", "-C", ROOT, "status", "--porcelain"]).stdout.strip()
    commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    return {"commit": commit, "uncommitted_changes": bool(status)}


# Sections -------------------------------------------------------------------------------------------


def run_sections(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    """Run the chosen sections in `scratch`; their results by section."""
    chosen: list[Combination] = [repos.BY_ID[name] for name in args.combinations]
    first = chosen[0]
    template = repos.template_snapshot(scratch / "template")
    results: dict[str, Any] = {}
    if "render" in args.sections:
        renders = repos.time_renders(template, scratch / "renders", first, args.repeat)
        results["render"] = {"combination": first.id, **{name: stats.as_dict() for name, stats in renders.items()}}
    if "update" in args.sections:
        two_releases = repos.template_with_update(scratch / "template-v2")
        stats = repos.time_update(two_releases, scratch / "updates", first, args.repeat)
        results["update"] = {"combination": first.id, "from": repos.V1, "to": repos.V2, "seconds": stats.as_dict()}
    per_combination = {"suite", "dispatch", "import", "compile", "bench"} & set(args.sections)
    generated = {
        combination: repos.render(template, scratch / "repos" / combination.id, combination)
        for combination in (chosen if per_combination else [])
    }
    if "cold-start" in args.sections or "suite" in args.sections:
        _log(f"cold start ({first.id}): render, virtualenv, install, tests")
        cold = repos.cold_start(template, scratch / "cold-start", first)
        if "cold-start" in args.sections:
            results["cold_start"] = {
                "combination": first.id,
                "phases": cold.phases,
                "total_seconds": cold.total,
                "pip": cold.pip,
                "pip_cache": "off" if os.environ.get("PIP_NO_CACHE_DIR") else "as found",
                "torch_from": torch_index_url() or "pip's configuration",
                "tests": cold.tests,
            }
        if "suite" in args.sections:
            _log("generated suites, installed")
            results["suite"] = repos.time_suites(cold.python, generated.items(), args.suite_repeat)
    if "dispatch" in args.sections:
        options = ["--calls", str(args.calls), "--rounds", str(args.rounds)]
        runs = [_probe_each("dispatch", generated, options) for _ in range(args.processes)]
        results["dispatch"] = median_process(runs)
    if "import" in args.sections:
        results["import"] = import_results(generated, args.repeat)
    if "compile" in args.sections:
        results["compile"] = _probe_each("compile", generated, ["--calls", str(args.compile_calls)])
    if "bench" in args.sections:
        results["bench"] = {}
        for combination, repo in generated.items():
            _log(f"nox -s bench ({combination.id})")
            cache = scratch / "inductor-cache" / combination.id
            results["bench"][combination.id] = bench_session.time_bench(repo, cache, args.bench_repeat)
    if "inner-loop" in args.sections:
        _log(f"inner loop ({first.id}): nox -s tests, four times")
        results["inner_loop"] = inner_loop.inner_loop(template, scratch / "inner-loop", first)
    return results


def _probe_each(what: str, generated: dict[Combination, Path], options: list[str]) -> dict[str, Any]:
    reports = {}
    for combination, repo in generated.items():
        _log(f"{what} ({combination.id})")
        reports[combination.id] = packages.probe(what, repo, repos.package_name(repo), combination.jax, *options)
    return reports


def median_process(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per combination, function and backend, the figures of the process whose dispatch cost is
    the median. One process can be slower than the next throughout (this machine runs everything
    1.5x slower for minutes at a time: a stub call 30 ns, then 45-50 ns), so one process is one
    sample."""
    chosen: dict[str, Any] = {}
    for combination, functions in runs[0].items():
        chosen[combination] = {}
        for function, backends in functions.items():
            chosen[combination][function] = {}
            for backend in backends:
                samples = sorted(
                    (run[combination][function][backend] for run in runs),
                    key=lambda entry: entry["dispatch"]["difference_ns"],
                )
                chosen[combination][function][backend] = {**samples[len(samples) // 2], "processes": len(samples)}
    return chosen


def import_results(generated: dict[Combination, Path], times: int) -> dict[str, Any]:
    """Import time of each generated package, and of numpy with torch alone."""
    _log("import times")
    names = {repos.package_name(repo) for repo in generated.values()}
    return {
        "package": "/".join(sorted(names)),
        "baseline_modules": packages.BASELINE,
        "packages": {
            combination.id: packages.import_report(repo, repos.package_name(repo), times)
            for combination, repo in generated.items()
        },
    }


def _log(message: str) -> None:
    print(f"benchmark: {message}", file=sys.stderr, flush=True)


# Entry point -----------------------------------------------------------------------------------------


def command_line(argv: list[str]) -> str:
    """How this run was started, as a command to copy (from the repo's root)."""
    return shlex.join(["python", "-m", "benchmarks.run", *argv])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    started, load_before = time.perf_counter(), _load_average()
    with tempfile.TemporaryDirectory(prefix="benchmark-") as scratch:
        sections = run_sections(args, Path(scratch))
    results: dict[str, Any] = {
        "command": command_line(argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "total_seconds": time.perf_counter() - started,
        "machine": {**machine(), "load_average_before": load_before},
        "template": template_state(),
        "sections": args.sections,
        "combinations": args.combinations,
        **sections,
    }
    results["targets"] = [target.as_dict() for target in report.targets(results) + bench_session.targets(results)]
    text = report.markdown(results) + bench_session.markdown(results) + inner_loop.markdown(results)
    if args.output:
        args.output.with_suffix(".md").write_text(text, encoding="utf-8")
        args.output.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(text)
    failed = report.failures(results)
    for failure in failed:
        _log(f"generated tests failed: {failure}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
