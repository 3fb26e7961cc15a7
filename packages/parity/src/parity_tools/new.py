"""Start a new algorithm from its signature: its module, in this repo's layout, and its tests.

    parity new attention q:...ld k:...sd v:...se \\
        --param 'scale: float | None = None'

The operands (here q, k and v; by default one, x) are the array arguments, each with its axes
after a colon if it has any of its own (see `help(parity.Spec)`: "..." for batch
axes, then a letter per axis, the same size wherever it repeats; "..." alone when omitted). Each
`--param` is a plain Python value with a type and a default; its test draws it from a range that
suits its name and type (see `Parameter.strategy`).

An operand of integers (class labels, indices) ends in ``:int``, with the bound its values stay
below: ``'labels:...:int<c'`` (labels below the size of axis c), ``'index:...:int<n_items'``
(below an int --param), ``labels:...:int`` (below 10). Its dispatch takes integer arrays, and its
tests draw them in that range. Each ``--size 'LETTER: RULE'`` constrains an axis's size:
``'d: even'``, ``'c: multiple of groups'`` (an int --param, or a number, or a letter),
``'e: 3h'`` (exactly three times h), ``'k: 1..n'`` (from 1 to n). A parameter named in a bound
is drawn first, from 1 to 3, and the fixed inputs use its default.

    parity new cross_entropy logits:...c 'labels:...:int<c'
    parity new rotary x:...d --size 'd: even'

Where the ports have no derivative (``torch.floor_divide``, ``heaviside``, PyTorch's Bessel
functions return results without a graph), ``--no-gradient REASON`` writes
``no_gradient="REASON"`` into the test's `Spec`: its gradient tests skip with that reason.

    parity new bessel_j0 x --no-gradient 'torch.special.bessel_j0 has none'
 This creates `attention` in the package,
laid out as `softmax` is (the public `attention`, then one private implementation per backend:
`_attention_numpy`, the reference, and the ports), tests/test_attention.py, and exports
`attention` from the package. With --array-api, laid out as `log_softmax` is instead: the reference
and one shared implementation, `_attention_array_api`, for every other array library (PyTorch,
JAX, CuPy, ...), written against the Array API standard; docs/guide/dispatch.md says which to
choose. The implementations are stubs that raise the package's
`NotYetImplemented`, so the new tests report "not implemented yet" (as expected failures) until
you write them: the NumPy reference first, from the paper, then the ports that the parity tests
compare with it.

In a repo with Triton (its pyproject.toml has the ``triton`` extra), ``--triton`` adds a Triton
port, ``_<name>_triton``, to which the public function sends CUDA tensors, with its kernels (a
skeleton of a row-wise kernel, forward and backward, and its launch) in a module of their own,
laid out as softmax's, and "triton" to the tests' backends:

    parity new rms_norm x:...d --param 'eps: float = 1e-6' --triton

The files come from the pieces in skeleton/ (beside this module), with the signature filled in,
put together as this repo's layout and backends want them (read from .copier-answers.yml, and
Triton from pyproject.toml's extras), then formatted with the repo's ruff where it is installed.
Every docstring is a raw string (r-prefixed), so LaTeX under ``.. math::`` keeps its
backslashes. Standard library only; nothing is overwritten, and nothing is written when an
argument is refused.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import keyword
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from parity.repo import repo_extras

from .repo import repo_root

ROOT = repo_root()
TESTS = ROOT / "tests"
SKELETON = Path(__file__).resolve().parent / "skeleton"
# Longer names would push the generated docstrings past the line length.
MAX_NAME_LENGTH = 32
# Names the generated module uses inside its functions: an operand or parameter (or the
# algorithm) with one of these names would shadow them.
MODULE_NAMES = frozenset(
    {
        *("annotations", "overload", "TYPE_CHECKING", "np", "numpy", "torch", "jax", "jnp"),
        *("NDArray", "Array", "AnyArray", "dispatch_error", "is_jax_float", "NotYetImplemented"),
        *("ndarray", "Tensor", "TORCH_FLOATS", "array_namespace", "array_api_floats", "xp", "msg"),
        *("TORCH_INTEGERS", "is_jax_integer", "integer_operands"),
    }
)
# Names the generated test module defines or imports: the algorithm, imported there, would
# shadow them, and so would the operands and parameters, local names of its tests.
TEST_NAMES = frozenset(
    {
        *("annotations", "Any", "np", "NDArray", "pytest", "given", "st", "hypothesis"),
        *("parity", "Target", "Tolerance", "SPEC", "DEFAULTS", "TOLERANCES"),
        *("Call", "draw", "benchmark_inputs", "OPERANDS"),
    }
)
# The local names of the test module's `draw`, where each parameter is drawn into a variable of
# its name (the first operand too, unless its name is one of these).
DRAW_NAMES = frozenset({"data", "target", "extremes", "max_side", "drawn", "operands", "size"})
# The names a parameter's type may use: the generated module imports nothing else for it.
TYPE_NAMES = frozenset({"bool", "int", "float", "complex", "str", "tuple", "list", "dict", "None"})
# A parameter with one of these names, of type int, is drawn among the first operand's axes.
AXIS_NAMES = frozenset({"axis", "dim"})
# How a float parameter is drawn, by a word of its name: small positive numbers (log-uniform),
# positive scales, and fractions in [0, 1); any other float from 0.5 to 2.
FLOAT_RANGES = {
    "parity.log_uniform(1e-8, 1e-2)": frozenset(
        {"eps", "epsilon", "tol", "tolerance", "atol", "rtol"}
    ),
    "parity.log_uniform(0.1, 10.0)": frozenset(
        {"temperature", "scale", "beta", "alpha", "gamma", "delta", "margin", "sigma", "std", "lr"}
    ),
    "st.floats(0.0, 1.0, exclude_max=True)": frozenset(
        {"p", "prob", "probability", "rate", "dropout", "momentum", "smoothing", "quantile"}
    ),
}
# Per backend: the type of an array, and the check that an operand is a floating-point one; the
# same for an operand of integers.
BACKENDS = {
    "numpy": ("NDArray[np.floating]", 'isinstance({0}, ndarray) and {0}.dtype.kind == "f"'),
    "pytorch": ("torch.Tensor", "isinstance({0}, Tensor) and {0}.dtype in TORCH_FLOATS"),
    "jax": ("jax.Array", "is_jax_float({0})"),
}
INTEGER_BACKENDS = {
    "numpy": ("NDArray[np.integer]", 'isinstance({0}, ndarray) and {0}.dtype.kind in "iu"'),
    "pytorch": ("torch.Tensor", "isinstance({0}, Tensor) and {0}.dtype in TORCH_INTEGERS"),
    "jax": ("jax.Array", "is_jax_integer({0})"),
}
# A bound of an integer operand's values or of a size: a number, or a letter or an int parameter
# with an optional whole factor ("3h").
BOUND = re.compile(r"[0-9]+|([0-9]*)([a-z][a-z0-9_]*)")
# An integer operand's values without a bound: from 0 to 9.
INTEGER_HIGH = "10"
# The shared implementation (--array-api): any Array API array (typed Any: `AnyArray`); one check
# for all operands, which also refuses arrays of two libraries.
ARRAY_API = ("AnyArray", "array_api_floats({0})")
SHARED_TYPES = "numpy.ndarray or another Array API array (torch.Tensor, ...)"
ANSWERS = ROOT / ".copier-answers.yml"
# The generated code's line length (ruff's, in pyproject.toml): a --no-gradient reason too long
# for one line of the SPEC is written in pieces, each on a line of its own.
LINE_LENGTH = 100
EXAMPLE = "attention q:...ld k:...sd v:...se --param 'scale: float | None = None'"
# How a repo made without Triton switches it on (docs/guide/updating.md).
TRITON_ON = "copier update --defaults --data triton=true"


class Refused(ValueError):
    """An argument that cannot become part of the new algorithm; the message says why."""


@dataclass
class Constraints:
    """What the operands' values and sizes must satisfy beyond their axes: the `Spec` fields
    `integers`, `sides` and `multiples`, each bound as typed ("c", "3h", "2", "groups")."""

    integers: dict[str, str] = field(default_factory=dict)  # operand -> its values stay below
    sides: dict[str, tuple[str, str]] = field(default_factory=dict)  # letter -> (low, high)
    multiples: dict[str, str] = field(default_factory=dict)  # letter -> its size a multiple of

    def bounds(self) -> list[tuple[str, str]]:
        """Each bound, with where it was typed (for messages)."""
        found = [(high, f"operand {name!r} (int<{high})") for name, high in self.integers.items()]
        found += [(b, f"--size '{letter}'") for letter, pair in self.sides.items() for b in pair]
        found += [(b, f"--size '{letter}'") for letter, b in self.multiples.items()]
        return found

    def parameters(self, letters: str) -> list[str]:
        """The names in the bounds that are not among `letters`: the parameters they read."""
        names = [BOUND.fullmatch(bound)[2] for bound, _ in self.bounds()]  # type: ignore[index]
        return list(dict.fromkeys(name for name in names if name and name not in letters))


@dataclass(frozen=True)
class Parameter:
    """A plain Python argument: ``name: type = default``, as typed after --param."""

    name: str
    type: str
    default: str

    def strategy(self, first: str) -> str | None:
        """The hypothesis strategy its test draws it from (`first`: the first operand, by name;
        `axis`: the axis drawn before, if any), or None if it has no natural one."""
        kinds = [kind.strip() for kind in self.type.split("|")]
        rest = [kind for kind in kinds if kind != "None"]
        if len(rest) != 1:
            return None
        words = set(self.name.split("_"))
        if first in DRAW_NAMES:  # taken in `draw`: the operand is read from the tuple instead
            first = "operands[0]"
        if rest == ["int"] and self.name in AXIS_NAMES:
            found = f"st.integers(-{first}.ndim, {first}.ndim - 1)"
        elif rest == ["int"] and "ddof" in words:  # fewer than the axis's length
            found = "st.integers(0, size - 1)"
        elif rest == ["int"]:  # a size, a window, a count: within the axis's length
            found = "st.integers(1, size)"
        elif rest == ["float"]:
            ranges = [strategy for strategy, names in FLOAT_RANGES.items() if words & names]
            found = ranges[0] if ranges else "st.floats(0.5, 2.0)"
        elif rest == ["bool"]:
            found = "st.booleans()"
        else:
            return None
        return f"st.none() | {found}" if "None" in kinds else found


# --- Checking the arguments -----------------------------------------------------------------


def check_name(name: str, what: str, taken: frozenset[str] = MODULE_NAMES) -> None:
    """Refuse `name` as the name of `what` (the algorithm, an operand, a parameter), or as one
    of the `taken` names."""
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        msg = f"{what} {name!r} is a Python keyword: choose another name, such as '{name}_'"
        raise Refused(msg)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        msg = (
            f"{what} {name!r} is not a valid name: use a lower-case Python identifier such as "
            "'layer_norm' (letters, digits and underscores, starting with a letter)"
        )
        raise Refused(msg)
    if name in taken:
        msg = f"{what} {name!r} would shadow a name the generated module or test uses: rename it"
        raise Refused(msg)
    if name.startswith("test"):
        msg = f"{what} {name!r} starts with 'test', so pytest would take it for a test: rename it"
        raise Refused(msg)
    if len(name) > MAX_NAME_LENGTH:
        msg = f"{what} {name!r} is longer than {MAX_NAME_LENGTH} characters: choose a shorter one"
        raise Refused(msg)


def parse_parameter(spec: str) -> Parameter:
    """`spec`, e.g. ``'scale: float | None = None'``, as a `Parameter`; refused if it is not
    one Python parameter with a type made of `TYPE_NAMES` and a literal default."""
    how = "write it as 'NAME: TYPE = DEFAULT', e.g. --param 'axis: int = -1'"
    name = re.split(r"[:=\s]", spec.strip(), maxsplit=1)[0]
    if keyword.iskeyword(name):  # before Python's parser, which would only say "invalid syntax"
        check_name(name, "parameter")
    source = f"def f({spec}): pass"
    try:
        function = ast.parse(source).body[0]
    except SyntaxError:
        msg = f"--param {spec!r} is not valid Python: {how}"
        raise Refused(msg) from None
    assert isinstance(function, ast.FunctionDef)
    arguments = function.args
    if len(arguments.args) != 1 or arguments.vararg or arguments.kwarg or arguments.kwonlyargs:
        msg = f"--param {spec!r} is not one parameter: {how} (one --param for each)"
        raise Refused(msg)
    (argument,) = arguments.args
    if argument.annotation is None or not arguments.defaults:
        msg = f"--param {spec!r} needs a type and a default: {how}"
        raise Refused(msg)
    unknown = {
        node.id for node in ast.walk(argument.annotation) if isinstance(node, ast.Name)
    } - TYPE_NAMES
    if unknown:
        msg = (
            f"--param {spec!r}: the generated module does not import {', '.join(sorted(unknown))};"
            f" use {', '.join(sorted(TYPE_NAMES))} (e.g. 'tuple[int, ...]'), then edit the type"
        )
        raise Refused(msg)
    (default,) = arguments.defaults
    try:
        ast.literal_eval(default)
    except ValueError:
        msg = f"--param {spec!r}: the default must be a Python literal such as 1.0, None or 'mean'"
        raise Refused(msg) from None
    check_name(argument.arg, "parameter", MODULE_NAMES | TEST_NAMES | DRAW_NAMES)
    typed = ast.get_source_segment(source, default) or ""
    if isinstance(ast.literal_eval(default), str):  # in double quotes, as ruff format writes it
        text = json.dumps(ast.literal_eval(default))
    elif re.fullmatch(r"-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?", typed):  # as typed (ruff keeps it): 1e-6
        text = typed
    else:  # Python's spelling: 1e-06 for 1E-6
        text = ast.unparse(default)
    return Parameter(argument.arg, ast.unparse(argument.annotation), text)


def parse_operand(spec: str) -> tuple[str, str, str | None]:
    """`spec`, e.g. ``'weight:d'``, ``'x'`` or ``'labels:...:int<c'``, as (name, axes, the bound
    an integer operand's values stay below, None for a floating one); the axes default to
    "...", refused if they do not follow the grammar of `parity.Spec`."""
    how = (
        "write NAME:AXES with AXES '...' (batch axes, shared by the operands that have them) "
        "then one letter per axis, each once: 'x:...d', 'weight:d'"
    )
    name, _, rest = spec.partition(":")
    axes, _, kind = rest.partition(":")
    axes = axes or "..."
    if axes == "int" or axes.startswith("int<"):
        msg = f"operand {spec!r}: write its axes before ':int', e.g. 'labels:...:int<c'"
        raise Refused(msg)
    letters = axes.removeprefix("...")
    for position, character in enumerate(letters, start=len(axes) - len(letters)):
        if character == ".":
            problem = f"the '.' at position {position} of {axes!r} is not '...' at the start"
        elif not "a" <= character <= "z":
            problem = f"{character!r} at position {position} of {axes!r} is not a letter a-z"
        elif letters.count(character) > 1:
            problem = f"the letter {character!r} appears twice in {axes!r}"
            square = f"'{name}:...{character}m' and --size 'm: {character}..{character}'"
            how += f"; a square matrix: {square}"
        else:
            continue
        msg = f"operand {spec!r}: {problem}; {how}"
        raise Refused(msg)
    if not kind:
        return name, axes, None
    found = re.fullmatch(r"int(?:<(.*))?", kind)
    if found is None:
        msg = (
            f"operand {spec!r}: only ':int' may follow the axes (an operand of integers), with "
            "the bound its values stay below: 'labels:...:int<c'"
        )
        raise Refused(msg)
    high = INTEGER_HIGH if found[1] is None else found[1]
    if not BOUND.fullmatch(high):
        msg = (
            f"operand {spec!r}: {high!r} is not a bound; write a number, a letter of the axes or "
            "an int --param, with an optional factor: 'labels:...:int<c', 'index:...:int<2n'"
        )
        raise Refused(msg)
    return name, axes, high


def parse_size(spec: str, constraints: Constraints) -> None:
    """Add `spec`, e.g. ``'d: even'``, to `constraints`: a size that is even, a multiple of a
    bound (``'c: multiple of groups'``), within bounds (``'k: 1..n'``) or one (``'e: 3h'``)."""
    how = (
        "write --size 'LETTER: RULE' with RULE 'even', 'multiple of B', 'LOW..HIGH' or B, where "
        "B is a number, or a letter or an int --param with an optional factor: 'd: even', "
        "'c: multiple of groups', 'k: 1..n', 'e: 3h'"
    )
    letter, colon, rule = spec.partition(":")
    letter, rule = letter.strip(), " ".join(rule.split())
    if not colon or not re.fullmatch(r"[a-z]", letter):
        msg = f"--size {spec!r}: {how}"
        raise Refused(msg)
    multiple = "2" if rule == "even" else rule.removeprefix("multiple of ")
    within = [bound.strip() for bound in rule.split("..")]
    bounds = [multiple] if multiple != rule else within if len(within) == 2 else [rule]
    for bound in bounds:
        if not BOUND.fullmatch(bound) or (multiple != rule and bound == "0"):
            msg = f"--size {spec!r}: {bound!r} is not a bound; {how}"
            raise Refused(msg)
    taken = constraints.multiples if multiple != rule else constraints.sides
    if letter in taken:
        msg = f"--size {spec!r}: {letter!r} has such a rule already; give each rule once"
        raise Refused(msg)
    if multiple != rule:
        constraints.multiples[letter] = multiple
    else:
        constraints.sides[letter] = (bounds[0], bounds[-1])


def check_constraints(
    constraints: Constraints, operands: dict[str, str], parameters: list[Parameter], shared: bool
) -> None:
    """Refuse a --size on a letter no operand has, and a bound that names neither a letter of
    the operands nor an int parameter."""
    letters = "".join(dict.fromkeys("".join(axes.strip(".") for axes in operands.values())))
    for letter in {*constraints.sides, *constraints.multiples} - set(letters):
        msg = f"--size '{letter}: ...': no operand has an axis {letter!r} (the axes: {letters})"
        raise Refused(msg)
    ints = [parameter.name for parameter in parameters if parameter.type == "int"]
    for bound, where in constraints.bounds():
        name = BOUND.fullmatch(bound)[2]  # type: ignore[index]  # checked when parsed
        if name and name not in letters and name not in ints:
            msg = (
                f"{where}: {name!r} is neither a letter of the operands' axes ({letters}) nor a "
                f"parameter of type int (--param '{name}: int = 2')"
            )
            raise Refused(msg)
    if set(constraints.integers) == set(operands):
        msg = "every operand is of integers: give the algorithm a floating-point one too"
        raise Refused(msg)
    if shared and constraints.integers:
        msg = (
            "--array-api takes floating-point operands only: leave it out for an operand of "
            f"integers ({', '.join(constraints.integers)}), one port per backend"
        )
        raise Refused(msg)


def check_signature(
    repo: Repo, name: str, operands: list[str], parameters: list[Parameter]
) -> None:
    """Refuse a signature whose names clash, or an algorithm that exists already."""
    check_name(name, "the algorithm", MODULE_NAMES | TEST_NAMES)
    for operand in operands:
        check_name(operand, "operand", MODULE_NAMES | TEST_NAMES)
    names = [name, *operands, *(parameter.name for parameter in parameters)]
    for duplicate in sorted({item for item in names if names.count(item) > 1}):
        msg = (
            f"{duplicate!r} is used twice (algorithm, operands and parameters need names of "
            "their own): rename one"
        )
        raise Refused(msg)
    kernels = repo.source / f"_{name}_triton_kernels.py"  # --triton's, in the single layout
    taken = [repo.source / f"{name}.py", repo.source / name, kernels, TESTS / f"test_{name}.py"]
    for path in taken:
        if path.exists():
            msg = f"{name!r} already exists: {path.relative_to(ROOT)}; choose another name"
            raise Refused(msg)


def check_triton(repo: Repo, triton: bool, shared: bool) -> None:
    """Refuse --triton in a repo without Triton as a backend, and beside --array-api."""
    if not triton:
        return
    if not repo.triton:
        msg = (
            "--triton: this repo has no Triton backend (its pyproject.toml declares no 'triton' "
            f"extra). Switch it on first with `{TRITON_ON}` (docs/guide/updating.md, 'Switch "
            "Triton on later'), then run parity new again"
        )
        raise Refused(msg)
    if shared:
        msg = (
            "--triton gives the algorithm a port of its own for CUDA tensors, beside one port "
            "per backend: leave out --array-api (one shared implementation)"
        )
        raise Refused(msg)


# --- This repo --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Repo:
    """What the new files depend on: this repo's answers to the template's questions."""

    package: str
    layout: str  # "single" (one module per algorithm) or "split" (a folder)
    jax: bool
    triton: bool = False  # Triton a backend: the pyproject.toml's `triton` extra

    @classmethod
    def read(cls, answers: Path = ANSWERS) -> Repo:
        """The answers in `answers` (.copier-answers.yml, which every generated repo carries),
        and whether Triton is a backend (the extras of its pyproject.toml)."""
        if not answers.is_file():
            msg = (
                f"parity new: no {answers.name} in {answers.parent}: run it from the root of a "
                "repo made by the template (cd <your repo>; parity new NAME OPERAND ...)"
            )
            raise SystemExit(msg)
        text = answers.read_text(encoding="utf-8")
        found = dict(re.findall(r"^(\w+): ['\"]?([^'\"\n]*)['\"]?$", text, re.MULTILINE))
        jax = found["jax"].lower() == "true"
        return cls(found["package_name"], found["layout"], jax, "triton" in repo_extras())

    @property
    def source(self) -> Path:
        return ROOT / "src" / self.package

    @property
    def backends(self) -> list[str]:
        return list(BACKENDS) if self.jax else list(BACKENDS)[:2]


# --- The new files --------------------------------------------------------------------------


def skeleton(piece: str, /, **fields: str) -> str:
    """The `piece` of skeleton/ (beside this module), with `fields` filled in."""
    return Template((SKELETON / piece).read_text(encoding="utf-8")).substitute(fields)


def braced(items: Iterable[str]) -> str:
    """A dict display of `items`, without doubled braces (this file passes through Jinja)."""
    return "{" + ", ".join(items) + "}"


def array_type(backend: str, operand: str, integers: dict[str, str]) -> str:
    """The type of `operand` on `backend`: an array of integers where it is one of `integers`."""
    return (INTEGER_BACKENDS if operand in integers else BACKENDS)[backend][0]


def signature(operands: list[str], types: list[str], parameters: list[str]) -> str:
    typed = [f"{operand}: {kind}" for operand, kind in zip(operands, types, strict=True)]
    return ", ".join(typed + parameters)


def public_function(
    repo: Repo,
    name: str,
    operands: list[str],
    parameters: list[Parameter],
    integers: dict[str, str],
    shared: bool,
    triton: bool = False,
) -> str:
    """The public function: its overloads, signature, docstring and dispatch; with `shared`, to
    the reference or the shared implementation; `integers`: the operands of integers, with the
    bound their values stay below; with `triton`, CUDA tensors to the Triton port."""
    with_defaults = [f"{p.name}: {p.type} = {p.default}" for p in parameters]
    overloads = []
    for backend in repo.backends:
        types = [array_type(backend, operand, integers) for operand in operands]
        result = BACKENDS[backend][0]
        overloads.append(
            f"@overload\ndef {name}({signature(operands, types, with_defaults)}) -> {result}: ..."
        )
    meaning = {o: f"; integers from 0 up to (not including) {integers[o]}" for o in integers}
    documented = []
    for o in operands:
        kinds = " or ".join(array_type(backend, o, integers) for backend in repo.backends)
        accepted = SHARED_TYPES if shared else kinds
        meant = meaning.get(o, "")
        documented.append(f"    {o} : {accepted}\n        TODO: shape and meaning{meant}.\n")
    documented += [
        f"    {p.name} : {p.type}, default {p.default}\n        TODO: what it sets.\n"
        for p in parameters
    ]
    arguments = ", ".join([*operands, *(parameter.name for parameter in parameters)])
    checks = {
        b: " and ".join(
            (INTEGER_BACKENDS if o in integers else BACKENDS)[b][1].format(o) for o in operands
        )
        for b in repo.backends
    }
    if shared:
        checks = {"numpy": checks["numpy"], "array_api": ARRAY_API[1].format(", ".join(operands))}
    branches = []
    for backend, check in checks.items():
        call = f"return _{name}_{backend}({arguments})"
        if backend == "pytorch" and triton:  # as softmax: CUDA tensors to the Triton port
            on_cuda = " and ".join(f"triton_runs({operand})" for operand in operands)
            call = f"if {on_cuda}:\n            return _{name}_triton({arguments})\n        {call}"
        branches.append(f"    if {check}:\n        {call}")
    keywords = ", ".join(f"{operand}={operand}" for operand in operands)
    raises = "If an operand is not an array of one of those types, if the operands come from "
    if integers:
        keywords = f"integer_operands={tuple(integers)!r}, {keywords}".replace("'", '"')
        floats = ", ".join(operand for operand in operands if operand not in integers)
        raises += f"different backends, if {', '.join(integers)} holds anything but integers, "
        raises += f"or if {floats} holds anything but floating point."
    else:
        raises += "different backends, or if one holds integers."
    return skeleton(
        "public.py.tmpl",
        name=name,
        overloads="\n".join(overloads),
        signature=signature(operands, ["Array"] * len(operands), with_defaults),
        parameters_doc="".join(documented),
        raises=textwrap.fill(raises, 96, initial_indent=" " * 8, subsequent_indent=" " * 8),
        branches="\n".join(branches),
        keywords=keywords,
    ).rstrip("\n")


def private_function(
    name: str,
    backend: str,
    operands: list[str],
    parameters: list[Parameter],
    integers: dict[str, str],
    **extra: str,
) -> str:
    """A backend's stub (or the shared implementation's), with the full signature; `extra`:
    the fields of its skeleton beyond those (the Triton port's)."""
    if backend == "array_api":
        types = [ARRAY_API[0]] * len(operands)
    elif backend == "triton":  # a port on PyTorch's tensors
        types = [array_type("pytorch", operand, integers) for operand in operands]
    else:
        types = [array_type(backend, operand, integers) for operand in operands]
    arguments = signature(operands, types, [f"{p.name}: {p.type}" for p in parameters])
    names = ", ".join([*operands, *(p.name for p in parameters)])
    text = skeleton(
        f"{backend}.py.tmpl",
        name=name,
        signature=arguments,
        arguments=names,
        operands=", ".join(operands),
        **extra,
    )
    return text.rstrip("\n")


def no_gradient_field(reason: str) -> str:
    """The lines of the SPEC that declare `reason` (none where it is empty): its text quoted as
    JSON, a valid Python string, in pieces where one line would pass the line length."""
    if not reason:
        return ""
    line = f"    no_gradient={json.dumps(reason)},"
    if len(line) <= LINE_LENGTH:
        return f"{line}\n"
    width = LINE_LENGTH - len("        ")
    pieces: list[str] = []
    for word in re.findall(r"\S*\s*", reason):
        for part in [word] if len(json.dumps(word)) <= width else list(word):
            if pieces and len(json.dumps(pieces[-1] + part)) <= width:
                pieces[-1] += part
            elif part:
                pieces.append(part)
    lines = "".join(f"        {json.dumps(piece)}\n" for piece in pieces)
    return f"    no_gradient=(\n{lines}    ),\n"


def check_no_gradient(reason: str | None) -> str:
    """`reason`, as typed after --no-gradient, stripped; refused where it says nothing."""
    if reason is None:
        return ""
    if not reason.strip():
        msg = (
            "--no-gradient needs the reason the ports have no derivative, e.g. "
            "--no-gradient 'torch.floor_divide returns no graph'"
        )
        raise Refused(msg)
    return reason.strip()


def literal(bound: str) -> str:
    """`bound` as Python source: a number as it is, a letter or a parameter as a string."""
    return bound if bound.isdigit() else json.dumps(bound)


def test_module(
    repo: Repo,
    name: str,
    operands: dict[str, str],
    parameters: list[Parameter],
    constraints: Constraints,
    shared: bool,
    no_gradient: str,
    triton: bool,
) -> str:
    """The test module: what it draws, filled in; the tests themselves, from the skeleton; with
    `shared`, on every Array API library (`parity.ARRAY_API`); with `triton`, on its backends
    and the Triton port (`BACKENDS`, as softmax's). A parameter that a bound names is drawn
    before the operands, which depend on it; the fixed operands use its default.
    `no_gradient`: why the ports have no derivative (--no-gradient), declared in the SPEC."""
    first = next(iter(operands))
    letters = "".join(axes.removeprefix("...") for axes in operands.values())
    tied = constraints.parameters(letters)
    drawn = [
        (parameter, "st.integers(1, 3)" if parameter.name in tied else parameter.strategy(first))
        for parameter in parameters
    ]
    strategies = " ".join(strategy or "" for _, strategy in drawn)
    axis = next((p.name for p, strategy in drawn if strategy and p.name in AXIS_NAMES), None)
    before = [f'    {n} = data.draw(st.integers(1, 3), label="{n}")\n' for n in tied]
    lines = []
    if first not in DRAW_NAMES and (f"{first}." in strategies or "size" in strategies):
        lines.append(f"    {first} = operands[0]")
    # The axis first: a size is the length of the axis drawn (or of the last axis).
    for parameter, strategy in sorted(drawn, key=lambda item: item[0].name != axis):
        if parameter.name in tied:
            continue
        if "size" in (strategy or "") and "    size = " not in "\n".join(lines):
            operand = "operands[0]" if first in DRAW_NAMES else first
            lines.append(f"    size = {operand}.shape[{axis or -1}]")
        if strategy is not None:
            lines.append(f'    {parameter.name} = data.draw({strategy}, label="{parameter.name}")')
    entries = [f'"{p.name}": {p.name}' for p, strategy in drawn if strategy is not None]
    fixed = [p.name for p, strategy in drawn if strategy is None]
    if fixed:
        entries.insert(0, "**DEFAULTS")
        lines.append(f"    # TODO: draw {', '.join(fixed)} too (from DEFAULTS until then)")
    lines.append(f"    return operands, {braced(entries)}")
    needs_axis = axis is not None or ("size" in strategies and not operands[first].strip("."))
    bounds = constraints.sides.items()
    ports = "parity.PORTS"
    targets = "parity.ARRAY_API" if shared else ""
    backends = ""
    if triton:
        ports = targets = "BACKENDS"
        ports += "[1:]"
        backends = (
            "#: The backends its tests run on: NumPy (the reference), then the ports, Triton's "
            'among them.\nBACKENDS = [*parity.DEFAULT, "triton"]\n'
        )
    return skeleton(
        "test.py.tmpl",
        name=name,
        package=repo.package,
        shapes=braced(f'"{operand}": "{axes}"' for operand, axes in operands.items()),
        min_dims="1" if needs_axis and not letters else "0",
        sides=braced(f'"{k}": ({literal(low)}, {literal(high)})' for k, (low, high) in bounds),
        multiples=braced(f'"{k}": {literal(b)}' for k, b in constraints.multiples.items()),
        integers=braced(f'"{k}": (0, {literal(b)})' for k, b in constraints.integers.items()),
        defaults=braced(f'"{p.name}": {p.default}' for p in parameters),
        draw_first="".join(before),
        given=f", parameters={braced(f'{n!r}: {n}' for n in tied)}".replace("'", '"')
        if tied
        else "",
        fixed=", parameters=DEFAULTS" if tied else "",
        draw_parameters="\n".join(lines),
        unpack=", ".join(operands) if len(operands) > 1 else f"({first},)",
        operands=", ".join(operands),
        compared="its shared implementation" if shared else "every port",
        targets=targets,
        backends=backends,
        differentiable='["torch", "jax"]' if shared else ports,
        compiled='["torch"]' if shared else ports,  # JAX's calls run through jax.jit
        refused_by=", backends=parity.ARRAY_API" if shared else "",
        no_gradient=no_gradient_field(no_gradient),
    )


def imported_order(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def dispatch_imports(
    repo: Repo, operands: list[str], integers: dict[str, str], triton: bool = False
) -> list[str]:
    """The names the public function imports from `_dispatch`, in isort's order: constants,
    classes, functions; `triton_runs` for a Triton port."""
    kinds = {operand in integers for operand in operands}
    names = ["dispatch_error"]
    names += ["TORCH_FLOATS"] if False in kinds else []
    names += ["TORCH_INTEGERS"] if True in kinds else []
    if repo.jax:
        names += ["is_jax_float"] if False in kinds else []
        names += ["is_jax_integer"] if True in kinds else []
    names += ["triton_runs"] if triton else []
    return sorted(names, key=imported_order)


def files(
    repo: Repo,
    name: str,
    operands: dict[str, str],
    parameters: list[Parameter],
    constraints: Constraints,
    shared: bool,
    no_gradient: str = "",
    triton: bool = False,
) -> dict[Path, str]:
    """The new files and their text, in this repo's layout; `operands` maps each operand's name
    to its axes; `shared`: the reference and one Array API implementation (--array-api);
    `no_gradient`: why the ports have no derivative (--no-gradient); `triton`: a Triton port
    too, and its kernels (--triton)."""
    names = list(operands)
    integers = constraints.integers
    public = public_function(repo, name, names, parameters, integers, shared, triton)
    backends = ["numpy", "array_api"] if shared else repo.backends
    private = {b: private_function(name, b, names, parameters, integers) for b in backends}
    kernels: dict[Path, str] = {}
    if triton:  # laid out as softmax's: beside the module, or in the algorithm's folder
        place = f"_{name}_triton_kernels.py" if repo.layout == "single" else "_triton_kernels.py"
        folder = repo.source if repo.layout == "single" else repo.source / name
        kernels[folder / place] = skeleton(
            "triton_kernels.py.tmpl", name=name, package=repo.package
        )
        doc = kernels_doc(name, place, names[0])
        port = private_function(name, "triton", names, parameters, integers, kernels_doc=doc)
        private["triton"] = port
    jax = repo.jax
    fields = {"name": name, "type_imports": "    import jax\n" if jax else ""}
    imported = dispatch_imports(repo, names, integers, triton)
    style = "_array_api" if shared else ""
    if repo.layout == "single":
        if not shared:  # the Array API skeletons spell their imports out
            with_stubs = [*imported, "NotYetImplemented"]
            fields["dispatch"] = ", ".join(sorted(with_stubs, key=imported_order))
        body = "\n\n\n".join([public, *private.values()])
        path = repo.source / f"{name}.py"
        module = {path: skeleton(f"module{style}.py.tmpl", **fields, body=body)}
    else:
        fields["dispatch"] = ", ".join(imported)
        fields["imports"] = "".join(f"from .{b}_impl import _{name}_{b}\n" for b in sorted(private))
        module = {repo.source / name / "__init__.py": skeleton("__init__.py.tmpl", **fields)}
        api = skeleton(f"api{style}.py.tmpl", **fields, body=public)
        module[repo.source / name / "api.py"] = api
        for backend, text in private.items():
            path = repo.source / name / f"{backend}_impl.py"
            module[path] = skeleton(f"{backend}_impl.py.tmpl", **fields, body=text)
    test = test_module(repo, name, operands, parameters, constraints, shared, no_gradient, triton)
    return {**module, **kernels, TESTS / f"test_{name}.py": test}


def kernels_doc(name: str, module: str, first: str) -> str:
    """The paragraph of the Triton port's docstring that says where its kernels are and how it
    runs them on rows: wrapped to the line length, with no break inside a piece of code."""
    code = f"{first}.reshape(-1, n).contiguous()".replace(" ", "\0")
    text = (
        f"Its kernels are in `{module}`: import `{name}_rows` from there in this function, at "
        "its first call (Triton is an optional extra). For an operation along the last axis, "
        f"of length n, run it on the rows ``{code}`` (where n > 0) and give its result the "
        f"shape of `{first}`."
    )
    indent = " " * 4
    wrapped = textwrap.fill(
        text,
        LINE_LENGTH,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return wrapped.replace("\0", " ")


def docs_page(repo: Repo, name: str) -> dict[Path, str]:
    """The algorithm's page in the docs site (docs/algorithms/): its docstrings, math included,
    then the code of its NumPy reference."""
    reference = f"{name}.py" if repo.layout == "single" else f"{name}/numpy_impl.py"
    text = skeleton(
        "page.md.tmpl", name=name, package=repo.package, reference=f"src/{repo.package}/{reference}"
    )
    return {ROOT / "docs" / "algorithms" / f"{name}.md": text}


def formatted(paths: list[Path]) -> bool:
    """Format `paths` with this repo's ruff (the dev environment's, else one on PATH): the new
    code is written plainly, ruff breaks its long lines. False where no ruff is installed."""
    if importlib.util.find_spec("ruff") is not None:
        ruff = [sys.executable, "-m", "ruff"]
    elif shutil.which("ruff"):
        ruff = ["ruff"]
    else:
        return False
    subprocess.run([*ruff, "format", "--quiet", *map(str, paths)], cwd=ROOT, check=True)
    return True


def natural(text: str) -> list[str | int]:
    """Sort key that orders digits by value (`a2` before `a10`), as ruff's isort does."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text.lower())]


def export(init: Path, name: str) -> bool:
    """Add `from .name import name` and "name" to `__all__` in the package's `__init__.py`.

    Handles the file as generated: single-line relative imports and a list of strings in
    `__all__`, both kept sorted. Returns False, changing nothing, for any other shape, and where
    `__all__` carries a comment, which rewriting it would drop.
    """
    text = init.read_text(encoding="utf-8")
    body = ast.parse(text).body
    imports = [node for node in body if isinstance(node, ast.ImportFrom) and node.level == 1]
    exported = [
        node
        for node in body
        if isinstance(node, ast.Assign)
        and [getattr(target, "id", None) for target in node.targets] == ["__all__"]
        and isinstance(node.value, ast.List)
        and all(isinstance(item, ast.Constant) for item in node.value.elts)
    ]
    if not imports or len(exported) != 1 or any(node.lineno != node.end_lineno for node in imports):
        return False
    first, last = imports[0].lineno, imports[-1].lineno
    if last - first + 1 != len(imports) or exported[0].lineno < last:
        return False
    lines = text.splitlines(keepends=True)
    start, end = exported[0].lineno, exported[0].end_lineno or exported[0].lineno
    if any("#" in line for line in lines[start - 1 : end]):
        return False
    new_import = f"from .{name} import {name}\n"
    by_module = lambda line: natural(line.split()[1])  # as isort: a before a2
    import_lines = sorted({*lines[first - 1 : last], new_import}, key=by_module)
    assert isinstance(exported[0].value, ast.List)
    current = [
        item.value
        for item in exported[0].value.elts
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    ]
    names = sorted({*current, name}, key=natural)
    all_text = "__all__ = [" + ", ".join(f'"{item}"' for item in names) + "]\n"
    new = [*lines[: first - 1], *import_lines, *lines[last : start - 1], all_text, *lines[end:]]
    init.write_text("".join(new), encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Create a new algorithm from its signature: stubs in this repo's layout, "
        "exported from the package, and its tests.",
        epilog="examples: attention with three operands and an optional parameter; a loss of\n"
        "logits and integer labels below their number of classes; rotary embeddings of an\n"
        "even number of features; a function whose ports have no derivative\n"
        f"  parity new {EXAMPLE}\n"
        "  parity new cross_entropy logits:...c 'labels:...:int<c'\n"
        "  parity new rotary x:...d --size 'd: even'\n"
        "  parity new bessel_j0 x --no-gradient 'torch.special.bessel_j0 "
        "has none'\n"
        "and, in a repo with Triton, a row-wise norm with a Triton port and its kernels\n"
        "  parity new rms_norm x:...d --param 'eps: float = 1e-6' --triton",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", help="the function's name, a lower-case identifier: attention")
    parser.add_argument(
        "operands",
        nargs="*",
        default=["x"],
        help="the array arguments, each NAME or NAME:AXES (default: x): x:...d weight:d; "
        "NAME:AXES:int<BOUND for integers below BOUND (a number, a letter of the axes or an int "
        "--param): 'labels:...:int<c'",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="'NAME: TYPE = DEFAULT'",
        help="a plain Python argument, e.g. 'scale: float | None = None' (repeat for several)",
    )
    parser.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="'LETTER: RULE'",
        help="a rule for an axis's size: 'd: even', 'c: multiple of groups' (a number, a letter "
        "or an int --param), 'k: 1..n', 'e: 3h' (three times h); repeat for several",
    )
    parser.add_argument(
        "--array-api",
        action="store_true",
        help="one shared implementation for every array library but NumPy (PyTorch, JAX, ...), "
        "written against the Array API standard, instead of one port per backend",
    )
    parser.add_argument(
        "--no-gradient",
        metavar="REASON",
        help="the ports have no derivative, for this REASON (torch.floor_divide, heaviside, "
        "torch.special.bessel_j0 return no graph): written into the SPEC as "
        'no_gradient="REASON"; its gradient tests then skip with it',
    )
    parser.add_argument(
        "--triton",
        action="store_true",
        help="a Triton port too, _NAME_triton, for CUDA tensors, with its kernels (a skeleton of "
        "a row-wise kernel, forward and backward) in a module of their own; in a repo with "
        f"Triton only (its 'triton' extra: `{TRITON_ON}` switches it on)",
    )
    arguments = parser.parse_args(argv)
    repo = Repo.read()
    try:
        parsed = [parse_operand(spec) for spec in arguments.operands]
        operands = {name: axes for name, axes, _ in parsed}
        constraints = Constraints({name: high for name, _, high in parsed if high is not None})
        parameters = [parse_parameter(spec) for spec in arguments.param]
        for spec in arguments.size:
            parse_size(spec, constraints)
        check_signature(repo, arguments.name, [name for name, _, _ in parsed], parameters)
        check_constraints(constraints, operands, parameters, arguments.array_api)
        no_gradient = check_no_gradient(arguments.no_gradient)
        check_triton(repo, arguments.triton, arguments.array_api)
    except Refused as refused:
        parser.error(str(refused))
    name = arguments.name
    shared = arguments.array_api
    triton = arguments.triton
    written = files(repo, name, operands, parameters, constraints, shared, no_gradient, triton)
    written |= docs_page(repo, name)
    # Everything written before anything is printed: output cut short (`| head`, a closed
    # terminal) cannot leave the algorithm half made.
    for path, text in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    init = repo.source / "__init__.py"
    exported = export(init, name)
    ruff_ran = formatted([*written, *([init] if exported else [])])
    for path in written:
        print(f"created {path.relative_to(ROOT)}")
    if exported:
        print(f"exported {name} from {init.relative_to(ROOT)}")
    else:
        print(
            f"could not edit {init.relative_to(ROOT)}: add `from .{name} import {name}` and "
            f'"{name}" to its __all__ yourself',
            file=sys.stderr,
        )
    if not ruff_ran:
        print("ruff is not installed here: run `ruff format` on the new files", file=sys.stderr)
    ports = " and ".join(f"_{name}_{backend}" for backend in repo.backends[1:])
    if triton:
        kernels = next(path for path in written if path.stem.endswith("_triton_kernels"))
        where = kernels.relative_to(ROOT)
        ports += f", and _{name}_triton with its kernels (their TODOs in {where})"
    if shared:
        ports = f"_{name}_array_api (with xp = array_namespace(...), the standard's functions only)"
    print(
        f"\nNext: write _{name}_numpy from the paper, with a test against known values in "
        f"tests/test_{name}.py (its SPEC declares the operands' shapes, sizes and values; its "
        f"draw, the parameters' ranges); then {ports}. Until then `python -m pytest "
        f"tests/test_{name}.py` reports them as not implemented yet (XFAIL); once all are "
        "written, `ruff check --fix` removes the unused import of NotYetImplemented. "
        "`nox -s bench` times it at sizes that grow until a call is too slow or would need too "
        "much memory; if its cost grows faster than its inputs (pairwise, attention), choose "
        f"the sizes in BENCHMARK_SIZES in tests/test_{name}.py."
    )
    return 0
