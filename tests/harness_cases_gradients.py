"""The harness's rules on gradients where autodiff and finite differences part without a bug (at
kinks and ties, at clamps and subnormals), and the gradient bugs beside them that must still fail:
written into a generated repo as tests/test_harness_gradient_cases.py beside tests/harness_cases.py
(whose docstring says what the test names promise) and run there by tests/test_harness_rules.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import parity
import torch
from parity import Target


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def wasserstein_1d(u: Any, v: Any) -> Any:
    """The 1-D Wasserstein distance of two samples of one size: mean |sort(u) - sort(v)|."""
    if isinstance(u, np.ndarray):
        return np.asarray(np.mean(np.abs(np.sort(u) - np.sort(v))))
    if isinstance(u, torch.Tensor):
        return (torch.sort(u).values - torch.sort(v).values).abs().mean()
    jnp = _jnp()
    return jnp.mean(jnp.abs(jnp.sort(u) - jnp.sort(v)))


def sparsemax(x: Any) -> Any:
    """The Euclidean projection of x onto the simplex, along the last axis: max(x - tau, 0), tau
    such that the result sums to 1 (Martins and Astudillo, 2016)."""
    if isinstance(x, np.ndarray):
        return _sparsemax_numpy(x)
    if isinstance(x, torch.Tensor):
        return _sparsemax_pytorch(x)
    return _sparsemax_jax(x)


def _sparsemax_numpy(x: np.ndarray) -> np.ndarray:
    z = -np.sort(-x, axis=-1)
    k = np.arange(1, x.shape[-1] + 1, dtype=x.dtype)
    cumulative = np.cumsum(z, axis=-1)
    size = np.sum(1 + k * z > cumulative, axis=-1, keepdims=True)
    tau = (np.take_along_axis(cumulative, size - 1, axis=-1) - 1) / size.astype(x.dtype)
    projected: np.ndarray = np.maximum(x - tau, 0.0)
    return projected


def _sparsemax_pytorch(x: torch.Tensor) -> torch.Tensor:
    z = torch.sort(x, dim=-1, descending=True).values
    k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
    cumulative = torch.cumsum(z, dim=-1)
    size = (1 + k * z > cumulative).sum(dim=-1, keepdim=True)
    tau = (torch.gather(cumulative, -1, size - 1) - 1) / size.to(x.dtype)
    return torch.clamp(x - tau, min=0.0)


def _sparsemax_jax(x: Any) -> Any:
    jnp = _jnp()
    z = -jnp.sort(-x, axis=-1)
    k = jnp.arange(1, x.shape[-1] + 1, dtype=x.dtype)
    cumulative = jnp.cumsum(z, axis=-1)
    size = jnp.sum(1 + k * z > cumulative, axis=-1, keepdims=True)
    tau = (jnp.take_along_axis(cumulative, size - 1, axis=-1) - 1) / size.astype(x.dtype)
    return jnp.maximum(x - tau, 0.0)


def contrastive(a: Any, b: Any, temperature: float = 0.5) -> Any:
    """InfoNCE: the cross-entropy of the cosine similarities over `temperature`, row i of a
    matching row i of b; a row is divided by max(its norm, 1e-12), as F.normalize does."""
    if isinstance(a, np.ndarray):
        za = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)
        zb = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-12)
        logits = za @ zb.T / temperature
        top = logits.max(axis=-1, keepdims=True)
        log_p = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
        return np.asarray(-np.mean(np.diagonal(log_p)))
    za = torch.nn.functional.normalize(a, dim=-1)
    zb = torch.nn.functional.normalize(b, dim=-1)
    labels = torch.arange(a.shape[0], device=a.device)
    return torch.nn.functional.cross_entropy(za @ zb.T / temperature, labels)


def round_straight_through(x: Any) -> Any:
    """The bug: round(x) with a straight-through gradient of 1, where the reference's is 0."""
    if isinstance(x, np.ndarray):
        return np.round(x)
    return x + (torch.round(x) - x).detach()


# --- Correct code -------------------------------------------------------------------------------


@parity.over(parity.PORTS, ["float64"])
def test_correct_wasserstein_gradient_at_ties(target: Target) -> None:
    # Autodiff pairs the tied u with v in one order, and takes one side of |0|: a valid
    # subgradient outside each element's own one-sided differences.
    for u, v in [([0.0, 0.0], [0.0, 1.0]), ([0.0, 1.0], [0.0, 0.0]), ([0.0, 0.0, 0.0], [0.0, 1.0, 1.0])]:
        parity.assert_gradient_matches_reference(wasserstein_1d, target, (np.array(u), np.array(v)))


@parity.over(parity.PORTS, ["float64"])
def test_correct_sparsemax_gradient_at_the_edge_of_the_support(target: Target) -> None:
    # [1, 0]: PyTorch's gradient combines the two sides of two kinks, outside both (0.132 where
    # they give 0 and 0.129): at a kink no derivative exists to compare.
    # JAX's maximum splits its slope at a tie, and its sort's slopes pair the tied elements
    # another way: 0.320 where the sides of the row [0, 1] give 0 and 0.268.
    ones = np.ones((2, 3, 2))
    ones[0, 1, 0] = 0.0
    for x in ([0.0, 1.0], [1.0, 0.0], [[0.0, 1.0], [0.5, 0.5]], [1.0, 1.0, -1.0], ones):
        parity.assert_gradient_matches_reference(sparsemax, target, (np.array(x),))


def cumulative_product(x: Any) -> Any:
    """The running product along the last axis."""
    if isinstance(x, np.ndarray):
        return np.cumprod(x, axis=-1)
    return torch.cumprod(x, dim=-1)


@parity.over(["torch"], ["float64"])
def test_correct_cumulative_product_gradient_at_subnormals(target: Target) -> None:
    # PyTorch's backward divides the product by x: at subnormal x nothing of it is left.
    x = np.array([5e-324, 5e-324])
    parity.assert_gradient_matches_reference(cumulative_product, target, (x,))


@parity.over(["torch"], ["float64"])
def test_correct_contrastive_gradient_at_zero_rows(target: Target) -> None:
    # F.normalize divides a zero row by its eps of 1e-12: a slope of 1e12 within 1e-12 of x.
    a = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, -1.0]])
    b = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])
    parity.assert_gradient_matches_reference(contrastive, target, (a, b))


@parity.over(["torch"], ["float64"])
def test_correct_contrastive_gradient_where_the_loss_is_flat(target: Target) -> None:
    # One feature, a zero: the loss is log 3 whatever a is. PyTorch's gradient for a is the
    # 1e-17 left of 3 * (1/3) - 1 times F.normalize's slope of 1e12 at zero rows: -3.5e-6.
    a, b = np.zeros((3, 1)), np.ones((3, 1))
    parity.assert_gradient_matches_reference(contrastive, target, (a, b), {"temperature": 1.0})


@parity.over(["torch"], ["float64"])
def test_correct_contrastive_gradient_inside_the_clamp(target: Target) -> None:
    # Zero rows against a row of 1.8e-29: within 1e-12 of a = 0, F.normalize's slope is 1e12 and
    # the gradient for a[0, 0] is -4.1e-6, while any step moves the loss by less than its last bit.
    a, b = np.zeros((3, 4)), np.zeros((3, 4))
    b[0, 0] = 1.84472528e-29
    parity.assert_gradient_matches_reference(contrastive, target, (a, b), {"temperature": 0.125})


# --- Bugs that must still be caught -------------------------------------------------------------


@parity.over(["torch"], ["float64"])
def test_bug_straight_through_gradient_of_a_flat_function(target: Target) -> None:
    # Exactly flat at 0: the reference's differences have no rounding error at all, so finer
    # steps never stop for noise, down to the smallest float; the gradient of 1 must fail, fast.
    parity.assert_gradient_matches_reference(round_straight_through, target, (np.zeros((6, 8)),))


def wasserstein_sorted_apart(u: Any, v: Any) -> Any:
    """The bug: u sorted apart from the graph (its sort "needs no gradient"): no gradient for u."""
    if isinstance(u, np.ndarray):
        return wasserstein_1d(u, v)
    return (torch.sort(u.detach()).values - torch.sort(v).values).abs().mean()


@parity.over(["torch"], ["float64"])
def test_bug_wasserstein_gradient_cut_by_the_sort(target: Target) -> None:
    # Away from ties and kinks the points nearby agree: a missing gradient fails there.
    u, v = np.array([0.25, 0.5]), np.array([0.0, 1.0])
    parity.assert_gradient_matches_reference(wasserstein_sorted_apart, target, (u, v))


def sparsemax_threshold_detached(x: Any) -> Any:
    """The bug: the threshold cut from the graph (it "is only an offset")."""
    if isinstance(x, np.ndarray):
        return _sparsemax_numpy(x)
    z = torch.sort(x, dim=-1, descending=True).values
    k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
    cumulative = torch.cumsum(z, dim=-1)
    size = (1 + k * z > cumulative).sum(dim=-1, keepdim=True)
    tau = (torch.gather(cumulative, -1, size - 1) - 1) / size.to(x.dtype)
    return torch.clamp(x - tau.detach(), min=0.0)


@parity.over(["torch"], ["float64"])
def test_bug_sparsemax_threshold_detached_beside_a_kink(target: Target) -> None:
    # At the kink [1, 0] any finite gradient passes; one step away, with the same support on
    # either side, the pieces are compared, and the missing path through the threshold fails.
    for x in ([1.0, 0.0], [1.0, 0.25]):
        parity.assert_gradient_matches_reference(sparsemax_threshold_detached, target, (np.array(x),))
