"""Usage contexts (#15): correct ops pass every context, and bugs only a context shows fail
there, in the layer that names them. One package, one matrix run, shared by the tests."""

import pytest

from opsdk.scaffold import NewRequest, into

INPLACE, OUT = "in place", "out of place"  # the add opsdk new writes, either way
SPECS = """
from opsdk.inputs import F32, Support, declare_supported

from .schema import OP

declare_supported(OP, [Support(F32(2, 3), F32(2, 3))])
"""

# name: (which add, (file, old, new): the bug, an edit of the scaffolded add's npu kernel
# (its first match) or fake). Each passes the compiled columns alone.
BUGS = {
    # writes from the start of the storage, as a kernel taking storage().data_ptr() does
    "offset": (INPLACE, ("kernels", "x.add_(y)", "x.as_strided(x.size(), x.stride(), 0).add_(y)")),
    # a vector kernel writing whole blocks of 4: past the tensor's end (on a device the
    # allocator pads a lone tensor, so only a neighbour in the same storage shows it)
    "tail": (
        INPLACE,
        (
            "kernels",
            "x.add_(y)",
            "x.add_(y)\n    room = x.untyped_storage().nbytes() // x.element_size()"
            " - x.storage_offset()\n    block = min(-(-x.numel() // 4) * 4, room)\n"
            "    x.as_strided((block,), (1,))[x.numel():] = 0",
        ),
    ),
    # the fake keeps x's layout (empty_like) where the kernel returns a contiguous tensor
    "strided_fake": (OUT, ("fake", "meta.elementwise(x, y)", "torch.empty_like(x)")),
    # the kernel returns one workspace per shape, so a second call overwrites the first's
    # (the eager column, not run here, sees it too: it checks a call keeps earlier outputs)
    "workspace": (
        OUT,
        (
            "kernels",
            "return torch.add(x, y).contiguous()",
            "out = _WORKSPACE.setdefault((x.shape, x.dtype), torch.empty_like(x).contiguous())"
            "\n    return torch.add(x, y, out=out)",
        ),
    ),
}
# bug -> context -> the layer of every compiled cell in that context (a context not named
# passes, as does every cell of the op alone)
EXPECTED_LAYERS = {
    "offset": {"view": "eager"},
    "tail": {"view": "eager"},
    "strided_fake": {"chain": "fake"},
    "workspace": {"twice": "eager"},
}
COMPILED = ("aot_eager", "ge", "npugraph_ex")


@pytest.fixture(scope="module")
def run(scaffolds, tmp_path_factory, opsdk_cli_module):
    # the scaffold's in-place and out-of-place adds, with their specs (8 cases)
    pkg = scaffolds.copy(
        tmp_path_factory.mktemp("contexts"), "my_iadd", inplace=True, namespace="ctx_test"
    )
    into.add(NewRequest("my_oadd"), pkg)
    for bug, (schema, (file, old, new)) in BUGS.items():
        # opsdk new's own add (no --schema: a schema of the user's gets skeletons)
        into.add(NewRequest(f"my_{bug}", inplace=schema == INPLACE), pkg)
        op_dir = next(pkg.glob(f"*/my_{bug}"))
        (op_dir / "specs.py").write_text(SPECS)
        path = op_dir / f"{file}.py"
        text = path.read_text()
        assert old in text, (bug, old)
        path.write_text(text.replace(old, new, 1) + "\n_WORKSPACE = {}\n")
    return opsdk_cli_module(
        "check",
        pkg,
        "--backend",
        ",".join(COMPILED),
        "--shapes",
        "static,dynamic",
        "--contexts",
        "all",
        json_report=True,
    )


def _layers(run) -> dict:
    """op -> {label: layer or status}, from the report."""
    found: dict[str, dict] = {}
    for r in run.report["results"]:
        op = r["op"].split("::")[1].removeprefix("my_")
        label = f"{r['column']}-{r['shapes']}" + (f"/{r['context']}" if r["context"] else "")
        found.setdefault(op, {})[label] = r["layer"] or r["status"]
    return found


def _expected(bug: str, label: str) -> str:
    context = label.partition("/")[2]
    if context == "buffer" and "-dynamic" in label:
        return "skip"  # Dynamo holds a module's buffers static
    return EXPECTED_LAYERS[bug].get(context, "pass")


def test_correct_ops_pass_every_context(run):
    layers = _layers(run)
    for op in ("iadd", "oadd"):
        wrong = {
            label: got
            for label, got in layers[op].items()
            if got
            != (
                "skip"
                if label.endswith("/buffer") and (op == "oadd" or "-dynamic" in label)
                else "pass"
            )
        }
        assert not wrong, (op, wrong)
    assert len(layers["iadd"]) == len(COMPILED) * 2 * 5  # the op alone and in 4 contexts


def test_each_bug_fails_only_in_its_context_and_layer(run):
    layers = _layers(run)
    wrong = {
        bug: {
            label: (_expected(bug, label), got)
            for label, got in layers[bug].items()
            if got != _expected(bug, label) and not (got == "skip" and label.endswith("/buffer"))
        }
        for bug in BUGS
    }
    assert not any(wrong.values()), {bug: diff for bug, diff in wrong.items() if diff}


def test_a_context_failure_names_its_context_and_that_the_op_alone_passes(run):
    [offset] = run.cells(op="ctx_test::my_offset", column="ge", shapes="static", context="view")
    assert offset["message"].startswith(
        "in context view (the op alone passes ge-static: a bug only this context shows): "
        "case F32(2, 3), F32(2, 3): call 0: inputs after the call (in-place writes)"
    )
    [chain] = run.cells(
        op="ctx_test::my_strided_fake", column="aot_eager", shapes="static", context="chain"
    )
    assert "case non-contiguous F32(2, 3), F32(2, 3)" in chain["message"]
    assert (
        "Cannot view a tensor with shape torch.Size([2, 3]) and strides (1, 2)" in chain["message"]
    )
    assert (
        "the npu kernel returned strides (3, 1) (contiguous), the fake function strides (1, 2) "
        "(not contiguous)" in chain["message"]
    )
    assert "the fake must return the strides the kernel returns" in chain["message"]
    [skipped] = run.cells(op="ctx_test::my_oadd", column="ge", shapes="static", context="buffer")
    assert skipped["status"] == "skip" and "writes no input" in skipped["message"]
