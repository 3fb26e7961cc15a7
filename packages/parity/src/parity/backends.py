"""What the harness needs to know about each array library, in one table: `BACKENDS`; and which
of them an algorithm's tests run on: `DEFAULT` (one implementation per backend) or `ARRAY_API`
(one shared implementation for every Array API library)."""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from .capabilities import lacks
from .core import DEVICES, DTYPES, Function, Parameters, call_eagerly, run_reference, with_replaced
from .jax_backend import (
    JAX_DTYPES,
    jax_asarray,
    jax_call,
    jax_compile,
    jax_describe,
    jax_gradients,
    jax_hessian_vector,
    jax_jacobian_vector,
    uses_jax,
)
from .layouts import Layout, torch_layouts
from .triton_backend import uses_triton


def to_numpy(array: Any) -> NDArray[Any]:
    """A NumPy copy of an array of any backend; floating point in float64 (exact for all)."""
    backend = BACKENDS.get(describe_array(array)[0])
    result = backend.to_numpy(array) if backend else np.asarray(array)
    if np.issubdtype(result.dtype, np.floating) or result.dtype.name == "bfloat16":
        return result.astype(np.float64)
    return result


def describe_array(array: Any) -> tuple[str, str, str]:
    """The backend, dtype and device of `array`, named as in `Target`; the backend is the type's
    name for anything else."""
    for name, backend in BACKENDS.items():
        found = backend.describe(array)
        if found is not None:
            return (name, *found)
    return type(array).__name__, "?", "?"


#: ``gradients(function, arguments, wrt, weights, parameters)``: for each position in `wrt`,
#: method name -> gradient (None where the graph was cut) of ``sum(weights * function(...))``.
Gradients = Callable[
    [Function, list[Any], list[int], NDArray[np.float64], Parameters], dict[int, dict[str, Any]]
]
#: ``hessian_vector(function, arguments, wrt, weights, directions, parameters)``: for each
#: position in `wrt`, the Hessian of ``sum(weights * function(...))`` times the `directions`
#: (one per position), and whether the first gradient carried a graph (else the product is 0).
HessianVector = Callable[
    [Function, list[Any], list[int], NDArray[np.float64], list[NDArray[np.float64]], Parameters],
    tuple[list[Any], bool],
]
#: ``jacobian_vector(function, arguments, wrt, tangents, parameters)``: the result's tangent by
#: forward-mode AD, the operands at `wrt` moving along `tangents`.
JacobianVector = Callable[
    [Function, list[Any], list[int], list[NDArray[np.float64]], Parameters], Any
]
#: ``compile(function, compiler)``: the compiled function, how many times it compiled so far,
#: and how it was compiled (for messages).
Compile = Callable[[Function, str], tuple[Function, Callable[[], int], str]]


@dataclass(frozen=True)
class Backend:
    """What the harness needs to know about one array library."""

    dtypes: tuple[str, ...]  # the dtypes its targets run in
    devices: tuple[str, ...]  # the devices its targets run on
    #: ``asarray(values, dtype, device)``: a float64 or integer NumPy array as this backend's
    #: array, floating point in `dtype` (None: integers, kept as they are).
    asarray: Callable[[NDArray[Any], str | None, str], Any]
    to_numpy: Callable[[Any], NDArray[Any]]  # a NumPy copy, any dtype
    describe: Callable[[Any], tuple[str, str] | None]  # (dtype, device), or None: not ours
    #: ``call(function, arguments, parameters)``: the function on arrays of this backend.
    call: Callable[[Function, Sequence[Any], Parameters], Any] = call_eagerly
    gradients: Gradients | None = None
    hessian_vector: HessianVector | None = None
    jacobian_vector: JacobianVector | None = None
    compile: Compile | None = None
    #: The module that must be installed, and how to install it, where it is not.
    module: str = ""
    install: str = ""
    #: The backend whose arrays it takes and returns, where that is another one's.
    arrays: str | None = None
    #: The port its targets run in place of the public function (``_<name>_<port>``), where the
    #: public function sends this backend's arrays elsewhere: a Triton port's CPU tensors.
    port: str | None = None
    #: ``layouts(arguments, names)``: the same arguments in the other layouts a model hands a
    #: port (layouts.py), where this backend's arrays have strides.
    layouts: Callable[[Sequence[Any], Sequence[str]], list[Layout]] | None = None

    def runs(self, function: Function) -> Function:
        """What this backend's targets run for the public `function`."""
        return called_as_public(function, self.port) if self.port else function


def _numpy_asarray(values: NDArray[Any], dtype: str | None, device: str) -> NDArray[Any]:
    del device  # NumPy arrays live on the CPU
    return values.astype(dtype) if dtype else values.copy()


def _numpy_describe(array: Any) -> tuple[str, str] | None:
    return (array.dtype.name, "cpu") if isinstance(array, np.ndarray) else None


def _torch_asarray(values: NDArray[Any], dtype: str | None, device: str) -> torch.Tensor:
    return torch.tensor(values, dtype=getattr(torch, dtype) if dtype else None, device=device)


def _torch_to_numpy(array: torch.Tensor) -> NDArray[Any]:
    array = array.detach().cpu()
    converted: NDArray[Any] = (array.double() if array.is_floating_point() else array).numpy()
    return converted


def _torch_describe(array: Any) -> tuple[str, str] | None:
    if not isinstance(array, torch.Tensor):
        return None
    return str(array.dtype).removeprefix("torch."), array.device.type


def _torch_gradients(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    weights: NDArray[np.float64],
    parameters: Parameters,
    *,
    functorch: bool = True,
) -> dict[int, dict[str, Any]]:
    """By `torch.autograd.grad` and, with `functorch`, by `torch.func.grad`."""
    chosen = [arguments[position].detach().requires_grad_() for position in wrt]
    first = chosen[0]
    w = torch.as_tensor(weights, dtype=first.dtype, device=first.device)

    def loss(*values: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = function(*with_replaced(arguments, wrt, values), **parameters)
        return (w * result).sum()

    value = loss(*chosen)
    autograd = (
        torch.autograd.grad(value, chosen, allow_unused=True)
        if value.requires_grad
        else [None] * len(chosen)
    )
    found: dict[int, dict[str, Any]] = {
        position: {"torch.autograd": by_autograd}
        for position, by_autograd in zip(wrt, autograd, strict=True)
    }
    if functorch:
        detached = [x.detach() for x in chosen]
        try:
            func = torch.func.grad(loss, argnums=tuple(range(len(chosen))))(*detached)
        except RuntimeError as error:
            if not lacks("vmap", error):
                raise
            # A classic-style autograd.Function refuses every torch.func transform: a
            # capability it lacks (its vmap test reports it), not a wrong gradient.
            return found
        for position, by_func in zip(wrt, func, strict=True):
            found[position]["torch.func.grad"] = by_func
    return found


def _torch_hessian_vector(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    weights: NDArray[np.float64],
    directions: list[NDArray[np.float64]],
    parameters: Parameters,
) -> tuple[list[Any], bool]:
    """Double backward: `torch.autograd.grad` with ``create_graph=True``, then again."""
    chosen = [arguments[position].detach().requires_grad_() for position in wrt]
    w = torch.as_tensor(weights, dtype=chosen[0].dtype, device=chosen[0].device)
    loss = (w * function(*with_replaced(arguments, wrt, chosen), **parameters)).sum()
    if not loss.requires_grad:
        return [None] * len(chosen), False
    first = torch.autograd.grad(loss, chosen, create_graph=True, allow_unused=True)
    along = [
        (g * torch.as_tensor(v, dtype=g.dtype, device=g.device)).sum()
        for g, v in zip(first, directions, strict=True)
        if getattr(g, "requires_grad", False)  # None, where the operand is unused
    ]
    if not along:  # a backward on detached tensors, or under no_grad: no second derivative
        return [None] * len(chosen), False
    return list(torch.autograd.grad(torch.stack(along).sum(), chosen, allow_unused=True)), True


def _torch_jacobian_vector(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    tangents: list[NDArray[np.float64]],
    parameters: Parameters,
) -> Any:
    """`torch.func.jvp`. Where its tangent is 0, `torch.autograd.forward_ad` tells a true 0
    from none at all: an operation without a forward-mode formula (a custom operator without
    one) drops the tangent silently, and torch.func.jvp reads that as 0."""
    primals = tuple(arguments[position] for position in wrt)
    moving = tuple(
        torch.as_tensor(t, dtype=p.dtype, device=p.device)
        for p, t in zip(primals, tangents, strict=True)
    )

    def along(*values: torch.Tensor) -> Any:
        return function(*with_replaced(arguments, wrt, values), **parameters)

    with warnings.catch_warnings():
        # Forward mode's first use loads PyTorch's own decompositions through torch.jit.script,
        # which warns of its deprecation: PyTorch's internals, not the port.
        warnings.filterwarnings("ignore", "`torch.jit.script", DeprecationWarning)
        tangent = torch.func.jvp(along, primals, moving)[1]
        if isinstance(tangent, torch.Tensor) and tangent.numel() and not bool(tangent.any()):
            with torch.autograd.forward_ad.dual_level():
                duals = [
                    torch.autograd.forward_ad.make_dual(p, t)
                    for p, t in zip(primals, moving, strict=True)
                ]
                dropped = torch.autograd.forward_ad.unpack_dual(along(*duals)).tangent is None
            # A result that depends on no input (polyval of no coefficients) has no tangent
            # either: only one that reverse mode differentiates has lost it.
            if dropped and along(*[p.detach().requires_grad_() for p in primals]).requires_grad:
                msg = (
                    "the result has no tangent under forward-mode AD (forward_ad's dual of "
                    "the result has none): an operation without a forward-mode formula "
                    "dropped it, and torch.func.jvp reads that as 0"
                )
                raise NotImplementedError(msg)
    return tangent


def reverse_gradients(
    target: str,
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    weights: NDArray[np.float64],
    parameters: Parameters,
) -> list[Any]:
    """For each position in `wrt`, the gradient of ``sum(weights * function(...))`` by the
    backend's own reverse mode (PyTorch: `torch.autograd.grad` alone), None where the graph was
    cut."""
    backend = BACKENDS[target]
    if backend.gradients is None:
        msg = f"no gradients on {target}"
        raise ValueError(msg)
    if backend.describe is _torch_describe:
        found = _torch_gradients(function, arguments, wrt, weights, parameters, functorch=False)
    else:
        found = backend.gradients(function, arguments, wrt, weights, parameters)
    return [next(iter(found[position].values())) for position in wrt]


def _torch_compile(function: Function, compiler: str) -> tuple[Function, Callable[[], int], str]:
    import torch._dynamo
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend(compiler)
    compiled = torch.compile(function, backend=counter, fullgraph=True)
    return compiled, lambda: counter.frame_count, f"torch.compile(backend={compiler!r})"


def _strict_asarray(values: NDArray[Any], dtype: str | None, device: str) -> Any:
    import array_api_strict as xp

    del device  # its arrays live on its one (CPU) device
    return xp.asarray(values, dtype=getattr(xp, dtype) if dtype else None)


def _strict_describe(array: Any) -> tuple[str, str] | None:
    if not type(array).__module__.startswith("array_api_strict."):
        return None
    return repr(array.dtype).rpartition(".")[2], "cpu"


def implementation(function: Function, suffix: str) -> Function | None:
    """The port ``_<name>_<suffix>`` of the public `function`, where `function` looks it up (its
    module, which in the split layout imports every port), or None."""
    found: Function | None = getattr(
        sys.modules[function.__module__], f"_{function.__name__}_{suffix}", None
    )
    return found


def shared_implementation(function: Function) -> Function | None:
    """The shared (Array API) implementation ``_<name>_array_api`` of the public `function`,
    where `function` looks it up; None for a function with one port per backend."""
    return implementation(function, "array_api")


def with_defaults(function: Function, parameters: Parameters) -> dict[str, Any]:
    """`parameters` with those left at the public `function`'s defaults spelled out: a shared
    implementation has no defaults of its own."""
    found = inspect.signature(function).parameters.values()
    defaults = {p.name: p.default for p in found if p.default is not inspect.Parameter.empty}
    return {**defaults, **parameters}


def called_as_public(function: Function, suffix: str) -> Function:
    """The port ``_<name>_<suffix>`` of the public `function`, called as `function` is: by its
    name, with its defaults for the parameters left out (a port has none of its own)."""
    port = implementation(function, suffix)
    if port is None:
        # Not written yet, as a stub (core.EARLIER_STUBS): its tests are expected failures.
        msg = (
            f"{function.__name__} has no {suffix} implementation yet: write "
            f"_{function.__name__}_{suffix} in {function.__module__} (or import it there)"
        )
        raise NotImplementedError(msg)

    @functools.wraps(function)
    def called(*arguments: Any, **parameters: Any) -> Any:
        return port(*arguments, **with_defaults(function, parameters))

    return called


def _shared_call(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    """The shared implementation itself on NumPy arrays (the public function sends those to the
    reference). Where the standard returns a 0-d array (`xp.mean(x)` of a whole array),
    array-api-compat's NumPy namespace returns NumPy's scalar, a difference it documents and no
    fault of the shared code: that scalar becomes a 0-d array here."""
    result = run_reference(called_as_public(function, "array_api"), arguments, parameters)
    return np.asarray(result) if isinstance(result, np.generic) else result


#: The backends by name, the reference first; every other one is a port.
BACKENDS: Mapping[str, Backend] = {
    "numpy": Backend(
        dtypes=("float32", "float16"),
        devices=("cpu",),
        asarray=_numpy_asarray,
        to_numpy=np.asarray,
        describe=_numpy_describe,
        call=run_reference,
    ),
    # The shared implementation on NumPy arrays, as array-api-compat's NumPy namespace runs it.
    "numpy_shared": Backend(
        dtypes=("float64",),  # the other dtypes' rounding: the libraries that compute in them
        devices=("cpu",),
        asarray=_numpy_asarray,
        to_numpy=np.asarray,
        describe=_numpy_describe,  # "numpy", first in this table, names these arrays
        call=_shared_call,
        module="array_api_compat",
        install="pip install -e .",
        arrays="numpy",
    ),
    "torch": Backend(
        dtypes=DTYPES,
        devices=(*DEVICES, "meta"),
        asarray=_torch_asarray,
        to_numpy=_torch_to_numpy,
        describe=_torch_describe,
        gradients=_torch_gradients,
        hessian_vector=_torch_hessian_vector,
        jacobian_vector=_torch_jacobian_vector,
        compile=_torch_compile,
        layouts=torch_layouts,
    ),
    **(
        {
            "jax": Backend(
                dtypes=JAX_DTYPES,
                devices=("cpu", "cuda"),
                asarray=jax_asarray,
                to_numpy=np.asarray,
                describe=jax_describe,
                call=jax_call,
                gradients=jax_gradients,
                hessian_vector=jax_hessian_vector,
                jacobian_vector=jax_jacobian_vector,
                compile=jax_compile,
                install="pip install -e '.[jax]'",
            )
        }
        if uses_jax()
        else {}
    ),
    **(
        {
            # A Triton port: PyTorch's tensors, its gradients and compilers, the kernel itself.
            "triton": Backend(
                dtypes=DTYPES,
                devices=("cpu", "cuda"),
                asarray=_torch_asarray,
                to_numpy=_torch_to_numpy,
                describe=_torch_describe,  # "torch", earlier in this table, names these tensors
                # Not torch.func.grad: a custom operator's backward (the kernels' launch is one)
                # refuses functorch's transforms (torch 2.13).
                gradients=functools.partial(_torch_gradients, functorch=False),
                hessian_vector=_torch_hessian_vector,
                jacobian_vector=_torch_jacobian_vector,
                compile=_torch_compile,
                install="pip install -e '.[triton]'",
                arrays="torch",
                port="triton",
                layouts=torch_layouts,
            )
        }
        if uses_triton()
        else {}
    ),
    # The Array API standard and nothing more: a NumPy-only method, an implicit promotion or a
    # call outside the standard in a shared implementation fails here, with the library's message.
    "array_api_strict": Backend(
        dtypes=("float64",),  # what it checks is the calls, not the rounding
        devices=("cpu",),
        asarray=_strict_asarray,
        to_numpy=np.from_dlpack,
        describe=_strict_describe,
        install="pip install --group test -e .",
    ),
}
#: The backends of an algorithm with one implementation per backend, the reference first; the
#: ports after it are compared with NumPy, with gradients and compilers. Triton is not among
#: them: an algorithm with a Triton port names it (``parity.over([*parity.DEFAULT, "triton"])``).
DEFAULT = ("numpy", "torch", *(("jax",) if uses_jax() else ()))
#: The ports of an algorithm with one implementation per backend: `DEFAULT` without NumPy.
PORTS = DEFAULT[1:]
#: The backends of an algorithm with one shared implementation for every Array API library: that
#: implementation on NumPy's arrays and on every other library here (not a backend that runs a
#: port of its own).
ARRAY_API = tuple(name for name in tuple(BACKENDS)[1:] if BACKENDS[name].port is None)
