"""The model every CANN reader fills and every exporter writes: one op, its IR and dtypes."""

from __future__ import annotations

from dataclasses import dataclass, field

from opsdk._runtime.irdef import IrDef


@dataclass(frozen=True)
class CannOp:
    """One CANN op: its IR and what each tensor accepts.

    ``dtypes`` maps every input and output name to GE ``DataType`` enumerators
    (``DT_FLOAT16``). With ``rows`` (msopgen JSON, OpDef) the i-th entries of equally
    long lists form one supported combination, and those are all the op supports; a
    ``REG_OP``'s ``TensorType`` is a set of its own per tensor (``rows`` False: its lists
    may look aligned, GE checks each alone). A tensor typed by a ``DATATYPE`` symbol that
    the text never declares has ``()`` (any). ``type_vars`` names the symbol a tensor
    shares with others (``"T"``: same dtype). ``formats`` are msopgen's, aligned with
    ``dtypes`` (``ND`` where the source states none).
    """

    ir: IrDef
    dtypes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    formats: dict[str, tuple[str, ...]] = field(default_factory=dict)
    type_vars: dict[str, str] = field(default_factory=dict)
    # OpDef ``.Version(n)`` inputs and attrs: CANN's build leaves them out of the op's base
    # aclnn API and declares aclnn<Op>V<n> for them (GE's prototype has them all).
    versions: dict[str, int] = field(default_factory=dict)
    # Not compared: it is how the source's format reads the lists, not the op. The same op
    # exported as REG_OP, msopgen JSON and OpDef reads back equal, and opsdk new's check
    # that a project's JSON and OpDef agree compares what they declare.
    rows: bool = field(default=True, compare=False)
    # The chips an OpDef configures (AddConfig), in order; not compared: REG_OP and msopgen
    # JSON, which the same op also reads from, name none.
    chips: tuple[str, ...] = field(default=(), compare=False)
    # Tensor inputs the op's kernel reads one element of (a scalar passed as a tensor:
    # Pows' x2), which its cases give sizes (1,): :mod:`opsdk.cann.kernel.scalars`.
    scalars: frozenset[str] = field(default=frozenset(), compare=False)
    # OpDef ``.InitValue(v)`` outputs: the runtime fills them with v before the kernel runs
    # (a kernel that adds into its output atomically counts on it). Not compared: how the
    # output's memory starts, which REG_OP and msopgen JSON do not say.
    init_values: dict[str, float] = field(default_factory=dict, compare=False)


def counts(ir: IrDef) -> dict[str, str]:
    """IR attrs that count a dynamic input -> that input: CANN's ``N`` beside one
    ``DYNAMIC_INPUT`` (AddN, ConcatV2). The torch op takes no such argument, which could
    disagree with its list: the converter and the aclnn call give the list's length, as
    TorchAir's own converters do (``N=len(tensors)``)."""
    dynamic = [i.name for i in ir.inputs if i.kind == "dynamic"]
    if len(dynamic) != 1:
        return {}
    return {a.name: dynamic[0] for a in ir.attrs if a.name == "N" and a.type == "VT_INT"}


def declared(ir: IrDef) -> CannOp | None:
    """The CANN definition an IR keeps (a ``--from-cann`` package's ``ir.py``: its dtype
    rows, formats, chips), what its exports write before any reference runs; None when it
    declares no dtypes."""
    if not ir.dtypes:
        return None
    rows, formats = dict(ir.dtypes), dict(ir.formats)
    # a one-entry row serves every row; a set is as long as it is
    width = 1 if ir.dtype_sets else max(len(v) for v in rows.values())
    names = ir.tensor_names
    dtypes = {n: rows[n] * (width if len(rows[n]) == 1 else 1) if n in rows else () for n in names}
    laid = {n: formats.get(n, ("ND",) * len(rows.get(n, ()))) for n in names}
    laid = {n: f * (width if len(f) == 1 else 1) for n, f in laid.items()}
    return CannOp(ir, dtypes, laid, rows=not ir.dtype_sets, chips=ir.chips)


class CannWarning(UserWarning):
    """Something a CANN file says that its own tool ignores or repairs (msopgen drops an
    attr of an unknown type, takes a missing ``param_type`` as required): the reader does
    the same and says so, one line naming the file, op and key. ``opsdk new`` prints them."""
