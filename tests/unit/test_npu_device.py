"""The emulated npu device: real shared memory, aten ops on CPU aliases, custom ops refused
without an npu kernel, and the pitfalls that used to crash the process refused or fixed.

Anything that could crash the interpreter runs in a subprocess, so a crash fails one
test instead of killing pytest.
"""

from __future__ import annotations

import copy
import sys

import pytest
import torch
import torch._dynamo.testing
from torch.utils._python_dispatch import TorchDispatchMode

from opsdk._runtime.npu import MissingNpuKernelError, NpuDeviceError, as_cpu, as_npu, emulator
from opsdk._runtime.npu import _fallback as npu_fallback

NPU = "npu"
CHECKS = ("test_schema", "test_faketensor", "test_aot_dispatch_static", "test_aot_dispatch_dynamic")

emulator.install()


def same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """One StorageImpl, as a view has with its base (not just the same address)."""
    return a.untyped_storage()._cdata == b.untyped_storage()._cdata


# --------------------------------------------------------------------------- install


def test_install_is_idempotent_and_registers_torch_npu():
    emulator.install()
    emulator.install()
    assert emulator.is_installed()
    assert torch._C._get_privateuse1_backend_name() == NPU
    assert torch.npu is emulator.npu_module() is sys.modules["torch.npu"]
    assert torch.npu.is_available() and torch.npu.device_count() == 1
    assert torch.npu.current_device() == 0
    torch.npu.set_device(0)
    torch.npu.synchronize()
    with pytest.raises(NpuDeviceError, match="npu:1 does not exist"):
        torch.npu.set_device(1)


# --------------------------------------------------------------------------- memory


def test_allocation_is_npu_memory_over_a_cpu_buffer():
    x = torch.empty(2, 3, device=NPU)
    assert x.device == torch.device("npu:0") and x.is_npu
    assert x.stride() == (3, 1) and x.untyped_storage().nbytes() == 24
    s = torch.empty_strided((2, 3), (1, 2), device=NPU, dtype=torch.float16)
    assert s.stride() == (1, 2) and s.dtype == torch.float16
    cl = torch.empty(1, 3, 4, 4, device=NPU, memory_format=torch.channels_last)
    assert cl.is_contiguous(memory_format=torch.channels_last)


def test_as_npu_shares_memory_both_ways():
    cpu = torch.zeros(4)
    npu = as_npu(cpu)
    assert npu.device.type == NPU and npu.data_ptr() == cpu.data_ptr()
    cpu[1] = 5.0
    npu[2] = 7.0
    assert cpu.tolist() == [0.0, 5.0, 7.0, 0.0]
    assert npu.cpu().tolist() == [0.0, 5.0, 7.0, 0.0]


def test_as_cpu_keeps_geometry_and_outlives_the_npu_tensor():
    base = torch.arange(12.0, device=NPU).view(3, 4)
    view = base.t()[1:]
    alias = as_cpu(view)
    assert alias.device.type == "cpu"
    assert (alias.size(), alias.stride(), alias.storage_offset()) == (
        view.size(),
        view.stride(),
        view.storage_offset(),
    )
    assert alias.data_ptr() == view.data_ptr()
    expected = view.cpu()
    del base, view
    torch.ones(1 << 20)  # reuse freed memory, if it had been freed
    torch.testing.assert_close(alias, expected)
    with pytest.raises(NpuDeviceError, match="expects an npu tensor"):
        as_cpu(torch.ones(2))


@pytest.mark.parametrize(
    "dtype",
    [
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.float64,
        torch.int8,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.float8_e4m3fn,
    ],
)
def test_round_trip_keeps_values_and_dtype(dtype):
    cpu = (torch.randn(3, 5) * 4).to(dtype)
    npu = cpu.to(NPU)
    assert npu.device.type == NPU and npu.dtype == dtype
    back = npu.cpu()
    assert back.dtype == dtype
    assert torch.equal(back.view(torch.uint8), cpu.view(torch.uint8))


def test_cross_device_copies():
    src = torch.randn(2, 3)
    dst = torch.zeros(2, 3, device=NPU)
    assert dst.copy_(src) is dst
    torch.testing.assert_close(dst.cpu(), src)
    back = torch.zeros(2, 3, dtype=torch.float64)
    back.copy_(dst)
    torch.testing.assert_close(back, src.double())
    wide = torch.zeros(4, 2, 3, device=NPU, dtype=torch.float16)
    wide.copy_(dst)  # broadcast and convert on the way
    torch.testing.assert_close(wide.cpu(), src.half().expand(4, 2, 3))
    torch.testing.assert_close(src.npu().cpu(), src)
    torch.testing.assert_close(dst.to("cpu", non_blocking=True), src)


def test_conj_and_neg_views_copy_without_recursing():
    z = torch.randn(4, dtype=torch.complex64)
    n = z.to(NPU)
    out = torch.empty(4, dtype=torch.complex64, device=NPU)
    out.copy_(n.conj())
    torch.testing.assert_close(out.cpu(), z.conj())
    torch.testing.assert_close(n.conj().cpu(), z.conj())
    torch.testing.assert_close(torch.neg(n.conj()).cpu(), -z.conj())
    torch.testing.assert_close((n * n.conj()).real.cpu(), (z * z.conj()).real)


# --------------------------------------------------------------------------- views

VIEWS = {
    "view": lambda t: t.view(4, 6),
    "reshape": lambda t: t.reshape(2, 12),
    "transpose": lambda t: t.t(),
    "slice": lambda t: t[1:, ::2],
    "select": lambda t: t[2],
    "unsqueeze_expand": lambda t: t[0].unsqueeze(0).expand(3, 6),
    "diagonal": lambda t: t.diagonal(),
    "unfold": lambda t: t[0].unfold(0, 2, 1),
    "as_strided": lambda t: t.as_strided((2, 2), (1, 6), 3),
    "view_dtype": lambda t: t.view(torch.int32),
    "flatten_narrow": lambda t: t.flatten().narrow(0, 5, 7),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_ops_alias_the_npu_storage(name):
    make = VIEWS[name]
    cpu = torch.randn(4, 6)
    npu = cpu.to(NPU)
    view = make(npu)
    expected = make(cpu)
    assert view.device.type == NPU and same_storage(view, npu)
    assert view._is_view() == expected._is_view()
    assert (view.size(), view.stride(), view.storage_offset()) == (
        expected.size(),
        expected.stride(),
        expected.storage_offset(),
    )
    torch.testing.assert_close(view.cpu(), expected)
    if view.dtype.is_floating_point and name != "unsqueeze_expand":
        view.mul_(3)
        expected.mul_(3)
        torch.testing.assert_close(npu.cpu(), cpu)


def test_multi_output_views_and_complex_views():
    cpu = torch.randn(4, 6)
    npu = cpu.to(NPU)
    for got, want in zip(npu.split(2, dim=1), cpu.split(2, dim=1), strict=True):
        assert same_storage(got, npu) and got.stride() == want.stride()
        torch.testing.assert_close(got.cpu(), want)
    rows = npu.unbind(0)
    rows[1].zero_()
    assert npu.cpu()[1].abs().sum() == 0
    z = torch.randn(3, dtype=torch.complex64)
    zn = z.to(NPU)
    real = torch.view_as_real(zn)
    assert same_storage(real, zn) and real.dtype == torch.float32
    torch.testing.assert_close(real.cpu(), torch.view_as_real(z))


@pytest.mark.parametrize(
    "op, args",
    [
        (torch.ops.aten.view.default, ([6, 4],)),
        (torch.ops.aten.transpose.int, (0, 1)),
        (torch.ops.aten.view.dtype, (torch.int32,)),
        (torch.ops.aten.split.Tensor, (2,)),
        (torch.ops.aten.unbind.int, ()),
    ],
    ids=lambda v: str(v) if isinstance(v, torch._ops.OpOverload) else "",
)
def test_the_fallback_itself_returns_views_of_npu_inputs(op, args):
    # Today's view ops reach npu as composites or direct kernels; the fallback's own
    # schema-driven path is what keeps a view op missing from those lists a view.
    x = torch.randn(4, 6, device=NPU)
    got = npu_fallback.fallback(op, x, *args)
    want = op(x.cpu(), *args)
    for g, w in zip(*(r if isinstance(r, list | tuple) else [r] for r in (got, want)), strict=True):
        assert g.device.type == NPU and same_storage(g, x)
        assert (g.size(), g.stride(), g.storage_offset()) == (
            w.size(),
            w.stride(),
            w.storage_offset(),
        )
        torch.testing.assert_close(g.cpu(), w)


def test_inplace_metadata_ops_restride_the_npu_tensor():
    npu = torch.randn(1, 5, device=NPU)
    npu.squeeze_(0)
    assert npu.shape == (5,)
    npu.unsqueeze_(1).t_()
    assert npu.shape == (1, 5)
    m = torch.arange(9.0, device=NPU).view(3, 3)
    m.transpose_(0, 1)
    assert m.stride() == (1, 3)
    torch.testing.assert_close(m.cpu(), torch.arange(9.0).view(3, 3).t())
    x = torch.randn(5, 5, 5)
    torch.testing.assert_close(torch.rot90(x.to(NPU), 1, [0, 1]).cpu(), torch.rot90(x, 1, [0, 1]))


# --------------------------------------------------------------------------- in place, out=


def test_inplace_on_non_contiguous_views_writes_through():
    cpu = torch.randn(4, 6)
    npu = cpu.to(NPU)
    for op in (
        lambda t: t.t().mul_(2),
        lambda t: t[:, 1::2].add_(1),
        lambda t: t.diagonal().zero_(),
        lambda t: t[1:3].clamp_(-0.1, 0.1),
    ):
        returned = op(npu)
        op(cpu)
        assert returned.device.type == NPU and same_storage(returned, npu)
        torch.testing.assert_close(npu.cpu(), cpu)
    same = npu.add_(npu)
    assert same is npu
    torch.testing.assert_close(npu.cpu(), cpu + cpu)


def test_out_variants_return_the_given_tensor_and_grow_it():
    a = torch.randn(3, 4)
    sized = torch.empty(3, 4, device=NPU)
    assert torch.mul(a.to(NPU), 2, out=sized) is sized
    torch.testing.assert_close(sized.cpu(), a * 2)
    empty = torch.empty(0, device=NPU)
    assert torch.add(a.to(NPU), 1, out=empty) is empty
    assert empty.shape == (3, 4)
    torch.testing.assert_close(empty.cpu(), a + 1)
    small = torch.zeros(2, device=NPU)
    with pytest.warns(UserWarning, match="was resized"):  # as on any device
        torch.sub(a.to(NPU), 1, out=small)
    torch.testing.assert_close(small.cpu(), a - 1)
    values, indices = torch.empty(0, device=NPU), torch.empty(0, dtype=torch.long, device=NPU)
    result = torch.max(a.to(NPU), 1, out=(values, indices))
    assert result[0] is values and result[1] is indices
    torch.testing.assert_close(indices.cpu(), a.argmax(1))


def test_resize_grows_keeps_data_and_set_shares_storage():
    x = torch.arange(4.0, device=NPU)
    x.resize_(2, 3)
    assert x.shape == (2, 3) and x.untyped_storage().nbytes() >= 24
    assert x.cpu().flatten()[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    x.resize_(2)
    assert x.cpu().tolist() == [0.0, 1.0]
    src = torch.arange(6.0, device=NPU)
    y = torch.empty(0, device=NPU)
    y.set_(src.untyped_storage(), 1, (2, 2), (1, 2))
    assert same_storage(y, src) and y.cpu().tolist() == [[1.0, 3.0], [2.0, 4.0]]
    y.set_(src)
    assert same_storage(y, src) and y.shape == (6,)
    y.set_()
    assert y.numel() == 0 and y.device.type == NPU


# --------------------------------------------------------------------------- everyday use


def test_arithmetic_broadcasting_and_type_promotion_match_cpu():
    cases = [
        (torch.randn(2, 1, 3), torch.randn(4, 1)),
        (torch.arange(6, dtype=torch.int8), 1000),
        (torch.arange(6), 2.5),
        (torch.tensor([True, False]), 3),
        (torch.randn(3).half(), torch.tensor(2.0, dtype=torch.float64)),
        (torch.randn(3).bfloat16(), torch.randn(3).bfloat16()),
    ]
    for a, b in cases:
        bn = b.to(NPU) if isinstance(b, torch.Tensor) and b.dim() else b
        for fn in (torch.add, torch.mul, torch.remainder, torch.maximum):
            if fn is torch.maximum and not isinstance(b, torch.Tensor):
                continue
            want = fn(a, b)
            got = fn(a.to(NPU), bn)
            assert got.device.type == NPU and got.dtype == want.dtype
            torch.testing.assert_close(got.cpu(), want, equal_nan=True)


def test_zero_dim_empty_item_and_printing():
    s = torch.tensor(2.5, device=NPU)
    assert s.item() == 2.5 and s.dim() == 0 and float(s * 2) == 5.0
    e = torch.empty(0, 3, device=NPU)
    assert e.sum(0).cpu().tolist() == [0.0, 0.0, 0.0]
    for t in (torch.randn(3, 4), torch.randn(2, 2).half(), torch.arange(5), torch.tensor([True])):
        n = t.to(NPU)
        assert "device='npu:0'" in repr(n)
        assert repr(n).replace(", device='npu:0'", "") == repr(t)
    assert repr(torch.randn(4, 4).to(NPU)[:, ::2]).endswith("device='npu:0')")


def test_random_is_seeded_by_torch_manual_seed():
    torch.manual_seed(3)
    a = torch.randn(5, device=NPU)
    torch.manual_seed(3)
    b = torch.randn(5, device=NPU)
    assert torch.equal(a.cpu(), b.cpu())
    state = torch.npu.get_rng_state()
    c = torch.rand(4, device=NPU)
    torch.npu.set_rng_state(state)
    assert torch.equal(c.cpu(), torch.rand(4, device=NPU).cpu())


def test_a_cpu_tensor_mixed_into_an_npu_op_is_refused_like_a_device():
    x = torch.randn(3, device=NPU)
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.randn(3)
    torch.testing.assert_close((x + torch.tensor(1.0)).cpu(), x.cpu() + 1)
    idx = torch.tensor([2, 0])
    torch.testing.assert_close(x[idx].cpu(), x.cpu()[idx])


def test_autograd_and_nn_modules_match_cpu():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    conv_npu = copy.deepcopy(conv).to(NPU)
    x = torch.randn(2, 3, 6, 6, requires_grad=True)
    xn = x.detach().to(NPU).requires_grad_()
    torch.nn.functional.layer_norm(conv(x), (6,)).sum().backward()
    torch.nn.functional.layer_norm(conv_npu(xn), (6,)).sum().backward()
    assert xn.grad.device.type == NPU
    torch.testing.assert_close(xn.grad.cpu(), x.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(conv_npu.weight.grad.cpu(), conv.weight.grad, atol=1e-4, rtol=1e-4)


def test_dispatch_modes_see_the_npu_op_not_its_cpu_implementation():
    class Log(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(3, device=NPU)
    with Log() as outer, Log() as inner:
        y = x * 2
    assert outer.ops == inner.ops == ["aten.mul.Tensor"]
    assert y.device.type == NPU


# --------------------------------------------------------------------------- custom ops

NS = "opsdk_npu_device_test"


@torch.library.custom_op(f"{NS}::scale_add", mutates_args=(), device_types=NPU)
def scale_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    assert x.device.type == NPU
    return x * 2 + y


@scale_add.register_kernel("cpu")
def _scale_add_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * 100 + y  # deliberately different: proves which kernel ran


@scale_add.register_fake
def _scale_add_fake(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op(f"{NS}::accumulate_", mutates_args={"x"}, device_types=NPU)
def accumulate_(x: torch.Tensor, y: torch.Tensor) -> None:
    x.add_(y)


@accumulate_.register_fake
def _accumulate_fake(x: torch.Tensor, y: torch.Tensor) -> None:
    return None


@torch.library.custom_op(f"{NS}::cpu_only", mutates_args=(), device_types="cpu")
def cpu_only(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@cpu_only.register_fake
def _cpu_only_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


_lib = torch.library.Library(NS, "FRAGMENT")
_lib.define("shift(Tensor x, float s) -> Tensor")
_lib.impl("shift", lambda x, s: x + s, "PrivateUse1")
_lib.impl("shift", lambda x, s: x - s, "CPU")
_lib.impl("shift", lambda x, s: torch.empty_like(x), "Meta")
_lib.define("shift_cpu_only(Tensor x) -> Tensor")
_lib.impl("shift_cpu_only", lambda x: x + 1, "CPU")


def test_the_npu_kernel_runs_on_npu_tensors_not_the_cpu_one():
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(scale_add(x.to(NPU), y.to(NPU)).cpu(), x * 2 + y)
    torch.testing.assert_close(scale_add(x, y), x * 100 + y)
    shift = getattr(torch.ops, NS).shift
    torch.testing.assert_close(shift(x.to(NPU), 1.5).cpu(), x + 1.5)
    torch.testing.assert_close(shift(x, 1.5), x - 1.5)
    a = x.to(NPU)
    accumulate_(a, y.to(NPU))
    torch.testing.assert_close(a.cpu(), x + y)


@pytest.mark.parametrize("op_name", ["cpu_only", "shift_cpu_only"])
def test_a_custom_op_without_an_npu_kernel_is_refused(op_name):
    op = getattr(getattr(torch.ops, NS), op_name)
    with pytest.raises(MissingNpuKernelError) as err:
        op(torch.randn(3, device=NPU))
    message = str(err.value)
    assert f"{NS}::{op_name}" in message
    assert "register_kernel" in message and '"npu"' in message and "PrivateUse1" in message
    assert isinstance(err.value, NotImplementedError)
    torch.testing.assert_close(op(torch.zeros(2)), torch.ones(2))


@pytest.mark.slow
@pytest.mark.parametrize(
    "op, make_args",
    [
        (scale_add, lambda: (torch.randn(3, 4, device=NPU), torch.randn(3, 4, device=NPU))),
        (accumulate_, lambda: (torch.randn(3, 4, device=NPU), torch.randn(3, 4, device=NPU))),
        (
            getattr(torch.ops, NS).shift.default,
            lambda: (torch.randn(3, 4, device=NPU), 2.0),
        ),
    ],
    ids=["functional", "mutating", "library_def"],
)
def test_opcheck_passes_on_npu(op, make_args):
    torch.library.opcheck(op, make_args(), test_utils=CHECKS)


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_aot_eager_runs_custom_ops_on_npu(dynamic):
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")

    def fn(a, b):
        accumulate_(a, b)
        return scale_add(a, b).sin() + 1

    compiled = torch.compile(fn, backend=counter, fullgraph=True, dynamic=dynamic)
    for shape in [(3, 4), (5, 2)] if dynamic else [(3, 4), (3, 4)]:
        a, b = torch.randn(shape), torch.randn(shape)
        an, bn = a.to(NPU), b.to(NPU)
        out = compiled(an, bn)
        assert out.device.type == NPU
        torch.testing.assert_close(an.cpu(), a + b)  # the mutation reached the caller's tensor
        torch.testing.assert_close(out.cpu(), ((a + b) * 2 + b).sin() + 1)
    assert counter.frame_count == 1


@pytest.mark.slow
def test_aot_eager_refuses_a_custom_op_without_an_npu_kernel():
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: cpu_only(x) * 2, backend="aot_eager", fullgraph=True)
    with pytest.raises(MissingNpuKernelError):
        compiled(torch.randn(3, device=NPU))


# --------------------------------------------------------------------------- pitfalls (subprocess)
