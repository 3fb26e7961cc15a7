"""The training example learns: softmax regression's loss goes down."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import parity
from parity import Target

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target", parity.targets(["torch"], ["float32"]), ids=str)
def test_loss_goes_down(target: Target, capsys: pytest.CaptureFixture[str]) -> None:
    losses = load_example().train(epochs=2, device=target.device, seed=0, samples=512)
    assert len(losses) == 3  # before training, then after each epoch
    assert losses[-1] < 0.5 * losses[0]
    assert "epoch   2/2" in capsys.readouterr().out
