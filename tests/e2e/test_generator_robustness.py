"""Property tests: whatever a user types, `opsdk new` either writes a whole package
under --out or refuses with one line; it never crashes, never writes elsewhere,
and never leaves partial files."""

import keyword
import string

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from opsdk._runtime import spec
from opsdk.errors import OpsdkError
from opsdk.scaffold import NewRequest, build_spec, new

IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
TEXT = st.text(alphabet=string.printable + "éü中文 ", max_size=30)
BAD_NAMES = st.sampled_from(sorted(keyword.kwlist) + ["aten", "__x", "1a", "a" * 300])
NAMES = st.one_of(IDENT, IDENT, IDENT, TEXT, BAD_NAMES)  # mostly valid, so most cases generate

TYPES = [
    "Tensor",
    "Tensor?",
    "Tensor[]",
    "int",
    "SymInt",
    "float",
    "bool",
    "str",
    "int[]",
    "int[2]",
    "float?",
    "ScalarType?",
    "Scalar",
    "Tensor(a!)",
    "Tensor(a)",
    "Tensor(b!)",
]
RETURNS = [
    "()",
    "Tensor",
    "(Tensor, Tensor)",
    "Tensor(a!)",
    "Tensor[]",
    "(Tensor a, Tensor b)",
    "int",
]


@st.composite
def schemas(draw):
    args = draw(st.lists(st.tuples(st.sampled_from(TYPES), IDENT), max_size=4))
    body = ", ".join(f"{t} {n}" for t, n in args)
    if draw(st.integers(0, 4)) == 0:
        body = draw(TEXT)  # arbitrary junk in the argument list
    return f"({body}) -> {draw(st.sampled_from(RETURNS))}"  # the op name comes from NAME


# A bounded budget: CI runs these on every push.
SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(name=NAMES, namespace=st.one_of(st.none(), NAMES), schema=st.one_of(st.none(), schemas()))
def test_spec_either_parses_or_refuses_with_one_line(name, namespace, schema):
    try:
        op = build_spec(NewRequest(name, namespace=namespace, schema=schema))
    except OpsdkError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert op.name.isidentifier() and op.namespace.isidentifier()
    assert not keyword.iskeyword(op.name) and op.namespace not in spec.RESERVED_NAMESPACES


@SETTINGS
@given(
    name=NAMES,
    schema=st.one_of(st.none(), schemas()),
    inplace=st.booleans(),
    autograd=st.booleans(),
)
def test_new_writes_all_under_out_or_nothing(tmp_path_factory, name, schema, inplace, autograd):
    root = tmp_path_factory.mktemp("gen")
    out = root / "out dir é"
    try:
        result = new(NewRequest(name, inplace=inplace, schema=schema, out=out, autograd=autograd))
    except OpsdkError as err:
        event("refused")
        assert "\n" not in str(err)
        assert not out.exists(), "a refusal left --out behind"
        return
    event("generated")
    written = [p for p in root.rglob("*") if p.is_file()]
    assert written and all(p.is_relative_to(result.path) for p in written)
    assert result.path.parent == out
    # Every generated module compiles: user text reached the code only escaped.
    for module in result.path.rglob("*.py"):
        compile(module.read_text(), str(module), "exec")
