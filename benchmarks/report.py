"""The results as Markdown tables, and the speed targets (the limits in README.md's "Speed" table) checked
against them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

# Backends the dispatch targets are about (JAX's dispatch is reported, with no target).
TARGET_BACKENDS = ("numpy", "torch")
DISPATCH_TARGETS = (("softmax", "one operand", 150.0), ("cross_entropy", "two operands", 250.0))
# Seconds of a generated suite, by whether it has Triton ports (Triton's interpreter runs their kernels).
SUITE_LIMITS = {False: 10.0, True: 20.0}


@dataclass(frozen=True)
class Target:
    """A claim with a limit: `measured` must be at most `limit`."""

    name: str
    limit: float
    unit: str
    measured: float
    where: str
    failed: str = ""  # why the measurement is no claim at all (the tests it timed failed)

    @property
    def met(self) -> bool:
        return not self.failed and self.measured <= self.limit

    def verdict(self) -> str:
        if self.failed:
            return f"**missed**: {self.failed}"
        gap = abs(self.limit - self.measured)
        if self.met:
            return f"met ({number(gap, self.unit)} to spare)" if self.limit else "met"
        relative = f", {gap / self.limit:.0%}" if self.limit else ""
        return f"**missed** by {number(gap, self.unit)}{relative}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "met": self.met, "verdict": self.verdict()}


def number(value: float, unit: str) -> str:
    """`value` with its unit, rounded for a table."""
    if unit == "s":
        return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"
    if unit == "ns":
        return f"{value:.0f} ns"
    return f"{value:g}{unit}"


def spread(stats: dict[str, Any], unit: str = "s") -> str:
    """Median with the range: `0.61 s (0.60-0.65, 5 runs)`."""
    low, high = number(stats["min"], unit).split()[0], number(stats["max"], unit).split()[0]
    return f"{number(stats['median'], unit)} ({low}-{high}, {stats['runs']} runs)"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


# Targets -------------------------------------------------------------------------------------------


def targets(results: dict[str, Any]) -> list[Target]:
    """The targets the sections run could check: dispatch overhead, torch.compile graph breaks and
    recompilations, the installed suite's time and the cold start's."""
    found = []
    for function, operands, limit in DISPATCH_TARGETS if "dispatch" in results else ():
        worst, where = max(
            (report[function][backend]["dispatch"]["difference_ns"], f"{combination}, {backend}")
            for combination, report in results["dispatch"].items()
            for backend in TARGET_BACKENDS
        )
        found.append(Target(f"dispatch overhead, {operands} (`{function}`, worst case)", limit, "ns", worst, where))
    if "compile" in results:
        compiled = [entry["torch_compile"] for report in results["compile"].values() for entry in report.values()]
        where = f"sum over {len(compiled)} functions x combinations"
        for name, key in (("graph breaks", "graph_breaks"), ("recompilations", "recompilations")):
            found.append(Target(f"torch.compile {name}", 0, "", sum(entry[key] for entry in compiled), where))
    if "suite" in results:
        suites = results["suite"]
        red = ", ".join(combination for combination, run in suites.items() if not run["passed"])
        failed = f"tests failed ({red})" if red else ""
        later = {combination: run["seconds"]["median"] for combination, run in suites.items()}
        first = {combination: run["first_seconds"] for combination, run in suites.items()}
        for which, seconds in (("later runs", later), ("first run, pytest's cache empty", first)):
            for triton, limit in SUITE_LIMITS.items():
                timed = {combination: s for combination, s in seconds.items() if ("triton" in combination) == triton}
                if timed:
                    slowest = max(timed, key=timed.__getitem__)
                    kind = "generated suite with Triton" if triton else "generated suite"
                    name = f"{kind}, installed, {which} (slowest combination)"
                    found.append(Target(name, limit, "s", timed[slowest], slowest, failed))
    if "cold_start" in results:
        cold = results["cold_start"]
        failed = "" if cold["tests"]["passed"] else "tests failed"
        found.append(
            Target("fresh repo, render to green tests", 90.0, "s", cold["total_seconds"], cold["combination"], failed)
        )
    return found


def failures(results: dict[str, Any]) -> list[str]:
    """The generated test runs that did not pass (a timing of a red suite is no claim)."""
    runs = dict(results.get("suite", {}))
    if "cold_start" in results:
        runs["cold start"] = results["cold_start"]["tests"]
    return [f"{name}: exit {run['returncode']}, {run['summary']!r}" for name, run in runs.items() if not run["passed"]]


# Markdown ------------------------------------------------------------------------------------------


def markdown(results: dict[str, Any]) -> str:
    """The whole report: machine, targets, then one table per section."""
    lines = header(results)
    lines += ["## Targets", ""]
    lines += table(
        ["Target", "Limit", "Measured", "Where", "Verdict"],
        [(t.name, number(t.limit, t.unit), number(t.measured, t.unit), t.where, t.verdict()) for t in targets(results)],
    )
    lines += [f"Failed: {failure}" for failure in failures(results)]
    for keys, section in SECTIONS:
        if any(key in results for key in keys):
            lines += section(results)
    return "\n".join(lines).rstrip() + "\n"


def header(results: dict[str, Any]) -> list[str]:
    machine, template = results["machine"], results["template"]
    versions = ", ".join(f"{name} {version}" for name, version in machine["versions"].items())
    changes = " with uncommitted changes" if template["uncommitted_changes"] else ""
    return [
        "# Benchmark results",
        "",
        f"Produced by `{results['command']}` in {results['total_seconds']:.0f} s on {results['date']}.",
        "",
        f"Machine: {machine['cpus']} CPUs ({machine['cpu_model']}), {machine['platform']}; {versions}.",
        f"Load average (1, 5, 15 min) before: {_loads(machine['load_average_before'])}, after: "
        f"{_loads(machine['load_average_after'])}.",
        f"Template: commit {template['commit']}{changes}. Times are wall-clock; medians, (min-max, runs).",
        "",
    ]


def _loads(loads: list[float] | None) -> str:
    return "unknown" if loads is None else ", ".join(f"{load:.2f}" for load in loads)


def render_section(results: dict[str, Any]) -> list[str]:
    rows = []
    if "render" in results:
        render = results["render"]
        for engine in ("cookiecutter", "copier"):
            rows.append((f"`{engine}` render ({render['combination']})", spread(render[engine])))
    if "update" in results:
        update = results["update"]
        command = f"`copier update` {update['from']} -> {update['to']} ({update['combination']})"
        rows.append((command, spread(update["seconds"])))
    return ["## Rendering and updating a whole repo (one process each)", "", *table(["Command", "Time"], rows)]


def cold_start_section(results: dict[str, Any]) -> list[str]:
    cold = results["cold_start"]
    rows = [(phase, number(seconds, "s")) for phase, seconds in cold["phases"].items()]
    rows.append((f"**total** ({cold['tests']['summary']})", f"**{number(cold['total_seconds'], 's')}**"))
    cache = {
        "off": "pip's cache off (`PIP_NO_CACHE_DIR=1`: every wheel fetched again)",
        "as found": "pip's cache as this machine had it (warm: the wheels of earlier installs)",
    }[cold.get("pip_cache", "as found")]
    return [
        f"## Cold start: from nothing to green tests ({cold['combination']})",
        "",
        f"One run of each phase, as a new user would, with pip {cold['pip']} (virtualenv's), {cache};",
        f"torch from {cold.get('torch_from', 'PyTorch CPU index or pip configuration')}.",
        "",
        *table(["Phase", "Time"], rows),
    ]


def suite_section(results: dict[str, Any]) -> list[str]:
    rows = [
        (
            combination,
            run["summary"],
            number(run["first_seconds"], "s"),
            spread(run["seconds"]),
            _slowest(run["slowest"]),
        )
        for combination, run in results["suite"].items()
    ]
    return [
        "## Generated test suite, installed (`python -m pytest`, one process)",
        "",
        "The time of the whole process (interpreter start, imports, collection included); pytest's",
        "own count in the outcome (of the last run). The first run starts with pytest's cache empty;",
        "the later ones load the XLA compilations it kept (`.pytest_cache/d/jax`, JAX repos only).",
        "",
        *table(["Combination", "Outcome", "First run", "Later runs", "Slowest test"], rows),
    ]


def _slowest(durations: list[str]) -> str:
    """`2.10 s tests/test_softmax.py::test_x` from pytest's `2.10s call tests/test_softmax.py::test_x`."""
    if not durations:
        return "-"
    seconds, _, test = durations[0].split(maxsplit=2)
    return f"{seconds[:-1]} s `{test}`"


def dispatch_section(results: dict[str, Any]) -> list[str]:
    dispatch = results["dispatch"]
    combinations = list(dispatch)
    rows = []
    context = []
    for function in ("softmax", "cross_entropy", "log_softmax"):  # log_softmax: the Array API style
        backends = dict.fromkeys(backend for report in dispatch.values() for backend in report[function])
        for backend in backends:
            entries = [dispatch[combination][function].get(backend) for combination in combinations]
            rows.append((f"`{function}`", backend, *(_dispatch_cell(entry) for entry in entries)))
            context.append((f"`{function}`", backend, *(_real_cell(entry) for entry in entries)))
    first = next(iter(dispatch.values()))["softmax"]["numpy"]
    some = first["dispatch"]
    return [
        "## Dispatch overhead per call (small arrays: float32 logits of shape (8, 10), int labels)",
        "",
        "What a public function adds to a call of its private implementation. The implementation is",
        "replaced by a stub that returns its input, so that only the dispatch is timed: `public(x)`",
        "minus `stub(x, -1)` (`public(a, b)` minus `stub(a, b)`), median over",
        f"{some['rounds']} alternating rounds of {some['calls_per_round']:,} calls each, in each of",
        f"{first.get('processes', 1)} processes; the median process is shown, with the stub's own call.",
        "",
        *table(["Function", "Backend", *combinations], rows),
        "For context, with the real implementations: public function / private implementation, per call.",
        "",
        *table(["Function", "Backend", *combinations], context),
    ]


def _dispatch_cell(entry: dict[str, Any] | None) -> str:
    """The dispatch cost, and the stub's own call: a machine that runs everything slower for a
    while (here a stub call takes 30 ns, then 45-50 ns) shows in the second figure."""
    if entry is None:
        return "-"
    timed = entry["dispatch"]
    return f"{number(timed['difference_ns'], 'ns')} (stub {number(timed['direct_ns'], 'ns')})"


def _real_cell(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "-"
    return f"{entry['real']['public_ns'] / 1000:.2f} / {entry['real']['direct_ns'] / 1000:.2f} us"


def import_section(results: dict[str, Any]) -> list[str]:
    imports = results["import"]
    rows = [
        (
            combination,
            spread(report["package_seconds"]),
            spread(report["baseline_seconds"]),
            f"{report['difference_seconds']['median'] * 1000:+.0f} ms",
            f"{report['own_modules_ms']:.1f} ms",
            "yes" if report["jax_imported"] else "no",
        )
        for combination, report in imports["packages"].items()
    ]
    header = ["Combination", f"`import {imports['package']}`", f"`import {imports['baseline_modules']}`"]
    return [
        "## Import time (a whole `python -c` process)",
        "",
        "The two imports are timed in alternating pairs; the difference is the median within pairs.",
        "Own modules: the self time of the package's modules in `python -X importtime` (what the",
        "package adds to numpy and torch).",
        "",
        *table([*header, "Difference", "Own modules", "JAX imported"], rows),
    ]


def compile_section(results: dict[str, Any]) -> list[str]:
    rows = []
    calls = 0
    for combination, report in results["compile"].items():
        for function, entry in report.items():
            compiled = entry["torch_compile"]
            calls = compiled["calls"]
            traces = entry["jax_jit"]["traces"] if "jax_jit" in entry else "-"
            rows.append((combination, f"`{function}`", compiled["graph_breaks"], compiled["recompilations"], traces))
    return [
        "## Compilation of the public functions",
        "",
        "Graph breaks from `torch._dynamo.explain`; recompilations counted by a backend that records",
        f"each graph it is given (no code generation), over {calls} calls of `torch.compile(f)` with new",
        "tensors of the same shape and dtype; `jax.jit` traces over as many calls (1 is the target).",
        "",
        *table(["Combination", "Function", "Graph breaks", "Recompilations", "jax.jit traces"], rows),
    ]


# The sections of the report, and the keys of the results that each one shows.
SECTIONS = [
    (("render", "update"), render_section),
    (("cold_start",), cold_start_section),
    (("suite",), suite_section),
    (("dispatch",), dispatch_section),
    (("import",), import_section),
    (("compile",), compile_section),
]
