"""Start a new algorithm: its module, in this repo's layout, and its tests, from a name.

    python scripts/new_algorithm.py layer_norm
{%- if cookiecutter.layout == 'single' %}

creates src/{{ cookiecutter.package_name }}/layer_norm.py (the public `layer_norm` and its private
`_layer_norm_numpy`, `_layer_norm_pytorch`{% if cookiecutter.jax %} and `_layer_norm_jax`{% endif %}, side by side),
{%- else %}

creates src/{{ cookiecutter.package_name }}/layer_norm/ (`api.py` with the public `layer_norm`, then
`numpy_impl.py`{% if cookiecutter.jax %}, `pytorch_impl.py` and `jax_impl.py`{% else %} and `pytorch_impl.py`{% endif %} with one private implementation each),
{%- endif %}
tests/test_layer_norm.py, and exports `layer_norm` from the package. The implementations are stubs
that raise NotImplementedError, so the new tests report "not implemented yet" (as expected
failures) until you write them: the NumPy reference first, from the paper, then the PyTorch port
that the parity tests compare with it.

Standard library only; nothing is overwritten.
"""

from __future__ import annotations

import argparse
import ast
import keyword
import re
import sys
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "{{ cookiecutter.package_name }}"
SOURCE = ROOT / "src" / PACKAGE
TESTS = ROOT / "tests"
LINE_LENGTH = 100
# Longer names would push the generated signatures past the line length.
MAX_NAME_LENGTH = 32
# Names the generated module itself uses: a function with one of these names would shadow them.
TAKEN = {"np", "numpy", "torch", "jax", "jnp", "overload", "dispatch_error", "is_jax_array"}
{%- if cookiecutter.layout == 'single' %}

MODULE = Template('''\
"""$name: TODO, one line on what it computes.

`$name` is the public function. `_${name}_numpy` is the reference (the math, step by step),
`_${name}_pytorch` the differentiable port{% if cookiecutter.jax %} and `_${name}_jax` the JAX one{% endif %}. The tests compare
every port with the reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

import numpy as np
import torch

{% if cookiecutter.jax -%}
from ._dispatch import dispatch_error, is_jax_array

if TYPE_CHECKING:
    import jax
    from numpy.typing import NDArray

    from ._dispatch import Array
{%- else -%}
from ._dispatch import dispatch_error

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._dispatch import Array
{%- endif %}

__all__ = ["$name"]


$public


def _${name}_numpy(x: NDArray[np.floating]) -> NDArray[np.floating]:
    """Reference implementation: the formula of `$name`, step by step, in NumPy."""
    msg = "not implemented yet: write _${name}_numpy, the NumPy reference"
    raise NotImplementedError(msg)


def _${name}_pytorch(x: torch.Tensor) -> torch.Tensor:
    """PyTorch port of `_${name}_numpy`: differentiable, on any device, compilable."""
    msg = "not implemented yet: write _${name}_pytorch, the PyTorch port"
    raise NotImplementedError(msg)
{%- if cookiecutter.jax %}


def _${name}_jax(x: jax.Array) -> jax.Array:
    """JAX port of `_${name}_numpy`: differentiable, compilable with `jax.jit`."""
    msg = "not implemented yet: write _${name}_jax, the JAX port"
    raise NotImplementedError(msg)
{%- endif %}
''')
{%- else %}

INIT = Template('''\
"""$name: TODO, one line on what it computes.

- `api.py`: `$name`, the public function, which dispatches on the array type
- `numpy_impl.py`: `_${name}_numpy`, the reference (the math, step by step)
- `pytorch_impl.py`: `_${name}_pytorch`, the differentiable port
{%- if cookiecutter.jax %}
- `jax_impl.py`: `_${name}_jax`, the JAX port
{%- endif %}

The tests compare every port with the reference.
"""

from .api import $name

__all__ = ["$name"]
''')

API = Template('''\
"""The public `$name`, which dispatches on the array type to one implementation per backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

import numpy as np
import torch

{% if cookiecutter.jax -%}
from .._dispatch import dispatch_error, is_jax_array
from .numpy_impl import _${name}_numpy
from .pytorch_impl import _${name}_pytorch

if TYPE_CHECKING:
    import jax
    from numpy.typing import NDArray

    from .._dispatch import Array
{%- else -%}
from .._dispatch import dispatch_error
from .numpy_impl import _${name}_numpy
from .pytorch_impl import _${name}_pytorch

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._dispatch import Array
{%- endif %}

__all__ = ["$name"]


$public
''')

NUMPY_IMPL = Template('''\
"""NumPy reference implementation of `$name`: the math, step by step."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray


def _${name}_numpy(x: NDArray[np.floating]) -> NDArray[np.floating]:
    """Reference implementation: the formula of `$name`, step by step, in NumPy."""
    msg = "not implemented yet: write _${name}_numpy, the NumPy reference"
    raise NotImplementedError(msg)
''')

PYTORCH_IMPL = Template('''\
"""PyTorch implementation of `$name`, which the tests compare with the NumPy reference."""

from __future__ import annotations

import torch


def _${name}_pytorch(x: torch.Tensor) -> torch.Tensor:
    """PyTorch port of `_${name}_numpy`: differentiable, on any device, compilable."""
    msg = "not implemented yet: write _${name}_pytorch, the PyTorch port"
    raise NotImplementedError(msg)
''')
{%- if cookiecutter.jax %}

JAX_IMPL = Template('''\
"""JAX implementation of `$name`, which the tests compare with the NumPy reference.

`api.py` imports this module only when a JAX array arrives: JAX is an optional dependency.
"""

from __future__ import annotations

import jax


def _${name}_jax(x: jax.Array) -> jax.Array:
    """JAX port of `_${name}_numpy`: differentiable, compilable with `jax.jit`."""
    msg = "not implemented yet: write _${name}_jax, the JAX port"
    raise NotImplementedError(msg)
''')
{%- endif %}
{%- endif %}

# The public function: the same text in both layouts but for the lazy import of the JAX port.
PUBLIC = Template('''\
# One signature per backend, for type checkers: the result has the array type of the input.
@overload
def $name(x: NDArray[np.floating]) -> NDArray[np.floating]: ...
@overload
def $name(x: torch.Tensor) -> torch.Tensor: ...
{%- if cookiecutter.jax %}
@overload
def $name(x: jax.Array) -> jax.Array: ...
{%- endif %}
def $name(x: Array) -> Array:
    """TODO: one line on what `$name` computes.

    Parameters
    ----------
    x : numpy.ndarray, torch.Tensor{% if cookiecutter.jax %} or jax.Array{% endif %}
        TODO: shape, dtype and meaning.

    Returns
    -------
    numpy.ndarray, torch.Tensor{% if cookiecutter.jax %} or jax.Array{% endif %}
        TODO: shape and meaning; the same array type, dtype and device as `x`.

    Raises
    ------
    TypeError
        If `x` is not a {% if cookiecutter.jax %}NumPy array, a PyTorch tensor or a JAX array{% else %}NumPy array or a PyTorch tensor{% endif %}.

    Notes
    -----
    TODO: the formula, with the paper's equation number, and any trick that keeps it stable.
    """
    if isinstance(x, np.ndarray):
        return _${name}_numpy(x)
    if isinstance(x, torch.Tensor):
        return _${name}_pytorch(x)
{%- if cookiecutter.jax and cookiecutter.layout == 'single' %}
    if is_jax_array(x):
        return _${name}_jax(x)
{%- elif cookiecutter.jax %}
    if is_jax_array(x):
        # JAX is optional: jax_impl, and JAX with it, is imported for the first JAX array.
        from .jax_impl import _${name}_jax

        return _${name}_jax(x)
{%- endif %}
    raise dispatch_error($name, x=x)''')

TEST = Template('''\
"""$name: the NumPy reference against the math, then every port against the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from $package import $name

import parity
from parity import Target

X = np.random.default_rng(0).normal(size=(2, 3))


def benchmark_inputs(size: int) -> tuple[tuple[NDArray[np.float64], ...], dict[str, Any]]:
    """Operands of about `size` elements, and parameters, for one call in `scripts/bench.py`."""
    return (np.random.default_rng(size).normal(size=(size,)),), {}


# --- The NumPy reference against the math ---------------------------------------------------


def test_reference_keeps_dtype() -> None:
    assert $name(X).dtype == X.dtype
    # TODO: check the reference against values worked out by hand or quoted in the paper, e.g.
    # np.testing.assert_allclose($name(X), expected, rtol=1e-12)


# --- Every port against the reference -------------------------------------------------------


@pytest.mark.parametrize("target", parity.targets(), ids=str)
@given(data=st.data())
def test_matches_reference(target: Target, data: st.DataObject) -> None:
    x = data.draw(parity.arrays(target), label="x")
    parity.assert_matches_reference($name, target, x)


@pytest.mark.parametrize("target", parity.targets(devices=["meta"]), ids=str)
def test_stays_on_the_input_device(target: Target) -> None:
    parity.assert_keeps_type_dtype_device($name, target, X)


@pytest.mark.parametrize("target", parity.targets(parity.PORTS, ["float64"]), ids=str)
@given(data=st.data())
def test_gradient_matches_reference(target: Target, data: st.DataObject) -> None:
    x = data.draw(parity.arrays(target, max_side=4), label="x")
    parity.assert_gradient_matches_reference($name, target, x)


@pytest.mark.parametrize("target", parity.targets(parity.PORTS, ["float32"]), ids=str)
def test_compiles_to_one_graph(target: Target) -> None:
    parity.assert_compiled_matches_eager($name, target, X)


@pytest.mark.parametrize("target", parity.targets(["torch"], ["float64"]), ids=str)
def test_vmap_matches_loop(target: Target) -> None:
    parity.assert_vmap_matches_loop($name, target, X)


def test_rejects_unsupported_inputs() -> None:
    parity.assert_rejects_unsupported($name, X)
''')


def check_name(name: str) -> str | None:
    """Why `name` cannot be a new algorithm, or None."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        return (
            f"{name!r} is not a valid name: use a lower-case Python identifier such as "
            "'layer_norm' (letters, digits and underscores, starting with a letter)"
        )
    if len(name) > MAX_NAME_LENGTH:
        return f"{name!r} is longer than {MAX_NAME_LENGTH} characters: choose a shorter name"
    if name in TAKEN:
        return f"{name!r} would shadow a name the new module uses ({', '.join(sorted(TAKEN))})"
    for path in (SOURCE / f"{name}.py", SOURCE / name, TESTS / f"test_{name}.py"):
        if path.exists():
            return f"{name!r} already exists: {path.relative_to(ROOT)}"
    return None


def files(name: str) -> dict[Path, str]:
    """The new files and their text."""
    fields = {"name": name, "package": PACKAGE}
    public = PUBLIC.substitute(fields)
{%- if cookiecutter.layout == 'single' %}
    module = {SOURCE / f"{name}.py": MODULE.substitute(fields, public=public)}
{%- else %}
    folder = SOURCE / name
    module = {
        folder / "__init__.py": INIT.substitute(fields),
        folder / "api.py": API.substitute(fields, public=public),
        folder / "numpy_impl.py": NUMPY_IMPL.substitute(fields),
        folder / "pytorch_impl.py": PYTORCH_IMPL.substitute(fields),
{%- if cookiecutter.jax %}
        folder / "jax_impl.py": JAX_IMPL.substitute(fields),
{%- endif %}
    }
{%- endif %}
    return {**module, TESTS / f"test_{name}.py": TEST.substitute(fields)}


def natural(text: str) -> list[str | int]:
    """Sort key that orders digits by value (`a2` before `a10`), as ruff's isort does."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text.lower())]


def export(init: Path, name: str) -> bool:
    """Add `from .name import name` and "name" to `__all__` in the package's `__init__.py`.

    Handles the file as generated: single-line relative imports and a list of strings in
    `__all__`, both kept sorted. Returns False, changing nothing, for any other shape.
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
    import_lines = sorted({*lines[first - 1 : last], f"from .{name} import {name}\n"}, key=natural)
    assert isinstance(exported[0].value, ast.List)
    current = [
        item.value
        for item in exported[0].value.elts
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    ]
    names = sorted({*current, name}, key=natural)
    one_line = "__all__ = [" + ", ".join(f'"{item}"' for item in names) + "]\n"
    all_text = one_line
    if len(one_line) > LINE_LENGTH:
        all_text = "__all__ = [\n" + "".join(f'    "{item}",\n' for item in names) + "]\n"
    start, end = exported[0].lineno, exported[0].end_lineno or exported[0].lineno
    new = [*lines[: first - 1], *import_lines, *lines[last : start - 1], all_text, *lines[end:]]
    init.write_text("".join(new), encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Create a new algorithm (stubs in this repo's layout, and its tests)."
    )
    parser.add_argument("name", help="the function's name, a lower-case identifier: layer_norm")
    name = parser.parse_args(argv).name
    problem = check_name(name)
    if problem is not None:
        parser.error(problem)
    created = files(name)
    for path, text in created.items():
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
    print(
        f"\nNext: write _{name}_numpy from the paper, with a test against known values in "
        f"tests/test_{name}.py; then _{name}_pytorch{% if cookiecutter.jax %} (and _{name}_jax){% endif %}. Until then"
        f" `python -m pytest tests/test_{name}.py` reports them as not implemented yet (XFAIL)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
