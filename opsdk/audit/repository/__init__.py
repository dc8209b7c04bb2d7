"""An op library as its repository holds it: ``opsdk audit DIR`` on a work tree.

Its schemas are read from its C++ (:mod:`~opsdk.audit.repository.scan`), each parsed
by torch's own parser before anything registers it (a malformed one is a finding on that
op, never an abort) and defined from Python; its C++ Meta registrations are built
against CPU torch and loaded (:mod:`~opsdk.audit.repository.build`); its Python
registrations are imported with the repository on the path. What the sources say is
checked here, each finding naming file:line on both sides (the ``registry`` check
reports them): a registration for an op no schema defines, an op with no Meta or fake,
an argument the kernel's aclnn call writes that the schema does not mark ``(a!)``
(:mod:`~opsdk.audit.repository.writes`; a Python kernel's, seen by running it:
:mod:`~opsdk.audit.repository.pywrites`), an in-place op returning a new tensor.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import importlib
import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from opsdk.audit.repository.writes import marked, placed

if TYPE_CHECKING:
    from opsdk.audit.model import AuditOp

__all__ = ["applies", "holds_library", "load", "parse_defines"]

# what makes a Python file a registration module worth importing
_PY_REGISTERS = re.compile(r"\b(?:torch\.library|Library\(|register_fake|impl_abstract)")
_PY_DEFINES = re.compile(r"Library\(\s*[\"'][\w.]+[\"']\s*,\s*[\"'](?:DEF|FRAGMENT)[\"']")
_PY_SKIPPED = {"tests", "test", "docs", "examples", "benchmarks", "build", "setup.py"}
# keys whose kernel serves FakeTensorMode (the op then needs no Meta of its own)
_TRACEABLE_KEYS = {"Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd"}


def applies(library) -> bool:
    """Whether ``library`` was read from a repository (the ``registry`` check's cells)."""
    return library.from_sources


def holds_library(path: Path) -> bool:
    """A directory that is no Python package itself nor an opsdk package's project (its
    package declares ``OPS``: loaded as ``opsdk check`` loads it), and whose C++
    registers ops, or whose Python defines them (``Library(ns, "DEF")``/``"FRAGMENT"``)."""
    from opsdk.audit.repository import scan
    from opsdk.errors import TargetError
    from opsdk.harness.run.target import package_dir

    if not path.is_dir() or (path / "__init__.py").is_file():
        return False
    try:
        package = package_dir(path.resolve())
    except TargetError:
        package = None
    if package is not None and re.search(r"^OPS\b", (package / "__init__.py").read_text(), re.M):
        return False
    if any("TORCH_LIBRARY" in p.read_text(errors="replace") for p in scan.sources(path)):
        return True
    return any(_PY_DEFINES.search(p.read_text(errors="replace")) for p in _python_files(path))


def parse_defines(given) -> dict[str, str]:
    """``NAME`` / ``NAME=VALUE`` s (``--define``) as a macro table."""
    return {n: v or "1" for n, _, v in (d.partition("=") for d in given or ())}


def load(root: Path, defines: dict[str, str], definitions=None):
    """The :class:`~opsdk.audit.library.Library` of the repository at ``root``; its ops'
    cases from their CANN ``definitions`` (``--ir``: op type -> ``CannOp``) where one is
    theirs (:func:`opsdk.audit.cases.attach`)."""
    import torch

    from opsdk._runtime.device import ensure_npu
    from opsdk.audit import cases as audit_cases
    from opsdk.audit import meta_kernel
    from opsdk.audit.model import AuditOp, Library, Source, defined_at
    from opsdk.audit.repository import pywrites, scan
    from opsdk.offline.torchair import import_torchair_stack

    ensure_npu()
    import_torchair_stack()
    root = root.resolve()
    registry = scan.read(root, defines)
    at = lambda path, line: Source(_relative(path, root), line)  # noqa: E731
    ops = []
    keep: list[torch.library.Library] = []  # alive as long as the library is audited
    said: list[str] = []
    defined, malformed = _define(registry, at, keep)
    unchecked = _build_meta(registry, root, defines, said)
    before = set(torch._C._dispatch_get_all_op_names())
    with pywrites.recorded({}) as kernels:
        failed = _import_python(root, said)
    said += list(failed)
    for name in sorted(set(torch._C._dispatch_get_all_op_names()) - before):
        if name.split("::")[0] not in {"aten", "prim", "prims"} and name not in defined:
            defined[name] = (None, None)
    libraries: dict[str, torch.library.Library] = {}
    for qualname, (schema, text_at) in defined.items():
        for op in _overloads(qualname):
            namespace = qualname.split("::")[0]
            lib = libraries.setdefault(namespace, torch.library.Library(namespace, "IMPL"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                meta_kernel.register(lib, op)
            converter = defined_at(getattr(op, "_ge_converter", None))  # a Python library's
            audit_op = AuditOp(op, _name(op), _meta_at(registry, schema, op, at), converter)
            audit_op.schema_at = text_at or _python_at(root, op, at)
            audit_op.kernels = pywrites.of(kernels, op, at)
            audit_op.unchecked = unchecked.get(qualname, "") or _unbuilt(registry, op, at)
            audit_op.findings = _findings(registry, op, audit_op, at, failed)
            audit_cases.attach(audit_op, definitions)
            ops.append(audit_op)
    ops += malformed + _orphans(registry, defined, at)
    keep += list(libraries.values())
    digest = hashlib.sha256(repr(sorted(defines.items())).encode())
    for path, text in sorted(registry.texts.items()):
        digest.update(str(path).encode() + text.encode())
    for path in _imported_from(root):  # its Python fakes and kernels are sources too
        digest.update(str(path).encode() + path.read_bytes())
    return Library(
        root.name,
        ops,
        sources=digest.hexdigest(),
        keep=keep,
        from_sources=True,
        said=said,
    )


def _define(registry, at, keep) -> tuple[dict, list]:
    """Define every schema torch's parser takes (qualname -> (Schema, Source)); the ops
    whose schema it refuses, or which are defined twice, as findings."""
    import torch

    from opsdk.audit.model import placeholder

    defined: dict[str, tuple] = {}  # qualname -> (its Schema, Source)
    malformed: list[AuditOp] = []  # placeholders of ops whose schema is a finding
    libraries: dict[str, torch.library.Library] = {}
    for schema in registry.schemas:
        qualname = f"{schema.namespace}::{schema.name}"
        where = at(schema.path, schema.line)
        try:
            torch._C.parse_schema(f"{schema.namespace}::{schema.text}")
        except RuntimeError as err:
            why = " ".join(str(err).split())
            malformed.append(
                placeholder(
                    qualname,
                    where,
                    f"its schema{placed(where)} is malformed: {why[:300]}: fix the schema text",
                )
            )
            continue
        if qualname in defined:
            first = defined[qualname][1]
            if torch._C.parse_schema(schema.text) != torch._C.parse_schema(
                defined[qualname][0].text
            ):
                malformed.append(
                    placeholder(
                        qualname,
                        where,
                        f"defined twice with different schemas ({first} and {where}): keep one",
                    )
                )
            continue
        lib = libraries.setdefault(
            schema.namespace, torch.library.Library(schema.namespace, "FRAGMENT")
        )
        existing = getattr(getattr(torch.ops, schema.namespace), schema.name.split(".")[0], None)
        if (
            existing is None
            or (schema.name.partition(".")[2] or "default") not in existing.overloads()
        ):
            lib.define(schema.text)
        defined[qualname] = (schema, where)
    keep += list(libraries.values())
    return defined, malformed


def _build_meta(registry, root: Path, defines, said: list[str]) -> dict[str, str]:
    """Build and load each file holding Meta registrations; the ops of a file that did
    not build or load, with why (``not checked``), one line each said."""
    from opsdk.audit.repository import build

    unchecked = {}
    files = {r.path for r in registry.registrations if r.key == "Meta"}
    for path in sorted(files):
        try:
            built = build.build(path, root, defines)
            build.load(built, path, root)
        except build.MetaBuildFailure as failure:
            line = str(failure) + _defined_elsewhere(failure.symbol, root)
            said.append(line)
            for r in registry.registrations:
                if r.path == path:
                    unchecked[f"{r.namespace}::{r.name}"] = line
    return unchecked


def _defined_elsewhere(symbol: str, root: Path) -> str:
    """Where the repository defines a function its Meta file calls but was not built
    with (its one definition: a helper of another source file), "" if not one. Every
    C/C++ file is searched, not only those the registry read: a helper registers nothing."""
    from opsdk.audit.repository import scan

    name = symbol.partition("(")[0].rpartition("::")[2]
    if not name:
        return ""
    texts = {p: p.read_text(errors="replace") for p in scan.sources(root)}
    found = scan.Registry(texts={p: t for p, t in texts.items() if name in t}).functions(name)
    if len(found) != 1:
        return ""
    return (
        f", defined in {_relative(found[0].path, root)}:{found[0].line}, a file not built with it"
    )


def _import_python(root: Path, said: list[str]) -> dict[str, str]:
    """Import the repository's Python modules that register ops (the repository on the
    path); of each that would not import, one line saying so -> its text. What a module
    prints while imported (its own logs: sgl-kernel-npu's ``[MindIE-SD] [ERROR]``) is
    added to ``said`` once, under its name, not left on the user's terminal."""
    from opsdk import _streams
    from opsdk.harness.failures import first_line

    failed = {}
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    for path in _python_files(root):
        if not _PY_REGISTERS.search(path.read_text(errors="replace")):
            continue
        top, name = _module_name(path)
        if str(top) not in sys.path:
            sys.path.insert(0, str(top))
        why = ""
        with _streams.captured() as printed:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    importlib.import_module(name)
            except BaseException as err:  # noqa: BLE001 - a module that does not import is said, not fatal
                if isinstance(err, KeyboardInterrupt):
                    raise
                why = str(err)
                line = f"{_relative(path, root)}: not imported: {first_line(err)}"
                failed[line] = path.read_text(errors="replace")
        # a log of the error the import raised is said with it already
        printed = [t for t in printed if not (why and why in t)]
        if printed:
            said.append(f"{_relative(path, root)}: printed while imported: {' | '.join(printed)}")
    return failed


def _imported_from(root: Path) -> list[Path]:
    """The files of the modules imported from under ``root`` (what the audit ran of the
    repository's Python), so an edited fake or kernel is a new library to the cache."""
    files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
    return sorted(p for p in map(Path, filter(None, files)) if p.is_relative_to(root))


def _python_files(root: Path):
    """The repository's Python files, its tests, docs and examples left out."""
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if not (_PY_SKIPPED & set(parts) or any(p.startswith(".") for p in parts)):
            yield path


def _module_name(path: Path) -> tuple[Path, str]:
    """The folder ``path`` imports from (the first above it that is no package: a
    ``python/<dist>/<package>`` layout too) and its dotted name there."""
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _overloads(qualname: str) -> list:
    import torch

    namespace, _, name = qualname.partition("::")
    base, _, overload = name.partition(".")
    packet = getattr(getattr(torch.ops, namespace), base, None)
    if packet is None:
        return []
    names = (
        [overload or "default"]
        if "." in name or "default" in packet.overloads()
        else packet.overloads()
    )
    return [getattr(packet, n) for n in names if n in packet.overloads()]


def _name(op) -> str:
    from opsdk._runtime import spec

    return spec.of(op).qualname


def _registrations(registry, op) -> list:
    name = op._schema.name.split("::")[-1]
    namespace = op._schema.name.split("::")[0]
    overload = "" if op._overloadname == "default" else f".{op._overloadname}"
    return [
        r
        for r in registry.registrations
        if r.namespace == namespace and r.name in (name + overload, name if not overload else "")
    ]


def _meta_at(registry, schema, op, at):
    """Where the op's C++ Meta function is defined (else its registration), else its
    Python fake function's definition."""
    from opsdk.audit.model import fake_function_at

    for r in _registrations(registry, op):
        if r.key == "Meta":
            functions = [f for f in registry.functions(r.function or "") if f.path == r.path]
            return at(functions[0].path, functions[0].line) if functions else at(r.path, r.line)
    return fake_function_at(op)


def _python_at(root: Path, op, at):
    """Where a Python-defined op's schema text is (its name followed by ``(`` in a
    registration module; a ``custom_op("ns::name"`` decorator, whose function's
    signature is the schema), None if not found."""
    name = op._schema.name.split("::")[-1]
    overload = "" if op._overloadname == "default" else f".{op._overloadname}"
    pattern = re.compile(
        rf"[\"']{re.escape(name + overload)}\(|custom_op\(\s*[\"'][\w.]+::{re.escape(name)}[\"']"
    )
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(errors="replace")
        found = pattern.search(text)
        if found:
            return at(path, text.count("\n", 0, found.start()) + 1)
    return None


def _findings(registry, op, audit_op, at, failed: dict[str, str]) -> list[str]:
    """What the sources say wrong about ``op``, each naming both places (``failed``: the
    Python modules that did not import, which may hold its fake)."""
    from opsdk.audit.model import BY_REGISTRY

    found = []
    # an op whose call is dropped needs its writes marked, and torch then fakes it: no
    # Meta is asked for (one fix, said once in the dropped finding)
    if not audit_op.unchecked and not _drops(op) and not _traceable(registry, op):
        audit_op.unchecked = _unimported(failed, op)
        if not audit_op.unchecked:
            found.append(_no_meta(registry, op, audit_op, at))
            audit_op.untraceable = "it has no Meta or fake function to trace" + BY_REGISTRY
    found += _undeclared_writes(registry, op, audit_op, at) or _dropped(registry, op, audit_op, at)
    if _drops(op) and not audit_op.untraceable:  # the fake and npugraph_ex cells see no call
        audit_op.untraceable = (
            "torch.compile drops its call, so no cell traces or captures it" + BY_REGISTRY
        )
    found += _inplace_returns(registry, op, audit_op, at)
    return found


def _unimported(failed: dict[str, str], op) -> str:
    """Why a Python registration of ``op`` may be missing: a module naming it in a call
    (``register_fake("ns::op")``, ``lib.impl("op", ...)``) that did not import ("" if
    none did). A docstring or comment naming it registers nothing."""
    name = op._schema.name.split("::")[-1]
    named = re.compile(rf"(\w+::)?{re.escape(name)}([.(].*)?")
    for line, text in failed.items():
        if any(named.fullmatch(s) for s in _call_strings(text)):
            return line
    return ""


def _call_strings(text: str) -> list[str]:
    """The string constants a module passes to calls (every quoted string when it does
    not parse: a module that did not import may not)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return re.findall(r"[\"']([^\"'\n]*)[\"']", text)
    return [
        arg.value
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        for arg in [*call.args, *(k.value for k in call.keywords)]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]


def _unbuilt(registry, op, at) -> str:
    """Why FakeTensorMode would run C++ opsdk does not build for ``op`` (a composite
    kernel, or one ``def`` registers), "" if it would not."""
    unbuilt = "is C++ opsdk does not build"
    for r in _registrations(registry, op):
        if r.key in _TRACEABLE_KEYS - {"Meta"}:
            return f"its {r.key} kernel{placed(at(r.path, r.line))} {unbuilt}"
    for s in registry.schemas:
        if s.kernel and f"{s.namespace}::{s.name}" == _name(op):
            where = placed(at(s.path, s.line))
            return f"its kernel, registered with its schema{where}, {unbuilt}"
    return ""


def _traceable(registry, op) -> bool:
    """Whether FakeTensorMode can run ``op``: a Meta, fake or composite kernel anywhere
    (C++ or Python), or torch's own fake for a mutable op returning nothing."""
    import torch
    from torch._library.utils import has_fake_kernel

    if any(r.key in _TRACEABLE_KEYS for r in _registrations(registry, op)):
        return True
    if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "Meta"):
        return True
    return has_fake_kernel(op)  # torch's trivial fake included


def _no_meta(registry, op, audit_op, at) -> str:
    """The finding of an op with no Meta: its schema, its kernel, and a Meta registered
    under a name like it (the likely mistake)."""
    name = op._schema.name.split("::")[-1]
    first = _kernel_at(registry, op, audit_op, at)
    kernel = f"; its kernel is registered{placed(first)}" if first else ""
    r = _misnamed_meta(registry, op)
    hint = "; register one (TORCH_LIBRARY_IMPL(ns, Meta, m) or torch.library.register_fake)"
    if r is not None:
        hint = (
            f"; a Meta is registered for {r.name!r}{placed(at(r.path, r.line))}, which no "
            f"schema defines: name it {name!r}"
        )
    # the op's own places first: the same why and fix, op after op, is said once
    # (opsdk.report's terminal refers to the first)
    return (
        f"{audit_op.qualname} has no Meta or fake function (schema{placed(audit_op.schema_at)}"
        f"{kernel}): torch.compile and npugraph_ex cannot trace it{hint}"
    )


def _kernel_at(registry, op, audit_op, at):
    """Where ``op``'s first kernel (any registration but a Meta) is registered in C++,
    else where its first Python kernel is defined (MindSpeed's ``npu_gmm.List``), or None."""
    kernels = [r for r in _registrations(registry, op) if r.key != "Meta"]
    if kernels:
        return at(kernels[0].path, kernels[0].line)
    python = [where for key, (_, _, where) in audit_op.kernels.items() if key != "Meta" and where]
    return python[0] if python else None


def _misnamed_meta(registry, op):
    """A Meta registered under a name like ``op``'s that no schema defines (the likely
    mistake), or None."""
    names = {f"{s.namespace}::{s.name}" for s in registry.schemas}
    orphans = [
        r
        for r in registry.registrations
        if r.key == "Meta" and f"{r.namespace}::{r.name}" not in names
    ]
    name = op._schema.name.split("::")[-1]
    near = difflib.get_close_matches(name, [r.name for r in orphans], n=1, cutoff=0.6)
    return next(r for r in orphans if r.name == near[0]) if near else None


def _undeclared_writes(registry, op, audit_op, at) -> list[str]:
    from opsdk.audit.repository import writes

    arguments = op._schema.arguments
    found = []
    for r in _registrations(registry, op):
        if r.key == "Meta" or not r.function:
            continue
        for w in writes.written(registry, r.function):
            if w.index >= len(arguments):
                continue
            arg = arguments[w.index]
            if arg.alias_info is not None and arg.alias_info.is_write:
                continue
            call, rule = placed(at(w.path, w.line)), placed(at(w.rule_path, w.rule_line))
            found.append(
                f"{audit_op.qualname}'s kernel writes {arg.name} ({w.aclnn}{call} writes its "
                f"argument {w.param}, by {w.rule}{rule}), but "
                f"the schema{placed(audit_op.schema_at)} declares `{arg.type} {arg.name}` "
                f"unwritten: mark it {marked(arg)} (torch.compile otherwise drops the write)"
            )
    return list(dict.fromkeys(found))


def _drops(op) -> bool:
    """Whether torch.compile drops ``op``'s call: it takes a tensor, returns nothing and
    marks no argument written, so no output and no mutation keep the call in a traced
    graph. The graph is then empty, and npugraph_ex, which keys its captures by the
    sizes of the inputs a graph uses, replays the first shape's capture for every
    shape. An op taking no tensor is a host utility (a version print), not judged."""
    from opsdk._runtime import spec

    schema = op._schema
    return not (schema.returns or schema.is_mutable) and any(a.is_tensor for a in spec.of(op).args)


def _dropped(registry, op, audit_op, at) -> list[str]:
    """The finding of an op whose call torch.compile drops, and with it whatever the
    kernel writes (the library's code need not say what): its schema and its kernel."""
    if not _drops(op):
        return []
    first = _kernel_at(registry, op, audit_op, at)
    kernel = f" for its kernel{placed(first)}" if first else ""
    # a stray Meta under a name like the op's is likely its own, if it has none
    own = any(r.key == "Meta" for r in _registrations(registry, op))
    r = None if own else _misnamed_meta(registry, op)
    stray = (
        f"; the Meta registered for {r.name!r}{placed(at(r.path, r.line))} is not needed then"
        if r is not None
        else ""
    )
    return [
        f"{audit_op.qualname} returns nothing and its schema{placed(audit_op.schema_at)} marks "
        f"no argument written{kernel}: torch.compile drops the call (nothing keeps it in the "
        "graph), and with it whatever the op does; mark each argument its kernel writes "
        f"Tensor(a!) (torch then fakes the op itself: it needs no Meta{stray})"
    ]


def _inplace_returns(registry, op, audit_op, at) -> list[str]:
    """An in-place op (its name ends in ``_``, it writes an argument) whose schema
    returns a tensor that is not that argument."""
    schema = op._schema
    base = schema.name.split("::")[-1]
    written = [a for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    if not base.endswith("_") or not written:
        return []
    fresh = [
        i for i, r in enumerate(schema.returns) if r.alias_info is None and str(r.type) == "Tensor"
    ]
    if not fresh:
        return []
    first = _kernel_at(registry, op, audit_op, at)
    kernel = f"; its kernel{placed(first)}" if first else ""
    return [
        f"{audit_op.qualname} is in-place (writes {written[0].name}) but its schema"
        f"{placed(audit_op.schema_at)} returns a new tensor (return {fresh[0]}){kernel}: return "
        f"{written[0].name} itself, annotated the same ({marked(written[0])}), or nothing"
    ]


def _orphans(registry, defined: dict, at) -> list:
    """A placeholder op per name registered (Meta, fake, kernel) that no schema defines."""
    from opsdk.audit.model import placeholder

    with_meta = {r.name for r in registry.registrations if r.key == "Meta"}
    names = {q.split("::")[-1] for q in defined}
    names = (names - with_meta) or names  # a stray registration is most likely theirs
    found = {}
    for r in registry.registrations:
        qualname = f"{r.namespace}::{r.name}"
        if qualname in defined or qualname in found:
            continue
        near = difflib.get_close_matches(r.name, sorted(names), n=1, cutoff=0.6)
        schemas = {f"{s.namespace}::{s.name}": s for s in registry.schemas}
        hint = ""
        if near:
            s = schemas.get(f"{r.namespace}::{near[0]}")
            hint = f"; the nearest op defined is {near[0]}{placed(at(s.path, s.line)) if s else ''}"
        found[qualname] = placeholder(
            qualname,
            at(r.path, r.line),
            f"a {r.key} registration{placed(at(r.path, r.line))} names {r.name}, an op no schema "
            f"defines{hint}: register it under the op's name, or define the op",
        )
    return list(found.values())


def _relative(path: Path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)
