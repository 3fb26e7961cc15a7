"""Algorithms scaffolded with `parity new` in a generated repo, then written as a
researcher would: what the scaffold's and the planted-bug tests share.

`attention(q, k, v, scale)` has three operands with related shapes and an optional parameter;
`logsumexp(x, axis)` one operand and an axis. In the second style (--array-api: the reference and
one shared implementation), `log_mean_exp(x, axis)`, and `huber(prediction, target, delta)`: two
operands of one shape (the scaffold's default), 0-d included, and a float parameter. Their
implementations replace the stubs' bodies; attention's operands are scaffolded with their axes
(q:...ld k:...sd v:...se).

`CONSTRAINED` holds algorithms whose inputs the `Spec` constrains (tests/test_constraints.py):
`nll(logits, labels)`, integer labels below the number of classes; `rotary(x)`, rotary position
embeddings of pairs of features (an even last axis); `group_sum(x, groups)`, sums over groups of
channels (a multiple of the parameter `groups`).
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

from tests.render import TOOLS, Combination, run

PACKAGE = "my_research_project"  # from the default answers
COMMANDS = {
    "attention": ["attention", "q:...ld", "k:...sd", "v:...se", "--param", "scale: float | None = None"],
    "logsumexp": ["logsumexp", "x", "--param", "axis: int = -1"],
    "huber": ["huber", "prediction", "target", "--param", "delta: float = 1.0", "--array-api"],
    "log_mean_exp": ["log_mean_exp", "x", "--param", "axis: int = -1", "--array-api"],
}
CONSTRAINED = {
    "nll": ["nll", "logits:...c", "labels:...:int<c"],
    "rotary": ["rotary", "x:...ld", "--size", "d: even"],
    "group_sum": ["group_sum", "x:...c", "--param", "groups: int = 2", "--size", "c: multiple of groups"],
}
BACKENDS = ("numpy", "pytorch", "jax")
IMPLEMENTATIONS = {
    "attention": {
        "numpy": """d = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) * (d**-0.5 if scale is None else scale)
    scores = scores - scores.max(axis=-1, keepdims=True)  # every exponent <= 0
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True) @ v""",
        "pytorch": """d = q.shape[-1]
    scores = q @ k.transpose(-1, -2) * (d**-0.5 if scale is None else scale)
    scores = scores - scores.amax(dim=-1, keepdim=True)
    weights = scores.exp()
    return weights / weights.sum(dim=-1, keepdim=True) @ v""",
        "jax": """import jax.numpy as jnp

    d = q.shape[-1]
    scores = q @ jnp.swapaxes(k, -1, -2) * (d**-0.5 if scale is None else scale)
    scores = scores - jnp.max(scores, axis=-1, keepdims=True)
    weights = jnp.exp(scores)
    return weights / jnp.sum(weights, axis=-1, keepdims=True) @ v""",
    },
    "logsumexp": {
        "numpy": """m = x.max(axis=axis, keepdims=True)
    total = np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
    return np.squeeze(total, axis=axis)""",
        "pytorch": """m = x.amax(dim=axis, keepdim=True)
    return ((x - m).exp().sum(dim=axis, keepdim=True).log() + m).squeeze(axis)""",
        "jax": """import jax.numpy as jnp

    m = jnp.max(x, axis=axis, keepdims=True)
    return jnp.squeeze(jnp.log(jnp.sum(jnp.exp(x - m), axis=axis, keepdims=True)) + m, axis)""",
    },
    "log_mean_exp": {
        "numpy": """m = x.max(axis=axis, keepdims=True)  # every exponent <= 0
    mean = np.exp(x - m).mean(axis=axis, keepdims=True)
    return np.squeeze(np.log(mean) + m, axis=axis)""",
        "array_api": """xp = array_namespace(x)
    m = xp.max(x, axis=axis, keepdims=True)
    mean = xp.mean(xp.exp(x - m), axis=axis, keepdims=True)
    return xp.squeeze(xp.log(mean) + m, axis=axis)""",
    },
    "nll": {
        "numpy": """m = logits.max(axis=-1, keepdims=True, initial=-np.inf)  # every exponent <= 0
    log_probabilities = logits - m - np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probabilities, labels[..., None], axis=-1)[..., 0]
    return np.asarray(-picked.mean())""",
        "pytorch": """log_probabilities = torch.log_softmax(logits, dim=-1)
    return -torch.gather(log_probabilities, -1, labels.unsqueeze(-1)).mean()""",
        "jax": """import jax
    import jax.numpy as jnp

    log_probabilities = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(log_probabilities, labels[..., None], axis=-1))""",
    },
    "rotary": {
        "numpy": """length, d = x.shape[-2:]
    frequencies = 10000.0 ** (-np.arange(0, d, 2) / d)  # one per pair of features
    angles = np.arange(length)[:, None] * frequencies  # position times frequency
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = np.empty_like(x)
    rotated[..., 0::2] = even * np.cos(angles) - odd * np.sin(angles)
    rotated[..., 1::2] = even * np.sin(angles) + odd * np.cos(angles)
    return rotated""",
        "pytorch": """length, d = x.shape[-2:]
    wide = torch.promote_types(x.dtype, torch.float32)  # the angles in float32 at least
    frequencies = 10000.0 ** (-torch.arange(0, d, 2, dtype=wide, device=x.device) / d)
    angles = torch.arange(length, dtype=wide, device=x.device)[:, None] * frequencies
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)""",
        "jax": """import jax.numpy as jnp

    length, d = x.shape[-2:]
    wide = jnp.promote_types(x.dtype, jnp.float32)
    frequencies = 10000.0 ** (-jnp.arange(0, d, 2, dtype=wide) / d)
    angles = jnp.arange(length, dtype=wide)[:, None] * frequencies
    cos, sin = jnp.cos(angles).astype(x.dtype), jnp.sin(angles).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return jnp.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1).reshape(x.shape)""",
    },
    "group_sum": {
        "numpy": """grouped = x.reshape(*x.shape[:-1], groups, x.shape[-1] // groups)
    return grouped.sum(axis=-1)""",
        "pytorch": """return x.reshape(*x.shape[:-1], groups, x.shape[-1] // groups).sum(dim=-1)""",
        "jax": """return x.reshape(*x.shape[:-1], groups, x.shape[-1] // groups).sum(axis=-1)""",
    },
    "huber": {
        "numpy": """residual = np.abs(prediction - target)
    losses = np.where(residual <= delta, 0.5 * residual**2, delta * (residual - 0.5 * delta))
    return np.asarray(losses.mean())  # an array, as every backend returns, not a NumPy scalar""",
        "array_api": """xp = array_namespace(prediction, target)
    residual = xp.abs(prediction - target)
    losses = xp.where(residual <= delta, 0.5 * residual**2, delta * (residual - 0.5 * delta))
    return xp.mean(losses)""",
    },
}


def scaffold(repo: Path, algorithm: str) -> subprocess.CompletedProcess[str]:
    command = {**COMMANDS, **CONSTRAINED}[algorithm]
    return run([*TOOLS, "new", *command], cwd=repo)


def source(repo: Path, combination: Combination, algorithm: str, backend: str) -> Path:
    """The file that holds `algorithm`'s implementation for `backend`; for "triton", its kernels."""
    if backend == "triton":
        if combination.layout == "single":
            return repo / "src" / PACKAGE / f"_{algorithm}_triton_kernels.py"
        return repo / "src" / PACKAGE / algorithm / "_triton_kernels.py"
    if combination.layout == "single":
        return repo / "src" / PACKAGE / f"{algorithm}.py"
    return repo / "src" / PACKAGE / algorithm / f"{backend}_impl.py"


def function_named(text: str, name: str) -> ast.FunctionDef:
    """The definition of function `name` in the module source `text` (once there)."""
    (node,) = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef) and node.name == name]
    return node


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not once in {path}:\n{text}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def write_body(path: Path, function: str, body: str) -> None:
    """`function`'s statements after its docstring, in the file `path`, replaced by `body` (its
    lines indented by 4), as a researcher writes a stub."""
    text = path.read_text(encoding="utf-8")
    node = function_named(text, function)
    lines = text.splitlines()
    start = node.body[1].lineno - 1  # after the stub's docstring
    path.write_text("\n".join([*lines[:start], body, *lines[node.end_lineno :]]) + "\n", encoding="utf-8")


def implement(repo: Path, combination: Combination, algorithm: str, backends: tuple[str, ...] | None = None) -> None:
    """Write the stubs of a scaffolded `algorithm` for `backends` (default: all it has, those of
    the combination, or the reference and the shared implementation)."""
    shared = "array_api" in IMPLEMENTATIONS[algorithm]
    has = ("numpy", "array_api") if shared else BACKENDS[: 3 if combination.jax else 2]
    for backend in [backend for backend in has if backends is None or backend in backends]:
        body = "    " + IMPLEMENTATIONS[algorithm][backend]
        write_body(source(repo, combination, algorithm, backend), f"_{algorithm}_{backend}", body)
