"""What the public functions share for their dispatch on the array backend.

Each public function checks its operands itself, so the dispatch stays visible where it happens:
each branch takes arrays of one backend, floating point (``isinstance(x, ndarray) and
x.dtype.kind == "f"``) or, for an operand of integers such as class labels, integer
(``x.dtype.kind in "iu"``). `ndarray` and `Tensor` are imported by name: looking up
``np.ndarray`` at every call would add a fifth to the dispatch. This module holds the shared
pieces only: `Array`, the type of any array the public functions accept, and `AnyArray`, what a
shared implementation takes (for type checkers); `TORCH_FLOATS` and `TORCH_INTEGERS`;
`is_jax_float` and `is_jax_integer`, the checks that take more than an `isinstance`;
`triton_runs`, whether a tensor goes to a Triton port;
`array_api_floats`, the check of an algorithm with one shared implementation for every Array API
library; the errors for operands that no branch accepts, built only then; and
`NotYetImplemented`, what a function raises for what is not written yet.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import torch
from torch import Tensor

if TYPE_CHECKING:
    from collections.abc import Callable

    import jax
    from numpy.typing import NDArray

    Array = NDArray[Any] | torch.Tensor | jax.Array
    # An array of any Array API library (PyTorch, JAX, array-api-strict, CuPy, ...): the standard
    # has no static type for it yet, so a shared implementation takes Any, as SciPy's do.
    AnyArray = Any

ACCEPTED = "numpy.ndarray, torch.Tensor or jax.Array"
ACCEPTED_BY_SHARED = "numpy.ndarray or another Array API array (torch.Tensor, jax.Array, cupy, ...)"
# PyTorch's floating-point dtypes: `x.dtype in TORCH_FLOATS` takes 30 ns less than
# `x.is_floating_point()`, a fifth of a tensor's dispatch.
TORCH_FLOATS = frozenset(
    dtype
    for dtype in vars(torch).values()
    if isinstance(dtype, torch.dtype) and dtype.is_floating_point
)
# PyTorch's integer dtypes (booleans and quantized types are not integers to compute with).
TORCH_INTEGERS = frozenset(
    dtype
    for dtype in vars(torch).values()
    if isinstance(dtype, torch.dtype) and str(dtype).startswith(("torch.int", "torch.uint"))
)
# Whether triton is installed (imported only at a Triton port's first call).
TRITON = importlib.util.find_spec("triton") is not None


class NotYetImplemented(NotImplementedError):
    """What is not written yet: a stub of `parity new`, or a backend that a function
    has no branch for. The tests report it as an expected failure (XFAIL), with its message."""


class MissingBackendError(TypeError, NotYetImplemented):
    """JAX arrays for a function that has no JAX implementation yet (a repo whose modules were
    written without JAX): a `TypeError` like the other dispatch errors, and `NotYetImplemented`."""


def triton_runs(x: Tensor) -> bool:
    """Whether a Triton port takes `x`: a CUDA tensor, where triton is installed (the ``triton``
    extra; PyTorch's CUDA wheels for Linux bring it). Others go to the PyTorch port."""
    return x.is_cuda and TRITON


def is_jax_array(x: object) -> TypeGuard[jax.Array]:
    """Whether `x` is a JAX array (tracers inside `jax.jit` and `jax.grad` included).

    JAX is looked up in `sys.modules`, never imported: a JAX array cannot exist before JAX is
    imported, so NumPy and PyTorch users neither wait for JAX nor need it installed.
    """
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.Array)


def is_jax_float(x: object) -> TypeGuard[jax.Array]:
    """Whether `x` is a JAX array of floating point (bfloat16, whose kind is "V", included)."""
    return is_jax_array(x) and (x.dtype.kind == "f" or x.dtype.name == "bfloat16")


def is_jax_integer(x: object) -> TypeGuard[jax.Array]:
    """Whether `x` is a JAX array of integers (signed or unsigned; booleans are not)."""
    return is_jax_array(x) and x.dtype.kind in "iu"


def _integer(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return x.dtype in TORCH_INTEGERS
    return bool(getattr(getattr(x, "dtype", None), "kind", "") in ("i", "u"))


def array_api_floats(*operands: object) -> bool:
    """Whether `operands` are floating-point arrays of one library with an Array API namespace
    (NumPy, PyTorch, JAX, CuPy, array-api-strict, ...): what a shared implementation
    ``_<name>_array_api`` takes. The public function tries NumPy's branch, the reference, first.

    PyTorch's and JAX's arrays are recognised as the other branches recognise them (0.1 us);
    any other library's through array-api-compat (`array_namespace`, which refuses arrays of two
    libraries; 3 us), imported at the first such call.
    """
    if all(isinstance(x, Tensor) and x.dtype in TORCH_FLOATS for x in operands):
        return True
    if all(is_jax_float(x) for x in operands):
        return True
    from array_api_compat import array_namespace, is_array_api_obj

    if not all(is_array_api_obj(x) for x in operands):  # array_namespace lets Python scalars by
        return False
    try:
        xp = array_namespace(*operands)
    except TypeError:  # arrays of two libraries
        return False
    return all(xp.isdtype(x.dtype, "real floating") for x in operands)  # type: ignore[attr-defined]


def backend(x: object) -> str | None:
    """The name of the array type of `x`, or None if `x` is not an array this package accepts."""
    if isinstance(x, np.ndarray):
        return "numpy.ndarray"
    if isinstance(x, torch.Tensor):
        return "torch.Tensor"
    if is_jax_array(x):
        return "jax.Array"
    if "array_api_compat" in sys.modules and sys.modules["array_api_compat"].is_array_api_obj(x):
        return _type_name(x)  # another Array API library's array, for a shared implementation
    return None


def _floating(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return x.dtype in TORCH_FLOATS
    if isinstance(x, np.ndarray) or is_jax_array(x):
        return bool(x.dtype.kind == "f" or x.dtype.name == "bfloat16")
    return array_api_floats(x)  # another Array API library's array


def dispatch_error(
    function: Callable[..., object],
    /,
    integer_operands: tuple[str, ...] = (),
    **operands: object,
) -> TypeError:
    """The error for operands that no branch of `function` accepts, saying why: one that is not
    an array; operands from two backends; JAX arrays for a function without a JAX port; integers
    or booleans (each backend would promote them its own way, so the same call would give
    different dtypes); for the operands named in `integer_operands` (class labels, indices),
    anything but integers.

    Built only after dispatch has failed, so it costs nothing on the fast path.
    """
    name = getattr(function, "__name__", repr(function))
    found = {operand: backend(value) for operand, value in operands.items()}
    shared = _has_port(function, "array_api")
    accepted = ACCEPTED_BY_SHARED if shared else ACCEPTED
    for operand, kind in found.items():
        if kind is None:
            return TypeError(
                f"{name}() got {operand} of type {_type_name(operands[operand])}; expected "
                f"{accepted} (convert lists, scalars and pandas objects with numpy.asarray first)"
            )
    if len(set(found.values())) > 1:
        listed = ", ".join(f"{operand} is {kind}" for operand, kind in found.items())
        return TypeError(
            f"{name}() got operands from different backends ({listed}); convert them to one backend"
        )
    if set(found.values()) == {"jax.Array"} and not shared and not _has_port(function, "jax"):
        return MissingBackendError(
            f"{name}() has no JAX implementation yet: add `_{name}_jax`, a port of "
            f"`_{name}_numpy`, and its branch in {name}() (see docs/guide/updating.md, "
            '"Switch JAX on later")'
        )
    for operand, value in operands.items():
        if operand in integer_operands and not _integer(value):
            return TypeError(
                f"{name}() got {operand} of dtype {getattr(value, 'dtype', '?')}; expected "
                f"integers (convert it first: {operand}.astype(np.int64), {operand}.long(), ...)"
            )
        if operand not in integer_operands and not _floating(value):
            return TypeError(
                f"{name}() got {operand} of dtype {getattr(value, 'dtype', '?')}; expected "
                "floating point (convert it first: x.astype(np.float32), x.float(), ...)"
            )
    return TypeError(f"{name}() accepts no such operands: {found}")  # no branch took them


def _has_port(function: Callable[..., object], kind: str) -> bool:
    """Whether `function` has an implementation of `kind` ("jax", "array_api"): ``_<name>_<kind>``
    in its module (one file per algorithm) or a ``<kind>_impl`` module beside it (a folder)."""
    module = getattr(function, "__module__", "")
    port = f"_{getattr(function, '__name__', '')}_{kind}"
    if hasattr(sys.modules.get(module), port):
        return True
    folder, _, file = module.rpartition(".")
    return file == "api" and importlib.util.find_spec(f"{folder}.{kind}_impl") is not None


def require_floating(function: Callable[..., object], **operands: object) -> None:
    """Raise `dispatch_error`'s `TypeError` for an operand that is an array of integers or
    booleans. Modules written before the dispatch conditions checked the dtype themselves call
    this first; it stays so that they keep working after an update."""
    for operand, value in operands.items():
        if backend(value) is not None and not _floating(value):
            raise dispatch_error(function, (), **{operand: value})


def _type_name(value: object) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"
