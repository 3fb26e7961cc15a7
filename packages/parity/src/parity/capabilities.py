"""What a port can do, apart from what it computes: a capability it lacks is not a wrong value.

A port may be right and still refuse a transform: a custom ``autograd.Function`` without a
``jvp`` refuses forward mode, a classic-style Function (``forward(ctx, ...)``) refuses
``torch.func.vmap``, a custom operator whose backward has no backward of its own refuses a
second derivative, a graph break refuses ``torch.compile(fullgraph=True)``. Where a test meets
such a refusal, the library's own error says so; the test is skipped with that message, what to
declare and how to add the capability, unless the test module's ``SPEC`` requires it
(``parity.Spec(..., requires={"forward_mode"})``): then its absence fails. A wrong value always
fails, whatever the SPEC declares.
"""

from __future__ import annotations

import pytest

from .core import declaration, note_capability

#: Each capability a Spec may require: what it is, the library's refusals that say it is absent
#: (a phrase of the message, lower case), and how to add it.
CAPABILITIES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "second_derivative": (
        "a second derivative (double backward)",
        (
            "no autograd formula was registered",
            "once_differentiable",
            "does not support double backward",
            "derivative for",  # "the derivative for '_cdist_backward' is not implemented"
        ),
        (
            "write the backward in differentiable operations of the saved tensors; for a custom "
            "operator (torch.library.custom_op), register an autograd formula for its backward "
            "operator too (register_autograd), or compute the backward with PyTorch operations"
        ),
    ),
    "forward_mode": (
        "forward-mode AD (torch.func.jvp, jax.jvp)",
        (
            "implement the jvp function",
            "setup_context staticmethod",
            "forward ad",
            "forward-mode",
            "custom_vjp",
        ),
        (
            "give the autograd.Function a jvp staticmethod (the output's tangent from the inputs' "
            "tangents; ctx.save_for_forward keeps what it needs) and, for torch.func, the new "
            "style (a setup_context staticmethod); a custom operator's forward mode comes from "
            "such a Function around it; or compose the port of differentiable operations"
        ),
    ),
    "vmap": (
        "torch.func.vmap",
        # A classic-style Function; a new-style one without generate_vmap_rule or a vmap method.
        ("setup_context staticmethod", "does not have vmap support", "vmap rule", "batching rule"),
        (
            "write the autograd.Function in the new style: forward without ctx, a "
            "setup_context(ctx, inputs, output) staticmethod and generate_vmap_rule = True; for "
            "a custom operator, torch.library.register_vmap"
        ),
    ),
    "one_graph": (
        "compiling to one graph (torch.compile(fullgraph=True))",
        (),  # by the error's type: `lacks`
        (
            "remove the graph break the message names (.item(), print, a branch on a tensor's "
            "value, a call torch.compile cannot trace), or wrap the kernel as a custom operator "
            "(torch.library.custom_op)"
        ),
    ),
}


def lacks(capability: str, error: BaseException) -> bool:
    """Whether `error` is the library's refusal of `capability` (not a failure of the port's
    own code): its message names the missing capability; for ``one_graph``, any error of
    torch._dynamo's ``Unsupported`` family (a graph break), or its refusal to guard on a
    data-dependent expression (a branch on a tensor's value)."""
    if capability == "one_graph":  # a graph break, or a guard on a tensor's value
        kinds = [kind.__name__ for kind in type(error).__mro__]
        return "Unsupported" in kinds or ("UserError" in kinds and "data-dependent" in str(error))
    _, phrases, _ = CAPABILITIES[capability]
    message = str(error).lower()
    return any(phrase in message for phrase in phrases)


def report_absent(capability: str, what: str, error: BaseException) -> None:
    """Skip the test: `what` lacks `capability`, as `error` says; or fail it, where the test
    module's ``SPEC`` requires that capability."""
    __tracebackhide__ = True
    name, _, how = CAPABILITIES[capability]
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    required = capability in (declaration("requires") or ())
    note_capability(capability, absent=f"{type(error).__name__}: {reason}")
    message = (
        f"{what}: {name} is absent ({type(error).__name__}: {reason}). "
        + (
            f"SPEC requires {capability!r}. "
            if required
            else (
                "A capability, not a wrong value: where the port must have it, declare "
                f'SPEC = parity.Spec(..., requires={{"{capability}"}}) and this test fails. '
            )
        )
        + f"To add it: {how}."
    )
    if required:
        raise pytest.fail.Exception(message) from error
    pytest.skip(message)
