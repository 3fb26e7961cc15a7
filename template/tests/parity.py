"""The parity harness: every backend, dtype and device is compared with the NumPy reference.

The tests of each algorithm stay short and read like a spec because the work happens here:

- `targets()`: what to compare, as pytest parameters with ids such as ``torch-float32-cuda``.
  A target is a backend, a dtype and a device; ``conftest.py`` skips a target whose device is
  missing (or fails it, with ``--require-device``).
- `arrays()`, `labels()`: hypothesis strategies for the inputs, with extreme values on request.
- `assert_matches_reference()`: calls the function on the target, and on float64 NumPy copies
  of the very same inputs (the reference), then compares array type, dtype, device and shape,
  and the values within the tolerance of the target's dtype, reporting the worst element.
- `assert_keeps_type_dtype_device()`: the same checks without the values, for PyTorch's
  ``meta`` device (tensors without data), which shows device mix-ups without a GPU.
- `assert_gradient_matches_reference()`: PyTorch autograd, ``torch.func.grad`` and
  ``gradcheck``{% if cookiecutter.jax %} (or ``jax.grad``){% endif %} against central finite differences of the NumPy reference:
  NumPy is the spec for gradients too.
- `assert_compiled_matches_eager()`: ``torch.compile(fullgraph=True)``{% if cookiecutter.jax %} (or ``jax.jit``){% endif %} gives the
  eager result, and a second call with new values does not compile again.
- `assert_vmap_matches_loop()`: ``torch.func.vmap`` over a leading batch axis.
- `assert_rejects_unsupported()`: ``TypeError`` for lists, scalars, array-likes and operands
  from different backends.

Tolerances are per dtype (`TOLERANCES`); an algorithm overrides them with the `tolerances`
argument, e.g. ``tolerances={"bfloat16": Tolerance(rtol=0.1, atol=0.01)}``.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import re
{%- if cookiecutter.jax %}
import sys
{%- endif %}
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

#: A public function of the package, e.g. ``softmax``.
Function = Callable[..., Any]

BACKENDS = ("numpy", "torch"{% if cookiecutter.jax %}, "jax"{% endif %})
#: The ports: the backends compared with NumPy, with gradients and compilers.
PORTS = BACKENDS[1:]
DTYPES = ("float64", "float32", "float16", "bfloat16")
DEVICES = ("cpu", "cuda", "mps")
{%- if cookiecutter.jax %}

# JAX compiles every operation anew for each input shape (tens of ms each on a CPU), so
# hypothesis draws the values of JAX inputs but keeps to these shapes; explicit tests use them.
JAX_SHAPES = ((2, 3),)
# JAX's float16 and bfloat16 work on CPU but cost a second of compilation per algorithm:
# add them here when they matter to you.
JAX_DTYPES = ("float64", "float32")
{%- endif %}


@dataclass(frozen=True)
class Tolerance:
    """`actual` matches `expected` where ``|actual - expected| <= atol + rtol * |expected|``."""

    rtol: float
    atol: float


#: Default tolerances per dtype of the target, against the float64 reference computed from the
#: same (rounded) inputs: a few units in the last place for float32/float16/bfloat16 (eps =
#: 1.2e-7, 9.8e-4, 7.8e-3), and tight for float64, where only summation order differs.
TOLERANCES: Mapping[str, Tolerance] = {
    "float64": Tolerance(rtol=1e-10, atol=1e-12),
    "float32": Tolerance(rtol=1e-5, atol=1e-6),
    "float16": Tolerance(rtol=5e-3, atol=1e-3),
    "bfloat16": Tolerance(rtol=4e-2, atol=1e-2),
}

#: Float64 gradients against central differences, whose own error is ~1e-10.
GRADIENT_TOLERANCE = Tolerance(rtol=1e-6, atol=1e-8)


@dataclass(frozen=True)
class Target:
    """Where an implementation runs: a backend, a dtype and a device."""

    backend: str  # one of BACKENDS
    dtype: str  # one of DTYPES
    device: str = "cpu"  # one of DEVICES, or "meta" (PyTorch tensors without data)

    def __str__(self) -> str:
        return f"{self.backend}-{self.dtype}-{self.device}"

    def asarray(self, value: NDArray[Any]) -> Any:
        """`value` as an array of this target: floating point in its dtype, integers as they are."""
        floating = np.issubdtype(value.dtype, np.floating)
        if self.backend == "numpy":
            return value.astype(self.dtype) if floating else value.copy()
        if self.backend == "torch":
            dtype = getattr(torch, self.dtype) if floating else None
            return torch.tensor(value, dtype=dtype, device=self.device)
{%- if cookiecutter.jax %}
        if self.backend == "jax":
            import jax
            import jax.numpy as jnp

            platform = "gpu" if self.device == "cuda" else self.device
            converted = value.astype(jnp.dtype(self.dtype)) if floating else value
            return jax.device_put(converted, jax.devices(platform)[0])
{%- endif %}
        raise ValueError(self.backend)


def targets(
    backends: Iterable[str] = BACKENDS,
    dtypes: Iterable[str] = DTYPES,
    devices: Iterable[str] = DEVICES,
) -> list[Target]:
    """Every valid combination, for ``@pytest.mark.parametrize("target", ..., ids=str)``.

    NumPy runs on the CPU in float32 and float16 (its float64 is the reference itself);
    PyTorch everywhere, in every dtype{% if cookiecutter.jax %}; JAX on CPU and CUDA, in `JAX_DTYPES`{% endif %}. Missing devices are
    skipped at run time, with the reason, by ``conftest.py``.
    """
    valid = {
        "numpy": (("float32", "float16"), ("cpu",)),
        "torch": (DTYPES, (*DEVICES, "meta")),
{%- if cookiecutter.jax %}
        "jax": (JAX_DTYPES, ("cpu", "cuda")),
{%- endif %}
    }
    return [
        Target(backend, dtype, device)
        for backend, dtype, device in itertools.product(backends, dtypes, devices)
        if dtype in valid[backend][0] and device in valid[backend][1]
    ]


# --- What is missing on this machine --------------------------------------------------------


@functools.cache
def missing_backend(backend: str) -> str | None:
    """Why `backend` cannot run here (not installed), or None."""
    if importlib.util.find_spec(backend) is None:
        return f"Requires: {backend} (not installed; pip install -e '.[{backend}]')"
    return None


@functools.cache
def missing_device(backend: str, device: str, dtype: str) -> str | None:
    """Why `device` is not usable for `backend` and `dtype` here, or None."""
    if backend == "torch" and device == "cuda" and not torch.cuda.is_available():
        return "Requires: CUDA device (none found)"
    if backend == "torch" and device == "mps":
        if not torch.backends.mps.is_available():
            return "Requires: MPS device (none found)"
        if dtype == "float64":
            return "Requires: float64, which the MPS device does not support"
{%- if cookiecutter.jax %}
    if backend == "jax" and device == "cuda":
        import jax

        try:
            jax.devices("gpu")
        except RuntimeError:
            return "Requires: CUDA device for JAX (none found; is jax[cuda12] installed?)"
{%- endif %}
    return None


# --- Inputs ---------------------------------------------------------------------------------


def arrays(
    target: Target,
    *,
    extremes: bool = False,
    min_dims: int = 1,
    max_dims: int = 3,
    max_side: int = 5,
) -> st.SearchStrategy[NDArray[np.float64]]:
    """Float64 arrays of any shape (sides 1 to `max_side`), for `target` to convert.

    Values lie in [-10, 10]; with `extremes`, also huge ones (up to 1e4 in magnitude: exp
    overflows from 89 in float32 and 710 in float64) and tiny ones, near the smallest normal
    number of the target's dtype.
    """
    values = st.floats(-10.0, 10.0)
    if extremes:
        tiny = 1e3 * float(torch.finfo(getattr(torch, target.dtype)).tiny)
        values = st.one_of(values, st.floats(-1e4, 1e4), st.floats(-tiny, tiny))
{%- if cookiecutter.jax %}
    if target.backend == "jax":
        shapes = [shape for shape in JAX_SHAPES if min_dims <= len(shape) <= max_dims]
        return hnp.arrays(np.float64, st.sampled_from(shapes), elements=values)
{%- endif %}
    shape = hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)
    return hnp.arrays(np.float64, shape, elements=values)


def labels(shape: tuple[int, ...], classes: int) -> st.SearchStrategy[NDArray[np.int64]]:
    """Integer class labels in [0, classes) of the given shape."""
    return hnp.arrays(np.int64, shape, elements=st.integers(0, classes - 1))


# --- Comparisons ----------------------------------------------------------------------------


def to_numpy(array: Any) -> NDArray[Any]:
    """A NumPy copy of an array of any backend; floating point in float64 (exact for all)."""
    if isinstance(array, torch.Tensor):
        array = array.detach().cpu()
        converted: NDArray[Any] = (array.double() if array.is_floating_point() else array).numpy()
        return converted
    result = np.asarray(array)
    if result.dtype.kind == "f" or result.dtype.name == "bfloat16":
        return result.astype(np.float64)
    return result


def _type_dtype_device(array: Any) -> tuple[str, str, str]:
    """The array type, dtype and device of `array`, named as in `Target`."""
    if isinstance(array, np.ndarray):
        return "numpy", array.dtype.name, "cpu"
    if isinstance(array, torch.Tensor):
        return "torch", str(array.dtype).removeprefix("torch."), array.device.type
{%- if cookiecutter.jax %}
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(array, jax.Array):
        platform = next(iter(array.devices())).platform
        return "jax", array.dtype.name, "cuda" if platform == "gpu" else platform
{%- endif %}
    return type(array).__name__, "?", "?"


def _check_type_dtype_device(
    actual: Any, expected_shape: tuple[int, ...], *, target: Target, what: str
) -> None:
    __tracebackhide__ = True
    backend, dtype, device = _type_dtype_device(actual)
    if backend != target.backend:
        pytest.fail(f"{what} returned a {backend} array; expected {target.backend} (the input's)")
    if dtype != target.dtype:
        pytest.fail(f"{what} returned {dtype}; expected {target.dtype} (a silent dtype change?)")
    if device != target.device:
        pytest.fail(f"{what} returned an array on {device}; expected {target.device} (the input's)")
    if tuple(actual.shape) != tuple(expected_shape):
        pytest.fail(f"{what} returned shape {tuple(actual.shape)}; expected {expected_shape}")


def assert_close(
    actual: Any, expected: Any, *, target: Target, tolerance: Tolerance, what: str
) -> None:
    """`actual` (an array of `target`) equals `expected` (any array) within `tolerance`.

    Checks the array type, dtype, device and shape against the target's first.
    Values match where ``|actual - expected| <= atol + rtol * |expected|``, or where both are
    the same infinity or both NaN. A failure names the worst element and its errors.
    """
    __tracebackhide__ = True
    want = to_numpy(expected)
    _check_type_dtype_device(actual, want.shape, target=target, what=what)
    got = to_numpy(actual)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got - want)
        allowed = tolerance.atol + tolerance.rtol * np.abs(want)
        matches = (error <= allowed) | (got == want) | (np.isnan(got) & np.isnan(want))
        if matches.all():
            return
        excess = np.where(matches, -np.inf, np.nan_to_num(error - allowed, nan=np.inf))
        worst = np.unravel_index(np.argmax(excess), got.shape)
        relative = error[worst] / np.abs(want[worst]) if want[worst] != 0 else np.inf
    pytest.fail(
        f"{what} differs from the float64 NumPy reference at {np.count_nonzero(~matches)} of "
        f"{got.size} elements (rtol={tolerance.rtol:g}, atol={tolerance.atol:g}).\n"
        f"Worst at index {tuple(int(i) for i in worst)}: got {float(got[worst])!r}, expected "
        f"{float(want[worst])!r} (absolute error {error[worst]:.3g}, relative error {relative:.3g})"
    )
{%- if cookiecutter.jax %}


def call(function: Function, target: Target, *arguments: Any, **kwargs: Any) -> Any:
    """`function(*arguments, **kwargs)`, the arguments being arrays of `target`.

    On JAX, through `jax.jit`, compiled once per function, keyword arguments and shapes: eager
    JAX compiles every operation separately for each new shape (tens of ms each on a CPU),
    jitted JAX the whole function at once. `assert_compiled_matches_eager` checks that eager
    and jitted results agree.
    """
    if target.backend == "jax":
        return _jitted(function, tuple(sorted(kwargs.items())))(*arguments)
    return function(*arguments, **kwargs)


@functools.cache
def _jitted(function: Function, kwargs: tuple[tuple[str, Any], ...]) -> Function:
    import jax

    return jax.jit(functools.partial(function, **dict(kwargs)))
{%- endif %}


def _tolerance(target: Target, tolerances: Mapping[str, Tolerance] | None) -> Tolerance:
    return {**TOLERANCES, **(tolerances or {})}[target.dtype]


def assert_matches_reference(
    function: Function,
    target: Target,
    *inputs: NDArray[Any],
    tolerances: Mapping[str, Tolerance] | None = None,
    **kwargs: Any,
) -> None:
    """`function` on `target` matches `function` on float64 NumPy copies of the same inputs.

    The inputs are converted to the target first, so the reference sees exactly the values
    the target sees (rounded to its dtype), computed in float64.
    """
    __tracebackhide__ = True
    arguments = [target.asarray(value) for value in inputs]
    expected = function(*[to_numpy(argument) for argument in arguments], **kwargs)
{%- if cookiecutter.jax %}
    actual = call(function, target, *arguments, **kwargs)
{%- else %}
    actual = function(*arguments, **kwargs)
{%- endif %}
    assert_close(
        actual,
        expected,
        target=target,
        tolerance=_tolerance(target, tolerances),
        what=f"{function.__name__} on {target}",
    )


def assert_keeps_type_dtype_device(
    function: Function, target: Target, *inputs: NDArray[Any], **kwargs: Any
) -> None:
    """`function` on `target` returns the target's array type, dtype and device, and the
    reference's shape; values are not compared (on the ``meta`` device there are none)."""
    __tracebackhide__ = True
    expected = function(*inputs, **kwargs)
    actual = function(*[target.asarray(value) for value in inputs], **kwargs)
    what = f"{function.__name__} on {target}"
    _check_type_dtype_device(actual, np.shape(expected), target=target, what=what)


# --- Gradients ------------------------------------------------------------------------------


def numerical_gradient(
    function: Callable[[NDArray[np.float64]], float], x: NDArray[np.float64], step: float = 6e-6
) -> NDArray[np.float64]:
    """Central differences: (f(x + h e_i) - f(x - h e_i)) / 2h for each element i of `x`.

    The step balances truncation error (~h^2) against rounding error (~eps/h) in float64:
    h ~ eps^(1/3) relative to |x_i|, for an error of ~1e-10.
    """
    gradient = np.empty_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        h = step * max(1.0, abs(float(x[index])))
        up[index] += h
        down[index] -= h
        gradient[index] = (function(up) - function(down)) / (up[index] - down[index])
    return gradient


def assert_gradient_matches_reference(
    function: Function,
    target: Target,
    *inputs: NDArray[Any],
    wrt: int = 0,
    tolerance: Tolerance = GRADIENT_TOLERANCE,
    **kwargs: Any,
) -> None:
    """The gradient of ``sum(w * function(...))`` with respect to ``inputs[wrt]``, with fixed
    random weights w, matches central differences of the float64 NumPy reference.

    On PyTorch: ``torch.autograd.grad`` and ``torch.func.grad``, plus ``gradcheck`` of the
    whole Jacobian{% if cookiecutter.jax %}; on JAX: ``jax.grad``, under ``jax.jit`` (see `call`){% endif %}. Use a float64 target.
    """
    __tracebackhide__ = True
    reference_inputs = [np.asarray(value) for value in inputs]
    reference_output = np.asarray(function(*reference_inputs, **kwargs))
    weights = np.random.default_rng(0).standard_normal(reference_output.shape)

    def reference_loss(x: NDArray[np.float64]) -> float:
        arguments = [*reference_inputs[:wrt], x, *reference_inputs[wrt + 1 :]]
        return float(np.sum(weights * function(*arguments, **kwargs)))

    expected = numerical_gradient(reference_loss, reference_inputs[wrt])
    arguments = [target.asarray(value) for value in inputs]
    if target.backend == "torch":
        gradients = _torch_gradients(function, arguments, wrt, weights, kwargs)
{%- if cookiecutter.jax %}
    elif target.backend == "jax":
        gradients = _jax_gradients(function, arguments, wrt, weights, kwargs)
{%- endif %}
    else:
        pytest.fail(f"no gradients on {target.backend}")
    for method, gradient in gradients.items():
        assert_close(
            gradient,
            expected,
            target=target,
            tolerance=tolerance,
            what=f"the {method} gradient of {function.__name__} on {target}",
        )


def _torch_gradients(
    function: Function,
    arguments: list[Any],
    wrt: int,
    weights: NDArray[np.float64],
    kwargs: Mapping[str, Any],
) -> dict[str, Any]:
    __tracebackhide__ = True
    x = arguments[wrt].requires_grad_()
    w = torch.as_tensor(weights, dtype=x.dtype, device=x.device)

    def output(x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = function(*arguments[:wrt], x, *arguments[wrt + 1 :], **kwargs)
        return result

    def loss(x: torch.Tensor) -> torch.Tensor:
        return (w * output(x)).sum()

    if not output(x).requires_grad:
        pytest.fail(
            f"{function.__name__} returned a tensor that does not require grad although its "
            "input does: the PyTorch implementation cuts the graph (.detach(), .item(), "
            ".numpy(), torch.tensor(...), or an in-place write under torch.no_grad())"
        )
    torch.autograd.gradcheck(output, (x,))  # torch's own finite differences, every output
    (autograd,) = torch.autograd.grad(loss(x), x)
    return {"torch.autograd": autograd, "torch.func.grad": torch.func.grad(loss)(x.detach())}
{%- if cookiecutter.jax %}


def _jax_gradients(
    function: Function,
    arguments: list[Any],
    wrt: int,
    weights: NDArray[np.float64],
    kwargs: Mapping[str, Any],
) -> dict[str, Any]:
    import jax

    x = arguments[wrt]
    w = jax.device_put(weights.astype(x.dtype), next(iter(x.devices())))
    gradient = _jax_gradient(function, wrt, tuple(sorted(kwargs.items())))
    return {"jax.grad": gradient(w, *arguments)}


@functools.cache
def _jax_gradient(function: Function, wrt: int, kwargs: tuple[tuple[str, Any], ...]) -> Function:
    """`jax.jit(jax.grad(...))` of ``sum(w * function(*arguments))``, compiled once per shape."""
    import jax
    import jax.numpy as jnp

    def loss(w: jax.Array, *arguments: jax.Array) -> jax.Array:
        return jnp.sum(w * function(*arguments, **dict(kwargs)))

    return jax.jit(jax.grad(loss, argnums=1 + wrt))
{%- endif %}


# --- Transformations: compile, vmap ---------------------------------------------------------


def assert_compiled_matches_eager(
    function: Function,
    target: Target,
    *inputs: NDArray[Any],
    backend: str = "aot_eager",
    tolerances: Mapping[str, Tolerance] | None = None,
    **kwargs: Any,
) -> None:
    """`function` compiled as one whole graph gives the eager result, and is compiled once
    for two calls with different values of the same shapes and dtypes.

    PyTorch: ``torch.compile(fullgraph=True)``, so any graph break is an error. The default
    `backend`, ``aot_eager``, traces the forward and backward graphs as inductor would but
    skips code generation (a second instead of half a minute on a CPU); pass
    ``backend="inductor"`` for the real thing.{% if cookiecutter.jax %} JAX: ``jax.jit``; `backend` is ignored.{% endif %}
    """
    __tracebackhide__ = True
    calls = [
        [target.asarray(value) for value in inputs],
        [target.asarray(_other_values(value)) for value in inputs],
    ]
    eager = [function(*arguments, **kwargs) for arguments in calls]  # first: errors raise here
    name = f"{function.__name__} on {target}"
    if target.backend == "torch":
        import torch._dynamo
        from torch._dynamo.testing import CompileCounterWithBackend

        torch._dynamo.reset()
        counter = CompileCounterWithBackend(backend)
        compiled = torch.compile(
            lambda *arguments: function(*arguments, **kwargs), backend=counter, fullgraph=True
        )
        results = [compiled(*arguments) for arguments in calls]
        compilations, how = counter.frame_count, f"torch.compile(backend={backend!r})"
{%- if cookiecutter.jax %}
    elif target.backend == "jax":
        import jax

        traces = 0

        def traced(*arguments: Any) -> Any:
            nonlocal traces  # Python code runs only while jax.jit traces
            traces += 1
            return function(*arguments, **kwargs)

        jitted = jax.jit(traced)
        results = [jitted(*arguments) for arguments in calls]
        compilations, how = traces, "jax.jit"
{%- endif %}
    else:
        pytest.fail(f"no compiler for {target.backend}")
    for result, expected in zip(results, eager, strict=True):
        assert_close(
            result,
            expected,
            target=target,
            tolerance=_tolerance(target, tolerances),
            what=f"{how} of {name}",
        )
    if compilations != 1:
        pytest.fail(
            f"{how} of {name} compiled {compilations} times for two calls with the same shapes "
            "and dtypes: a guard failed on the second call (a changing Python value, .item(), "
            "or a branch on data?)"
        )


def _other_values(value: NDArray[Any]) -> NDArray[Any]:
    """New values of the same shape and dtype (integers, e.g. labels, are kept)."""
    return 0.5 * value + 0.25 if np.issubdtype(value.dtype, np.floating) else value


def assert_vmap_matches_loop(
    function: Function,
    target: Target,
    *inputs: NDArray[Any],
    tolerances: Mapping[str, Tolerance] | None = None,
    **kwargs: Any,
) -> None:
    """``torch.func.vmap`` of `function` over the leading axis of every input equals
    `function` applied to each slice, stacked."""
    __tracebackhide__ = True
    arguments = [target.asarray(value) for value in inputs]
    looped = torch.stack([function(*slices, **kwargs) for slices in zip(*arguments, strict=True)])
    batched = torch.func.vmap(functools.partial(function, **kwargs))(*arguments)
    assert_close(
        batched,
        looped,
        target=target,
        tolerance=_tolerance(target, tolerances),
        what=f"torch.func.vmap of {function.__name__} on {target}",
    )


# --- Dispatch errors ------------------------------------------------------------------------


class ArrayLike:
    """Converts to an array with ``numpy.asarray`` but is not one, like a pandas object."""

    def __init__(self, values: NDArray[Any]) -> None:
        self.values = values

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        return self.values if dtype is None else self.values.astype(dtype)


def assert_rejects_unsupported(function: Function, *inputs: NDArray[Any], **kwargs: Any) -> None:
    """`function` raises a ``TypeError`` naming the offending type and the accepted ones, for
    each operand replaced by a list, a Python float or an `ArrayLike`; and, when it takes
    several operands, one naming both backends when the operands come from two backends."""
    __tracebackhide__ = True
    for position, value in enumerate(inputs):
        wrong_values = [(value.tolist(), "list"), (1.0, "float"), (ArrayLike(value), "ArrayLike")]
        for wrong, type_name in wrong_values:
            arguments = [*inputs[:position], wrong, *inputs[position + 1 :]]
            pattern = rf"{function.__name__}\(\) got .*{type_name}.*; expected numpy\.ndarray"
            with pytest.raises(TypeError, match=pattern):
                function(*arguments, **kwargs)
    if len(inputs) < 2:
        return
    available = [backend for backend in BACKENDS if missing_backend(backend) is None]
    for first, rest in itertools.permutations(available, 2):
        arguments = [Target(first, "float64").asarray(inputs[0])]
        arguments += [Target(rest, "float64").asarray(value) for value in inputs[1:]]
        with pytest.raises(TypeError, match=re.escape("different backends")) as raised:
            function(*arguments, **kwargs)
        for backend in (first, rest):
            assert backend in str(raised.value), f"{raised.value} does not name {backend}"
