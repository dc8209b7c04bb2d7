"""Notes of check ``schema`` on host arguments: which would recapture per value under npugraph_ex.

An int or int list argument reaches a captured graph as host values (the op's tiling):
npugraph_ex keys a capture on each ``SymInt``'s value unless the op is in its update
table (``_REPLACE_FUNC_MAP``, :mod:`opsdk._runtime.updatable`), and Dynamo bakes a plain
``int``/``int[]`` in and recompiles per value. An argument that changes per call in
serving (named like lengths, offsets or positions, or declared varying by the op's
specs) gets a note with the fix; one the table updates gets none, and the op is said
updatable.
"""

from __future__ import annotations

import functools
import importlib.util
import re

from opsdk._runtime import spec, updatable
from opsdk._runtime.inputs import OneOf, Range, declared
from opsdk.harness.failures import first_line
from opsdk.offline import torchair as bringup

__all__ = ["notes"]

# Names of host arguments that change per call in serving (sequence lengths, offsets,
# positions, block tables of a KV cache).
VARYING_NAME = re.compile(
    r".*(?:len|lens|length|lengths|offset|offsets|position|positions|pos)(?:_(?:q|kv|k|v))?"
)


def notes(op) -> list[str]:
    """The notes on ``op``'s (an ``OpOverload``) host arguments."""
    op_spec = spec.of(op)
    hosts = [
        a for a in op_spec.args if a.type.rstrip("?") in ("SymInt", "SymInt[]", "int", "int[]")
    ]
    varying = [a for a in hosts if VARYING_NAME.fullmatch(a.name) or a.name in _declared(op_spec)]
    if not varying:
        return []
    table, unread = _table()
    entry = table.get(op)
    updated = (
        set(entry.updated_param_keys)
        | {op_spec.args[i].name for i in entry.updated_param_indices or ()}
        if entry
        else set()
    )
    found = [f"updatable on replay: {', '.join(sorted(updated))}"] if updated else []
    why = updatable.not_updatable(op_spec)
    for arg in (a for a in varying if a.name not in updated):
        fix = (
            f"opsdk new --attach {op_spec.qualname} --updatable {arg.name}"
            if arg.type.startswith("SymInt")
            else f"make it {arg.type.replace('int', 'SymInt')} to update it on replay"
        )
        fix = f"no update on replay can serve it ({why})" if why else fix
        found.append(
            f"host argument {arg.name} ({arg.type}) changes per call: under npugraph_ex each "
            f"value captures a graph anew (or, for int, recompiles) or replays stale; {fix}, "
            "or pass it as a tensor" + (f" ({unread})" if unread else "")
        )
    return found


def _declared(op_spec) -> set[str]:
    declaration = declared(op_spec.qualname)
    if declaration is None:
        return set()
    return {
        name
        for case in declaration.cases
        for name, value in op_spec.by_name(case.args, case.kwargs).items()
        if isinstance(value, (OneOf, Range)) and len(getattr(value, "values", (0, 1))) > 1
    }


@functools.cache
def _table() -> tuple[dict, str]:
    """npugraph_ex's update table for the ops defined now, and why it could not be read
    (empty when it could). The table fills itself from the ops defined when its module
    runs (``hasattr(torch.ops.npu, ...)``), which may be before the audited library was
    loaded, so its code runs again in a module of its own."""
    try:
        bringup.import_npugraph_ex()
        found = importlib.util.find_spec(updatable.TABLE_MODULES[0])
        if found is None or found.loader is None:
            raise ModuleNotFoundError(f"no {updatable.TABLE_MODULES[0]}")
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
    except Exception as err:  # noqa: BLE001 - no table here: the notes say why
        return {}, f"npugraph_ex's update table cannot be read here ({first_line(err)})"
    return getattr(module, "_REPLACE_FUNC_MAP", {}), ""
