"""The kernel an audited op runs on when the audit needs one: its own Meta function.

The audit checks schemas, Meta functions and converters, never numbers, and has no
kernel of the op. Dynamo and AOT call the op on real (npu or CPU) tensors only to run
the graph they traced; this stand-in answers with empty tensors of the shapes and dtypes
the op's Meta function gives, and with the very input for a return the schema aliases
to it or the Meta function returns (as the kernel it describes does), so a compiled call
completes and the next one (new sizes) can show a recompile.
It writes :data:`WRITTEN` into every input the schema marks written (``Tensor(a!)``):
the mark a compiled graph must keep (:mod:`opsdk.audit.checks.npugraph_ex`).
"""

from __future__ import annotations

import torch

__all__ = ["WRITTEN", "register"]

WRITTEN = 1  # what the stand-in writes into an input its schema marks written


def _aliased_inputs(schema) -> dict[int, int]:
    """Return index -> the argument index it aliases (``Tensor(a!) x`` ... ``-> Tensor(a!)``)."""
    by_set = {
        next(iter(a.alias_info.before_set)): i
        for i, a in enumerate(schema.arguments)
        if a.alias_info is not None and a.alias_info.before_set
    }
    return {
        i: by_set[next(iter(r.alias_info.before_set))]
        for i, r in enumerate(schema.returns)
        if r.alias_info is not None and next(iter(r.alias_info.before_set), None) in by_set
    }


def _meta(value):
    """``value`` with each tensor as a meta tensor of its sizes, strides and dtype, made
    without a copy: under an npu graph capture a copy off the device is a host sync."""
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_meta(v) for v in value)
    return value


def kernel(op):
    """The stand-in kernel of ``op`` (an ``OpOverload``)."""
    aliases = _aliased_inputs(op._schema)
    names = [a.name for a in op._schema.arguments]
    writes = [a.name for a in op._schema.arguments if a.alias_info and a.alias_info.is_write]

    def run(*args, **kwargs):
        device = next(
            t.device for t in torch.utils._pytree.tree_leaves((args, kwargs)) if torch.is_tensor(t)
        )
        bound = dict(zip(names, args, strict=False)) | kwargs
        for name in writes:
            for tensor in torch.utils._pytree.tree_leaves(bound.get(name)):
                if isinstance(tensor, torch.Tensor):
                    tensor.fill_(WRITTEN)
        if not op._schema.returns:  # nothing to make: no Meta to ask (torch fakes it)
            return None
        meta_args, meta_kwargs = _meta(args), {k: _meta(v) for k, v in kwargs.items()}
        meta = op(*meta_args, **meta_kwargs)
        outs = meta if isinstance(meta, tuple) else (meta,)
        # a written input the Meta function returns, the kernel it describes returns too
        # (an unwritten one it returns is the schema check's finding alone: torch's
        # autograd fallback refuses a kernel returning it as a tensor the schema says new)
        returned = {
            id(value): name
            for name, value in (dict(zip(names, meta_args, strict=False)) | meta_kwargs).items()
            if isinstance(value, torch.Tensor) and name in writes
        }
        made = [
            bound[names[aliases[i]]]
            if i in aliases
            else bound[returned[id(out)]]
            if id(out) in returned
            else torch.utils._pytree.tree_map(
                lambda m: (
                    torch.empty(m.shape, dtype=m.dtype, device=device)
                    if isinstance(m, torch.Tensor)
                    else m
                ),
                out,
            )
            for i, out in enumerate(outs)
        ]
        return tuple(made) if isinstance(meta, tuple) else made[0]

    return run


def register(library: torch.library.Library, op) -> None:
    """Serve ``op`` with its stand-in kernel on the npu (PrivateUse1) and on CPU."""
    name = op._schema.name.split("::")[-1]
    if op._overloadname != "default":
        name += f".{op._overloadname}"
    for key in ("PrivateUse1", "CPU"):
        library.impl(name, kernel(op), key)
