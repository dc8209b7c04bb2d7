"""How `opsdk new` writes an op package: render the cookiecutter template, atomically.

The template (``templates/``) holds the files and the code; :mod:`._context` derives
the data they read from the op spec. The result is written so that a failure at any
point leaves nothing behind, and an existing directory is never deleted.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from cookiecutter.generate import generate_files

from opsdk import cann
from opsdk._runtime import spec, updatable
from opsdk.axes import DEFAULT_STYLE, GRAPH_MODES, STYLES
from opsdk.cann import cppsig
from opsdk.errors import ScaffoldError, SpecError
from opsdk.scaffold import cann_infer, cann_kernel, cann_tiling, cann_torch, names
from opsdk.scaffold._context import context

# The cookiecutter template: package data beside this module, in a checkout and installed.
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
# Files are named after the op (NAME_<16 hex>.so, .opsdk-new-NAME-<host>-<pid>-<8 random>),
# and file systems take 255 bytes per name.
MAX_NAME = 200
# A staging directory's name: the op's, then this machine's and the process's, whose death
# makes it an orphan (Linux pids have at most 7 digits).
_STAGING = re.compile(r"\.opsdk-new-\w+-(?P<host>[0-9a-f]{8})-(?P<pid>\d{1,7})-\w+")
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


@dataclass(frozen=True)
class NewRequest:
    name: str
    inplace: bool = False
    namespace: str | None = None
    schema: str | None = None
    style: str = DEFAULT_STYLE
    out: Path = Path(".")
    force: bool = False
    autograd: bool = False
    from_cann: Path | None = None  # an msopgen JSON or REG_OP file defining the op
    # torch_npu's in-place/functional pair (NAME_ and NAME) in one package
    pair: bool = False
    # attach to ``namespace::name``, defined elsewhere (torch_npu, op-plugin, C++)
    attach: bool = False
    # the Python package's name where it is not the op's: a CANN project's directory
    package: str | None = None
    # host arguments npugraph_ex/TorchAir update on replay (opsdk.updatable)
    updatable: tuple[str, ...] = ()
    # a fusion pattern (patterns.py): the torch code the op replaces in a model's graph
    pattern: bool = False
    # the graph modes the package is made for: without "ge", no converter and no IR
    modes: tuple[str, ...] = GRAPH_MODES

    @property
    def writes_the_add(self) -> bool:
        """Only ``opsdk new NAME`` gets the working add. A schema the user gave, a CANN
        definition or an attached op has semantics only its author knows: an add-shaped one
        gets skeletons, never an add that would pass against a reference nobody wrote."""
        return not (self.schema or self.from_cann or self.attach)


@dataclass(frozen=True)
class NewResult:
    path: Path
    backup: Path | None  # where --force moved an existing directory


def build_spec(req: NewRequest) -> spec.OpSchema:
    """Validate the request and parse its schema (the default add when none is given).
    For a pair (``--pair``) this is its in-place op, which the IR binds."""
    spec.check_identifier("op name", req.name)
    if len(req.name) > MAX_NAME:
        raise SpecError(
            f"op name of {len(req.name)} characters: opsdk names files after the op and file "
            f"systems take 255 bytes per name: keep it to {MAX_NAME} characters"
        )
    if req.style not in STYLES:
        raise SpecError(f"unknown --style {req.style!r}: choose one of {', '.join(STYLES)}")
    if req.attach and req.style != "library":
        raise SpecError(
            f"--attach registers only what is missing, in Python: drop --style {req.style} "
            "(the op's own schema and kernels stay where they are)"
        )
    if "ge" not in req.modes and (req.from_cann or req.pattern):
        raise SpecError(
            f"--modes {','.join(req.modes)} writes no converter and no IR, which "
            f"{'--from-cann' if req.from_cann else '--pattern'} makes: add ge to --modes"
        )
    if req.pair and req.style == "cpp":
        raise SpecError("--pair: the cpp style defines one op; drop --style cpp")
    if req.schema is not None and not req.schema.strip():
        raise SpecError(
            f"--schema is empty: give the op's schema, e.g. '{req.name}(Tensor x) -> Tensor', "
            "or drop --schema for a working add"
        )
    op = _parse(req)
    if not any(a.is_tensor for a in op.args):
        raise SpecError(
            f"{op.name} takes no tensor: an npu kernel, a GE graph and the checks run on "
            f"tensors; take one, e.g. '{op.name}(Tensor x, ...)'"
        )
    if req.pair:
        op = spec.inplace_pair(op)[0]
    if req.inplace:
        spec.require_inplace(op)
    if req.autograd:
        spec.require_differentiable(op)
    if req.updatable:
        if req.style == "cpp" or req.pair:
            raise SpecError(
                "--updatable: the library and custom_op styles, one op: drop --style cpp and --pair"
            )
        updatable.check_op(op)
        updatable.check_params(op, req.updatable)
        # its .out overload takes the op's arguments, workspace and out
        spec.check_argument_count(len(op.args) + 2, f"{op.name}.out (--updatable)")
    if req.pattern and (op.inplace or req.pair or not op.returns):
        raise SpecError(
            "--pattern: a fusion pattern replaces functional torch code by the op's outputs; "
            "give the op a functional schema (new tensors returned, no Tensor(a!))"
        )
    if req.style == "cpp":
        cppsig.signature(op.name, op)  # refuses a type without a C++ kernel type
        _clang_format()  # before anything is written
    return op


def attach_target(qualname: str, name: str | None, namespace: str | None) -> tuple[str, str]:
    """(name, namespace) of ``--attach NS::OP``, agreeing with NAME and --namespace if given."""
    ns, sep, op_name = qualname.partition("::")
    if not sep or "." in op_name:
        raise SpecError(f"--attach {qualname!r}: name the op as NS::OP, e.g. npu::npu_rms_norm")
    for what, given, wanted in (("NAME", name, op_name), ("--namespace", namespace, ns)):
        if given is not None and given != wanted:
            raise SpecError(f"{what} {given!r} differs from --attach {qualname}: give one of them")
    spec.check_identifier("namespace", ns)
    return spec.check_identifier("op name", op_name), ns


def _parse(req: NewRequest) -> spec.OpSchema:
    """The request's op: its schema, the CANN definition's (``--from-cann``), the default
    add, or (``--attach``) the live op's."""
    if req.from_cann is not None and not req.attach and (req.schema or req.inplace or req.pair):
        raise SpecError(
            "--from-cann gives the schema (an output named like an input is written in place): "
            "drop --schema, --inplace and --pair"
        )
    if req.attach and not req.schema:  # with --from-cann, CANN's file gives only the IR
        return spec.parse(_live_schema(req), validate=False)
    name, text = req.name, req.schema or spec.default_schema(req.name, req.inplace)
    if req.from_cann is not None and not req.attach:
        side = _from_cann(req)
        if req.style == "cpp" and side.op.versions:
            versioned = ", ".join(f"{n} (.Version({v}))" for n, v in side.op.versions.items())
            raise SpecError(
                f"{side.ir.op_type}: {versioned}: CANN leaves versioned parameters out of "
                f"aclnn{side.ir.op_type} and generates aclnn{side.ir.op_type}V<n> for them, "
                "which the cpp style does not call yet; use --style library"
            )
        text = req.name + side.schema
    elif req.pair:  # NAME or NAME_, with the schema of either op of the pair
        stem = req.name.removesuffix("_")
        text = req.schema or spec.default_schema(f"{stem}_", True, returns_input=True)
        name = stem + "_" if spec.parse(text, namespace=req.namespace).name.endswith("_") else stem
    op = spec.parse(text, name=name, namespace=req.namespace)
    if not req.attach and op.namespace in spec.ATTACH_ONLY_NAMESPACES:
        raise SpecError(
            f"namespace {op.namespace!r} is torch_npu's: attach to one of its ops with "
            f"--attach {op.namespace}::OP, or define yours under your library's namespace"
        )
    return op


def _live_schema(req: NewRequest) -> str:
    """The schema of ``namespace::name`` as registered in this process (the dispatcher's)."""
    qualname = f"{req.namespace}::{req.name}"
    found = [s for s in spec.registered_schemas(qualname) if not s.overload_name]
    if not found:
        raise SpecError(
            f"--attach {qualname}: no such op is registered in this process; give its schema "
            f"with --schema '{req.name}(...) -> ...'"
        )
    return str(found[0])


def package_name(op: spec.OpSchema, req: NewRequest) -> str:
    """The package an op is written to: the one the request names, else the op's name, or a
    pair's functional name."""
    return req.package or (spec.inplace_pair(op)[1].name if req.pair else op.name)


def new(req: NewRequest, then: Callable[[Path], None] | None = None) -> NewResult:
    """Write the op package to ``req.out/<name>``, moving an existing one aside with --force.
    ``then`` completes the package while it is still staged (a CANN project's other ops), so
    the package appears whole or not at all."""
    op = build_spec(req)
    out = Path(req.out).expanduser()
    target = out / package_name(op, req)
    names.refuse_shadowing(
        target.name,
        target,
        "rename the directory --from-cann names" if req.package else "choose another op name",
    )
    if target.exists() and not req.force:
        raise _taken(target)
    with staging_dir(out, target.name) as staging:
        project = render(op, req, staging)
        if then is not None:
            then(project)
        return NewResult(target, _publish(project, target, req.force))


def _publish(project: Path, target: Path, force: bool) -> Path | None:
    """Rename the staged ``project`` to ``target``; with ``force`` an existing ``target``
    is first renamed aside, to the backup returned. The rename never replaces a package:
    one another `opsdk new` published meanwhile makes it fail (the loser's error), so of
    two at once neither moves the other's result aside."""
    backup = None
    try:
        if force and target.exists():
            aside = _backup_path(target)
            target.rename(aside)
            backup = aside
        os.rename(project, target)
    except OSError as err:
        moved = f"; the existing {target.name} was moved to {backup}" if backup else ""
        if err.errno in (errno.EEXIST, errno.ENOTEMPTY):
            raise _taken(target, f" (another opsdk new wrote it meanwhile{moved})") from None
        raise ScaffoldError(
            f"cannot write {target} ({err}): check permissions and space{moved}"
        ) from None
    return backup


def _taken(target: Path, why: str = "") -> ScaffoldError:
    return ScaffoldError(
        f"{target} already exists{why}: choose another --out, or pass --force to move it "
        "aside (nothing is deleted)"
    )


@contextlib.contextmanager
def staging_dir(out: Path, name: str) -> Iterator[Path]:
    """A temporary directory inside ``out`` (so the final move is a rename), always removed,
    and with it on failure the directories made for ``out``. It is named after this
    process (:data:`_STAGING`), so the next one removes it if this one is killed."""
    made = [d for d in (out, *out.parents) if not d.exists()]  # innermost first
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
            _remove_orphans(out)
            prefix = f".opsdk-new-{name}-{_HOST}-{os.getpid()}-"
            staging = Path(tempfile.mkdtemp(prefix=prefix, dir=out))
        except OSError as err:
            raise ScaffoldError(
                f"cannot write to {out} ({err.strerror}): pick a writable --out directory"
            ) from None
        try:
            yield staging
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        for directory in made:
            with contextlib.suppress(OSError):  # not empty: not only ours
                directory.rmdir()
        raise


def _remove_orphans(out: Path) -> None:
    """Remove the staging directories in ``out`` that a killed `opsdk new` left (SIGKILL
    runs no cleanup): those of a process of this machine that no longer runs. Any other
    (a live process's, another machine's on a shared disk) is left alone."""
    for path in out.glob(".opsdk-new-*"):
        named = _STAGING.fullmatch(path.name)
        if named and named["host"] == _HOST and not _running(int(named["pid"])):
            shutil.rmtree(path, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists: another user's
        pass
    return True


def render(op: spec.OpSchema, req: NewRequest, staging: Path, package: str | None = None) -> Path:
    """Render and format the op's project in ``staging``; return its directory.
    ``package``: the op library the op is added to (see :mod:`opsdk.scaffold.into`)."""
    try:
        ctx = json.loads((TEMPLATE_DIR / "cookiecutter.json").read_text())
        cann_side = _from_cann(req) if req.from_cann is not None else None
        if cann_side:  # a scalar passed as a tensor gets sizes (1,) in the specs
            cann_side = replace(cann_side, op=cann_kernel.with_scalars(req.from_cann, cann_side.op))
        inference = cann_infer.find(req.from_cann, cann_side.ir.op_type) if cann_side else None
        if inference:  # the specs' sizes are held to the op's own InferShape
            accepts = cann_infer.acceptor(inference, cann_side.ir, cann_side.op)
            cann_side = replace(cann_side, accepts=accepts)
        if cann_side:  # shapes the op's own tiling tests give it
            cann_side = replace(cann_side, tested=cann_tiling.tested(req.from_cann, cann_side))
        ctx.update(context(op, req, package, cann_side))
        if req.updatable and cann_side:  # the workspace the op's own tiling asks
            ctx["updatable"]["workspace"] = cann_tiling.workspace(req.from_cann, cann_side)
        # Named even when no C++ was found: the ge cells then say the op is not checked.
        ctx["op"]["infer_dir"] = cann_infer.FOLDER if cann_side else None
        # Files whose name renders empty (another style's, an option's) are not written.
        generate_files(str(TEMPLATE_DIR), {"cookiecutter": ctx}, output_dir=str(staging))
        _format(staging / ctx["project_dir"])
        op_dir = staging / ctx["project_dir"] / ctx["package"]
        if inference:  # after formatting: the user's C++ is copied as it is
            cann_infer.copy(inference, op_dir)
        if cann_side:  # its tiling and kernel, for the ascendc column
            cann_kernel.copy(req.from_cann, cann_side.ir.op_type, op_dir)
    except OSError as err:
        raise ScaffoldError(
            f"cannot write {staging} ({err}): check permissions and space"
        ) from None
    return staging / ctx["project_dir"]


def _from_cann(req: NewRequest) -> cann_torch.TorchSide:
    """The torch side of the CANN op ``req.name`` defined in ``req.from_cann``."""
    path = Path(req.from_cann)
    return cann_torch.torch_side(cann_torch.pick(cann.read(path), req.name, str(path)))


def _format(package: Path) -> None:
    """Lay the rendered code out exactly as ``ruff format`` and ruff's isort would,
    with the package's own ruff settings, so generated code reads as hand-written;
    C++ likewise with clang-format and the package's ``.clang-format``."""
    commands = [
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."]
        for command in (["check", "--fix-only", "-q"], ["format", "-q"])
    ]
    sources = sorted(str(p.relative_to(package)) for p in package.rglob("*.cpp"))
    if sources:
        commands.append([_clang_format(), "-i", "--style=file", *sources])
    for command in commands:
        done = subprocess.run(command, cwd=package, capture_output=True, text=True)
        if done.returncode != 0:
            raise ScaffoldError(f"formatting the generated code failed: {done.stderr.strip()}")


def _clang_format() -> str:
    """The clang-format of opsdk's ``cpp`` extra, held to one major version so that a
    package regenerated elsewhere formats, and so compares, the same."""
    try:
        import clang_format
    except ImportError:
        raise ScaffoldError(
            "--style cpp formats its C++ with clang-format: pip install 'opsdk[cpp]'"
        ) from None
    return clang_format.get_executable("clang-format")


def _backup_path(target: Path) -> Path:
    for i in range(1, 1000):
        candidate = target.with_name(f"{target.name}.bak{i}")
        if not candidate.exists():
            return candidate
    raise ScaffoldError(f"too many backups of {target}: remove old {target.name}.bak* directories")
