"""The boxed fallback: an aten op runs on CPU aliases of its npu arguments; any other
op is refused, since a custom op needs an npu kernel of its own as on a real NPU."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._ops import OpOverload
from torch.utils._python_dispatch import _disable_current_modes

from opsdk._runtime.npu._memory import (
    CPU,
    CPU_KEY,
    DEVICE,
    KDL_EXT_DEV,
    SET,
    aliases,
    check_index,
    fresh,
    relabelled,
    view_of,
)
from opsdk.errors import OpFault

aten = torch.ops.aten

generator = torch.Generator()  # npu random ops draw from this, seeded by torch.manual_seed


class MissingNpuKernelError(OpFault, NotImplementedError):
    """A non-aten op reached the npu device without an npu kernel of its own."""


_TENSOR, _TENSORS, _STORAGE, _DEVICE, _GENERATOR = range(5)
_FRESH, _VIEW, _WRITE = range(3)
# Ops that take CPU index tensors next to device tensors on real devices too.
_MIXED_DEVICE_OPS = frozenset({"index", "index_put", "index_put_", "_index_put_impl_"})


def _kind(t: Any) -> int | None:
    if isinstance(t, torch.OptionalType):
        t = t.getElementType()
    if isinstance(t, torch.TensorType):
        return _TENSOR
    if isinstance(t, torch.ListType):
        elem = t.getElementType()
        if isinstance(elem, torch.OptionalType):
            elem = elem.getElementType()
        return _TENSORS if isinstance(elem, torch.TensorType) else None
    return {"Storage": _STORAGE, "Device": _DEVICE, "Generator": _GENERATOR}.get(str(t))


def _missing_kernel(op: OpOverload) -> MissingNpuKernelError:
    qualname = op._schema.name
    ns, _, name = qualname.partition("::")
    return MissingNpuKernelError(
        f"{op._schema.name}.{op._overloadname} has no '{DEVICE}' kernel. The emulated "
        f"{DEVICE} device runs only aten ops in place of one, never a custom op's CPU kernel. "
        f'Register an {DEVICE} kernel: torch.library.register_kernel("{qualname}", '
        f'"{DEVICE}", fn), @torch.library.custom_op(..., device_types="{DEVICE}"), or '
        f'torch.library.Library("{ns}", "IMPL").impl("{name}", fn, "PrivateUse1").'
    )


class _Plan:
    """How one aten overload runs on CPU aliases; analysed once per overload."""

    def __init__(self, op: OpOverload) -> None:
        schema = op._schema
        self.op = op
        self.call = op._op  # the overload's C++ entry point, minus OpOverload.__call__
        self.check_devices = op._opname not in _MIXED_DEVICE_OPS
        self.numbers_ok = torch._C._should_allow_numbers_as_tensors(op._opname)
        self.positional: list[tuple[int, int]] = []
        self.keyword: list[tuple[str, int]] = []
        self.writes: list[int | str] = []
        self.generator: str | None = None
        owner: dict[str, int | str] = {}
        for index, arg in enumerate(schema.arguments):
            kind = _kind(arg.type)
            info = arg.alias_info
            if info is not None:
                for alias_set in info.before_set:
                    owner.setdefault(alias_set, arg.name if arg.kwarg_only else index)
                if info.is_write and kind == _TENSOR:
                    self.writes.append(arg.name if arg.kwarg_only else index)
            if kind == _GENERATOR:
                self.generator = arg.name
            elif kind is not None:
                target = self.keyword if arg.kwarg_only else self.positional
                target.append((arg.name if arg.kwarg_only else index, kind))  # type: ignore[arg-type]
        self.returns: list[tuple[int, int | str | None]] = []
        for ret in schema.returns:
            info = ret.alias_info
            if info is None:
                self.returns.append((_FRESH, None))
            else:
                # A list return (``Tensor(a)[]``) reaches Python without its alias set;
                # it views the first aliased argument (``Tensor(a -> *) self``).
                sets = info.before_set or set(owner)
                source = next((owner[s] for s in sorted(sets) if s in owner), None)
                self.returns.append((_WRITE if info.is_write else _VIEW, source))
        self.all_fresh = all(kind == _FRESH for kind, _ in self.returns)

    @property
    def aliases(self) -> tuple[int | str | None, ...]:
        """Per return, the argument slot it aliases (index or keyword name; None: new)."""
        return tuple(None if kind == _FRESH else source for kind, source in self.returns)

    @property
    def is_view(self) -> bool:
        """Writes nothing and returns only views of its arguments."""
        kinds = [kind for kind, _ in self.returns]
        return not self.writes and bool(kinds) and all(kind == _VIEW for kind in kinds)

    def _convert(self, value: Any, kind: int) -> Any:
        """The CPU counterpart of one argument."""
        if kind == _TENSOR:
            if not isinstance(value, torch.Tensor):
                # The boxed call unwrapped a wrapped-number tensor into a Python scalar.
                if self.numbers_ok or value is None:
                    return value
                return torch.tensor(value)
            if not value.is_cpu:
                return aliases.tensor(value)
            if self.check_devices and value.dim():
                raise RuntimeError(
                    f"{self.op}: expected all tensors to be on the same device, but found "
                    f"at least two devices, {DEVICE}:0 and cpu!"
                )
            return value
        if value is None:
            return None
        if kind == _TENSORS:
            return [self._convert(v, _TENSOR) for v in value]
        if kind == _STORAGE:
            return aliases.storage(value) if value.device.type == DEVICE else value
        check_index(value)
        return CPU if value.type == DEVICE else value

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        cargs = list(args)
        n = len(cargs)
        for index, kind in self.positional:
            if index < n:
                cargs[index] = self._convert(cargs[index], kind)
        ckwargs = dict(kwargs)
        for name, kind in self.keyword:
            if name in ckwargs:
                ckwargs[name] = self._convert(ckwargs[name], kind)
        if self.generator is not None and ckwargs.get(self.generator) is None:
            ckwargs[self.generator] = generator
        if self.writes:
            result = self._run_writes(args, kwargs, cargs, ckwargs)
        else:
            result = self.call(*cargs, **ckwargs)
        if self.all_fresh:
            return fresh(result)
        return self._wrap(result, args, kwargs, cargs, ckwargs)

    def _run_writes(self, args: tuple, kwargs: dict, cargs: list, ckwargs: dict) -> Any:
        """Run an op that writes tensors; what the CPU op had to resize is rebound on npu.

        CPU aliases cannot grow. An empty written tensor (the usual ``out=``) runs
        as a fresh CPU tensor; an op that must grow any other (``out=`` of the wrong
        size, ``addbmm_`` broadcasting ``self``) reruns on CPU copies. Their memory
        then becomes the npu tensor's new storage, as ``resize_`` would give it.
        """
        replaced: set[int | str] = set()
        for source in self.writes:
            npu = self._pick(args, kwargs, source)
            if (
                isinstance(npu, torch.Tensor)
                and not npu.is_cpu
                and not npu.untyped_storage().nbytes()
            ):
                empty = torch.empty_strided(npu.size(), npu.stride(), dtype=npu.dtype)
                self._put(cargs, ckwargs, source, empty)
                replaced.add(source)
        try:
            result = self.call(*cargs, **ckwargs)
        except RuntimeError as err:
            if "not resizable" not in str(err):
                raise
            for source in self.writes:
                npu = self._pick(args, kwargs, source)
                if isinstance(npu, torch.Tensor) and not npu.is_cpu and source not in replaced:
                    # A fresh alias: the failed resize left the old one's sizes wrong.
                    self._put(cargs, ckwargs, source, aliases.tensor(npu).clone())
                    replaced.add(source)
            result = self.call(*cargs, **ckwargs)
        for source in self.writes:
            npu, cpu = self._pick(args, kwargs, source), self._pick(cargs, ckwargs, source)
            if not isinstance(npu, torch.Tensor) or npu.is_cpu:
                continue
            if source in replaced:
                storage = relabelled(cpu, KDL_EXT_DEV).untyped_storage()
            elif (
                cpu.size() != npu.size()
                or cpu.stride() != npu.stride()
                or cpu.storage_offset() != npu.storage_offset()
            ):
                storage = npu.untyped_storage()
            else:
                continue
            SET._op_dk(CPU_KEY, npu, storage, cpu.storage_offset(), cpu.size(), cpu.stride())
        return result

    @staticmethod
    def _put(args: list, kwargs: dict, source: int | str, value: Any) -> None:
        if isinstance(source, str):
            kwargs[source] = value
        else:
            args[source] = value

    @staticmethod
    def _pick(args: Sequence, kwargs: dict, source: int | str) -> Any:
        if isinstance(source, str):
            return kwargs.get(source)
        return args[source] if source < len(args) else None

    def _wrap(self, result: Any, args: tuple, kwargs: dict, cargs: list, ckwargs: dict) -> Any:
        single = len(self.returns) == 1
        out = []
        for (kind, source), value in zip(
            self.returns, (result,) if single else result, strict=True
        ):
            original = None if source is None else self._pick(args, kwargs, source)
            if kind == _WRITE and original is not None:
                out.append(original)
            elif kind == _VIEW and isinstance(original, torch.Tensor) and not original.is_cpu:
                alias = self._pick(cargs, ckwargs, source)  # type: ignore[arg-type]
                if isinstance(value, torch.Tensor):
                    out.append(view_of(original, alias, value))
                else:
                    out.append([view_of(original, alias, v) for v in value])
            else:
                out.append(fresh(value))
        return out[0] if single else tuple(out)


_plans: dict[OpOverload, _Plan] = {}
_plans_lock = threading.Lock()


def plan_of(op: OpOverload) -> _Plan:
    """How aten op ``op`` runs on CPU aliases, from its schema; analysed once."""
    plan = _plans.get(op)
    if plan is None:
        if op.namespace != "aten":
            raise _missing_kernel(op)
        with _plans_lock:
            plan = _plans.setdefault(op, _Plan(op))
    return plan


def fallback(op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    """Run an aten op on CPU aliases of its npu arguments; refuse everything else."""
    plan = plan_of(op)
    if torch._C._len_torch_dispatch_stack():
        # Active dispatch modes must see the npu op, not its CPU implementation.
        with _disable_current_modes():
            return plan(args, kwargs)
    return plan(args, kwargs)


def direct_kernel(qualname: str) -> Callable[..., Any]:
    """The fallback as a registered kernel of one op (the op is resolved on first use)."""
    ns_name, _, overload = qualname.partition(".")
    name = ns_name.partition("::")[2]
    resolved: list[OpOverload] = []

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if not resolved:
            resolved.append(getattr(getattr(aten, name), overload or "default"))
        return fallback(resolved[0], *args, **kwargs)

    return kernel


# Composites that refuse devices other than CPU/CUDA/XPU, or call a CPU DispatchStub
# on their npu argument directly (found by running torch's OpInfo samples on npu),
# and clone, hot in compiled graphs, which would otherwise be empty_like + copy_.
_DIRECT_COMPOSITES = ("aten::conj_physical_", "aten::mode.values", "aten::clone")


def cpu_preferred() -> list[str]:
    """Aten ops that would reach npu as a composite although a CPU kernel does the job.

    Structured ops' non-functional composites allocate and then call ``out=`` (two
    trips through Python); a few ops have a generic math composite that rounds
    differently from the CPU kernel. Running the CPU kernel is faster and matches
    CPU numerics. ``as_strided_`` keeps its own kernel: it restrides ``self``.
    """
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return [
        name
        for name in torch._C._dispatch_get_all_op_names()
        if name.startswith("aten::")
        and name != "aten::as_strided_"
        and (
            has(name, "CompositeExplicitAutogradNonFunctional")
            or (has(name, "CPU") and has(name, "CompositeExplicitAutograd"))
        )
    ] + list(_DIRECT_COMPOSITES)
