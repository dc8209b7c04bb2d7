"""The GE IR definition of an op: what CANN's op prototype (``REG_OP``) declares.

An op package states its IR definition in its ``ir.py``; opsdk keeps a registry
of them so the offline ``_torchair`` stand-in can answer
``get_registered_ir_def`` the way CANN does, and the GE reference executor can
run a custom node through the op's CPU reference kernel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from opsdk._registry import Registry
from opsdk._runtime import types

INPUT_KINDS = ("required", "optional", "dynamic")
OUTPUT_KINDS = ("required", "dynamic")
# An AscendC OpDef input declared ``.Scalar()`` / ``.ScalarList()``: a GE tensor input that
# the op's aclnn API takes as ``aclScalar`` / ``aclScalarList``.
SCALAR_KINDS = ("scalar", "scalar_list")
VALUE_DEPEND_OPTIONS = ("required", "optional")
ATTR_TYPES = tuple(types.BY_VALUE_TYPE)


@dataclass(frozen=True)
class Input:
    """An IR input. ``value_depend`` and ``scalar`` are AscendC OpDef facts GE's prototype
    does not carry but the op's generated aclnn API does: a ``.ValueDepend(...)`` input is
    read on the host (aclnn takes it as a host array), a ``.Scalar()`` /
    ``.ScalarList()`` one as an ``aclScalar`` / ``aclScalarList``. ``value_depend`` is
    False or the option the definition gives (``"required"``, ``"optional"``: CANN may
    run the op without the value); True means ``"required"``."""

    name: str
    kind: str = "required"
    value_depend: bool | str = False
    scalar: str | None = None

    def __post_init__(self):
        if self.value_depend is True:
            object.__setattr__(self, "value_depend", "required")
        if self.value_depend not in (False, *VALUE_DEPEND_OPTIONS):
            raise ValueError(
                f"IR input {self.name!r}: value_depend must be False or one of "
                f"{VALUE_DEPEND_OPTIONS}"
            )
        if self.kind not in INPUT_KINDS:
            raise ValueError(f"IR input {self.name!r}: kind must be one of {INPUT_KINDS}")
        if self.scalar is not None and self.scalar not in SCALAR_KINDS:
            raise ValueError(f"IR input {self.name!r}: scalar must be one of {SCALAR_KINDS}")


@dataclass(frozen=True)
class Output:
    """An IR output. ``depends_on_compute``: its shape is known only once the kernel ran
    (OpDef ``.OutputShapeDependOnCompute()``), so no fake function can state it ahead."""

    name: str
    kind: str = "required"
    depends_on_compute: bool = False

    def __post_init__(self):
        if self.kind not in OUTPUT_KINDS:
            raise ValueError(f"IR output {self.name!r}: kind must be one of {OUTPUT_KINDS}")


@dataclass(frozen=True)
class Attr:
    """An IR attr; ``default`` (None: the attr is required) is what CANN uses when a
    node leaves the attr unset. ``type`` is GE's value type (``VT_FLOAT``) or, as a
    generated ``ir.py`` writes it, the ``torchair.ge.attr`` builder its converter sets it
    with (``Float``); it is kept as the value type. ``dtype``: an Int whose value is a data
    type (CANN writes its default ``DT_INT32``): torch takes a ``ScalarType``, GE gets its
    number."""

    name: str
    type: str
    default: object = None
    dtype: bool = False

    def __post_init__(self):
        if isinstance(self.default, list):  # keep the definition immutable and hashable
            object.__setattr__(self, "default", tuple(self.default))
        if self.type in types.BY_GE_ATTR:
            object.__setattr__(self, "type", types.BY_GE_ATTR[self.type].value_type)
        if self.type not in ATTR_TYPES:
            raise ValueError(
                f"IR attr {self.name!r}: type must be one of {tuple(types.BY_GE_ATTR)} "
                f"(or GE's {ATTR_TYPES})"
            )


@dataclass(frozen=True)
class IrDef:
    """One GE op prototype, and how it stands for a torch op.

    ``torch_op`` (``"ns::name"`` or ``"ns::name.overload"``) is the torch op a node
    of this type computes: the harness finds an op's IR through it, and the offline
    executor runs the node with that op's CPU kernel. CANN names its inputs and attrs
    its own way (``x`` where torch_npu says ``self``): ``arg_names`` maps a torch
    argument to its IR input or attr (unlisted: the same name). ``fixed_args`` gives
    the torch arguments a converter consumes in Python instead of passing them on
    (a mode that picks this GE op over another): the values this op type stands for.
    An output named like the IR name of a mutated argument is that argument, written
    in place (a GE ref output); the other outputs are the op's returns, in order.
    ``dtypes`` are the data types the definition declares (a ``--from-cann`` package's,
    so its exports keep them before any reference runs): input or output name -> GE
    enumerators (``DT_FLOAT16``), the i-th entries of every tensor one supported row, a
    one-entry tuple serving every row, an unlisted tensor any type; empty: not declared.
    With ``dtype_sets`` (a ``REG_OP``'s ``TensorType``) each tensor's list is a set of its
    own, however aligned it looks: GE checks each tensor alone.
    ``formats`` (``ND``, ``NCHW``), aligned with ``dtypes``, and ``chips`` (what an OpDef
    configures, ``ascend910b``) are the rest of such a definition its exports keep.
    ``infer_root`` is the folder holding the op's C++ InferShape / InferDataType (a
    ``--from-cann`` package's copy of them): the ``ge`` column holds the fake to them.
    """

    op_type: str
    # Any sequence given (a hand-written ir.py's lists); kept as tuples (__post_init__).
    inputs: Sequence[Input] = ()
    outputs: Sequence[Output] = ()
    attrs: Sequence[Attr] = ()
    torch_op: str | None = field(default=None, compare=False)
    arg_names: tuple[tuple[str, str], ...] = ()
    fixed_args: tuple[tuple[str, object], ...] = ()
    dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    formats: tuple[tuple[str, tuple[str, ...]], ...] = ()
    chips: tuple[str, ...] = ()
    dtype_sets: bool = False
    infer_root: str | None = field(default=None, compare=False)

    def __post_init__(self):
        # Accept lists and dicts from hand-written ir.py files; store tuples (hashable,
        # immutable).
        for name in ("inputs", "outputs", "attrs"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("arg_names", "fixed_args"):
            value = getattr(self, name)
            pairs = value.items() if isinstance(value, dict) else value
            object.__setattr__(self, name, tuple(sorted((k, _frozen(v)) for k, v in pairs)))
        targets = [ir for _, ir in self.arg_names]
        if len(set(targets)) != len(targets):
            raise ValueError(f"IrDef {self.op_type}: arg_names maps two arguments to one name")
        for name in ("dtypes", "formats"):
            rows = getattr(self, name)
            rows = rows.items() if isinstance(rows, dict) else rows
            object.__setattr__(self, name, tuple(sorted((k, tuple(v)) for k, v in rows)))
        object.__setattr__(self, "chips", tuple(self.chips))
        self._check_dtypes()
        declared = dict(self.dtypes)
        for name, row in self.formats:
            if len(row) != len(declared.get(name, ())):
                raise ValueError(
                    f"IrDef {self.op_type}: formats[{name!r}] must align with its dtypes, one "
                    "format per data type"
                )

    def _check_dtypes(self) -> None:
        tensors = set(self.tensor_names)
        widths: set[int] = set()
        for name, row in self.dtypes:
            if name not in tensors:
                raise ValueError(f"IrDef {self.op_type}: dtypes names {name!r}, no input or output")
            unknown = [d for d in row if d not in types.DTYPES]
            if unknown or not row:
                raise ValueError(
                    f"IrDef {self.op_type}: dtypes[{name!r}] must list GE enumerators such as "
                    f"DT_FLOAT16, got {list(row)}"
                )
            widths.add(len(row))
        if not self.dtype_sets and len(widths - {1}) > 1:
            raise ValueError(
                f"IrDef {self.op_type}: dtypes lists have lengths {sorted(widths)}; each is one "
                "entry per supported row (or one entry for every row)"
            )

    def output_dtypes(self, inputs: Mapping[str, str | None]) -> dict[str, set[str]]:
        """The GE dtypes the definition lets each declared output take when its inputs
        have ``inputs`` (IR name -> GE enumerator; None, a number GE's enum does not name,
        matches no row): those of the rows the inputs match, or
        with ``dtype_sets`` the output's own set; ``{}`` when nothing is declared."""
        declared = dict(self.dtypes)
        outputs = [o.name for o in self.outputs if o.name in declared]
        if self.dtype_sets:
            return {name: set(declared[name]) for name in outputs}
        width = max((len(v) for v in declared.values()), default=0)
        rows = [{n: v[i if len(v) > 1 else 0] for n, v in declared.items()} for i in range(width)]
        matching = [r for r in rows if all(r.get(n, d) == d for n, d in inputs.items())]
        return {name: {r[name] for r in matching} for name in outputs}

    def ir_name(self, torch_arg: str) -> str:
        """The IR input or attr name of a torch argument."""
        return dict(self.arg_names).get(torch_arg, torch_arg)

    @property
    def ir_input_names(self) -> tuple[str, ...]:
        return tuple(i.name for i in self.inputs)

    @property
    def tensor_names(self) -> tuple[str, ...]:
        """Its inputs' names, then its outputs'."""
        return (*self.ir_input_names, *(o.name for o in self.outputs))

    @property
    def ir_attr_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attrs)

    def as_torchair_answer(self):
        """The tuple ``_torchair.get_registered_ir_def`` returns for a known op."""
        return (
            "SUCCESS",
            [(i.name, i.kind) for i in self.inputs],
            [(o.name, o.kind) for o in self.outputs],
            [(a.name, a.type) for a in self.attrs],
        )


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


# CANN holds one definition per op type: a different one under a taken type is an error.
_REGISTRY: Registry[str, IrDef] = Registry("GE op type", "give each op a unique IR name")


def register(ir: IrDef) -> IrDef:
    """Make ``ir`` known to the offline GE stand-in (the same definition again is a
    no-op, a different one under its op type a :class:`~opsdk._registry.Conflict`).
    Returns ``ir``, not the undo handle, as the package's ``ir.py`` binds it by name."""
    _REGISTRY.add(ir.op_type, ir)
    return ir


def lookup(op_type: str) -> IrDef | None:
    return _REGISTRY.get(op_type)


def for_op(qualname: str) -> list[IrDef]:
    """The IR definitions a torch op lowers to: those naming it as ``torch_op`` or,
    failing that, naming its in-place or functional partner (``name_`` and ``name``
    lower to the same GE op; TorchAir turns one into the other)."""
    from opsdk._runtime.spec import partner  # spec imports torch: only when asked

    for name in (qualname, partner(qualname)):
        found = [ir for ir in _REGISTRY.values() if _same_op(ir.torch_op, name)]
        if found:
            return found
    return []


def _same_op(a: str | None, b: str) -> bool:
    """``ns::name`` and ``ns::name.default`` are the same overload."""
    return a is not None and a.removesuffix(".default") == b.removesuffix(".default")


def registered() -> dict[str, IrDef]:
    return dict(_REGISTRY.items())
