"""A broad set of schemas through `opsdk new` and `opsdk check`: every construct of
the schema language, in place and not, Python and C++ styles.

Accepted schemas become ops of two op packages (one Python, one C++, ops added
with --into, so each package costs one `opsdk check`). Each op registers and
every cell either passes (the default add, whose semantics opsdk knows) or fails
with "implement me" naming the skeleton file to write, never an error in some
other layer. Rejected schemas exit 2 with one line saying why.
"""

import re

import pytest

from opsdk import cli
from opsdk.scaffold import NewRequest, into, new

BACKENDS = "eager,opcheck,aot_eager,ge"

# (op name, schema or None for the default add, style, in place, autograd)
PYTHON_OPS = [
    ("add", None, "custom_op", False, False),
    ("add_inplace", None, "library", True, False),
    ("add_trained", None, "library", False, True),
    ("opt_tensor", "opt_tensor(Tensor x, Tensor? bias) -> Tensor", "custom_op", False, False),
    ("tensor_list", "tensor_list(Tensor[] xs) -> Tensor", "library", False, False),
    ("opt_list", "opt_list(Tensor x, Tensor?[] maybe) -> Tensor", "library", False, False),
    (
        "int_lists",
        "int_lists(Tensor x, int[] dims, int[2] kernel, int[]? pad=None) -> Tensor",
        "custom_op",
        False,
        False,
    ),
    (
        "sym_ints",
        "sym_ints(Tensor x, SymInt n, SymInt[] size) -> Tensor",
        "custom_op",
        False,
        False,
    ),
    (
        "scalars",
        "scalars(Tensor x, float a, float? b, bool flag, str mode, str? tag=None, "
        "ScalarType? dtype=None, Scalar s=1) -> Tensor",
        "library",
        False,
        False,
    ),
    (
        "defaults",
        'defaults(Tensor x, int n=3, float a=0.5, bool f=False, str mode="sum", '
        "int[2] k=[1, 1]) -> Tensor",
        "custom_op",
        False,
        False,
    ),
    (
        "kwonly",
        "kwonly(Tensor x, *, float alpha=1.0, int n=2) -> Tensor",
        "custom_op",
        False,
        False,
    ),
    ("overloaded", "overloaded.scaled(Tensor x, float s) -> Tensor", "library", False, False),
    ("two_returns", "two_returns(Tensor x) -> (Tensor, Tensor)", "custom_op", False, False),
    (
        "named_returns",
        "named_returns(Tensor x) -> (Tensor values, Tensor indices)",
        "library",
        False,
        False,
    ),
    ("list_return", "list_return(Tensor x) -> Tensor[]", "custom_op", False, False),
    (
        "two_mutated",
        "two_mutated(Tensor(a!) x, Tensor(b!) y, float alpha) -> ()",
        "custom_op",
        True,
        False,
    ),
    (
        "mutated_and_fresh",
        "mutated_and_fresh(Tensor(a!) x, Tensor y, *, int n=1) -> (Tensor out, Tensor stats)",
        "library",
        True,
        False,
    ),
    (
        "two_mutated_fresh",
        "two_mutated_fresh(Tensor(a!) x, Tensor(b!) y) -> Tensor",
        "custom_op",
        True,
        False,
    ),
    ("trained", "trained(Tensor x, Tensor? w, float a) -> Tensor", "custom_op", False, True),
]

CPP_OPS = [
    ("add", None, "cpp", False, False),
    (
        "rich",
        "rich(Tensor x, Tensor? w, Tensor[] xs, int[2] k, SymInt n, float? a, str mode, "
        "ScalarType? dtype=None, *, Scalar s=1, bool f=False) -> (Tensor values, Tensor indices)",
        "cpp",
        False,
        False,
    ),
    (
        "mutated_mix",
        "mutated_mix(Tensor(a!) x, Tensor(b!) y, int[]? pad=None) -> Tensor",
        "cpp",
        True,
        False,
    ),
    (
        "overloaded",
        "overloaded.lists(Tensor x, SymInt[] size, Tensor?[] maybe) -> Tensor[]",
        "cpp",
        False,
        True,
    ),
]

REJECTED = [
    (
        ["--schema", "bad(Tensor y, Tensor(a!) x) -> Tensor(a!)"],
        "bad(Tensor y, Tensor(a!) x) -> ()",
    ),
    (["--schema", "bad(Tensor(a) x) -> Tensor"], "view"),
    (["--schema", "bad(Tensor x) -> ()"], "mutates nothing"),
    (["--schema", "bad(Tensor x, Tensor x) -> Tensor"], "more than once"),
    (["--schema", "bad(int[](a!) x) -> ()"], "only plain 'Tensor(a!)'"),
    (["--schema", "bad(Tensor x"], "does not parse"),
    (["--schema", "aten::bad(Tensor x) -> Tensor"], "reserved"),
    (["--schema", "other(Tensor x) -> Tensor"], "make them match"),
    (["--schema", "bad(Tensor x, Tensor y) -> ()", "--inplace"], "(a!)"),
    (["--inplace", "--autograd"], "writes its inputs"),
    (["--schema", "bad(Tensor x, *, Tensor y) -> Tensor", "--autograd"], "keyword-only tensor"),
    (["--schema", "bad(Tensor x, complex c) -> Tensor", "--style", "cpp"], "no GE graph can take"),
]


def _op_package(out, namespace, ops):
    """The first op as a package, the others added with --into."""
    (name, schema, style, inplace, autograd), *rest = ops
    request = NewRequest(name, inplace, namespace, schema, style, out, autograd=autograd)
    package = new(request).path
    for name, schema, style, inplace, autograd in rest:
        into.add(NewRequest(name, inplace, namespace, schema, style, autograd=autograd), package)
    return package


def _check_outcomes(run, package, ops, namespace):
    """Every op reported in every cell; pass, or an implement-me failure naming its file."""
    assert run.code in (0, 1), run.stdout + run.stderr
    results = run.report["results"]
    reported = {r["op"].split(".")[0] for r in results}
    assert reported == {f"{namespace}::{op[0]}" for op in ops}
    assert len(results) == len(ops) * len(BACKENDS.split(","))
    problems = []
    for r in results:
        name = r["op"].split("::")[1].split(".")[0]
        working = next(op[1] is None for op in ops if op[0] == name)
        module_dir = (
            package / package.name if name == package.name else package / package.name / name
        )
        ok = (
            r["status"] == "pass"
            if working
            else (
                r["status"] == "fail"
                and r["layer"] in ("eager", "fake", "autograd")
                and r["message"].startswith("implement me: ")
                # Python names the file, C++ its path in the project.
                and any(
                    f" in {d}/" in r["message"]
                    for d in (module_dir, module_dir.relative_to(package))
                )
            )
        )
        if not ok:
            problems.append(
                f"{r['op']} [{r['column']}]: {r['status']} {r['layer']}: {r['message']}"
            )
    assert not problems, "\n".join(problems)


# every column but npugraph_ex, static, the op alone (usage contexts: test_context_matrix.py)
STATIC_ALONE = ("--backend", BACKENDS, "--shapes", "static", "--contexts", "none")


def test_python_schemas_register_and_pass_or_say_implement_me(tmp_path, opsdk_cli):
    package = _op_package(tmp_path, "schema_matrix", PYTHON_OPS)
    run = opsdk_cli("check", package, *STATIC_ALONE, json_report=True)
    _check_outcomes(run, package, PYTHON_OPS, "schema_matrix")


def test_cpp_schemas_register_and_pass_or_say_implement_me(tmp_path, opsdk_cli):
    # A fixed namespace and package name keep the C++ sources, so the build cache, stable.
    package = _op_package(tmp_path, "schema_matrix_cpp", CPP_OPS)
    run = opsdk_cli("check", package, *STATIC_ALONE, json_report=True)
    _check_outcomes(run, package, CPP_OPS, "schema_matrix_cpp")


@pytest.mark.parametrize(("argv", "needle"), REJECTED, ids=lambda v: str(v)[:40])
def test_rejected_schemas_exit_2_with_the_reason(tmp_path, capsys, argv, needle):
    out = tmp_path / "out"
    code = cli.main(["new", "bad", *argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1, err
    assert not out.exists() or not any(out.iterdir())


# Bodies for the skeletons of the Python ops: (kernel, fake). With them the columns get
# past the kernels, so each schema's converter, IR definition and GE execution are
# checked too, in every shape mode.
BODIES = {
    "opt_tensor": ("return x + (bias if bias is not None else 0)", "return torch.empty_like(x)"),
    "tensor_list": ("return xs[0] + xs[1]", "return torch.empty_like(xs[0])"),
    "opt_list": ("return x + sum(m for m in maybe if m is not None)", "return torch.empty_like(x)"),
    "int_lists": ("return x * len(dims) + kernel[0]", "return torch.empty_like(x)"),
    "sym_ints": ("return x * n + size[0]", "return torch.empty_like(x)"),
    "scalars": ("return x * a + (b or 0) + float(flag) + s", "return torch.empty_like(x)"),
    "defaults": ("return x * n * a + k[0]", "return torch.empty_like(x)"),
    "kwonly": ("return x * alpha + n", "return torch.empty_like(x)"),
    "overloaded": ("return x * s", "return torch.empty_like(x)"),
    "two_returns": ("return x + 1, x * 2", "return torch.empty_like(x), torch.empty_like(x)"),
    "named_returns": ("return x + 1, x * 2", "return torch.empty_like(x), torch.empty_like(x)"),
    "list_return": ("return [x + 1, x * 2]", "return [torch.empty_like(x), torch.empty_like(x)]"),
    "two_mutated": ("x.add_(y * alpha)\n    y.mul_(2)", None),
    "mutated_and_fresh": (
        "x.add_(y)\n    return x * n, y + 1",
        "return torch.empty_like(x), torch.empty_like(y)",
    ),
    "two_mutated_fresh": (
        "x.add_(y)\n    y.mul_(2)\n    return x + y",
        "return torch.empty_like(x)",
    ),
    "trained": ("return x * a + (w if w is not None else 0)", "return torch.empty_like(x)"),
}
# The backward of "trained" (x * a + w): the seed dynamo_dynamic_static_graphs.txt kind
# of backward graph, with aten ops that TorchAir converts and GE runs.
TRAINED_SAVE = ("ctx.save_for_backward(x, w)", "ctx.a, ctx.has_w = a, w is not None")
TRAINED_BACKWARD = "return grad_out * ctx.a, grad_out if ctx.has_w else None, None"
_SKELETON = re.compile(r'raise ImplementMe\(\s*__file__,\s*"\w+",\s*"[^"]*",?\s*\)')


def test_python_schemas_with_bodies_convert_and_run_through_ge(tmp_path, opsdk_cli):
    package = _op_package(tmp_path, "schema_bodies", PYTHON_OPS)
    for name, bodies in BODIES.items():
        for module, body in zip(("kernels.py", "fake.py"), bodies, strict=True):
            path = package / package.name / name / module
            text, count = _SKELETON.subn(lambda _, body=body: body, path.read_text())
            assert count == (2 if module == "kernels.py" else int(body is not None)), path
            path.write_text(text)
    autograd = package / package.name / "trained" / "autograd.py"
    text, count = _SKELETON.subn(TRAINED_BACKWARD, autograd.read_text())
    assert count == 1 and TRAINED_SAVE[0] in text
    autograd.write_text(text.replace(*TRAINED_SAVE))
    run = opsdk_cli(
        "check",
        package,
        "--backend",
        BACKENDS,
        "--contexts",
        "none",
        "--dump",
        tmp_path / "dump",
        json_report=True,
    )
    problems = []
    for r in run.report["results"]:
        if r["status"] != "pass":
            problems.append(f"{r['op']} [{r['column']}-{r['shapes']}]: {r['message']}")
    assert not problems, "\n".join(problems)
    assert len(run.report["results"]) == len(PYTHON_OPS) * 4 * 3
    backward_graph = tmp_path / "dump" / "schema_bodies.trained.default/ge-static/graph1_ge.py"
    assert "Mul" in backward_graph.read_text()
