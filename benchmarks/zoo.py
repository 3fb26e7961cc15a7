"""Whether the generated tests ever fail correct code, and whether they catch bugs: the zoo.

    python -m benchmarks.zoo --output benchmarks/zoo      (from the repo's root; `nox -s zoo`)
    python -m benchmarks.zoo --zoo special --output benchmarks/zoo-special

`--zoo special` runs tests/special_zoo instead: SciPy's special functions and the libraries'
elementwise and reduction operations, which the project did not design.

Renders a repo (single layout, with JAX), writes every algorithm of tests/zoo into it as its
author wrote it, then runs each algorithm's generated test file under fresh random seeds, with no
example database: `--seeds` of them with the `fast` profile (what `pytest` runs on a laptop, 10
examples a test) and `--thorough-seeds` with the `thorough` profile (300 examples a test). A run is
one algorithm's test file under one seed; a false alarm is a run with a failing test. Then every
planted bug, in rounds of one bug per algorithm, under the `ci` profile (as CI runs) and under one
fresh seed of the `fast` profile: a bug is caught where its algorithm's file fails.

The seeds are printed and recorded: `--seed-base` repeats a run. Writes OUTPUT.md and OUTPUT.json.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks import repos
from tests import zoo
from tests.planted import FirstFailure, rounds, run_round, run_seeds

#: The zoos, by the name `--zoo` takes: their package.
ZOOS = {"main": "tests.zoo", "special": "tests.special_zoo"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.zoo", description=__doc__)
    parser.add_argument("--zoo", choices=sorted(ZOOS), default="main", help="which zoo (default: main, tests/zoo)")
    parser.add_argument("--output", type=Path, help="write OUTPUT.md and OUTPUT.json (default: print Markdown)")
    parser.add_argument("--seeds", type=int, default=10, help="seeds of the fast profile (default 10)")
    parser.add_argument("--thorough-seeds", type=int, default=3, help="seeds of the thorough profile (default 3)")
    parser.add_argument("--algorithms", help="comma-separated names (default: the whole zoo)")
    parser.add_argument("--seed-base", type=int, help="the first seed (default: a fresh random one)")
    parser.add_argument("--jobs", type=int, default=2, help="test processes at a time (default 2)")
    return parser.parse_args(argv)


def _log(message: str) -> None:
    print(f"[zoo {time.strftime('%H:%M:%S')}] {message}", flush=True)


def false_alarms(
    repo: Path, names: list[str], seeds: list[int], profile: str, work: Path, jobs: int
) -> dict[int, dict[str, FirstFailure]]:
    """Each seed's failures by algorithm, the seeds shared among `jobs` copies of the repo."""
    shares = [seeds[i::jobs] for i in range(jobs) if seeds[i::jobs]]
    if not shares:
        return {}

    def one(index: int) -> dict[int, dict[str, FirstFailure]]:
        copy = Path(shutil.copytree(repo, work / f"{profile}-{index}" / "repo"))
        return run_seeds(copy, names, shares[index], copy.parent, profile)

    with ThreadPoolExecutor(len(shares)) as pool:
        found: dict[int, dict[str, FirstFailure]] = {}
        for result in pool.map(one, range(len(shares))):
            found |= result
    return found


def caught_bugs(repo: Path, algorithms: list[zoo.Algorithm], seed: int, work: Path) -> list[dict[str, Any]]:
    """Each planted bug, and whether its file failed under the ci profile and under `seed`."""
    results = []
    for index, bugs in enumerate(rounds([bug for algorithm in algorithms for bug in algorithm.bugs])):
        copy = Path(shutil.copytree(repo, work / f"round-{index}" / "repo"))
        for bug in bugs:
            bug.plant(copy, zoo.COMBINATION)
        names = [bug.algorithm for bug in bugs]
        ci = run_round(copy, names, copy.parent, planted=True).first_failures
        fast = run_seeds(copy, names, [seed], copy.parent)[seed]
        for bug in bugs:
            results.append(
                {
                    "bug": bug.name,
                    "algorithm": bug.algorithm,
                    "backend": bug.backend,
                    "caught_ci": bug.algorithm in ci and ci[bug.algorithm].kind == "failure",
                    "caught_by_ci": ci[bug.algorithm].test if bug.algorithm in ci else "",
                    "caught_fast": bug.algorithm in fast and fast[bug.algorithm].kind == "failure",
                }
            )
    return results


def measure(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    chosen = zoo.algorithms(ZOOS[args.zoo])
    algorithms = [a for a in chosen if not args.algorithms or a.name in args.algorithms.split(",")]
    names = [algorithm.name for algorithm in algorithms]
    base = args.seed_base if args.seed_base is not None else random.SystemRandom().randrange(2**31)
    fast_seeds = list(range(base, base + args.seeds))
    thorough_seeds = list(range(base + args.seeds, base + args.seeds + args.thorough_seeds))
    _log(
        f"{len(algorithms)} algorithms; seeds {base} to {base + args.seeds + args.thorough_seeds} (--seed-base {base})"
    )
    template = repos.template_snapshot(scratch / "template")
    repo = repos.render(template, scratch / "render", zoo.COMBINATION)
    for algorithm in algorithms:
        zoo.write(repo, algorithm)
    results: dict[str, Any] = {"zoo": args.zoo, "algorithms": names, "seed_base": base, "profiles": {}}
    for profile, seeds in [("fast", fast_seeds), ("thorough", thorough_seeds)]:
        _log(f"{profile}: {len(seeds)} seeds x {len(names)} algorithms")
        start = time.perf_counter()
        found = false_alarms(repo, names, seeds, profile, scratch, args.jobs)
        failures = {
            f"{seed}/{name}": f"{failure.test}: {failure.report[:3000]}"
            for seed, by_name in found.items()
            for name, failure in by_name.items()
        }
        results["profiles"][profile] = {
            "seeds": seeds,
            "runs": len(seeds) * len(names),
            "false_alarms": len(failures),
            "failures": failures,
            "seconds": time.perf_counter() - start,
        }
        _log(f"{profile}: {len(failures)} false alarms in {len(seeds) * len(names)} runs")
        for run, report in failures.items():
            _log(f"{profile} false alarm, seed/algorithm {run}: {report[:200]}")
    _log("planted bugs")
    start = time.perf_counter()
    results["bugs"] = caught_bugs(repo, algorithms, base, scratch / "bugs")
    results["bugs_seconds"] = time.perf_counter() - start
    return results


def markdown(results: dict[str, Any]) -> str:
    bugs = results["bugs"]
    name = results.get("zoo", "main")
    folder = ZOOS[name].replace(".", "/")
    option = "" if name == "main" else f" --zoo {name}"
    lines = [
        "# The zoo: correct algorithms against their generated tests",
        "",
        f"{len(results['algorithms'])} algorithms ({folder}), written apart from the harness; "
        f"seeds from {results['seed_base']} (`python -m benchmarks.zoo{option} --seed-base {results['seed_base']}` "
        "repeats them).",
        "",
        "| profile | examples a test | seeds | runs | false alarms | minutes |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    examples = {"fast": 10, "thorough": 300}
    for profile, found in results["profiles"].items():
        lines.append(
            f"| {profile} | {examples[profile]} | {len(found['seeds'])} | {found['runs']} | "
            f"{found['false_alarms']} | {found['seconds'] / 60:.1f} |"
        )
    caught_ci = sum(bug["caught_ci"] for bug in bugs)
    caught_fast = sum(bug["caught_fast"] for bug in bugs)
    lines += [
        "",
        f"Planted bugs: {caught_ci} of {len(bugs)} caught with the ci profile, {caught_fast} of "
        f"{len(bugs)} under a fresh seed of the fast profile ({results['bugs_seconds'] / 60:.1f} minutes).",
        "",
        "| bug | backend | caught first by (ci profile) | fast profile |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {bug['bug']} | {bug['backend']} | {bug['caught_by_ci'] or 'NOT CAUGHT'} | "
        f"{'caught' if bug['caught_fast'] else 'NOT CAUGHT'} |"
        for bug in bugs
    ]
    for profile, found in results["profiles"].items():
        for run, report in found["failures"].items():
            lines += ["", f"## False alarm: {profile}, seed/algorithm {run}", "", "```text", report, "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.output:  # fail now, not after an hour of runs
        args.output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zoo-") as scratch:
        results = measure(args, Path(scratch))
    text = markdown(results)
    if args.output:
        args.output.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        args.output.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
