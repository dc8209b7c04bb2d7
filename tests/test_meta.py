"""opsdk.meta helpers, with concrete and with symbolic (dynamic) shapes."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

from opsdk import meta


def test_elementwise_broadcasts_and_promotes():
    x = torch.empty(4, 1, 3, dtype=torch.float16)
    y = torch.empty(5, 3, dtype=torch.float32)
    out = meta.elementwise(x, y)
    assert out.shape == (4, 5, 3) and out.dtype == torch.float32
    assert meta.elementwise(x, y, dtype=torch.bfloat16).dtype == torch.bfloat16


def test_elementwise_needs_a_tensor():
    with pytest.raises(ValueError):
        meta.elementwise()


def test_same_as_keeps_shape_device_and_takes_dtype():
    x = torch.empty(2, 3).t()
    out = meta.same_as(x, dtype=torch.int32)
    assert out.shape == (3, 2) and out.dtype == torch.int32 and out.is_contiguous()


def test_inplace_returns_nothing_and_refuses_growing_the_target():
    x, y = torch.empty(2, 3), torch.empty(3)
    assert meta.inplace(x, y) is None
    with pytest.raises(RuntimeError, match="does not fit"):
        meta.inplace(torch.empty(3), torch.empty(2, 3))


def test_helpers_work_with_symbolic_sizes():
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC])
    x = mode.from_tensor(torch.empty(4, 5), symbolic_context=ctx)
    y = mode.from_tensor(torch.empty(4, 5), symbolic_context=ctx)
    with mode:
        out = meta.elementwise(x, y)
        assert isinstance(out.shape[0], torch.SymInt)
        assert meta.inplace(x, y) is None
        assert isinstance(meta.same_as(x).shape[1], torch.SymInt)
