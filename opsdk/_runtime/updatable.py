"""Host arguments updated on replay: an op's entry in npugraph_ex's and TorchAir's update table.

A captured npu graph re-reads device buffers on replay, but the tiling an op's host code
computed from its host arguments (``SymInt``, ``SymInt[]``) at capture is frozen.
npugraph_ex and TorchAir (``_acl_concrete_graph/acl_graph.py``, each its own copy) keep a
private table, ``_REPLACE_FUNC_MAP``: op overload -> ``StaticWorkspaceReplaceFunc(
get_workspace, out_operator, workspace_keys, output_keys, updated_param_keys,
updated_param_indices)``. For an op in it they rewrite the graph to the op's ``.out``
overload over a workspace sized once by ``get_workspace`` (the largest the op may need),
capture that launch as a task group, leave its host arguments out of the capture key
(one capture per shape, not per value) and, on each replay, relaunch the op with the new
values into the captured task (``torch.npu.graph_task_update_begin/end``).

:func:`register_updatable` puts an op there, in both copies, now if they are imported
and else as soon as they are (an import hook: TorchAir loads lazily, on a host too).
The table is private: its module, name and entry fields are checked against what
torch-npu 2.13.0 has, and anything else is a one-line :class:`SetupError` naming the
installed version, never a silent no-op. TorchAir's rules, checked here at once: an
updated ``SymInt[]`` is passed by keyword (TorchAir reads the list from the FX node's
kwargs), an updated ``SymInt`` by position (it reads a single symbol from the args).
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.util
import sys
from dataclasses import dataclass

from opsdk._runtime import spec as _spec
from opsdk.errors import SetupError, SpecError

__all__ = [
    "TABLE_MODULES",
    "Updatable",
    "check_op",
    "check_params",
    "not_updatable",
    "out_schema",
    "register_updatable",
    "registered",
    "workspace_name",
    "workspace_schema",
]

# The modules holding the update table, in npugraph_ex and in TorchAir (torch-npu 2.13.0).
TABLE_MODULES = (
    "npugraph_ex._acl_concrete_graph.acl_graph",
    "torchair._acl_concrete_graph.acl_graph",
)
_TABLE, _ENTRY = "_REPLACE_FUNC_MAP", "StaticWorkspaceReplaceFunc"
_FIELDS = (
    "get_workspace",
    "out_operator",
    "workspace_keys",
    "output_keys",
    "updated_param_keys",
    "updated_param_indices",
)


@dataclass(frozen=True)
class Updatable:
    """One op's update entry: ``out`` its ``.out`` overload (keyword ``workspace`` and
    ``out``), ``workspace`` the getter sizing the workspace from the op's arguments,
    ``params`` the updated host arguments by schema name."""

    op: object
    out: object
    workspace: object
    params: tuple[str, ...]

    def entry(self, entry_class):
        spec = _spec.of(self.op)
        by_name = {a.name: (i, a) for i, a in enumerate(spec.args)}
        keys = [p for p in self.params if by_name[p][1].is_list]
        indices = [by_name[p][0] for p in self.params if not by_name[p][1].is_list]
        return entry_class(
            get_workspace=self.workspace,
            out_operator=self.out,
            workspace_keys=["workspace"],
            output_keys=[r.name or f"out{i}" for i, r in enumerate(spec.returns)],
            updated_param_keys=keys,
            updated_param_indices=indices or None,
        )

    def unregister(self) -> None:
        """Undo the :func:`register_updatable` call that returned this: the op leaves the
        registry and the update tables imported so far (a test's registration ends with it)."""
        if _registered.get(self.op) is not self:
            return  # undone already, or replaced by a later registration
        del _registered[self.op]
        for name in TABLE_MODULES:
            table = getattr(sys.modules.get(name), _TABLE, None)
            if isinstance(table, dict):
                table.pop(self.op, None)


_registered: dict[object, Updatable] = {}


def registered() -> dict[object, Updatable]:
    """The ops registered as updatable in this process, by overload."""
    return dict(_registered)


def register_updatable(op, *, out, workspace, params) -> Updatable:
    """Make ``op`` updatable on replay in npugraph_ex and TorchAir: ``params`` (its host
    arguments, by name) are relaunched with new values into the captured graph instead
    of recapturing per value. Raises :class:`SpecError` for a parameter that is not a
    host argument TorchAir can update, :class:`SetupError` when the installed TorchAir
    keeps no such table where torch-npu 2.13.0 does. The returned entry's
    :meth:`~Updatable.unregister` undoes the call. A second call for the op replaces the
    first, not the one-registry rule of :mod:`opsdk._registry`: a user re-runs it with
    other ``params`` in a notebook, and TorchAir's tables hold one entry an op."""
    params = (params,) if isinstance(params, str) else tuple(params)
    check_op(_spec.of(op))
    check_params(_spec.of(op), params)
    updatable = Updatable(op, out, workspace, params)
    _registered[op] = updatable
    _install_hook()
    for name in TABLE_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            _put(module, updatable)
    return updatable


def check_params(op_spec, params: tuple[str, ...]) -> None:
    """Refuse, in one line, a parameter TorchAir cannot update (see the module docstring)."""
    by_name = {a.name: a for a in op_spec.args}
    if not params:
        raise SpecError(f"{op_spec.qualname}: name the host arguments to update, e.g. lens")
    for name in params:
        arg = by_name.get(name)
        hosts = [a.name for a in op_spec.args if is_host(a)]
        if arg is None or not is_host(arg):
            what = "no argument" if arg is None else f"a {arg.type}, not a SymInt or SymInt[]"
            better = (
                " (a tensor is already read at replay: nothing to update)"
                if arg is not None and arg.is_tensor
                else ""
            )
            raise SpecError(
                f"--updatable {name}: {op_spec.qualname} has {what} {name!r}{better}; its "
                f"host arguments are: {', '.join(hosts) or 'none'}"
            )
        if arg.is_list and not arg.kwarg_only:
            raise SpecError(
                f"--updatable {name}: TorchAir updates a SymInt[] passed by keyword only: "
                f"move {name!r} after '*' in the schema of {op_spec.qualname}"
            )
        if not arg.is_list and arg.kwarg_only:
            raise SpecError(
                f"--updatable {name}: TorchAir updates a single SymInt passed by position "
                f"only: move {name!r} before '*' in the schema of {op_spec.qualname}"
            )


def check_op(op_spec) -> None:
    """Refuse, in one line, an op TorchAir cannot update: it passes the ``.out`` overload
    one ``out=`` for one new tensor (a list for several, which no schema takes by name)."""
    if len(op_spec.returns) != 1 or op_spec.returns[0].aliased or op_spec.inplace:
        raise SpecError(
            f"--updatable: {op_spec.qualname} must return one new tensor and write no input "
            "(TorchAir gives the op's .out overload one out= tensor it captured)"
        )


def not_updatable(op_spec) -> str | None:
    """Why no update on replay can serve ``op_spec``'s host arguments (:func:`check_op`),
    None when one can: the advice to declare one updatable is for such ops only."""
    try:
        check_op(op_spec)
    except SpecError:
        return (
            f"{op_spec.qualname} returns {len(op_spec.returns)} tensor(s) or writes an input; "
            "TorchAir updates an op returning one new tensor"
        )
    return None


def out_schema(op_spec) -> str:
    """The ``.out`` overload's schema (name included): the op's arguments, then the keyword
    ``workspace`` and ``out`` TorchAir passes (``construct_and_add_workspace``/``_output``)."""
    star = "" if any(a.kwarg_only for a in op_spec.args) else "*, "
    return (
        f"{op_spec.name}.out({_args_text(op_spec)}, {star}Tensor? workspace=None, "
        "Tensor(a!) out) -> Tensor(a!)"
    )


def workspace_schema(op_spec) -> str:
    """The workspace getter's schema (name included): the op's arguments, one tensor back."""
    return f"{workspace_name(op_spec)}({_args_text(op_spec)}) -> Tensor"


def workspace_name(op_spec) -> str:
    return f"{op_spec.name}_workspace"


def _args_text(op_spec) -> str:
    text = op_spec.schema_args
    return text[1 : text.rindex(") ->")]


def is_host(arg) -> bool:
    """A host argument TorchAir can update: a ``SymInt`` or ``SymInt[]`` (optional or not)."""
    return arg.type.rstrip("?") in ("SymInt", "SymInt[]")


def _put(module, updatable: Updatable) -> None:
    table, entry_class = getattr(module, _TABLE, None), getattr(module, _ENTRY, None)
    fields = tuple(f.name for f in dataclasses.fields(entry_class)) if entry_class else ()
    if not isinstance(table, dict) or fields != _FIELDS:
        raise SetupError(
            f"{module.__name__} (torch_npu {_torch_npu_version()}) has no {_TABLE} of "
            f"{_ENTRY}{_FIELDS} where torch-npu 2.13.0 has it: the update table moved, so "
            f"{_spec.of(updatable.op).qualname} cannot be made updatable on replay here"
        )
    table[updatable.op] = updatable.entry(entry_class)


def _torch_npu_version() -> str:
    module = sys.modules.get("torch_npu")
    return str(getattr(module, "__version__", "offline, the wheel's Python"))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Puts the registered ops into a table module right after it is imported."""

    def find_spec(self, name, path, target=None):
        if name not in TABLE_MODULES:
            return None
        sys.meta_path.remove(self)
        try:
            found = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if found is None or found.loader is None:
            return found
        load = found.loader.exec_module

        def exec_module(module):
            load(module)
            for updatable in _registered.values():
                _put(module, updatable)

        found.loader.exec_module = exec_module
        return found


_hook = _AfterImport()


def _install_hook() -> None:
    if _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
