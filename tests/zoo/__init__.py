"""A zoo of correct algorithms, each written as a researcher writes it, with bugs to plant.

Each module here is one algorithm: `SCAFFOLD`, the arguments of `parity new` in a generated
repo; `MIN_DIMS`, `SIDES`, `VALUES` and `PARAMETERS`, what its author
declares in the generated test module (its `SPEC` and its `draw`); the functions `numpy`,
`pytorch` and `jax`, or, in the Array API style (`--array-api` in `SCAFFOLD`), `numpy` and
`array_api`, whose bodies become the scaffolded stubs' bodies; `BUGS`, realistic
porting mistakes as (backend, text, replacement, kind);
`DTYPES`, where its ports lack a kernel for some dtypes (no float16 FFT in PyTorch on a CPU), the
`dtypes` of its `SPEC`; and, where a seed once found one,
`PINNED`: the inputs of a false alarm as (target, operands, parameters), which its test file then
checks on every run, so that the harness cannot fail them again unseen. Optional too: no `jax`
function where JAX lacks the algorithm (its stub stays, and its tests report "not implemented
yet"); `CANNOT_HOLD`, the dtypes that cannot hold the problem, each with the reason (its `SPEC`'s
`cannot_hold`); `TOLERANCES`, (rtol, atol) by dtype where a library is less exact than the
defaults (its test module's `TOLERANCES`). VALUES may hold interval strings ("(0, 10]",
"[-10, -0.5] | [0.5, 10]") as well as (low, high) pairs. tests/special_zoo/ is a second package
of such modules, read and written by the same functions. The zoo was written apart
from the harness, to test the harness on code it was not designed around: a correct algorithm must
pass its generated tests under any seed (tests/test_zoo.py; `nox -s zoo` for many seeds), and
every planted bug must fail them.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import shutil
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _pytest.mark import ParameterSet

from tests.planted import Bug, Round, rounds, run_each_round
from tests.render import TOOLS, Combination, Render, run
from tests.scaffolded import PACKAGE, function_named, source, write_body

BACKENDS = ("numpy", "pytorch", "jax")
# The implementations of an algorithm in the Array API style: the reference and the shared one.
SHARED = ("numpy", "array_api")
# The combination the zoo is written in: every backend, every function in one file.
COMBINATION = Combination("single", jax=True)


@dataclass(frozen=True)
class Algorithm:
    """One module of the zoo, read."""

    name: str
    scaffold: tuple[str, ...]
    min_dims: int
    sides: dict[str, tuple[int | str, int | str]]
    values: dict[str, tuple[float | None, float | None] | str]  # (low, high), or intervals: "(0, 10]"
    parameters: dict[str, str]  # parameter -> its strategy, as source text
    bodies: dict[str, str]  # backend (or array_api) -> its function's body, indented by 4
    bugs: tuple[Bug, ...]
    pinned: tuple[tuple[str, tuple[Any, ...], dict[str, Any]], ...] = ()
    dtypes: tuple[str, ...] | None = None  # None: every dtype of the harness
    cannot_hold: dict[str, str] | None = None  # dtype -> why it cannot hold the problem
    tolerances: dict[str, tuple[float, float]] | None = None  # dtype -> (rtol, atol)


def _body(text: str, function: str) -> str:
    """The body of `function` in a module's source, without its docstring, indented by 4."""
    node = function_named(text, function)
    statements = node.body[1:] if ast.get_docstring(node) else node.body
    lines = text.splitlines()[statements[0].lineno - 1 : statements[-1].end_lineno]
    return textwrap.indent(textwrap.dedent("\n".join(lines)), "    ")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _says(kind: str) -> str:
    """What the harness must say of a bug of this kind, where its message is specific."""
    return "in place" if "in-place" in kind or "in place" in kind else ""


def read(module: Any) -> Algorithm:
    text = Path(module.__file__).read_text(encoding="utf-8")
    name = module.SCAFFOLD[0]
    bugs = tuple(
        Bug(f"{name}-{_slug(kind)}-{index}", name, backend, old, new, says=_says(kind))
        for index, (backend, old, new, kind) in enumerate(module.BUGS)
    )
    return Algorithm(
        name=name,
        scaffold=tuple(module.SCAFFOLD),
        min_dims=module.MIN_DIMS,
        sides=module.SIDES,
        values=module.VALUES,
        parameters=module.PARAMETERS,
        # A missing port (JAX lacks the function) keeps its scaffolded stub.
        bodies={
            backend: _body(text, backend) for backend in implementations(module.SCAFFOLD) if hasattr(module, backend)
        },
        bugs=bugs,
        pinned=tuple(getattr(module, "PINNED", ())),
        dtypes=getattr(module, "DTYPES", None),
        cannot_hold=getattr(module, "CANNOT_HOLD", None),
        tolerances=getattr(module, "TOLERANCES", None),
    )


def implementations(scaffold: list[str]) -> tuple[str, ...]:
    """The functions an algorithm scaffolded with these arguments has, its reference first."""
    return SHARED if "--array-api" in scaffold else BACKENDS


def algorithms(package: str = __name__) -> list[Algorithm]:
    """Every algorithm of a zoo package (this one by default; "tests.special_zoo"), by name."""
    folder = Path(importlib.import_module(package).__file__ or "").parent
    found = [read(importlib.import_module(f"{package}.{info.name}")) for info in pkgutil.iter_modules([str(folder)])]
    return sorted(found, key=lambda algorithm: algorithm.name)


# --- Writing an algorithm into a generated repo ------------------------------------------------


def written(rendered: Path, algorithms: Sequence[Algorithm], into: Path) -> Path:
    """A copy of the `rendered` repo (`COMBINATION`) at `into`, each of `algorithms` written in."""
    repo = Path(shutil.copytree(rendered, into))
    for algorithm in algorithms:
        write(repo, algorithm)
    return repo


# --- A zoo's proof in two shares -------------------------------------------------------------

#: The default `nox` runs a zoo's quick share; `nox -s proofs` (CI runs both) the share it leaves.
SHARE_MARKS = {"quick": (), "more": (pytest.mark.proof,)}
Shares = Mapping[str, Sequence[Algorithm]]  # by share ("quick", "more")
Outcomes = dict[tuple[Bug, ...], Round]


def share_params(shares: Shares) -> list[ParameterSet]:
    """Each share, as a test's parameter, marked as `SHARE_MARKS` says."""
    return [pytest.param(share, marks=SHARE_MARKS[share], id=share) for share in shares]


def bug_params(shares: Shares) -> list[ParameterSet]:
    """(share, bug) for every planted bug of each share, marked as its share is."""
    return [
        pytest.param(share, bug, marks=SHARE_MARKS[share], id=bug.name)
        for share, algorithms in shares.items()
        for algorithm in algorithms
        for bug in algorithm.bugs
    ]


def outcomes_by_share(rendered: Render, shares: Shares, folders: pytest.TempPathFactory) -> Callable[[str], Outcomes]:
    """outcomes(share): the share's algorithms written into a generated repo and run without bugs
    (key ()), then in rounds of their planted bugs (tests/planted.py); once per share."""
    done: dict[str, Outcomes] = {}

    def outcomes(share: str) -> Outcomes:
        if share not in done:
            algorithms = shares[share]
            repo = written(rendered("cookiecutter", COMBINATION), algorithms, folders.mktemp(share) / "repo")
            bugs = rounds([bug for algorithm in algorithms for bug in algorithm.bugs])
            names = [algorithm.name for algorithm in algorithms]
            done[share] = run_each_round(repo, bugs, names, COMBINATION, lambda: folders.mktemp("round"))
        return done[share]

    return outcomes


def round_of(outcomes: Outcomes, bug: Bug) -> Round:
    """The round in which `bug` was planted."""
    (round_,) = [round_ for bugs, round_ in outcomes.items() if bug in bugs]
    return round_


def write(repo: Path, algorithm: Algorithm, combination: Combination = COMBINATION) -> None:
    """Scaffold `algorithm` in `repo`, write its implementations into the stubs, and declare in its
    test module what its author declares."""
    run([*TOOLS, "new", *algorithm.scaffold], cwd=repo)
    for backend in algorithm.bodies:
        if backend == "jax" and not combination.jax:
            continue
        path = source(repo, combination, algorithm.name, backend)
        write_body(path, f"_{algorithm.name}_{backend}", algorithm.bodies[backend])
    test = repo / "tests" / f"test_{algorithm.name}.py"
    text = test.read_text(encoding="utf-8")
    text = text.replace("    min_dims=0,\n", "    min_dims=1,\n") if algorithm.min_dims else text
    text = text.replace("    sides={},\n", f"    sides={algorithm.sides!r},\n")
    text = text.replace("    values={},\n", f"    values={algorithm.values!r},\n")
    if algorithm.dtypes:
        text = text.replace("    dtypes=parity.DTYPES,\n", f"    dtypes={algorithm.dtypes!r},\n")
    if algorithm.cannot_hold:
        text = _after_line(text, "    dtypes=", f"    cannot_hold={algorithm.cannot_hold!r},\n")
    if algorithm.tolerances:
        entries = ", ".join(
            f"{dtype!r}: Tolerance(rtol={rtol!r}, atol={atol!r})"
            for dtype, (rtol, atol) in algorithm.tolerances.items()
        )
        line = "TOLERANCES: dict[str, Tolerance] = {}\n"
        assert line in text, f"no {line!r} in {test}"
        text = text.replace(line, f"TOLERANCES: dict[str, Tolerance] = {{{entries}}}\n")
    text = _with_parameters(text, algorithm.parameters)
    if algorithm.pinned:
        text += PINNED_TEST.format(name=algorithm.name, pinned=algorithm.pinned)
    test.write_text(text, encoding="utf-8")


def _after_line(text: str, start: str, addition: str) -> str:
    """`text` with `addition` after its first line that starts with `start`."""
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.startswith(start))
    return "".join([*lines[: index + 1], addition, *lines[index + 1 :]])


#: The test of the inputs of past false alarms, after the generated tests of an algorithm.
PINNED_TEST = """

def test_inputs_of_past_false_alarms() -> None:
    for target_id, operands, parameters in {pinned!r}:
        arrays = tuple(np.array(operand, dtype=np.float64) for operand in operands)
        target = Target(*target_id.split("-"))
        parity.assert_matches_reference({name}, target, arrays, parameters, tolerances=TOLERANCES)
"""


def _with_parameters(text: str, overrides: dict[str, str]) -> str:
    """The test module with `draw` drawing each parameter of `overrides` from its strategy, the
    operands that the strategies name bound to their names."""
    if not overrides:
        return text
    tree = ast.parse(text)
    (draw,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "draw"]
    (spec,) = [node for node in tree.body if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "SPEC"]
    operands = list(ast.literal_eval(next(k.value for k in spec.value.keywords if k.arg == "shapes")))  # type: ignore[attr-defined]
    defaults = next(
        node for node in tree.body if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "DEFAULTS"
    )
    names = list(ast.literal_eval(defaults.value))  # type: ignore[arg-type]
    strategies: dict[str, str] = {}
    size = ""
    for statement in draw.body[3:]:  # after the docstring, `drawn = ...` and `operands = ...`
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            target = ast.unparse(statement.targets[0])
            strategies[target] = ast.unparse(statement.value.args[0])
        elif isinstance(statement, ast.Assign) and ast.unparse(statement.targets[0]) == "size":
            size = ast.unparse(statement)
    strategies |= overrides
    used = " ".join(strategies.values())
    lines = [f"    {name} = operands[{i}]" for i, name in enumerate(operands) if re.search(rf"\b{name}\b", used)]
    if size and re.search(r"\bsize\b", used):
        lines.append(f"    {size}")
    order = sorted(names, key=lambda name: name not in {"axis", "dim"})
    lines += [f'    {name} = data.draw({strategies[name]}, label="{name}")' for name in order if name in strategies]
    entries = ["**DEFAULTS"] + [f'"{name}": {name}' for name in names if name in strategies]
    lines.append(f"    return operands, {{{', '.join(entries)}}}")
    source_lines = text.splitlines()
    start, end = draw.body[3].lineno - 1, draw.end_lineno
    return "\n".join([*source_lines[:start], *lines, *source_lines[end:]]) + "\n"


def implementation(repo: Path, algorithm: str) -> Path:
    """The file of `algorithm` in a repo of the zoo's combination."""
    return repo / "src" / PACKAGE / f"{algorithm}.py"
