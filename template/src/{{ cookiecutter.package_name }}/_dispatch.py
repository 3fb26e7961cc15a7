"""What the public functions share for their dispatch on the array backend.

Each public function checks its operands with `isinstance` itself, so the dispatch stays visible
where it happens. This module holds the shared pieces only: `Array`, the type of any array the
public functions accept (for type checkers), the checks that take more than an `isinstance`, and
the errors for operands that no branch accepts.
"""

from __future__ import annotations
{% if cookiecutter.jax %}
import sys
{%- endif %}
from typing import TYPE_CHECKING, Any{% if cookiecutter.jax %}, TypeGuard{% endif %}

import numpy as np
import torch

if TYPE_CHECKING:
    from collections.abc import Callable
{% if cookiecutter.jax %}
    import jax
{%- endif %}
    from numpy.typing import NDArray

    Array = NDArray[Any] | torch.Tensor{% if cookiecutter.jax %} | jax.Array{% endif %}

ACCEPTED = "{{ cookiecutter.__array_types }}"


def backend(x: object) -> str | None:
    """The name of the array type of `x`, or None if `x` is not an array this package accepts."""
    if isinstance(x, np.ndarray):
        return "numpy.ndarray"
    if isinstance(x, torch.Tensor):
        return "torch.Tensor"
{%- if cookiecutter.jax %}
    if is_jax_array(x):
        return "jax.Array"
{%- endif %}
    return None


def dispatch_error(function: Callable[..., object], **operands: object) -> TypeError:
    """The error for operands that no branch of `function` accepts, saying why.

    Built only after dispatch has failed, so it costs nothing on the fast path.
    """
    name = getattr(function, "__name__", repr(function))
    for operand, value in operands.items():
        if backend(value) is None:
            return TypeError(
                f"{name}() got {operand} of type {_type_name(value)}; expected {ACCEPTED} "
                "(convert lists, scalars and pandas objects with numpy.asarray first)"
            )
{%- if cookiecutter.jax %}
    if all(is_jax_array(value) for value in operands.values()):
        return MissingBackendError(
            f"{name}() has no JAX implementation yet: add `_{name}_jax`, a port of "
            f'`_{name}_numpy`, and its branch in {name}() (see README.md, "Switch JAX on later")'
        )
{%- endif %}
    found = ", ".join(f"{operand} is {backend(value)}" for operand, value in operands.items())
    return TypeError(
        f"{name}() got operands from different backends ({found}); convert them to one backend"
    )


def _type_name(value: object) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def require_floating(function: Callable[..., object], **operands: object) -> None:
    """Raise a `TypeError` for an operand that is an array of integers or booleans.

    Each backend would promote them its own way (NumPy to float64, PyTorch and JAX to their
    default float), so the same call would give different dtypes: the caller converts instead.
    Operands that are not arrays are left to `dispatch_error`.
    """
    for operand, value in operands.items():
        if isinstance(value, torch.Tensor):
            floating = value.is_floating_point()
        elif isinstance(value, np.ndarray):
            floating = value.dtype.kind == "f"
{%- if cookiecutter.jax %}
        elif is_jax_array(value):
            # bfloat16's kind is "V"; the name is read only then, as it takes microseconds.
            floating = value.dtype.kind == "f" or "float" in value.dtype.name
{%- endif %}
        else:
            continue
        if not floating:
            name = getattr(function, "__name__", repr(function))
            msg = (
                f"{name}() got {operand} of dtype {value.dtype}; expected floating point "
                "(convert it first: x.astype(np.float32), x.float(), ...)"
            )
            raise TypeError(msg)
{%- if cookiecutter.jax %}


# --- JAX, an optional backend ---------------------------------------------------------------


def is_jax_array(x: object) -> TypeGuard[jax.Array]:
    """Whether `x` is a JAX array (tracers inside `jax.jit` and `jax.grad` included).

    JAX is looked up in `sys.modules`, never imported: a JAX array cannot exist before JAX is
    imported, so NumPy and PyTorch users neither wait for JAX nor need it installed.
    """
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.Array)


class MissingBackendError(TypeError, NotImplementedError):
    """JAX arrays for a function that has no JAX implementation yet.

    This happens when JAX is switched on in a repo whose modules were written without it. It is a
    `TypeError` like the other dispatch errors, and a `NotImplementedError`, so the tests report it
    as "not implemented yet" (XFAIL), as they do for the scaffold's stubs.
    """
{%- endif %}
