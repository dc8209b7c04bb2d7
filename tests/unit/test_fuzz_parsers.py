"""Fuzz: whatever text reaches the schema parser or the command line's parsers, the answer
is a parsed result or a refusal (an OpsdkError, argparse's usage error) — never another
exception, which the user would see as a traceback. Deterministic (derandomized) and
bounded (examples and a deadline per example): a few seconds on every run."""

import string
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opsdk import cli
from opsdk._runtime import spec
from opsdk.errors import OpsdkError

BUDGET = settings(
    derandomize=True,
    database=None,
    max_examples=200,
    deadline=timedelta(seconds=2),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Pieces of schemas, the kinds of number torch's parser reads with stoll/stod among them.
NUMBERS = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(-9, 9), st.integers(-999, 999)),
    st.integers(0, 2**70).map(hex),
    st.sampled_from(["inf", "nan", "-inf", "1_000", "010", "0b1", ".5", "5.", "1e", "--1"]),
)
TYPES = st.sampled_from(
    ["Tensor", "Tensor?", "Tensor[]", "Tensor(a!)", "int", "int[]", "int[2]", "SymInt",
     "float", "float[]", "bool", "str", "Scalar", "ScalarType?", "int?", "Layout", "Foo"]
)  # fmt: skip
NAMES = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), st.text(max_size=6))
DEFAULTS = st.one_of(
    NUMBERS,
    st.lists(NUMBERS, max_size=3).map(lambda items: f"[{', '.join(items)}]"),
    st.sampled_from(["True", "False", "None", "'a'", '"b"', "[]", "[", "'"]),
)
JUNK = st.text(alphabet=string.printable + "éü中", max_size=20)


@st.composite
def arguments(draw):
    text = f"{draw(TYPES)} {draw(NAMES)}"
    return text + f"={draw(DEFAULTS)}" if draw(st.booleans()) else text


@st.composite
def schemas(draw):
    args = draw(st.lists(st.one_of(arguments(), JUNK), max_size=5))
    head = draw(st.sampled_from(["f", "ns::f", "f.over", "", "ns::", "f_"]))
    returns = draw(st.sampled_from(["Tensor", "()", "(Tensor, Tensor)", "Tensor(a!)", "int"]))
    text = f"{head}({', '.join(args)}) -> {returns}"
    return draw(st.one_of(st.just(text), JUNK, st.builds(lambda t, j: t + j, st.just(text), JUNK)))


@BUDGET
@given(text=schemas(), name=st.one_of(st.none(), st.just("f")))
def test_a_schema_either_parses_or_is_refused_in_one_line(text, name):
    try:
        op = spec.parse(text, name=name)
    except OpsdkError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert op.name.isidentifier() and len(op.args) <= spec.MAX_ARGUMENTS


# Flags that take a value (their type functions are parsers of their own), with values.
FLAGS = st.sampled_from(
    ["--shard", "--timeout", "--backend", "--shapes", "--options", "--contexts", "--graphs",
     "--updatable", "--schema", "--style", "--namespace", "--out", "--from-cann", "-k",
     "--checks", "--format", "--json", "--attach"]
)  # fmt: skip
SWITCHES = st.sampled_from(
    ["--inplace", "--pair", "--force", "--isolate", "--no-cache", "--last-failed", "--autograd"]
)
VALUES = st.one_of(
    NUMBERS,
    st.builds(lambda i, n: f"{i}/{n}", NUMBERS, NUMBERS),
    st.sampled_from(["eager,ge", "all", "none", ",", "", "static,nope", "library", "x::y"]),
    JUNK,
)
COMMANDS = st.sampled_from(["new", "check", "audit", "graph", "coverage", "ir", "doctor", "nope"])


@st.composite
def argvs(draw):
    argv = [draw(COMMANDS)]
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            argv += [draw(FLAGS), draw(VALUES)]
        elif kind == 1:
            argv.append(draw(SWITCHES))
        elif kind == 2:
            argv.append(f"{draw(FLAGS)}={draw(VALUES)}")
        else:
            argv.append(draw(JUNK))
    return argv


def _asks_for_help(argv) -> bool:
    """An argument argparse takes for -h/--help or --version (it accepts a flag's prefix)."""
    flags = [a for a in argv if a.startswith("--") and len(a) > 2]
    return "-h" in argv or any(f.startswith(a) for a in flags for f in ("--help", "--version"))


@BUDGET
@given(argv=argvs())
def test_a_command_line_either_parses_or_is_a_usage_error(argv, capsys):
    try:
        cli._parse(argv)
    except SystemExit as done:
        assert done.code == 2 or (done.code == 0 and _asks_for_help(argv)), (argv, done.code)
    except OpsdkError as err:
        assert "\n" not in str(err)
    capsys.readouterr()  # argparse's usage and help text
