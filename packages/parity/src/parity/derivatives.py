"""Second derivatives and forward mode, against the port's own first gradient (which
`assert_gradient_matches_reference` checks against the NumPy reference)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from .backends import BACKENDS, reverse_gradients, to_numpy
from .core import (
    FLAT_GAIN,
    GRADIENT_TOLERANCE,
    ROOM,
    Function,
    Operands,
    Parameters,
    count_call,
    count_unmeasured,
    declaration,
    quiet,
    run_reference,
)
from .gradients import Differences, assert_gradient_close, without_subnormals
from .room import check_type_dtype_device, rounding_of
from .targets import Target
from .values import Expected, expected_from, run_port

EPS = float(np.finfo(np.float64).eps)

#: What a second derivative's failure adds: the bugs that give a right first gradient and a wrong
#: second one.
SECOND_HINT = (
    "The first gradient is right (its own test compares it with the reference) and its "
    "derivative is not: a custom autograd.Function whose backward uses an intermediate saved "
    "outside autograd (computed in forward or setup_context and saved as a constant, or "
    ".detach()ed), or a backward computed under torch.no_grad or on detached tensors (a "
    "second derivative of 0), gives this (pytorch/pytorch#76185, #58509). Compute backward "
    "with differentiable operations of the saved inputs and outputs."
)
ZERO = "a non-finite second derivative at an exact zero (0 / 0 in a library's formula)"
DETACHED = (
    "Here the first gradient carries no graph (no requires_grad after create_graph=True): its "
    "derivative counts as 0. "
)


#: Each check's product (a backend's attribute), and what a backend without it lacks.
PRODUCTS = {"hessian_vector": "second derivatives", "jacobian_vector": "forward mode"}


class _Drawn:
    """The float64 operands, the port's arguments, the reference's outcome, the loss's random
    weights, and a random direction and projection per operand in `wrt`; the port as the
    backend runs it, and the backend's `product` (a key of PRODUCTS)."""

    def __init__(
        self,
        function: Function,
        target: Target,
        operands: Operands,
        parameters: Parameters,
        wrt: Sequence[int] | None,
        product: str,
    ) -> None:
        declared = declaration("no_gradient")
        if declared:
            pytest.skip(f"SPEC.no_gradient: {declared}")
        backend = BACKENDS[target.backend]
        found: Callable[..., Any] | None = getattr(backend, product)
        if found is None:
            pytest.fail(f"no {PRODUCTS[product]} on {target.backend}")
        self.product = found
        self.ported = backend.runs(function)
        self.reference = [without_subnormals(np.asarray(value)) for value in operands]
        self.arguments = [target.asarray(value) for value in self.reference]
        self.expected: Expected = expected_from(function, self.arguments, parameters)
        self.wrt = (
            list(wrt)
            if wrt is not None
            else [i for i, v in enumerate(self.reference) if v.dtype.kind == "f"]
        )
        result = self.expected.result
        self.outputs = to_numpy(result) if self.expected.error is None else np.zeros(())
        # Seeds of their own: weights equal to operands drawn by a test's own default_rng(0)
        # would hide a scale-invariant function's derivative (J x = 0 along x itself).
        rng = np.random.default_rng(56)
        weights = rng.standard_normal(self.outputs.shape)
        self.weights = np.where(np.isfinite(self.outputs), weights, 0.0)
        self.directions = [rng.standard_normal(self.reference[p].shape) for p in self.wrt]
        self.projections = [rng.standard_normal(self.reference[p].shape) for p in self.wrt]

    def moved(self, t: float) -> list[NDArray[Any]]:
        """The operands moved by `t` along the directions."""
        moved = list(self.reference)
        for position, v in zip(self.wrt, self.directions, strict=True):
            moved[position] = self.reference[position] + t * v
        return moved


def _along_t(terms: Callable[[float], NDArray[Any]]) -> Callable[[list[NDArray[Any]]], Any]:
    """`terms` of a scalar t as `Differences` takes them: a function of one 0-d operand (float64
    or long double; the port computes in float64 either way)."""
    return lambda operands: terms(float(operands[0]))


@quiet
def assert_second_derivative_matches(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    wrt: Sequence[int] | None = None,
) -> None:
    """The Hessian-vector product of ``sum(w * function(...))`` (the gradient test's loss), by
    the backend's own second derivative (PyTorch: double backward, ``create_graph=True``; JAX:
    ``jax.jvp`` of ``jax.grad``; Triton: through its registered backward), projected on a
    random vector u, matches central differences of the port's own first gradient along the
    random direction v: ``<u, H v>`` against ``<u, g(x + t v) - g(x - t v)> / 2t``, with the
    care for kinks, poles and the ends of a domain that the first gradient's test takes (a
    difference that straddles a kink of the first gradient is not a failure). A function whose
    second derivative is 0 almost everywhere (relu, clamp) passes; a non-finite one where an
    operand holds an exact 0 (a norm of a zero vector: 0 / 0) is counted unmeasured. Where the
    port cannot differentiate twice (a custom operator whose backward has no autograd formula),
    the test is skipped with the library's reason, unless the SPEC requires
    ``"second_derivative"``. Use a float64 target."""
    __tracebackhide__ = True
    parameters = parameters or {}
    drawn = _Drawn(function, target, operands, parameters, wrt, "hessian_vector")
    ported, product = drawn.ported, drawn.product
    what = f"the second derivative (a Hessian-vector product) of {function.__name__} on {target}"
    found = run_port(
        # A mapping, as a gradient call returns: run_port reads a result's shape and NaNs.
        lambda: dict(
            zip(
                ("products", "graph"),
                product(
                    ported, drawn.arguments, drawn.wrt, drawn.weights, drawn.directions, parameters
                ),
                strict=True,
            )
        ),
        function,
        drawn.arguments,
        drawn.expected,
        what,
        parameters=parameters,
        dtype=target.dtype,
        capability="second_derivative",
    )
    if drawn.expected.error is not None or found is None:
        return
    products, graph = found["products"], found["graph"]
    got = 0.0
    for hv, u in zip(products, drawn.projections, strict=True):
        if hv is not None:
            check_type_dtype_device(hv, u.shape, target=target, what=what)
            got += float(np.sum(u * to_numpy(hv)))

    def terms(t: float) -> NDArray[Any]:
        arguments = [target.asarray(value) for value in drawn.moved(t)]
        first = reverse_gradients(
            target.backend, ported, arguments, drawn.wrt, drawn.weights, parameters
        )
        return np.concatenate(
            [
                (u * (np.zeros(u.shape) if g is None else to_numpy(g))).ravel()
                for g, u in zip(first, drawn.projections, strict=True)
            ]
        )

    if not np.isfinite(got) and any(
        value.dtype.kind == "f" and bool((value == 0).any()) for value in drawn.reference
    ):
        # At an exact zero the libraries' second derivatives divide 0 by 0 (a norm of a zero
        # vector, inside F.normalize's clamp), as their gradients do at hypot(0, 0): unmeasured.
        count_unmeasured(ZERO, 1)
        return
    at = terms(0.0)
    # Each term's rounding in the port's backward: an element may sum terms as large as the
    # largest one (as the gradient test allows).
    largest = float(np.max(np.abs(at[np.isfinite(at)]), initial=0))
    u = np.concatenate([p.ravel() for p in drawn.projections])
    rounding = np.full(u.shape, ROOM * EPS * largest)
    differences = Differences.of(_along_t(terms), [np.zeros(())], 0, rounding)
    try:
        assert_gradient_close(
            target.asarray(np.asarray(got)),
            differences,
            target=target,
            what=what,
            outputs_finite=bool(np.isfinite(at).all()),
            compare_values=True,
            flat_room=FLAT_GAIN * EPS * float(np.max(np.abs(u), initial=0)),
            against="central differences of the port's own first gradient along the same direction",
        )
    except pytest.fail.Exception as failure:
        note = "" if graph else DETACHED
        pytest.fail(f"{failure.msg}\n{note}{SECOND_HINT}")
    count_call("compared")


@quiet
def assert_forward_mode_matches(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    wrt: Sequence[int] | None = None,
) -> None:
    """The Jacobian-vector product by forward-mode AD (``torch.func.jvp``, ``jax.jvp``) along a
    random tangent v agrees with the port's reverse-mode gradient (checked against the
    reference by `assert_gradient_matches_reference`) by the dot-product identity
    ``<J v, w> = <v, Jᵀ w>``, within `GRADIENT_TOLERANCE` of the terms' magnitudes. Where they
    disagree at a kink or a tie (the two modes may take different sides), the JVP passes where
    it lies between the one-sided differences of the reference along v. Where the port has no
    forward mode (a custom autograd.Function without ``jvp``), the test is skipped with the
    library's reason, unless the SPEC requires ``"forward_mode"``. Use a float64 target."""
    __tracebackhide__ = True
    parameters = parameters or {}
    drawn = _Drawn(function, target, operands, parameters, wrt, "jacobian_vector")
    ported, jvp = drawn.ported, drawn.product
    what = f"forward mode (a Jacobian-vector product) of {function.__name__} on {target}"
    found = run_port(
        lambda: jvp(ported, drawn.arguments, drawn.wrt, drawn.directions, parameters),
        function,
        drawn.arguments,
        drawn.expected,
        what,
        parameters=parameters,
        dtype=target.dtype,
        capability="forward_mode",
    )
    if drawn.expected.error is not None or found is None:
        return
    check_type_dtype_device(found, drawn.outputs.shape, target=target, what=what)
    forward = np.where(drawn.weights != 0, drawn.weights * to_numpy(found), 0.0)
    gradients = reverse_gradients(
        target.backend, ported, drawn.arguments, drawn.wrt, drawn.weights, parameters
    )
    reverse = [
        v * (0.0 if g is None else to_numpy(g))
        for g, v in zip(gradients, drawn.directions, strict=True)
    ]
    left, right = float(np.sum(forward)), float(sum(np.sum(r) for r in reverse))
    scale = float(np.sum(np.abs(forward)) + sum(np.sum(np.abs(r)) for r in reverse))
    tolerance = GRADIENT_TOLERANCE
    if abs(left - right) <= tolerance.atol + tolerance.rtol * scale:
        count_call("compared")
        return
    # A kink or a tie, where the modes may take different sides: the reference decides.
    room = np.asarray(rounding_of(function, drawn.reference, parameters, "float64").room)
    finite = np.isfinite(drawn.outputs)
    rounding = np.abs(drawn.weights) * np.where(finite, EPS * np.abs(drawn.outputs) + room, 0.0)

    def terms(t: float) -> NDArray[Any]:
        values = np.asarray(run_reference(function, drawn.moved(t), parameters), dtype=float)
        return np.where(drawn.weights != 0, drawn.weights * values, 0.0).ravel()

    differences = Differences.of(_along_t(terms), [np.zeros(())], 0, rounding.ravel())
    try:
        assert_gradient_close(
            target.asarray(np.asarray(left)),
            differences,
            target=target,
            what=what,
            outputs_finite=bool(finite.all()),
            compare_values=True,
            flat_room=0.0,
        )
    except pytest.fail.Exception:
        pytest.fail(
            f"{what} disagrees with its reverse mode (whose gradient matches the reference): "
            f"<J v, w> = {left!r} by forward mode, <v, J^T w> = {right!r} by reverse mode, "
            f"{abs(left - right):.3g} apart, beyond {tolerance.rtol:g} of their terms' "
            f"magnitude {scale:.3g}; nor does it lie between the reference's one-sided "
            f"differences along v (central {float(differences.central)!r}). A custom "
            "autograd.Function's jvp that misses a term, or uses the wrong saved value, gives "
            "this: its jvp must be the derivative of forward along the tangents."
        )
    count_call("compared")
