"""Start a new algorithm from its signature: its module, in this repo's layout, and its tests.

    python scripts/new_algorithm.py attention q k v --param 'scale: float | None = None'

The operands (here q, k and v; by default one, x) are the array arguments; each `--param` is a
plain Python value with a type and a default. This creates `attention` in the package, laid out
as `softmax` is (the public `attention`, then one private implementation per backend:
`_attention_numpy`, the reference, and the ports), tests/test_attention.py, and exports
`attention` from the package. The implementations are
stubs that raise NotImplementedError, so the new tests report "not implemented yet" (as expected
failures) until you write them: the NumPy reference first, from the paper, then the ports that
the parity tests compare with it.

The files come from the skeleton in scripts/skeleton/, with the signature filled in. Standard
library only; nothing is overwritten, and nothing is written when an argument is refused.
"""

from __future__ import annotations

import argparse
import ast
import keyword
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "{{ cookiecutter.package_name }}"
SOURCE = ROOT / "src" / PACKAGE
TESTS = ROOT / "tests"
SKELETON = Path(__file__).resolve().parent / "skeleton"
LINE_LENGTH = 100
# Longer names would push the generated signatures past the line length.
MAX_NAME_LENGTH = 32
# Names the generated module uses inside its functions: an operand or parameter (or the
# algorithm) with one of these names would shadow them.
MODULE_NAMES = frozenset(
    {
        *("annotations", "overload", "TYPE_CHECKING", "np", "numpy", "torch", "jax", "jnp"),
        *("NDArray", "Array", "dispatch_error", "is_jax_array", "require_floating", "msg"),
    }
)
# Names the generated test module defines or imports: the algorithm, imported there, would
# shadow them (operands and parameters appear there as strings only).
TEST_NAMES = frozenset(
    {
        *("annotations", "Any", "np", "NDArray", "pytest", "given", "st", "hypothesis"),
        *("parity", "Target", "Tolerance", "SHAPES", "MIN_DIMS", "DEFAULTS", "TOLERANCES"),
        *("Call", "draw", "sized", "benchmark_inputs", "OPERANDS"),
    }
)
# The names a parameter's type may use: the generated module imports nothing else for it.
TYPE_NAMES = frozenset({"bool", "int", "float", "complex", "str", "tuple", "list", "dict", "None"})
# A parameter with one of these names, of type int, is drawn among the first operand's axes.
AXIS_NAMES = frozenset({"axis", "dim"})
ARRAY_TYPES = "{{ cookiecutter.__array_types }}"
# Per backend: the type of an array, and the check that an operand is one.
BACKENDS = {
    "numpy": ("NDArray[np.floating]", "isinstance({}, np.ndarray)"),
    "pytorch": ("torch.Tensor", "isinstance({}, torch.Tensor)"),
{%- if cookiecutter.jax %}
    "jax": ("jax.Array", "is_jax_array({})"),
{%- endif %}
}
EXAMPLE = "attention q k v --param 'scale: float | None = None'"


class Refused(ValueError):
    """An argument that cannot become part of the new algorithm; the message says why."""


@dataclass(frozen=True)
class Parameter:
    """A plain Python argument: ``name: type = default``, as typed after --param."""

    name: str
    type: str
    default: str

    def strategy(self) -> str | None:
        """The hypothesis strategy its test draws it from, or None if it has no natural one."""
        kinds = [kind.strip() for kind in self.type.split("|")]
        rest = [kind for kind in kinds if kind != "None"]
        if len(rest) != 1:
            return None
        if self.name in AXIS_NAMES and rest == ["int"]:
            found = "st.integers(-ndim, ndim - 1)"
        else:
            found = {
                "bool": "st.booleans()",
                "int": "st.integers(1, 4)",
                "float": "st.floats(0.5, 2.0)",
            }.get(rest[0], "")
        if not found:
            return None
        return f"st.none() | {found}" if "None" in kinds else found


# --- Checking the arguments -----------------------------------------------------------------


def check_name(name: str, what: str, taken: frozenset[str] = MODULE_NAMES) -> None:
    """Refuse `name` as the name of `what` (the algorithm, an operand, a parameter), or as one
    of the `taken` names."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        msg = (
            f"{what} {name!r} is not a valid name: use a lower-case Python identifier such as "
            "'layer_norm' (letters, digits and underscores, starting with a letter)"
        )
        raise Refused(msg)
    if keyword.issoftkeyword(name) or name in taken:
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
    try:
        function = ast.parse(f"def f({spec}): pass").body[0]
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
    check_name(argument.arg, "parameter")
    return Parameter(argument.arg, ast.unparse(argument.annotation), ast.unparse(default))


def check_signature(name: str, operands: list[str], parameters: list[Parameter]) -> None:
    """Refuse a signature whose names clash, or an algorithm that exists already."""
    check_name(name, "the algorithm", MODULE_NAMES | TEST_NAMES)
    for operand in operands:
        check_name(operand, "operand")
    names = [name, *operands, *(parameter.name for parameter in parameters)]
    for duplicate in sorted({item for item in names if names.count(item) > 1}):
        msg = (
            f"{duplicate!r} is used twice (algorithm, operands and parameters need names of "
            "their own): rename one"
        )
        raise Refused(msg)
    for path in (SOURCE / f"{name}.py", SOURCE / name, TESTS / f"test_{name}.py"):
        if path.exists():
            msg = f"{name!r} already exists: {path.relative_to(ROOT)}; choose another name"
            raise Refused(msg)


# --- Writing code that ruff format leaves as it is ------------------------------------------


def split_arguments(text: str) -> list[str]:
    """`text` split at its top-level commas (not those inside brackets or strings)."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [*parts, text[start:].strip()]


def bracketed(indent: str, head: str, items: list[str], tail: str, *, hug: bool = True) -> str:
    """``head(items)tail`` as ruff formats it: on one line if it fits, else (for calls and
    signatures, with `hug`) the items on one indented line of their own, else one item per
    line with a trailing comma (always, for a list, dict or tuple that does not fit)."""
    one_line = f"{indent}{head}{', '.join(items)}{tail}"
    if len(one_line) <= LINE_LENGTH:
        return one_line
    inner = f"{indent}    {', '.join(items)}"
    if hug and len(inner) <= LINE_LENGTH:
        return f"{indent}{head}\n{inner}\n{indent}{tail}"
    lines = "".join(f"{indent}    {item},\n" for item in items)
    return f"{indent}{head}\n{lines}{indent}{tail}"


def fit(line: str) -> str:
    """A line of code that ends with a bracket (and maybe ``,``), split as ruff would if it is
    too long: at the bracket that closes last."""
    stripped = line.rstrip(",")
    if len(line) <= LINE_LENGTH or not stripped.endswith((")", "]", "}")):
        return line
    depth = 0
    for i in range(len(stripped) - 1, -1, -1):
        depth += {")": 1, "]": 1, "}": 1, "(": -1, "[": -1, "{": -1}.get(stripped[i], 0)
        if depth == 0:
            break
    indent = line[: len(line) - len(line.lstrip())]
    head, inner = stripped[len(indent) : i + 1], stripped[i + 1 : -1]
    call = i > 0 and (stripped[i - 1].isalnum() or stripped[i - 1] in "_)]")
    tail = stripped[-1] + line[len(stripped) :]
    return bracketed(indent, head, split_arguments(inner), tail, hug=call)


def condition(indent: str, checks: list[str]) -> str:
    """``if a and b:`` as ruff formats it, in parentheses when too long."""
    one_line = f"{indent}if {' and '.join(checks)}:"
    if len(one_line) <= LINE_LENGTH:
        return one_line
    inner = f"{indent}    {' and '.join(checks)}"
    if len(inner) <= LINE_LENGTH:
        return f"{indent}if (\n{inner}\n{indent}):"
    rest = "".join(f"{indent}    and {check}\n" for check in checks[1:])
    return f"{indent}if (\n{indent}    {checks[0]}\n{rest}{indent}):"


# --- The new files --------------------------------------------------------------------------


def skeleton(name: str) -> Template:
    return Template((SKELETON / name).read_text(encoding="utf-8"))


def public_function(name: str, operands: list[str], parameters: list[Parameter]) -> str:
    """The public function: its overloads, signature, docstring and dispatch."""
    with_defaults = [f"{p.name}: {p.type} = {p.default}" for p in parameters]

    def signature(array_type: str, end: str) -> str:
        arguments = [f"{operand}: {array_type}" for operand in operands] + with_defaults
        return bracketed("", f"def {name}(", arguments, f") -> {array_type}:{end}")

    overloads = [f"@overload\n{signature(array, ' ...')}" for array, _ in BACKENDS.values()]
    documented = [
        f"    {operand} : {ARRAY_TYPES}\n        TODO: shape, dtype and meaning.\n"
        for operand in operands
    ]
    documented += [
        f"    {p.name} : {p.type}, default {p.default}\n        TODO: what it sets.\n"
        for p in parameters
    ]
    keywords = [f"{operand}={operand}" for operand in operands]
    arguments = [*operands, *(parameter.name for parameter in parameters)]
    fields = {
        "name": name,
        "overloads": "\n".join(overloads),
        "definition": signature("Array", ""),
        "parameters_doc": "".join(documented),
        "check": fit(f"    require_floating({', '.join([name, *keywords])})").lstrip(),
        "error": fit(f"    raise dispatch_error({', '.join([name, *keywords])})").lstrip(),
    }
    for backend, (_, check) in BACKENDS.items():
        checks = [check.format(operand) for operand in operands]
        fields[f"if_{backend}"] = condition("    ", checks).lstrip()
        call = f"        return _{name}_{backend}({', '.join(arguments)})"
        fields[f"call_{backend}"] = fit(call).lstrip()
    return skeleton("public.py.tmpl").substitute(fields).rstrip("\n")


def private_definitions(
    name: str, operands: list[str], parameters: list[Parameter]
) -> dict[str, str]:
    """``numpy_def`` etc.: the first line(s) of each backend's stub, the full signature."""
    definitions = {}
    for backend, (array_type, _) in BACKENDS.items():
        arguments = [f"{operand}: {array_type}" for operand in operands]
        arguments += [f"{parameter.name}: {parameter.type}" for parameter in parameters]
        head = f"def _{name}_{backend}("
        definitions[f"{backend}_def"] = bracketed("", head, arguments, f") -> {array_type}:")
    return definitions


def test_module(name: str, operands: list[str], parameters: list[Parameter]) -> str:
    """The test module: what it draws, filled in; the tests themselves, from the skeleton."""
    drawn = [(parameter, parameter.strategy()) for parameter in parameters]
    lines = []
    if any(p.name in AXIS_NAMES and strategy for p, strategy in drawn):
        lines.append("    ndim = operands[0].ndim  # axes are drawn among the first operand's")
    fixed = [p.name for p, strategy in drawn if strategy is None]
    if parameters:
        lines.append("    parameters = {")
        if fixed:
            lines.append(f"        **DEFAULTS,  # TODO: draw {', '.join(fixed)} too")
        for parameter, strategy in drawn:
            if strategy is not None:
                entry = f'data.draw({strategy}, label="{parameter.name}")'
                lines.append(fit(f'        "{parameter.name}": {entry},'))
        lines += ["    }", "    return operands, parameters"]
    else:
        lines.append("    return operands, {}")
    defaults = ", ".join(f'"{p.name}": {p.default}' for p in parameters)
    fields = {
        "name": name,
        "package": PACKAGE,
        "shapes": "{" + ", ".join(f'"{operand}": "..."' for operand in operands) + "}",
        "min_dims": "1" if any(p.name in AXIS_NAMES for p, strategy in drawn if strategy) else "0",
        "defaults": "{" + defaults + "}",
        "draw_parameters": "\n".join(lines),
        "unpack": ", ".join(operands) if len(operands) > 1 else f"({operands[0]},)",
        "operands": ", ".join(operands),
    }
    text = skeleton("test.py.tmpl").substitute(fields)
    return "\n".join(fit(line) for line in text.split("\n"))


def files(name: str, operands: list[str], parameters: list[Parameter]) -> dict[Path, str]:
    """The new files and their text."""
    fields = {
        "name": name,
        "public": public_function(name, operands, parameters),
        **private_definitions(name, operands, parameters),
    }
{%- if cookiecutter.layout == 'single' %}
    module = {SOURCE / f"{name}.py": skeleton("module.py.tmpl").substitute(fields)}
{%- else %}
    module = {
        SOURCE / name / part: skeleton(f"{part}.tmpl").substitute(fields)
        for part in ["__init__.py", "api.py", *(f"{backend}_impl.py" for backend in BACKENDS)]
    }
{%- endif %}
    return {**module, TESTS / f"test_{name}.py": test_module(name, operands, parameters)}


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
    import_lines = sorted({*lines[first - 1 : last], f"from .{name} import {name}\n"}, key=natural)
    assert isinstance(exported[0].value, ast.List)
    current = [
        item.value
        for item in exported[0].value.elts
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    ]
    names = sorted({*current, name}, key=natural)
    all_text = fit("__all__ = [" + ", ".join(f'"{item}"' for item in names) + "]") + "\n"
    new = [*lines[: first - 1], *import_lines, *lines[last : start - 1], all_text, *lines[end:]]
    init.write_text("".join(new), encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Create a new algorithm from its signature: stubs in this repo's layout, "
        "exported from the package, and its tests.",
        epilog="example, attention with three operands and an optional parameter:\n"
        f"  python scripts/new_algorithm.py {EXAMPLE}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", help="the function's name, a lower-case identifier: attention")
    parser.add_argument(
        "operands", nargs="*", default=["x"], help="the array arguments (default: x): q k v"
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="'NAME: TYPE = DEFAULT'",
        help="a plain Python argument, e.g. 'scale: float | None = None' (repeat for several)",
    )
    arguments = parser.parse_args(argv)
    try:
        parameters = [parse_parameter(spec) for spec in arguments.param]
        check_signature(arguments.name, arguments.operands, parameters)
    except Refused as refused:
        parser.error(str(refused))
    name = arguments.name
    for path, text in files(name, arguments.operands, parameters).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"created {path.relative_to(ROOT)}")
    init = SOURCE / "__init__.py"
    if export(init, name):
        print(f"exported {name} from {init.relative_to(ROOT)}")
    else:
        print(
            f"could not edit {init.relative_to(ROOT)}: add `from .{name} import {name}` and "
            f'"{name}" to its __all__ yourself',
            file=sys.stderr,
        )
    ports = " and ".join(f"_{name}_{backend}" for backend in list(BACKENDS)[1:])
    print(
        f"\nNext: write _{name}_numpy from the paper, with a test against known values in "
        f"tests/test_{name}.py (declare how the operands' shapes relate in its SHAPES); then "
        f"{ports}. Until then `python -m pytest tests/test_{name}.py` reports them as not "
        "implemented yet (XFAIL). `nox -s bench` times it at sizes that grow until a call "
        "is too slow or would need too much memory; if its cost grows faster than its inputs "
        f"(pairwise, attention), choose the sizes in BENCHMARK_SIZES in tests/test_{name}.py."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
