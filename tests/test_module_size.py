"""Test code stays readable: no module of the template's tests or of a generated repo's tests
(their helpers, such as the parity harness, included) is longer than 600 lines."""

from __future__ import annotations

from tests.render import ROOT

# One idea per module, however long it takes (the harness's room: rounding, its emulations and
# its runs): a cap low enough to split an idea across modules costs more to read than it saves.
MAX_LINES = 600


def test_no_test_module_is_longer_than_600_lines() -> None:
    modules = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "template" / "tests").rglob("*.py")]
    lengths = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines()) for path in modules
    }
    assert len(lengths) > 40  # both folders were found
    assert {name: count for name, count in lengths.items() if count > MAX_LINES} == {}
