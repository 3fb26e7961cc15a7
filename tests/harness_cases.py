"""The harness's rules on algorithms of kinds the worked examples lack (ill-conditioned linear
algebra, an exact cancellation, inputs the reference refuses, an operation without a meta kernel):
written into a generated repo as tests/test_harness_cases.py and run there by
tests/test_harness_rules.py.

Each algorithm is written as a researcher writes it (the NumPy reference, the PyTorch port, the
JAX port where the case needs one), on the inputs where the harness once raised a false alarm.
A test named ``test_correct_*`` must pass, ``test_bug_*`` (a realistic mistake in the port) must
fail with a comparison, ``test_vacuous_*`` must fail because it compared nothing, and
``test_excused_*`` must be skipped because its dtype cannot hold the problem, and
``test_skipped_*`` skipped because its device cannot run the port (with the reason). The
module's ``SPEC`` declares the dtypes that cannot hold some of its problems (float16, float64):
float32 is left undeclared, so that a test of it that compared nothing fails
(``test_unheld_*``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import parity
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from parity import Target

#: Read by the harness for every test of this module: which dtypes may compare nothing.
SPEC = parity.Spec(
    shapes={"x": "..."},
    cannot_hold={
        "float16": "a nearly singular matrix is singular as float16 rounds it",
        "float64": "a Gram matrix of a row of 1e-160 has an inverse beyond float64",
    },
)


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def logdet_gram(a: Any) -> Any:
    """log det(a aᵀ) through the Cholesky factor L of a aᵀ: 2 Σ log L_ii."""
    if isinstance(a, np.ndarray):
        factor = np.linalg.cholesky(a @ a.T)
        return np.asarray(2.0 * np.sum(np.log(np.diagonal(factor))))
    if isinstance(a, torch.Tensor):
        factor = torch.linalg.cholesky(a @ a.T)
        return 2.0 * torch.log(torch.diagonal(factor)).sum()
    jnp = _jnp()
    return 2.0 * jnp.sum(jnp.log(jnp.diagonal(jnp.linalg.cholesky(a @ a.T))))


def ridge(x: Any, y: Any, lam: float = 1.0) -> Any:
    """Ridge regression through the normal equations: solve(xᵀx + lam I, xᵀy)."""
    if isinstance(x, np.ndarray):
        xt = np.swapaxes(x, -1, -2)
        return np.linalg.solve(xt @ x + lam * np.eye(x.shape[-1]), xt @ y[..., None])[..., 0]
    if isinstance(x, torch.Tensor):
        eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return torch.linalg.solve(x.mT @ x + lam * eye, x.mT @ y[..., None])[..., 0]
    jnp = _jnp()
    xt = jnp.swapaxes(x, -1, -2)
    return jnp.linalg.solve(xt @ x + lam * jnp.eye(x.shape[-1], dtype=x.dtype), xt @ y[..., None])[..., 0]


def ridge_penalty_everywhere(x: Any, y: Any, lam: float = 1.0) -> Any:
    """The bug: the penalty added to every entry of xᵀx (lam * ones), not to its diagonal."""
    if isinstance(x, np.ndarray):
        return ridge(x, y, lam)
    gram = x.mT @ x + lam
    return torch.linalg.solve(gram, x.mT @ y[..., None])[..., 0]


def _ridge_calls() -> list[tuple[tuple[np.ndarray, np.ndarray], dict[str, float]]]:
    """Four problems of ridge regression, each seen in a researcher's trial: well conditioned;
    badly scaled (xᵀx + 1.5 I has condition number 5.2e4: PyTorch's and JAX's float32 solves are
    0.019 off at 12.46, their pivots cancelling, where NumPy's float32 is 5e-8 off); and two
    singular in float32 (PyTorch answers -1114 where the reference gives 90; JAX, NaN)."""
    rng = np.random.default_rng(0)
    scaled = np.array([[1.0, 3.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 279.0, 0.0, 0.0]])
    singular = np.zeros((4, 5))
    singular[0] = [-2896.30937574, 2896.30937574, 1.375, 0, 1]
    singular[1, :3], singular[2, 4] = [1447.5, 1.6875, 2895], 32
    return [
        ((rng.normal(size=(6, 3)), rng.normal(size=6)), {"lam": 1.0}),
        ((scaled, np.array([0.0, 0.0, -2896.30937574])), {"lam": 1.5}),
        ((singular, np.array([0.0, -2896.30937574, 2896.30937574, 0.0])), {"lam": 0.5}),
        ((np.full((3, 4), 1505.0), np.full(3, 1505.0)), {"lam": 1.0}),
    ]


def group_norm(x: Any, weight: Any, bias: Any, groups: int = 2, eps: float = 1e-5) -> Any:
    """(x - mean) / sqrt(var + eps) * weight + bias, the mean and variance over each group of
    channels (axis 1) and every position, weight and bias per channel."""
    if isinstance(x, np.ndarray):
        grouped = x.reshape(x.shape[0], groups, -1)
        mean = grouped.mean(axis=-1, keepdims=True)
        var = grouped.var(axis=-1, keepdims=True)
        normalised = ((grouped - mean) / np.sqrt(var + eps)).reshape(x.shape)
        per_channel = (-1,) + (1,) * (x.ndim - 2)
        return normalised * weight.reshape(per_channel) + bias.reshape(per_channel)
    return torch.nn.functional.group_norm(x, groups, weight, bias, eps=eps)


def group_norm_wrong_eps(x: Any, weight: Any, bias: Any, groups: int = 2, eps: float = 1e-5) -> Any:
    """The bug: eps added to the standard deviation, not to the variance."""
    if isinstance(x, np.ndarray):
        return group_norm(x, weight, bias, groups, eps)
    grouped = x.reshape(x.shape[0], groups, -1)
    mean = grouped.mean(dim=-1, keepdim=True)
    std = grouped.var(dim=-1, keepdim=True, unbiased=False).sqrt()
    normalised = ((grouped - mean) / (std + eps)).reshape(x.shape)
    per_channel = (-1,) + (1,) * (x.ndim - 2)
    return normalised * weight.reshape(per_channel) + bias.reshape(per_channel)


def labels_only(x: Any) -> Any:
    """A reference that takes integer labels only: every floating draw is refused."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind != "i":
            raise TypeError(f"labels_only takes integer labels, not {x.dtype}")
        return np.asarray(x * 2)
    if x.is_floating_point():
        raise TypeError(f"labels_only takes integer labels, not {x.dtype}")
    return x * 2


def positive_only(x: Any) -> Any:
    """sqrt of x, refusing a negative or 0-d x."""
    if isinstance(x, np.ndarray):
        if x.ndim == 0 or np.any(x < 0):
            raise ValueError("positive_only takes a positive array with an axis")
        return np.sqrt(x)
    if x.ndim == 0 or bool((x < 0).any()):
        raise ValueError("positive_only takes a positive array with an axis")
    return torch.sqrt(x)


def segment_mean(x: Any, ids: Any, segments: int = 3) -> Any:
    """The mean of the rows of x that share an id, one row per segment (zeros where none)."""
    if isinstance(x, np.ndarray):
        sums = np.zeros((segments, x.shape[-1]))
        np.add.at(sums, ids, x)
        return sums / np.maximum(np.bincount(ids, minlength=segments), 1)[:, None]
    sums = x.new_zeros(segments, x.shape[-1]).index_add(0, ids, x)
    return sums / torch.bincount(ids, minlength=segments).clamp(min=1).to(x.dtype)[:, None]


def _nearly_singular(seed: int) -> np.ndarray:
    """A 6x6 matrix of rank 3 plus noise of 1e-3: a aᵀ is positive definite, with a condition
    number far beyond float32's."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(6, 3)) @ rng.normal(size=(3, 6)) + 1e-3 * rng.normal(size=(6, 6))


def _one_value_per_group(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-10, 10, size=shape) for shape in [(2, 4, 1), (4,), (4,)])  # type: ignore[return-value]


# --- Correct code -------------------------------------------------------------------------------


@parity.over(parity.PORTS, ["float32"])
def test_correct_logdet_of_nearly_singular_matrices(target: Target) -> None:
    # a aᵀ's condition number is beyond float32: its Cholesky factor keeps no digit there, and
    # PyTorch's raises or lands anywhere (34.34 where the reference gives 35.03); each such call
    # is excused, with the reason. Four well-conditioned matrices are compared.
    for seed in range(12):
        parity.assert_matches_reference(logdet_gram, target, (_nearly_singular(seed),))
    # Two equal rows: singular, yet the float64 Cholesky returns; nudged copies of it raise.
    a = np.full((5, 5), 0.140625)
    a[0, 2:4], a[2, 2], a[3, 0] = (-2896.30937574, 2896.30937574), 0.0, 0.0
    parity.assert_matches_reference(logdet_gram, target, (a,))
    for seed in range(4):
        well_conditioned = np.random.default_rng(seed).normal(size=(3, 5))
        parity.assert_matches_reference(logdet_gram, target, (well_conditioned,))


@parity.over(parity.PORTS, ["float64", "float32"])
def test_correct_ridge_of_ill_conditioned_problems(target: Target) -> None:
    # Compared where the dtype holds the problem, within the room of a solve that is backward
    # stable in norm; beyond the dtype (float32, the last two), excused.
    for operands, parameters in _ridge_calls():
        parity.assert_matches_reference(ridge, target, operands, parameters)


@parity.over(parity.PORTS, ["float64"])
def test_correct_logdet_of_singular_matrices(target: Target) -> None:
    # Rows that depend on each other: NumPy's Cholesky raises. PyTorch's raises on a zero row,
    # and returns on [[-3, 1], [-1.5, 0.5]] (its a aᵀ rounds otherwise), where a copy nudged
    # by float64's epsilon returns in NumPy too: the edge of the domain. JAX answers NaN.
    zero_row = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 0.0]])
    for a in (zero_row, np.array([[-3.0, 1.0], [-1.5, 0.5]]), _nearly_singular(0)):
        parity.assert_matches_reference(logdet_gram, target, (a,))
    # A batch of four matrices of two equal rows and one regular matrix: PyTorch's float64
    # returns, and no copy nudged by float64's epsilon lands all four inside NumPy's domain at
    # once; their condition numbers are beyond float64: the edge of the domain.
    batch = np.full((5, 2, 3), 2.662156048756421)
    batch[0, 0, :2] = -1e4, 1e4
    parity.assert_matches_reference(logdet_gram, target, (batch,))


@parity.over(["torch"], ["float64", "float32", "float16"])
def test_correct_group_norm_with_one_value_per_group(target: Target) -> None:
    # The reference cancels exactly (x - mean = 0); the fused kernel computes
    # x * (rstd * weight) + (bias - mean * rstd * weight), and keeps eps times those terms.
    for seed in range(4):
        operands = _one_value_per_group(seed)
        parity.assert_matches_reference(group_norm, target, operands, {"groups": 4})


@parity.over(parity.PORTS, ["float64"])
def test_correct_logdet_gradient_of_a_tiny_matrix(target: Target) -> None:
    # 2 (a aᵀ)⁻¹ a: elements of 8.8e130 and, where the exact gradient is 0, PyTorch's 2e115 (one
    # epsilon of them, the backward pass's rounding). No step can resolve slopes at this scale.
    pattern = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    parity.assert_gradient_matches_reference(logdet_gram, target, (2.853626018006007e-132 * pattern,))


@parity.over(["torch"], ["float64"])
def test_correct_refusal_of_an_edge_case(target: Target) -> None:
    # The reference refuses a 0-d x, and so does the port: on an edge case, that is the check.
    parity.assert_matches_reference(positive_only, target, (np.ones(()),))


def test_correct_over_without_a_target_is_an_error() -> None:
    with pytest.raises(ValueError, match="no target"):
        parity.over(["numpy"], ["bfloat16"])


# --- Bugs that must still be caught -------------------------------------------------------------


@parity.over(["torch"], ["float64", "float32"])
def test_bug_group_norm_eps_on_the_standard_deviation(target: Target) -> None:
    x, weight, bias = (np.random.default_rng(0).uniform(-2, 2, size=shape) for shape in [(2, 4, 3), (4,), (4,)])
    parity.assert_matches_reference(group_norm_wrong_eps, target, (x * 1e-3, weight, bias))


@parity.over(["torch"], ["float64", "float32"])
def test_bug_ridge_penalty_on_every_entry(target: Target) -> None:
    operands, parameters = _ridge_calls()[0]
    parity.assert_matches_reference(ridge_penalty_everywhere, target, operands, parameters)


# --- Tests that compare nothing -----------------------------------------------------------------


@parity.over(["torch"], ["float64"])
@given(x=hnp.arrays(np.float64, st.integers(1, 4), elements=st.floats(-5, 5)))
def test_vacuous_every_draw_refused(target: Target, x: np.ndarray) -> None:
    parity.assert_matches_reference(labels_only, target, (x,))


@parity.over(["torch"], ["float64"])
def test_vacuous_vmap_of_refused_operands(target: Target) -> None:
    parity.assert_vmap_matches_loop(positive_only, target, (-np.ones((2, 3)),))


# --- A dtype that cannot hold the problem -------------------------------------------------------


@parity.over(["torch"], ["float16"])
def test_excused_cholesky_in_float16(target: Target) -> None:
    parity.assert_matches_reference(logdet_gram, target, (_nearly_singular(0),))


@parity.over(parity.PORTS, ["float64"])
def test_excused_logdet_gradient_of_a_tiny_row(target: Target) -> None:
    # a aᵀ = 3e-319: its inverse, through which PyTorch's gradient goes, overflows to inf.
    parity.assert_gradient_matches_reference(logdet_gram, target, (np.array([[5.43626043e-160]]),))


@parity.over(["torch"], ["float32"], ["meta"])
def test_skipped_segment_mean_without_a_meta_kernel(target: Target) -> None:
    # torch.bincount has no meta kernel: the device is checked where a GPU runs the tests.
    x, ids = np.ones((4, 2)), np.array([0, 2, 2, 1])
    parity.assert_keeps_type_dtype_device(segment_mean, target, (x, ids))


@parity.over(parity.PORTS, ["float32"])
def test_unheld_ridge_singular_in_float32(target: Target) -> None:
    # As above, but float32 is not declared in SPEC.cannot_hold: nothing compared is a failure.
    for operands, parameters in _ridge_calls()[2:]:
        parity.assert_matches_reference(ridge, target, operands, parameters)
