"""The same operands laid out as a model hands them to a port: a transposed view, a stepped slice
at a storage offset, a broadcast (stride 0). PyTorch's tensors only: JAX's arrays have no strides,
and NumPy's ports are references in another dtype.

A port that flattens with ``x.view(-1, n)`` raises on a transposed view; a Triton wrapper that
hands its kernel ``x.reshape(-1, n)`` without ``.contiguous()`` reads the wrong elements of one,
since a kernel that indexes ``row * n + lane`` assumes rows laid end to end. Contiguous operands,
all that the drawn inputs give, show neither.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Layout:
    """A call's operands, the same values laid out another way."""

    name: str  # for messages: "a transposed view of its last two axes", ...
    arguments: list[Any]
    described: str  # each operand laid out so: its name, shape, strides and storage offset


def _transposed(tensor: torch.Tensor) -> torch.Tensor | None:
    """`tensor` stored with its last two axes swapped: the view ``x.T`` of a contiguous ``x.T``
    (None where those axes do not both have two elements or more: no other layout then)."""
    if tensor.ndim < 2 or min(tensor.shape[-2:]) < 2:
        return None
    return tensor.transpose(-1, -2).contiguous().transpose(-1, -2)


def _stepped(tensor: torch.Tensor) -> torch.Tensor | None:
    """`tensor` as every other element of a buffer twice as long along its last axis, from the
    second on: a step of 2 and a storage offset of 1 (a 0-d tensor: the second element of two).
    The elements between hold NaN (0 for integers), which a port reading past its strides meets."""
    if tensor.numel() == 0:
        return None
    floating = tensor.is_floating_point() or tensor.is_complex()
    shape = (*tensor.shape[:-1], 2 * tensor.shape[-1]) if tensor.ndim else (2,)
    options: dict[str, Any] = {"dtype": tensor.dtype, "device": tensor.device}
    if floating:
        buffer = torch.full(shape, float("nan"), **options)
    else:
        buffer = torch.zeros(shape, **options)
    view = buffer[..., 1::2] if tensor.ndim else buffer[1]
    view.copy_(tensor)
    return view


def _repeats(tensor: torch.Tensor, axis: int) -> bool:
    """Whether every slice of `tensor` along `axis` equals the first, bit for bit (signed zeros
    included: ``angle(-0.0)`` is not ``angle(0.0)``)."""
    first = tensor.narrow(axis, 0, 1).expand_as(tensor)
    if not torch.equal(first, tensor):
        return False
    if not tensor.is_floating_point():
        return True
    return torch.equal(torch.signbit(first), torch.signbit(tensor))


def _expanded(tensor: torch.Tensor) -> torch.Tensor | None:
    """`tensor` broadcast by ``expand`` (stride 0) along each axis where its values repeat, from
    one slice of its own storage (None where no axis of two elements or more repeats)."""
    axes = [axis for axis, size in enumerate(tensor.shape) if size > 1 and _repeats(tensor, axis)]
    if not axes:
        return None
    base = tensor
    for axis in axes:
        base = base.narrow(axis, 0, 1)
    return base.clone().expand(tensor.shape)


#: Each layout: how it is named in messages, and how a tensor is laid out so (None: it cannot be).
LAYOUTS: tuple[tuple[str, Callable[[torch.Tensor], torch.Tensor | None]], ...] = (
    ("a transposed view of its last two axes", _transposed),
    ("a slice with a step of 2 of a larger buffer, at a storage offset", _stepped),
    ("broadcast by expand (stride 0) along the axes where its values repeat", _expanded),
)


def _describe(name: str, tensor: torch.Tensor) -> str:
    return (
        f"{name} (shape {tuple(tensor.shape)}, strides {tensor.stride()}, storage offset "
        f"{tensor.storage_offset()})"
    )


def torch_layouts(arguments: Sequence[Any], names: Sequence[str]) -> list[Layout]:
    """The layouts (`LAYOUTS`) in which some tensor of `arguments` can be laid out: each with
    every tensor that can be laid out so, the other arguments as they are; `names`: the arguments'
    names, for messages."""
    found = []
    for layout, lay_out in LAYOUTS:
        changed: list[Any] = []
        described = []
        for name, argument in zip(names, arguments, strict=True):
            moved = lay_out(argument.detach()) if isinstance(argument, torch.Tensor) else None
            changed.append(argument if moved is None else moved)
            if moved is not None:
                described.append(_describe(name, moved))
        if described:
            found.append(Layout(layout, changed, "; ".join(described)))
    return found
