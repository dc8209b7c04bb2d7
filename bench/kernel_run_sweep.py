"""How many 910B vector kernel entries opsdk compiles and runs on a case of their op's own
definition, tiling included (issue 38's first number).

Over AscendC op repositories (checkouts or bare mirrors, walked by ``_corpus.py``;
nothing of theirs is kept): every 910B vector-only kernel entry ``kernel_sweep.py``
takes. For each: its op type (the tiling its op's ``op_host`` registers for the entry's
name), its TilingFunc built (:func:`opsdk.cann.tiling.build`) and run in its worker on
cases made from the op's definition as ``tiling_sweep.py`` makes them until one tiles;
then the kernel built for that case's dtypes, tiling key and tiling layout
(:func:`opsdk.cann.kernel.build`) and launched once in its worker
(:meth:`opsdk.cann.kernel.Kernel.launch`) on random inputs of the case's shapes (a
dynamic input or output: a tensor list of the case's instances of it, two): the path
the ``ascendc`` column takes. An entry counts as run when the launch returns (findings,
such as a GM access out of bounds, are listed apart: the outputs are shaped as the first
input, which an op's real outputs need not be). The rest by kind: out of scope (what the
stand-ins do not model), the tiling's or the kernel's compile (by the identifier or
header it misses), no case tiles, a crash...

    python bench/kernel_run_sweep.py /work/.mirror/hicann+ops-nn /work/.mirror/hicann+ops-math \\
        /work/.mirror/hicann+ops-transformer [--every N] [--limit N] [--match REGEX] \\
        [--tries N] [--work DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import _corpus
import infer_sweep
import kernel_sweep
import tiling_sweep
import torch

from opsdk._runtime import types
from opsdk.cann import infer, kernel, tiling, ut_cases
from opsdk.cann.aclnn import _snake
from opsdk.cann.infer.build import _toolkit
from opsdk.cann.infer.call import unlinked
from opsdk.cann.kernel.sources import AscendC, unmodelled
from opsdk.errors import SpecError

# What a sweep extracts: kernel_sweep's files, the op prototypes, the op's own host
# tiling tests (the cases tried first: opsdk.cann.ut_cases), and the sources of a
# project's shared host helpers that tilings call (ops-transformer's common/src).
GLOBS = (
    *kernel_sweep.GLOBS,
    "**/op_graph/*_proto.h",
    "**/tests/**/*tiling*.cpp",
    "**/common/src/**",
)
# Host-side tiling of AscendC's advanced APIs (SoftMax, TopK, LayerNorm... temp sizes and
# their tiling structs), out of issue 38; the cube's (TCubeTiling) is Matmul's.
_ADVANCED_TILING = re.compile(
    r"\b(?:AscendC::)?(?:Get\w+?(?:MaxMin|Max|Min)\w*TmpSize|SoftMax\w*TilingFunc|TopKTilingFunc"
    r"|(?:ConfusionTranspose|LayerNormSeparate|SoftMax|Topk|TCube)Tiling)\b"
)
# opbase's atvoss tiling frameworks (elementwise, broadcast, reduce: ~2,000 lines of
# templates over compiled opbase code), which the tiling stand-ins do not model.
_FRAMEWORK = re.compile(r"\batvoss/(?:elewise|broadcast|reduce)/\w+\.h\b")
# The kinds of what is out of scope, as the reasons say them: the first a reason names
# (a file's name may say arch35 where its reason is another).
_SCOPES = ("atvoss", "compile info JSON", "advanced-API", "matmul_tiling", "Matmul", "cube")
_SCOPES += ("communication", "arch35")
_CRASHES = 3  # crashing cases before the tiling is reported as crashing
_LINKED = 6  # sources a tiling is built from at most, the other sources it calls included
_ELEMENTS = 1 << 22  # an own test's case launched at most this big (its tensors' elements)
# Cases a kernel is launched on at most while it crashes: a case the tiling accepts may be
# one the op's other checks refuse (aclnn's ranks: Modulate's x is 3-D, which a 2-D x
# tiles as a zero dim the kernel divides by).
_LAUNCHES = 3


@dataclass
class Row:
    repo: str
    entry: str
    op_type: str = ""
    outcome: str = "ran"  # ran, or the stage that stopped it (see STAGES)
    reason: str = ""  # the kind within the stage (a missing identifier...)
    detail: str = ""
    case: str = ""
    tiling_key: int = 0
    findings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # every identifier its compile missed
    seconds: float = 0.0


def op_of(source: Path, tilings: dict[str, tiling.TilingSource]) -> tuple[str, object]:
    """The entry's op type and its tiling: of the tilings its op's ``op_host`` registers,
    the one named as the entry (CANN's opbuild names an entry after its op type), else
    after the op folder, else the only one; else the tiling of the entry's name that
    another op's ``op_host`` registers (``tilings``: the repository's; ops-nn registers
    SwiGluGrad's beside SwiGlu's); else the folder's name in CamelCase and None."""
    host = source.parent.parent / "op_host"
    found = tiling.find_all(host) if host.is_dir() else {}
    names = (kernel.entry_of(source).name, source.parent.parent.name)
    for name in names:
        for op_type, found_tiling in found.items():
            if _snake(op_type) == name:
                return op_type, found_tiling
    if len(found) == 1:
        return next(iter(found.items()))
    for name in names:
        for op_type, found_tiling in tilings.items():
            if _snake(op_type) == name:
                return op_type, found_tiling
    return kernel_sweep.op_type_of(source), None


def out_of_scope(source: Path, found: tiling.TilingSource) -> str | None:
    """What the stand-ins do not model, as the ``ascendc`` column says it; and the host
    tiling of AscendC's advanced APIs."""
    said = unmodelled(AscendC(source.parent.parent, found, kernel.entry_of(source)))
    if said:
        return said
    folders = {path.parent for path in found.sources}
    headers = sorted(h for folder in folders for h in folder.glob("*.h"))
    for path in (*found.sources, *headers):
        text = path.read_text(errors="replace")
        framework = _FRAMEWORK.search(text)
        if framework:
            return f"{path.name} builds on opbase's atvoss tiling framework ({framework[0]})"
        named = _ADVANCED_TILING.search(text)
        if named and named[0] == "TCubeTiling":
            return f"{path.name} uses the cube unit's tiling ({named[0]})"
        if named:
            return f"{path.name} uses advanced-API host tiling ({named[0]})"
    return None


def inference_of(found: tiling.TilingSource, root: Path) -> infer.Library | None:
    """The op's own InferShape, built (None: its op_host has none, or it does not build):
    what shapes a case's outputs as GE would before the tiling sees them."""
    inference = infer.find(found.op_type, found.sources[0].parent)
    if inference is None or inference.infer_shape is None:
        return None
    try:
        return infer.Library(infer.build(inference, root).library, root)
    except infer.CompileFailure:
        return None


def shaped(case: infer_sweep.Case, op, inference: infer.Library | None):
    """The tiling case of ``case``: its outputs as the op's InferShape shapes them (None:
    it refuses the case, as GE would before tiling), else each as the first input; a
    dynamic output's instances told apart (``GetIrOutputInstanceInfo``)."""
    made = tiling_sweep.case_of(case, op)
    made = replace(made, output_counts=counts(op.ir.outputs, len(made.outputs)))
    if inference is None:
        return made
    try:
        answer = inference.infer(op.ir.op_type, case.inputs, case.attrs, made.output_counts)
    except (infer.Crashed, KeyError):
        return made
    if answer.shape_status != 0 or len(answer.shapes) < len(made.outputs):
        return None
    dtypes = answer.dtypes if answer.dtype_status == 0 else ()
    undefined = types.DTYPES["DT_UNDEFINED"].value  # an output its InferDataType left unset
    outputs = tuple(
        infer.Given(
            dtypes[i] if i < len(dtypes) and dtypes[i] != undefined else given.dtype,
            answer.shapes[i],
        )
        for i, given in enumerate(made.outputs)
    )
    return replace(made, outputs=outputs)


def tile(
    library, found, ops, literals: list[str], tries: int, inference=None, folder=None, skip=()
):
    """(op definition, first tiling that ran ok) or (None, (outcome, reason, detail)).
    First the nodes the op's own host tests tile (:mod:`opsdk.cann.ut_cases`: the tests
    of ``folder``, the kernel's op, and of the tiling's; those small enough to launch),
    then the cases made from its definition, then its own smallest case too big to
    launch (:func:`_sweep` says so, not launched). Where the op's
    InferShape refuses every made case (its stand-in may lack what it asks), those again
    with each output shaped as the first input. ``skip``: cases (as text) not to take again."""
    last, crashes, accepted = ("no case tiles", "", "the definition has no case"), 0, False
    refused = crash = None  # the first own case's failure; the crash verdict
    folders = (folder, ut_cases.folder_of(found.sources[0]))  # the kernel's op, the tiling's
    for op in ops:
        own = ut_cases.cases(op, *(f for f in folders if f))
        small = [c for c in own if ut_cases.elements(c) <= _ELEMENTS]
        made = (shaped(case, op, inference) for case in infer_sweep.cases(op, literals, tries))
        # the smallest of the bigger ones last: whether the tiling takes it (not launched)
        for group in (small, made, own[len(small) : len(small) + 1]):
            for given in group:
                if given is None or str(given) in skip:
                    continue
                accepted = True
                run = library.run(found, given)  # raises Unlinked: the caller links more
                if run.ok:
                    return op, run
                crashed = [f for f in run.findings if f.kind == "crash"]
                if crashed and unlinked(crashed[0].message, library.root):  # bound at the call
                    raise unlinked(crashed[0].message, library.root)
                said = str(run.findings[0]) if run.findings else f"returned {run.status}"
                kind = run.findings[0].kind if run.findings else "failed"
                last = ("no case tiles", kind, said)
                if refused is None and given in own:
                    refused = ("no case tiles", f"own test's case: {kind}", said)
                crashes += bool(crashed)
                if crashes == _CRASHES:  # each costs a worker's restart: no more made ones
                    crash = ("tiling crash", crashed[0].message.split(" (")[0], said)
                    break
    if inference is not None and not accepted:
        return tile(library, found, ops, literals, tries, folder=folder, skip=skip)
    return None, crash or refused or last


# An integer input named as positions into another tensor (indices, idx, offsets): zeros,
# the one position every non-empty dim has (one would be past a dim of one: a scatter's
# false GM out-of-bounds).
_POSITIONS = re.compile(r"ind(ic|ex)|idx|offset|position", re.IGNORECASE)


def _data(given: infer.Given, dtype: str, name: str = "") -> bytes:
    """Bytes of a tensor of ``given``'s shape: its host data (a value-depend input), else
    values small enough for any op (floats normal, integers and bools one, positions 0)."""
    if given.data is not None:
        return given.data
    torch_dtype = getattr(torch, dtype)
    shape = given.shape or (1,)
    fill = torch.zeros if _POSITIONS.search(name) else torch.ones
    values = (
        torch.randn(shape).to(torch_dtype)
        if torch_dtype.is_floating_point
        else fill(shape, dtype=torch_dtype)
    )
    return values.contiguous().view(torch.uint8).numpy().tobytes()


def _size(given: infer.Given, _dtype: str | None = None) -> int:
    count = 1
    for dim in given.shape:
        count *= max(dim, 0)
    return count * torch.empty((), dtype=getattr(torch, _torch(given.dtype))).element_size()


def _torch(ge_value: int) -> str:
    """The torch dtype name of a GE dtype number (raises SpecError when torch has none)."""
    row = next((d for d in types.DTYPES.values() if d.value == ge_value), None)
    if row is None or row.torch is None or row.torch not in kernel.CTYPES:
        raise SpecError(f"dtype {row.ge if row else ge_value} has no AscendC element type")
    return row.torch


def launch(source: Path, root: Path, op, run: tiling.TilingRun, row: Row) -> None:
    """Build the kernel for the run's case and launch it once, filling ``row``: a dynamic
    input or output is a tensor list of the case's instances of it."""
    entry = kernel.entry_of(source)
    params = entry.params[:-2]
    case = run.case
    names = (*op.ir.ir_input_names, *(o.name for o in op.ir.outputs))
    inputs = [
        tuple(i) if ir.kind == "dynamic" else i[0] if i else None
        for i, ir in zip(case.inputs, op.ir.inputs, strict=True)
    ]
    instances = [*inputs, *_outputs(op.ir.outputs, case.outputs)]
    if len(params) != len(names):
        row.outcome, row.reason = "kernel parameters", "not the definition's tensors one each"
        row.detail = f"{entry.name}({', '.join(params)}) against {', '.join(names)}"
        return
    given = dict(zip(params, instances, strict=True))
    outputs = set(params[len(op.ir.ir_input_names) :])
    try:
        named = zip(names, instances, strict=True)
        spelt = {n: _first(g) and _torch(_first(g).dtype) for n, g in named}
        # CANN defines every input's DTYPE_: an absent one's is its definition row's.
        spelt |= {n: _torch(d.value) for n, d in kernel.absent_dtypes(op.dtypes, spelt).items()}
        dtypes = {p: spelt[n] for p, n in zip(params, names, strict=True) if spelt[n]}
        dtypes |= {n: d for n, d in spelt.items() if d}  # the IR's names too
        built = kernel.build(
            entry,
            dtypes,
            tiling_key=run.tiling_key,
            layout=run.layout,
            layouts=run.layouts,
            include_dirs=kernel_sweep.include_dirs(source, root),
            root=source.parent.parent,
        )
    except infer.CompileFailure as err:
        row.outcome, row.detail = "kernel compile", str(err).replace(f"{root}/", "")
        row.missing = kernel_sweep.missing_in(_log(str(err)))
        row.reason = _compile_reason(row.detail)
        return
    except SpecError as err:
        row.outcome, row.reason, row.detail = "kernel build", "refused", str(err)
        return
    compiled = kernel.Kernel(built)
    try:
        done = compiled.launch(
            {
                p: _tensor(g, dtypes.get(p), lambda g, d, p=p: _data(g, d, p))
                for p, g in given.items()
                if p not in outputs
            },
            {p: _tensor(given[p], dtypes.get(p), _size) for p in outputs},
            run,
            case=row.case,
        )
    finally:
        compiled.close()
    crashed = [f for f in done.findings if f.kind == "crash"]
    if crashed:
        row.outcome, row.reason, row.detail = "launch crash", crashed[0].what, str(crashed[0])
    row.findings = [str(f) for f in done.findings if f.kind != "crash"]


def _outputs(declared, given: tuple) -> list:
    """The case's outputs (one per instance) per declared output: a dynamic one's
    instances as a tuple."""
    grouped, at = [], 0
    for output, count in zip(declared, counts(declared, len(given)), strict=True):
        grouped.append(tuple(given[at : at + count]) if output.kind == "dynamic" else given[at])
        at += count
    return grouped


def counts(declared, total: int) -> tuple[int, ...]:
    """Per declared output its instances among ``total`` (the case gives each dynamic
    output as many)."""
    dynamic = sum(o.kind == "dynamic" for o in declared)
    each = (total - len(declared) + dynamic) // max(dynamic, 1)
    return tuple(each if o.kind == "dynamic" else 1 for o in declared)


def _first(given) -> infer.Given | None:
    """A tensor's instance, a tensor list's first (None: absent or empty)."""
    return given[0] if isinstance(given, tuple) and given else given or None


def _tensor(given, dtype: str | None, value):
    """What the launch takes for a tensor: ``value`` of it (its bytes, its size), of each
    instance of a tensor list (:class:`~opsdk.cann.kernel.Member`), None when absent."""
    if isinstance(given, tuple):
        return [kernel.Member(tuple(g.shape), value(g, dtype)) for g in given]
    return None if given is None else value(given, dtype)


def _compile_reason(detail: str) -> str:
    """A compile error's kind: the identifier its first error misses (the forms g++ says
    it in), else what ``tiling_sweep`` groups it by."""
    missing = kernel_sweep.missing_in(detail.split(" (compiler output")[0])
    return f"missing {missing[0]}" if missing else tiling_sweep.compile_kind(detail)


def _log(message: str) -> str:
    """The compiler's whole output a CompileFailure names, "" when gone."""
    found = re.search(r"compiler output: (\S+build\.log)\)", message)
    path = Path(found[1]) if found else None
    return path.read_text(errors="replace") if path and path.is_file() else message


def sweep_entry(repo: str, root: Path, source: Path, index: tuple, tries: int) -> Row:
    start = time.perf_counter()
    row = Row(repo, source.relative_to(root).as_posix())
    try:
        _sweep(row, root, source, index, tries)
    except Exception as err:  # noqa: BLE001 (the bench's own failure: said, the sweep goes on)
        row.outcome, row.reason, row.detail = "bench error", type(err).__name__, str(err)
    finally:
        row.seconds = round(time.perf_counter() - start, 2)
    return row


def _sweep(row: Row, root: Path, source: Path, index: tuple, tries: int) -> None:
    """``index``: the repository's definitions and tilings, by op type."""
    definitions, tilings = index
    row.op_type, found = op_of(source, tilings)
    if found is None:
        row.outcome, row.reason = "no tiling", "no TilingFunc registered for it"
        return
    scope = out_of_scope(source, found)
    if scope:
        row.outcome, row.reason, row.detail = "out of scope", _scope_kind(scope), scope
        return
    ops = infer_sweep.definitions_of(found.op_type, found.sources[0], definitions)
    if not ops:
        row.outcome, row.reason = "no definition", "no OpDef or REG_OP in the repository"
        return
    text = found.sources[0].read_text(errors="replace")
    literals = sorted(set(infer_sweep._LITERAL.findall(text)))
    inference = inference_of(found, root)
    crashed: list[Row] = []  # the launches that crashed, on cases the op may refuse
    try:
        while len(crashed) < _LAUNCHES:
            skip = frozenset(c.case for c in crashed)
            tiled = _tiled(row, root, found, ops, literals, tries, inference, skip, source)
            if tiled is None:
                break
            found, op, run = tiled
            row.outcome, row.reason, row.detail = "ran", "", ""
            row.case, row.tiling_key = str(run.case), run.tiling_key
            if ut_cases.elements(run.case) > _ELEMENTS:
                row.outcome, row.reason = "tiles, not launched", "its own test's case is too big"
                row.detail = f"{ut_cases.elements(run.case)} elements (launched up to {_ELEMENTS})"
                break
            launch(source, root, op, run, row)
            if row.outcome != "launch crash":
                break
            crashed.append(replace(row))
    finally:
        if inference is not None:
            inference.close()
    if crashed and row.outcome != "ran":  # no other case tiles, or each crashed
        vars(row).update(vars(crashed[0]))
    elif crashed:
        row.detail = "; ".join(f"{c.detail} (another case ran)" for c in crashed)


def _tiled(row: Row, root: Path, found, ops, literals, tries: int, inference, skip, source):
    """(tiling source, op definition, run) of the first case not in ``skip`` that tiles;
    None with ``row`` saying why not. Each pass links one more source of the project
    the tiling calls into."""
    while True:
        try:
            built = tiling.build(found, root)
        except infer.CompileFailure as err:
            row.outcome, row.detail = "tiling compile", str(err).replace(f"{root}/", "")
            row.missing = kernel_sweep.missing_in(_log(str(err)))
            row.reason = _compile_reason(row.detail)
            return None
        library = tiling.TilingLibrary(built.library, root)
        try:
            kernel_op = source.parent.parent
            op, run = tile(library, found, ops, literals, tries, inference, kernel_op, skip)
            break
        except infer.Unlinked as err:
            more = defined_in(err, root)
            if more is None or more in found.sources or len(found.sources) > _LINKED:
                row.outcome, row.reason = "tiling does not load", "needs another source"
                row.detail = err.symbol
                return None
            found = replace(found, sources=(*found.sources, more))
        finally:
            library.close()
    if op is None:
        row.outcome, row.reason, row.detail = run
        return None
    return found, op, run


def defined_in(err: infer.Unlinked, root: Path) -> Path | None:
    """The source of the project defining what the tiling misses: the function's (as
    :class:`~opsdk.cann.infer.Unlinked` found it), else the one source defining that
    method of its class (``Class::name(``: a name other classes' sources define too), or,
    for a class's vtable or type information, any of its methods."""
    if err.defined_in is not None:
        return err.defined_in
    table = re.match(r"(?:vtable|typeinfo) for (?:[\w:]+::)?(\w+)$", err.symbol)
    method = re.match(r"(?:[\w:]+::)?(\w+)::(~?\w+)\(", err.symbol)
    if table is None and method is None:
        return None
    owner, name = (table[1], r"~?\w+") if table else (method[1], re.escape(method[2]))
    defining = re.compile(rf"^[\w:<>*& \t]*\b{owner}::{name}\s*\(", re.M)
    sources = [
        path
        for path in _corpus.files(root, "**/op_host/**/*.cpp")
        if owner in (text := path.read_text(errors="replace")) and defining.search(text)
    ]
    return sources[0] if len(sources) == 1 else None


def _scope_kind(said: str) -> str:
    for words in _SCOPES:
        if words in said:
            return words
    return said


def report(rows: list[Row]) -> None:
    total, ran = len(rows), sum(r.outcome == "ran" for r in rows)
    print(f"\nall: {ran} of {total} entries compile and run on a case ({ran / max(total, 1):.0%})")
    for repo in sorted({r.repo for r in rows}):
        mine = [r for r in rows if r.repo == repo]
        print(f"  {repo}: {sum(r.outcome == 'ran' for r in mine)} of {len(mine)}")
    stages = collections.Counter(r.outcome for r in rows if r.outcome != "ran")
    print("\nnot run, by stage:")
    for stage, n in stages.most_common():
        print(f"  {n:4d}  {stage}")
        reasons = collections.Counter(r.reason for r in rows if r.outcome == stage)
        for reason, m in reasons.most_common(12):
            example = next(r for r in rows if r.outcome == stage and r.reason == reason)
            print(f"        {m:4d}  {reason[:110]}   e.g. {example.repo}/{example.entry}")
    for stage in ("kernel compile", "tiling compile"):
        mine = [r for r in rows if r.outcome == stage]
        names = collections.Counter(m for r in mine for m in r.missing)
        alone = collections.Counter(r.missing[0] for r in mine if len(r.missing) == 1)
        print(f"\n{stage}: missing identifiers (entries missing it; missing only it):")
        for name, n in names.most_common(30):
            print(f"  {n:4d} {alone.get(name, 0):4d}  {name}")
    found = [r for r in rows if r.findings]
    print(f"\nran with findings: {len(found)} entries")
    for row in found:
        print(f"  {row.repo}/{row.entry}: {row.findings[0][:160]}")
    seconds = sorted(r.seconds for r in rows)
    if seconds:
        print(
            f"\nseconds per entry: median {seconds[len(seconds) // 2]:.1f}, max {seconds[-1]:.1f}"
        )


def main(argv=None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="checkouts or bare mirrors")
    parser.add_argument("--every", type=int, default=1, help="every Nth entry: a sample")
    parser.add_argument("--limit", type=int, help="at most N entries per repository")
    parser.add_argument("--match", type=re.compile, help="only the entries whose path matches")
    parser.add_argument("--tries", type=int, default=30, help="searched cases per definition")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--experimental", action="store_true")
    parser.add_argument("--work", type=Path, help="extract here and keep it for the next run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # CannWarning: what the readers repair
    rows: list[Row] = []
    kernel.toolkit()  # the precompiled stand-ins, once before the threads share them
    _toolkit(tiling.TILING)
    with tempfile.TemporaryDirectory(prefix="kernel-run-sweep-") as tmp:
        for path in args.paths:
            kept = args.work / path.name if args.work else None
            if kept and kept.is_dir():
                repo, root = path.name.split("+")[-1], next(kept.iterdir())
            else:
                repo, root = _corpus.sources(path.resolve(), kept or Path(tmp) / "src", GLOBS)
            found = kernel_sweep.entries(root, args.experimental)
            if args.match:
                found = [f for f in found if args.match.search(f.relative_to(root).as_posix())]
            found = found[:: args.every][: args.limit]
            index = infer_sweep.definitions(root), tiling.find_all(root)

            def one(source, repo=repo, root=root, index=index):
                row = sweep_entry(repo, root, source, index, args.tries)
                said = f"{row.outcome}" + (f": {row.reason}" if row.reason else "")
                print(f"{row.repo}/{row.entry}: {said[:150]} ({row.seconds} s)", flush=True)
                return row

            with ThreadPoolExecutor(args.jobs) as pool:
                rows += pool.map(one, found)
    if not rows:
        sys.exit("no 910B vector kernel entry under the given paths")
    report(rows)
    _corpus.write_json(rows, args.json)
    return rows


if __name__ == "__main__":
    main()
