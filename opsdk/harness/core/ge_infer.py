"""Layer ``infer`` of the ``ge`` column: hold the op's fake function to its C++ inference.

On an NPU host GE runs the op's C++ InferShape / InferDataType when it compiles the graph
(a symbolic dim is -1) and again when it runs it (real sizes), and the kernel's outputs
are sized by it; TorchAir traced the graph with the fake function. Offline the GE
stand-in runs the CPU reference instead, written by the fake's author, so nothing would
compare them: here every node of the op the executor runs is inferred by the op's
compiled C++ (:mod:`opsdk.cann.infer`) twice, as GE would, and held to the outputs
TorchAir traced for the node (the FX values it records on them) and to those it produced.
The definition's declared output dtypes (``IrDef.dtypes``) hold the traced ones too,
C++ or not. An op whose IR names no C++ (``IrDef.infer_root``) is not checked against
C++ here; one whose C++ does not compile is reported ``not checked`` (a warning on the
cell), never passed.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path

from opsdk._runtime import irdef, spec
from opsdk.cann import CannOp, explore, infer
from opsdk.cann import declared as definition
from opsdk.cann.explore.torch_side import TorchOp, Unbound, fake_location
from opsdk.cann.infer.disagreements import declared, disagreements
from opsdk.errors import SpecError
from opsdk.harness.cell import CellFailure
from opsdk.harness.core import infer_nodes as nodes
from opsdk.offline.ge import observe
from opsdk.offline.ge.proto import dtype_name

__all__ = ["held"]

# (op, op type) -> the findings of its exploration in this process
_EXPLORED: dict[tuple[str, str], list[str]] = {}
_LIBRARIES: dict[tuple[str, str], tuple[infer.Library, infer.Inference] | str] = {}
_FUNCTIONS = {"InferShape": "infer_shape", "InferDataType": "infer_dtype"}


class Held:
    """The findings of one cell, judged after each case."""

    def __init__(self, qualname: str, shapes: str = "static"):
        self.qualname, self.shapes = qualname, shapes
        self.types = {ir.op_type for ir in irdef.for_op(qualname)}
        self.findings: list[str] = []
        self.marks: dict[str, str] = {}

    def node_ran(self, node_def, inputs: list, outputs: list, at_compile: list) -> None:
        ir = irdef.lookup(node_def.type)
        if node_def.type not in self.types or ir is None:
            return
        traced_dtypes = [nodes.traced(d)[1] for d in node_def.output_desc]
        self._declared(ir, node_def, traced_dtypes)
        if ir.infer_root:
            loaded = _library(ir.op_type, ir.infer_root)
            self._inferred(ir, loaded, node_def, inputs, outputs, at_compile, traced_dtypes)

    def _declared(self, ir: irdef.IrDef, node_def, traced_dtypes: list) -> None:
        """The traced output dtypes against the definition's declared ones (``IrDef.dtypes``),
        with or without an InferDataType."""
        if not ir.dtypes:
            return
        given = {nodes.ir_name(ir.inputs, d.name): dtype_name(d) for d in node_def.input_desc}
        names = [nodes.ir_name(ir.outputs, d.name) for d in node_def.output_desc]
        allowed = ir.output_dtypes(given)
        for problem in declared(allowed, list(zip(names, traced_dtypes, strict=True))):
            self._found(node_def, ir, "compile", given, problem, "ir.py (IrDef.dtypes)")

    def _inferred(
        self,
        ir: irdef.IrDef,
        loaded: tuple[infer.Library, infer.Inference] | str,
        node_def,
        inputs: list,
        outputs: list,
        inferred: list,
        traced_dtypes: list,
    ) -> None:
        if isinstance(loaded, str):
            warnings.warn(f"infer: {ir.op_type} not checked ({loaded})", stacklevel=3)
            return
        library, inference = loaded
        attrs = [nodes.attr(node_def, a) for a in ir.attrs]
        instances = nodes.instances(ir, node_def)
        descs = node_def.input_desc
        traced = [nodes.traced(d)[0] for d in node_def.output_desc]
        at_compile = [
            [nodes.given(descs[i], ir=ir, at=inferred[i]) for i in slots] for slots in instances
        ]
        at_run = [[nodes.given(descs[i], inputs[i], ir) for i in slots] for slots in instances]
        real = [tuple(t.shape) for t in outputs]
        real_dtypes = [nodes.ge(t.dtype).ge for t in outputs]
        # At compile, the node's traced outputs are the fake's; at run (when sizes were
        # symbolic) the outputs the reference produced, which the fake column ties to the fake.
        checks: list[tuple[str, list[list[infer.Given]], list, list, str]] = [
            ("compile", at_compile, traced, traced_dtypes, "fake")
        ]
        if at_compile != at_run:
            checks.append(("run", at_run, real, real_dtypes, "reference"))
        chip = infer.chip(ir.chips)  # what the C++ asks CANN's platform API
        for when, given, shapes, dtypes, other in checks:
            try:
                answer = library.infer(ir.op_type, given, attrs, len(outputs), node_def.name, chip)
            except infer.Crashed as crash:
                function = getattr(inference, _FUNCTIONS.get(crash.function or "", ""), None)
                message = f"{crash} in {function}" if function else str(crash)
                message += f" (inferring as {chip})"
                warnings.warn(f"infer: {ir.op_type} not checked: {message}", stacklevel=3)
                return
            found = disagreements(answer, shapes, dtypes, compile=when == "compile", other=other)
            for problem in found:
                function = (
                    inference.infer_dtype if problem.kind == "dtype" else inference.infer_shape
                )
                shapes_given = [[list(g.shape) for g in gs] for gs in given]
                at = f"{when} as {chip}"
                self._found(node_def, ir, at, shapes_given, problem, f"C++ {function}")
            if found:
                return
        if self.shapes == "static":  # once an op: its cases are GE's run-time ones
            self._explored(ir, library, inference, explore.case_of(at_run, attrs))

    def _explored(self, ir, library, inference, declared) -> None:
        """The op's input space beyond its declared cases (:mod:`opsdk.cann.explore`),
        explored once a process (a case run again alone, after a shared compile failed,
        gets the same findings) around ``declared``, the case that ran first."""
        key = (self.qualname, ir.op_type)
        if key not in _EXPLORED:
            cases = explore.budget()
            if not cases:
                return
            try:
                side = TorchOp(spec.resolve(self.qualname), ir, device="npu")
            except SpecError as err:
                fix = ": name it in IrDef.arg_names" if isinstance(err, Unbound) else ""
                warnings.warn(f"infer: {ir.op_type} not explored: {err}{fix}", stacklevel=3)
                _EXPLORED[key] = []
                return
            held = explore.hold(
                definition(ir) or CannOp(ir),
                library,
                inference,
                side,
                chip=infer.chip(ir.chips),
                fake_at=fake_location(self.qualname),
                cases=cases,
                pinned=side.pinned,
                anchors=(declared,),
            )
            for line in held["stricter"]:  # a note: see opsdk.cann.explore.hold
                warnings.warn(f"infer: the fake is stricter than the C++: {line}", stacklevel=3)
            _EXPLORED[key] = held["findings"]
        self.findings += _EXPLORED[key]
        if _EXPLORED[key]:
            self.marks.setdefault(ir.op_type, "C++ inference: explored")

    def _found(self, node_def, ir, when: str, given, problem, source: str) -> None:
        self.findings.append(
            f"{node_def.name} ({ir.op_type}) at {when}, inputs {given}: {problem}; {source}"
        )
        self.marks.setdefault(node_def.name, f"{source.split(' (')[0]}: {problem.kind}")

    def check(self) -> None:
        """Fail the cell in layer ``infer`` if a node disagreed."""
        if self.findings:
            findings, self.findings = self.findings, []
            raise CellFailure(
                "infer",
                "the op's CANN definition or C++ inference disagrees with its fake function: "
                + "; ".join(dict.fromkeys(findings))
                + ". Fix the side named likelier wrong (specs.py may need to refuse the case)",
                self.marks,
            )


@contextlib.contextmanager
def held(qualname: str, shapes: str = "static") -> Iterator[Held]:
    """Watch the op's nodes while the block runs; call :meth:`Held.check` per case."""
    watcher = Held(qualname, shapes)
    with observe.watching(watcher.node_ran):
        yield watcher


def _library(op_type: str, infer_root: str) -> tuple[infer.Library, infer.Inference] | str:
    """The compiled inference of the IR ``op_type`` under ``infer_root`` and where it is, or
    why there is none (a line)."""
    key = (op_type, infer_root)
    if key not in _LIBRARIES:
        root = Path(infer_root)
        inference = infer.find(op_type, root) if root.is_dir() else None
        if not root.is_dir():
            _LIBRARIES[key] = (
                f"no C++ InferShape of {op_type} was found beside its CANN definition when "
                "the package was made (IMPL_OP_INFERSHAPE or SetInferShape in the definition's "
                f"folder or its op's); copy it into {root} to hold the fake to it"
            )
        elif inference is None or inference.infer_shape is None:
            _LIBRARIES[key] = f"no C++ InferShape of {op_type} under {root}"
        else:
            loaded = nodes.compiled(inference, root)
            _LIBRARIES[key] = loaded if isinstance(loaded, str) else (loaded, inference)
    return _LIBRARIES[key]
