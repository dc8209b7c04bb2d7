"""``opsdk audit``: torch_npu's library read from the wheel, each check against a planted
defect and its correct twin, and the CLI's reports and exit codes."""

from __future__ import annotations

import pytest

from opsdk.offline import locator

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel():
    from opsdk.audit import torch_npu

    try:
        locator.torch_npu_file(torch_npu.SCHEMAS)
    except locator.TorchairUnavailable as err:
        pytest.skip(f"the torch-npu wheel cannot be fetched: {err}")
    return torch_npu


def test_the_wheel_converts_142_overloads_each_with_schema_and_meta(wheel):
    converted = wheel.converted()
    names = {c.qualname for c in converted}
    assert len(names) == len(converted) == 142
    assert "npu::npu_grouped_matmul.List" in names  # registered by a call, not a decorator
    for c in converted:
        name = c.name if c.overload == "default" else f"{c.name}.{c.overload}"
        assert wheel.schema(name), name
        assert wheel.meta_line(c.name), c.name
    assert ("npu_add_rms_norm_v2_functional", "npu_add_rms_norm_v2", (0, 1)) in [
        p[:3] for p in wheel.reinplace_pairs()
    ]
