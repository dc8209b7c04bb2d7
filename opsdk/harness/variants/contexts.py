"""Usage contexts: the op inside a realistic graph, a second axis of the compiled columns.

Each compiled column (``aot_eager``, ``ge``, ``npugraph_ex``) runs the op alone on
whole tensors; a context runs it the way models do, in the same shape modes, and
compares the compiled function with eager of the same function, every graph input
after the call included (a view's base, a module's buffer):

- ``view``: each tensor argument is a view (``select``) of a larger graph input, laid
  out as the case lays it out (the transposed layout of the non-contiguous case, where
  the op accepts strides); an in-place write must reach the base, and nothing else in
  the base may change;
- ``chain``: an aten op (an add) produces each tensor input inside the graph and one
  (``view(-1)``) consumes each output and written input: fake strides that differ
  from the kernel's show there;
- ``twice``: the op twice in one graph, the second call reading what the first wrote
  (its written inputs, or its first output in place of an argument of that shape);
- ``buffer``: each written input is a registered buffer of an ``nn.Module`` (a KV cache),
  called under ``torch.no_grad()`` and under ``torch.inference_mode()``; in the
  ``static`` and ``mark_static`` shape modes only (Dynamo holds buffers static).

The facts here load without torch (the CLI parser and the pytest plugin read them);
how a context builds its function and inputs is :mod:`opsdk.harness.core.usage`. A context
that cannot apply to an op says why (:meth:`Context.refusal`): its cells are skipped
with that reason, never passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from opsdk._registry import Registry
from opsdk.errors import OpsdkError

__all__ = ["ALL", "NONE", "Context", "get", "names", "select"]

ALL, NONE = "all", "none"  # the selections beside the contexts' names


@dataclass(frozen=True)
class Context:
    """One usage context; ``inplace_default``: on by default for ops that write an input."""

    name: str
    catches: str
    needs_write: bool = False
    inplace_default: bool = False
    static_only: str = ""  # why the context has no dynamic shape mode, if it has none

    def refusal(self, spec, shapes: str) -> str | None:
        """Why the context cannot apply to the op ``spec`` in ``shapes`` mode, or None."""
        if shapes == "dynamic" and self.static_only:
            return self.static_only
        if not spec.tensor_args:
            return f"{spec.qualname} takes no tensor argument"
        if self.needs_write:
            written = spec.mutated_args
            if not written:
                return f"{spec.qualname} writes no input (no Tensor(a!) argument) to hold"
            listed = [a.name for a in written if a.is_list]
            if listed:
                return f"{spec.qualname} writes a tensor list ({', '.join(listed)}), not a buffer"
        return None


_registry: Registry[str, Context] = Registry("usage context", "give it a name of its own")


def _register(context: Context) -> None:
    _registry.add(context.name, context)


_register(
    Context(
        "view",
        "kernels that assume a tensor starts its storage or owns it (a write past its end), "
        "and graph passes that lose a write to a view",
        inplace_default=True,
    )
)
_register(Context("chain", "fake strides or metadata that differ from the kernel's"))
_register(Context("twice", "state kept between calls, and writes the second call misses"))
_register(
    Context(
        "buffer",
        "writes to a module's buffer lost or copied under no_grad and inference_mode",
        needs_write=True,
        inplace_default=True,
        static_only="Dynamo keeps a module's buffers at static shapes "
        "(torch._dynamo.config.force_nn_module_property_static_shapes): a buffer that "
        "changes size recompiles by design",
    )
)


def names() -> tuple[str, ...]:
    """Every context's name, in matrix order."""
    return tuple(_registry.keys())


def get(name: str) -> Context:
    """The context ``name``; an unknown name is an error naming the contexts."""
    return _registry.require(name)


def select(spec, chosen: Iterable[str] | None) -> tuple[str, ...]:
    """The contexts an op's cells run in: ``chosen`` names them (``all``, ``none``, or
    names), None takes the defaults (``view`` and ``buffer`` for an op that writes an
    input, none for the others)."""
    if chosen is None:
        return tuple(c.name for c in _registry.values() if c.inplace_default and spec.inplace)
    chosen = tuple(chosen)
    unknown = [c for c in chosen if c not in (*_registry, ALL, NONE)]
    if unknown:
        raise OpsdkError(
            f"unknown context {', '.join(unknown)}: choose from {', '.join(names())}, "
            f"{ALL} or {NONE}"
        )
    if ALL in chosen:
        return names()
    return tuple(c for c in names() if c in chosen)
