"""JAX as a backend, where the repo's pyproject.toml has a ``jax`` extra: JAX is imported only
when a JAX target runs."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .core import Function, Parameters
from .repo import repo_extras


def uses_jax() -> bool:
    """Whether this repo has JAX as a backend: its pyproject.toml declares a ``jax`` extra."""
    return "jax" in repo_extras()


# JAX's float16 and bfloat16 work on CPU but cost a second of compilation per algorithm:
# add them here when they matter to you.
JAX_DTYPES = ("float64", "float32")


def jax_asarray(values: NDArray[Any], dtype: str | None, device: str) -> Any:
    import jax
    import jax.numpy as jnp

    platform = "gpu" if device == "cuda" else device
    converted = values.astype(jnp.dtype(dtype)) if dtype else values
    return jax.device_put(converted, jax.devices(platform)[0])


def jax_call(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    """Through `jax.jit`, compiled once per function, shapes and parameters: eager JAX compiles
    every operation separately for each new shape (tens of ms each on a CPU), jitted JAX the
    whole function at once. `assert_compiled_matches_eager` checks that both agree. Float
    parameters are traced (`_static`), so that a new value does not compile again."""
    static, dynamic = _static(parameters)
    return _traced_or_static(_jitted, function, static, dynamic, arguments)


def _static(parameters: Parameters) -> tuple[tuple[tuple[str, Any], ...], dict[str, float]]:
    """The parameters that `jax.jit` compiles in (all but floats), and the floats it traces."""
    dynamic = {name: value for name, value in parameters.items() if isinstance(value, float)}
    static = tuple(
        sorted((name, value) for name, value in parameters.items() if name not in dynamic)
    )
    return static, dynamic


def _traced_or_static(
    make: Callable[..., Function],
    function: Function,
    static: tuple[tuple[str, Any], ...],
    dynamic: dict[str, float],
    arguments: Sequence[Any],
    *more: Any,
) -> Any:
    """``make(function, static, *more)(*arguments, **dynamic)``; where the function needs a float
    parameter's value in Python (a branch on it, say), compiled with every parameter static."""
    import jax

    try:
        return make(function, static, *more)(*arguments, **dynamic)
    except jax.errors.JAXTypeError:
        if not dynamic:
            raise
        return make(function, tuple(sorted({**dict(static), **dynamic}.items())), *more)(*arguments)


@functools.cache
def _jitted(function: Function, static: tuple[tuple[str, Any], ...]) -> Function:
    import jax

    jitted: Function = jax.jit(functools.partial(function, **dict(static)))  # Any without JAX
    return jitted


def jax_describe(array: Any) -> tuple[str, str] | None:
    jax = sys.modules.get("jax")  # never imported here: a JAX array means JAX is loaded
    if jax is None or not isinstance(array, jax.Array):
        return None
    platform = next(iter(array.devices())).platform
    return array.dtype.name, "cuda" if platform == "gpu" else platform


def jax_gradients(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    weights: NDArray[np.float64],
    parameters: Parameters,
) -> dict[int, dict[str, Any]]:
    """``jax.grad``, under ``jax.jit`` (see `jax_call`)."""
    import jax

    first = arguments[wrt[0]]
    w = jax.device_put(weights.astype(first.dtype), next(iter(first.devices())))
    static, dynamic = _static(parameters)
    found = _traced_or_static(_jax_gradient, function, static, dynamic, [w, *arguments], tuple(wrt))
    return {position: {"jax.grad": value} for position, value in zip(wrt, found, strict=True)}


@functools.cache
def _jax_gradient(
    function: Function, static: tuple[tuple[str, Any], ...], wrt: tuple[int, ...]
) -> Function:
    """`jax.jit(jax.grad(...))` of ``sum(w * function(*arguments))``, compiled once per shape."""
    import jax
    import jax.numpy as jnp

    def loss(w: Any, *arguments: Any, **dynamic: Any) -> Any:
        return jnp.sum(w * function(*arguments, **dict(static), **dynamic))

    compiled: Function = jax.jit(jax.grad(loss, argnums=tuple(1 + position for position in wrt)))
    return compiled  # typed here: without JAX installed, jax.jit is Any


def jax_compile(function: Function, compiler: str) -> tuple[Function, Callable[[], int], str]:
    """``jax.jit``, JAX's one compiler: `compiler` is ignored."""
    import jax

    del compiler
    traces = 0

    def traced(*arguments: Any) -> Any:
        nonlocal traces  # Python code runs only while jax.jit traces
        traces += 1
        return function(*arguments)

    return jax.jit(traced), lambda: traces, "jax.jit"


def jax_hessian_vector(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    weights: NDArray[np.float64],
    directions: list[NDArray[np.float64]],
    parameters: Parameters,
) -> tuple[list[Any], bool]:
    """``jax.jvp`` of ``jax.grad`` (forward over reverse), under ``jax.jit``."""
    import jax
    import jax.numpy as jnp

    def loss(*values: Any) -> Any:
        arguments_ = list(arguments)
        for position, value in zip(wrt, values, strict=True):
            arguments_[position] = value
        return jnp.sum(weights * function(*arguments_, **parameters))

    primals = tuple(arguments[position] for position in wrt)
    tangents = tuple(
        jnp.asarray(v, dtype=p.dtype) for p, v in zip(primals, directions, strict=True)
    )
    gradient = jax.grad(loss, argnums=tuple(range(len(wrt))))
    _, product = jax.jit(lambda p, t: jax.jvp(gradient, p, t))(primals, tangents)
    return list(product), True


def jax_jacobian_vector(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    tangents: list[NDArray[np.float64]],
    parameters: Parameters,
) -> Any:
    """``jax.jvp``, under ``jax.jit``."""
    import jax
    import jax.numpy as jnp

    def along(*values: Any) -> Any:
        arguments_ = list(arguments)
        for position, value in zip(wrt, values, strict=True):
            arguments_[position] = value
        return function(*arguments_, **parameters)

    primals = tuple(arguments[position] for position in wrt)
    moving = tuple(jnp.asarray(t, dtype=p.dtype) for p, t in zip(primals, tangents, strict=True))
    return jax.jit(lambda p, t: jax.jvp(along, p, t))(primals, moving)[1]
