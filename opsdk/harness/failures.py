"""Map an exception raised somewhere under torch.compile to the layer it came from.

A message keeps what the user needs from the exception: the cause a wrapper
(Dynamo, TorchAir) hides, and where in the user's own code it was raised.
"""

from __future__ import annotations

import errno
import re
import sys
import sysconfig
import traceback
from pathlib import Path

from opsdk.errors import SetupError
from opsdk.harness.cell import CellFailure


def chain(err: BaseException):
    """``err`` and its causes, outermost first."""
    seen = set()
    link: BaseException | None = err
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def raise_out_of_memory(err: BaseException) -> None:
    """Raise the MemoryError in ``err``'s chain, if any: the process ran out of memory. No
    layer is to blame, and what the process holds may never be freed: a run ends the
    process for a fresh one (:mod:`opsdk.harness.run.journal`)."""
    memory = next((e for e in chain(err) if isinstance(e, MemoryError)), None)
    if memory is not None:
        raise memory from None


_IMPLEMENT_ME = re.compile(r"implement me: (\w+)\(\)")
# The suffix of a skeleton function's name -> the layer its "implement me" belongs to.
_SKELETON_LAYERS = {"fake": "fake", "backward": "autograd"}


def implement_me(err: BaseException) -> CellFailure | None:
    """A skeleton's "implement me" anywhere in ``err``'s chain, as the failure to report.

    Python skeletons raise :class:`ImplementMe`; C++ kernels (``--style cpp``) fail a
    ``TORCH_CHECK`` whose message starts with "implement me:", which reaches Python as a
    RuntimeError, as may an ImplementMe that autograd's engine re-raised. The layer
    follows the function named in the message: a fake function and a backward are
    Python in every style, everything else is a kernel.
    """
    for e in chain(err):
        found = _IMPLEMENT_ME.match(str(e)) if isinstance(e, RuntimeError) else None
        if found:
            layer = _SKELETON_LAYERS.get(found.group(1).rpartition("_")[2], "eager")
            return CellFailure(layer, str(e).splitlines()[0])
    return None


# What the machine lacks when an OSError carries one of these: never the op's doing.
_MACHINE_ERRNOS = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up"}


def machine_failure(err: BaseException) -> CellFailure | None:
    """A :class:`SetupError` (TorchAir could not be fetched) or a full disk anywhere in
    ``err``'s chain, though a wrapper (Dynamo, TorchAir) hides it: a failure of the machine,
    in layer ``setup``, which says nothing of the op and is never cached."""
    for e in chain(err):
        if isinstance(e, SetupError):
            return CellFailure("setup", str(e))
        if isinstance(e, OSError) and e.errno in _MACHINE_ERRNOS:
            return CellFailure(
                "setup", f"{_MACHINE_ERRNOS[e.errno]}: {first_line(e)}; make room and run again"
            )
    return None


def first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return f"{type(err).__name__}: {text.splitlines()[0]}"


def root_cause(err: BaseException) -> BaseException:
    """The innermost exception of ``err``'s chain: what a wrapper such as Dynamo's
    ``TorchRuntimeError`` ("RuntimeError when making fake tensor call") was raised for."""
    *_, last = chain(err)
    return last


def _package_dir(name: str) -> str | None:
    """Where the loaded package ``name`` lives, or None when it is not loaded."""
    file = getattr(sys.modules.get(name), "__file__", None)
    return str(Path(file).parent) if file else None


def _library_roots() -> tuple[str, ...]:
    """Where code that is not the user's lives: torch, opsdk, TorchAir, the stdlib."""
    dirs = (_package_dir(m) for m in ("torch", "opsdk", "torchair"))
    return (*(d for d in dirs if d), sysconfig.get_paths()["stdlib"])


def _at(frame: traceback.FrameSummary) -> str:
    return f" at {frame.filename}:{frame.lineno} ({frame.name})"


def raised_at(err: BaseException) -> str:
    """`` at FILE:LINE (FUNCTION)``: the innermost frame of ``err``'s chain in the
    user's code (a kernel, a fake function, a converter), or "" if none is (a C++ kernel)."""
    roots = _library_roots()
    for e in reversed(list(chain(err))):
        for frame in reversed(traceback.extract_tb(e.__traceback__)):
            if not frame.filename.startswith(("<", *roots)):
                return _at(frame)
    return ""


def _in_torchair(err: BaseException) -> str:
    """`` at FILE:LINE (FUNCTION)`` when the innermost frame of ``err``'s chain outside
    torch and the stdlib is TorchAir's own code (torch's frames below it ran for TorchAir:
    a guard it asked for), else "" (TorchAir not loaded, or raised elsewhere)."""
    torchair = _package_dir("torchair")
    below = tuple(d for d in (_package_dir("torch"), sysconfig.get_paths()["stdlib"]) if d)
    for frame in reversed(traceback.extract_tb(root_cause(err).__traceback__)):
        if torchair is not None and frame.filename.startswith(torchair):
            return _at(frame)
        if not frame.filename.startswith(below):
            return ""
    return ""


def _data_dependent(err: BaseException) -> str:
    """Why TorchAir's guard failed, when it was on a data-dependent size."""
    if type(root_cause(err)).__name__ != "GuardOnDataDependentSymNode":
        return ""
    return (
        " (a guard on a size that depends on the op's data: an "
        "unbacked symbol, as an OutputShapeDependOnCompute output's is; GE graph mode in this "
        "TorchAir cannot lower such an output)"
    )


def _converting(err: BaseException) -> str:
    """`` node %NAME``: the FX node TorchAir was converting, as its error names it."""
    found = re.search(r"While executing (%\S+)", str(err))
    return f" node {found.group(1)}" if found else ""


def _conversion_failure(inner: BaseException) -> CellFailure:
    """TorchAir failed to build the GE graph: in the op's converter when one of its frames
    is on the stack, else in TorchAir's own code (a node TorchAir converts itself, such
    as ``auto_functionalized_v2``), which no edit of converter.py fixes."""
    where = raised_at(inner)
    own = "" if where else _in_torchair(inner)
    if not own:
        return CellFailure(
            "converter",
            f"TorchAir could not convert the graph{where}: {first_line(inner)}; "
            "fix converter.py (rerun with --dump DIR to see the FX graph it received)",
        )
    return CellFailure(
        "converter",
        f"TorchAir failed in its own code converting{_converting(inner)}{own}, with no frame "
        f"of the op's converter on the stack: {first_line(inner)}{_data_dependent(inner)}; "
        "a TorchAir limitation "
        "for this graph or these options, not converter.py's (opsdk checks what a converter "
        "returns): waive the cell in opsdk-waivers.toml naming the TorchAir issue, and "
        "rerun with --dump DIR to see the FX graph it received",
    )


_KERNELS: dict[str | None, str] = {"npu": "the npu kernel", "cpu": "the CPU reference"}


def kernel_failure(err: BaseException, device: str | None, *, layer: str = "eager") -> CellFailure:
    """A kernel that raised, in ``layer`` (``eager`` in every column): which kernel (by
    the ``device`` its inputs were on), what it raised, and where; a skeleton's "implement
    me" and a failure of the machine are said as such. A kernel that ran out of memory
    is no failure of the op's: its MemoryError is raised again (:func:`raise_out_of_memory`)."""
    raise_out_of_memory(err)
    said = implement_me(err) or machine_failure(err)
    if said is not None:
        return said
    if isinstance(err, CellFailure):
        return err
    which = _KERNELS.get(device, "the kernel")
    return CellFailure(
        layer,
        f"{which} raised{raised_at(err)}: {first_line(err)}; make it accept this case, "
        "or narrow the op's specs (specs.py)",
    )


def _ge_failure(err: BaseException) -> CellFailure | None:
    """GE stand-in errors: a graph GE refuses at load disagrees with the op's IR
    (the converter or ir.py is wrong); one that fails while running is ``ge-exec``."""
    from opsdk.offline.ge import GeExecutionError, GeGraphError
    from opsdk.offline.ge.standin import GeSessionError, missing_ir_defs

    for e in chain(err):
        if isinstance(e, GeGraphError):
            return CellFailure(
                "converter",
                f"GE refused the graph: {first_line(e)}; make converter.py and ir.py agree",
            )
        if isinstance(e, (GeExecutionError, GeSessionError)):
            return CellFailure(
                "ge-exec", f"{first_line(e)}; rerun with --dump DIR to see the GE graph"
            )
        if "No AscendIR" in str(e) and missing_ir_defs():
            return CellFailure(
                "converter",
                f"no GE IR definition registered for op type {missing_ir_defs()[-1]}: "
                "register it in the package's ir.py (opsdk.irdef.register)",
            )
    return None


def _aliasing_failure(err: BaseException) -> CellFailure | None:
    """AOT Autograd's check that a functional custom op returns fresh tensors (run on a
    compiled graph's first call): the kernel breaks its schema's promise."""
    for e in chain(err):
        frames = traceback.extract_tb(e.__traceback__)
        if any(frame.name == "_check_custom_op_aliasing" for frame in frames):
            return CellFailure(
                "schema",
                "AOT Autograd's aliasing check: the kernel returns an input (or a view of one) "
                "where the schema promises a fresh tensor; return a copy (x.clone())",
            )
    return None


def as_failure(
    err: BaseException, *, default_layer: str, compile_layer: str | None = None
) -> CellFailure:
    """The layer an error belongs to, with a message that ends in what to do; running out
    of memory belongs to none: its MemoryError is raised again (:func:`raise_out_of_memory`)."""
    if isinstance(err, CellFailure):
        return err
    raise_out_of_memory(err)
    machine = machine_failure(err)
    if machine is not None:
        return machine
    aliasing = _aliasing_failure(err)
    if aliasing is not None:
        return aliasing
    ge = _ge_failure(err) if default_layer == "ge-exec" else None
    if ge is not None:
        return ge
    todo = implement_me(err)
    if todo is not None:
        return todo
    import torch._dynamo.exc as dynamo_exc  # here: eager cells run without loading Dynamo

    if isinstance(err, dynamo_exc.Unsupported):
        return CellFailure(
            "dynamo",
            f"Dynamo cannot trace the call: {first_line(err)}; "
            "rerun with TORCH_LOGS=graph_breaks to see where",
        )
    if isinstance(err, dynamo_exc.TorchRuntimeError):
        cause = root_cause(err)
        return CellFailure(
            "fake",
            f"the fake function failed while tracing{raised_at(cause)}: {first_line(cause)}; "
            "fix fake.py so it accepts these inputs (symbolic sizes included)",
        )
    if isinstance(err, dynamo_exc.BackendCompilerFailed):
        inner = err.inner_exception if hasattr(err, "inner_exception") else err
        if compile_layer == "converter":
            return _conversion_failure(inner)
        return CellFailure(
            compile_layer or default_layer,
            f"the backend failed to compile the graph: {first_line(inner)}; "
            "rerun with TORCH_LOGS=aot_graphs to see the graph",
        )
    return CellFailure(default_layer, first_line(err))
