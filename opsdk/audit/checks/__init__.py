"""The audit's checks (registered in :mod:`opsdk.audit`), one module each, by the layer
they judge: ``schema``, ``fake``
(the Meta function), ``converter`` (TorchAir's lowering against CANN's definitions,
whose GE graph :mod:`~opsdk.audit.checks.ge_node` reads node by node) and, with ``--ir``,
``infer`` (the Meta function against the C++ inference of the GE ops it lowers to) and
``ascendc`` (their AscendC tiling and kernel, run offline, the hardware's limits checked).

Each ``check(library, op, shapes)`` raises :class:`~opsdk.harness.cell.CellFailure` for a
finding (certain: what was expected, what was seen, where, the fix) and returns notes,
what it could not decide; a note never fails the run.
"""

from __future__ import annotations

import logging

from opsdk.harness.variants.cases import Call, on_device

__all__ = ["Undecided", "fake_outputs", "fakeable", "first_call", "where"]


class Undecided(Exception):
    """The check cannot decide for this op here (a note, never a finding)."""


def first_call(case) -> Call:
    return on_device(case.calls[0], "npu")


def fakeable(overload) -> bool:
    """Whether FakeTensorMode can run ``overload``, in its order: a decomposition, the fake
    function, a Meta or composite kernel, nothing for an op that returns nothing (torch's
    ``has_fake_kernel`` asks for these); the real kernel only in torch's own namespaces.
    The audit's stand-in kernel is on PrivateUse1 and CPU: it does not count."""
    import torch
    from torch._decomp import decomposition_table, meta_table
    from torch._library.utils import has_fake_kernel
    from torch._subclasses.fake_tensor import FakeTensorMode

    return bool(
        has_fake_kernel(overload)
        or torch._C._dispatch_has_kernel_for_dispatch_key(
            overload.name(), "CompositeExplicitAutogradNonFunctional"
        )
        or overload in meta_table
        or overload in decomposition_table
        or overload.namespace in FakeTensorMode._can_run_unsafe_fallback_allowed_namespaces
    )


def fake_outputs(op, call: Call):
    """The Meta function's outputs on fake copies of ``call``'s tensors, and those copies
    (in argument order), under one ``FakeTensorMode``."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    fake = lambda t: mode.from_tensor(t) if isinstance(t, torch.Tensor) else t  # noqa: E731
    args = torch.utils._pytree.tree_map(fake, call.args)
    kwargs = torch.utils._pytree.tree_map(fake, call.kwargs)
    # a refusal is the caller's to report: not torch's log of it, traceback and all
    quiet = logging.getLogger("torch._subclasses.fake_tensor")
    level, quiet.level = quiet.level, logging.CRITICAL
    try:
        with mode:
            out = op(*args, **kwargs)
    finally:
        quiet.level = level
    return out, args, kwargs


def where(source) -> str:
    return f" ({source})" if source else ""
