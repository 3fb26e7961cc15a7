"""Bugs planted in the algorithms scaffolded with `parity new` and then written (tests/scaffolded.py),
in both styles: one port per backend (attention, logsumexp), and one shared Array API
implementation (log_mean_exp). test_planted_bugs.py plants them beside the worked examples' bugs.
"""

from __future__ import annotations

from tests.planted import Bug

#: In the first style (one port per backend): a parameter, the stabilisation, a later operand's gradient.
SCAFFOLDED_BUGS = [
    Bug(
        "scaffolded-ignored-parameter",  # scale taken as 1/sqrt(d) whatever the caller passes
        "attention",
        "pytorch",
        "scores = q @ k.transpose(-1, -2) * (d**-0.5 if scale is None else scale)",
        "scores = q @ k.transpose(-1, -2) * d**-0.5",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-ignored-axis",
        "logsumexp",
        "pytorch",
        "(x - m).exp().sum(dim=axis, keepdim=True)",
        "(x - m).exp().sum(dim=-1, keepdim=True)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-missing-stabilisation",
        "attention",
        "pytorch",
        "scores = scores - scores.amax(dim=-1, keepdim=True)",
        "scores = scores",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-detached-operand",  # v's gradient cut: right values, q and k still learn
        "attention",
        "pytorch",
        "return weights / weights.sum(dim=-1, keepdim=True) @ v",
        "return weights / weights.sum(dim=-1, keepdim=True) @ v.detach()",
        caught_by="test_gradient_matches_reference",
    ),
    Bug(
        "scaffolded-silent-downcast",
        "attention",
        "pytorch",
        "weights = scores.exp()",
        "weights = scores.float().exp()",
        caught_by="test_matches_reference",
    ),
]
#: The same in JAX (the split layout with JAX).
SCAFFOLDED_JAX_BUGS = [
    Bug(
        "scaffolded-jax-ignored-parameter",
        "attention",
        "jax",
        "scores = q @ jnp.swapaxes(k, -1, -2) * (d**-0.5 if scale is None else scale)",
        "scores = q @ jnp.swapaxes(k, -1, -2) * d**-0.5",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-jax-ignored-axis",
        "logsumexp",
        "jax",
        "jnp.sum(jnp.exp(x - m), axis=axis, keepdims=True)",
        "jnp.sum(jnp.exp(x - m), axis=-1, keepdims=True)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-jax-missing-stabilisation",
        "attention",
        "jax",
        "scores = scores - jnp.max(scores, axis=-1, keepdims=True)",
        "scores = scores",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-jax-detached-operand",
        "attention",
        "jax",
        "return weights / jnp.sum(weights, axis=-1, keepdims=True) @ v",
        "import jax\n\n    return weights / jnp.sum(weights, axis=-1, keepdims=True) @ jax.lax.stop_gradient(v)",
        caught_by="test_gradient_matches_reference",
    ),
    Bug(
        "scaffolded-jax-silent-downcast",
        "attention",
        "jax",
        "weights = jnp.exp(scores)",
        "weights = jnp.exp(scores).astype(jnp.float32)",
        caught_by="test_matches_reference",
    ),
]

#: Bugs in the second style (`parity new --array-api`): the shared implementation of
#: the scaffolded `log_mean_exp`, run on every Array API library (tests/scaffolded.py).
ARRAY_API_BUGS = [
    Bug(
        "scaffolded-array-api-wrong-axis",
        "log_mean_exp",
        "array_api",
        "xp.mean(xp.exp(x - m), axis=axis, keepdims=True)",
        "xp.mean(xp.exp(x - m), axis=-1, keepdims=True)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-array-api-missing-stabilisation",  # exp overflows for large values
        "log_mean_exp",
        "array_api",
        "m = xp.max(x, axis=axis, keepdims=True)",
        "m = xp.zeros_like(xp.max(x, axis=axis, keepdims=True))",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-array-api-numpy-call",  # NumPy's exp: not the standard, not every library's
        "log_mean_exp",
        "array_api",
        "xp.mean(xp.exp(x - m), axis=axis, keepdims=True)",
        "xp.mean(np.exp(x - m), axis=axis, keepdims=True)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-array-api-silent-downcast",
        "log_mean_exp",
        "array_api",
        "return xp.squeeze(xp.log(mean) + m, axis=axis)",
        "return xp.astype(xp.squeeze(xp.log(mean) + m, axis=axis), xp.float32)",
        caught_by="test_matches_reference",
        says="expected float64",
    ),
]
