"""The one "output, then every input after the call" comparison all columns use."""

import pytest
import torch

from opsdk.harness.cell import CellFailure
from opsdk.harness.core.compare import assert_same_call
from opsdk.harness.variants.cases import Call


def _check(actual, called, **kwargs):
    expected, reference = torch.ones(2), Call([torch.zeros(2)], {"y": torch.zeros(1)})
    assert_same_call(
        3, actual, expected, called, reference, layer="replay", hint="H", writes_hint="W",
        tolerances=None, **kwargs,
    )  # fmt: skip


def test_equal_output_and_inputs_pass():
    _check(torch.ones(2), Call([torch.zeros(2)], {"y": torch.zeros(1)}))


def test_the_output_is_compared_first():
    with pytest.raises(CellFailure, match=r"^call 3: output: values differ .*; H$") as failed:
        _check(torch.zeros(2), Call([torch.ones(2)], {"y": torch.zeros(1)}))
    assert failed.value.layer == "replay"


@pytest.mark.parametrize("after", [None, "the compiled call"])
def test_a_lost_or_extra_input_write_names_the_call_and_the_writes_hint(after):
    called = Call([torch.zeros(2)], {"y": torch.ones(1)})  # a keyword input was written
    with pytest.raises(CellFailure) as failed:
        _check(torch.ones(2), called, **({"after": after} if after else {}))
    message = str(failed.value)
    assert message.startswith(f"call 3: inputs after {after or 'the call'} (in-place writes)[1]")
    assert message.endswith("; W")
