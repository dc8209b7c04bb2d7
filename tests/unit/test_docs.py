"""The user guides stay true to the code they describe.

Checks docs/guide.md and docs/guide.zh-CN.md against the CLI parser, the
harness's layers, opsdk._runtime.meta and the repository, and against each other.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from opsdk.cli import parser as _parser
from opsdk.harness.cell import LAYERS

ROOT = Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "docs" / "guide.md", ROOT / "docs" / "guide.zh-CN.md"]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
# `opsdk SUB ...` where a command starts: a line or span, after `&&`/`;`, a backquote,
# "next: " (what `opsdk new` prints), or environment assignments.
COMMAND = re.compile(
    r"(?:^|&&\s*|;\s*|`|next:\s+)(?:[A-Z_]+=\S+\s+)*"
    r"opsdk\s+([a-z][a-z-]*)(?=[\s`]|$)([^`\n]*)"
)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """The guide without its fenced blocks (a ``#`` comment in code is no heading)."""
    return FENCE.sub("", text)


def _code(text: str, spans: bool = True) -> list[str]:
    """Every line of every fenced block, and every inline code span of the prose."""
    lines = [line for block in FENCE.findall(text) for line in block.splitlines()]
    return lines + (SPAN.findall(_prose(text)) if spans else [])


def _commands(text: str, spans: bool = True) -> list[tuple[str, str]]:
    """``(subcommand, rest of the command)`` for each ``opsdk SUB ...`` in code
    (fenced blocks only, without ``spans``)."""
    found = []
    for line in _code(text, spans):
        for sub, rest in COMMAND.findall(line.replace("\\|", "|")):
            found.append((sub, re.split(r"&&|;|\|\|", rest)[0].strip()))
    return found


def _subparsers(parser=None):
    parser = parser or _parser()
    found = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return parser, (found[0].choices if found else {})


def _options(parser, rest: str) -> set[str]:
    """The flags of the (sub)command ``rest`` runs: ``report merge ...`` is merge's."""
    _, nested = _subparsers(parser)
    words = rest.split()
    if nested and words and words[0] in nested:
        return _options(nested[words[0]], " ".join(words[1:]))
    return set(parser._option_string_actions)


@pytest.fixture(params=GUIDES, ids=lambda p: p.name)
def guide(request) -> Path:
    return request.param


def test_every_command_and_flag_in_the_guide_exists(guide):
    parser, subs = _subparsers()
    commands = _commands(_text(guide))
    assert {"new", "check", "coverage", "doctor", "ir", "fetch-torchair"} <= {
        s for s, _ in commands
    }
    for sub, rest in commands:
        assert sub in subs, f"{guide.name}: `opsdk {sub}` is not a subcommand ({sorted(subs)})"
        known = _options(subs[sub], rest)
        for flag in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", rest):
            assert flag in known, f"{guide.name}: `opsdk {sub}` has no flag {flag} ({rest})"


def test_every_runnable_command_in_the_guide_parses(guide):
    """The commands of the code blocks, placeholders ([...], NAME, ...) aside, parse
    with the real parser, so their choices (--backend, --shapes, --style, --format)
    are valid too."""
    parser, _ = _subparsers()
    runnable = [
        (sub, rest)
        for sub, rest in _commands(_text(guide), spans=False)
        if not re.search(r"\[|\.\.\.|\b[A-Z]{2,}\b|\$\{\{", rest)  # ${{ }}: GitHub's
    ]
    assert len(runnable) >= 10, runnable
    for sub, rest in runnable:
        argv = [sub, *shlex.split(rest)]
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"{guide.name}: `opsdk {' '.join(argv)}` does not parse ({exc})")


def test_layer_table_is_the_harness_layers(guide):
    text = _text(guide)
    before_table = text.split("<!-- layers", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in before_table.splitlines() if line.startswith("|")]
    named = [m.group(1) for r in rows[2:] if (m := re.match(r"\|\s*`([^`]+)`", r))]
    assert len(named) == len(rows) - 2, f"{guide.name}: a layer row without a `layer` name"
    assert named == list(LAYERS), f"{guide.name}: layer table {named} != LAYERS {LAYERS}"


def test_guides_have_the_same_structure():
    levels = [
        [len(m.group(1)) for m in re.finditer(r"^(#+) ", _prose(_text(g)), re.M)] for g in GUIDES
    ]
    assert levels[0] == levels[1], "guide.md and guide.zh-CN.md differ in their headings"
    assert levels[0].count(2) >= 10
    # Same examples too: every fenced block of the English guide that is
    # output or a command (not a translated comment) is in the Chinese one.
    english, chinese = (FENCE.findall(_text(g)) for g in GUIDES)
    assert len(english) == len(chinese)
    commands = [_commands(_text(g)) for g in GUIDES]
    assert commands[0] == commands[1], "the guides show different opsdk commands"


def test_meta_helpers_named_in_the_guide_exist(guide):
    from opsdk._runtime import meta

    named = set(re.findall(r"\bmeta\.([a-z_]+)\b", _text(guide)))
    assert named, guide.name
    unknown = named - set(meta.__all__)
    assert not unknown, f"{guide.name}: opsdk._runtime.meta has no {sorted(unknown)}"


def test_input_spec_names_in_the_guide_exist(guide):
    """What the guides import from opsdk._runtime.inputs, the dtype constructors they list
    (``F32/F16/...`` or one by one) and the keywords they pass to them and to
    declare_supported are opsdk._runtime.inputs' own."""
    import inspect

    from opsdk._runtime import inputs

    text = _text(guide)
    imported = {
        name.strip()
        for names in re.findall(r"from opsdk\.inputs import ([\w, ]+)", text)
        for name in names.split(",")
    }
    assert {"Support", "declare_supported"} <= imported, guide.name
    dtype_name = r"(?:B?F|I)\d+|BOOL"
    constructors = set(re.findall(rf"\b({dtype_name})\((?=[\d)])", text))
    constructors |= {n for n in SPAN.findall(text) if re.fullmatch(dtype_name, n)}
    assert {"F32", "F16", "BF16", "I8", "I32", "I64", "BOOL"} <= constructors, guide.name
    named = imported | constructors | set(re.findall(r"\binputs\.([A-Za-z_]\w*)", text))
    unknown = named - set(inputs.__all__)
    assert not unknown, f"{guide.name}: opsdk._runtime.inputs has no {sorted(unknown)}"
    spec_kwargs = set(inspect.signature(inputs.F32).parameters) - {"dims"}
    used = set(re.findall(r"\b(?:F32|F16|BF16|I8|I32|I64|BOOL)\([^()]*?\b(\w+)=", text))
    assert used <= spec_kwargs, f"{guide.name}: F32(...) takes no {sorted(used - spec_kwargs)}"
    declare_kwargs = set(inspect.signature(inputs.declare_supported).parameters)
    for keyword in ("tolerances", "non_contiguous", "value_range", "static_dims"):
        if f"{keyword}=" in text:
            assert keyword in declare_kwargs | spec_kwargs, f"{guide.name}: no {keyword}="


def test_environment_variables_in_the_guide_are_read_by_opsdk(guide):
    source = "\n".join(p.read_text() for p in (ROOT / "opsdk").rglob("*.py"))
    # C++ names, not variables: the CANN build's define and the macros of opsdk's headers
    headers = "\n".join(p.read_text() for p in (ROOT / "opsdk").rglob("*.h"))
    macros = {"OPSDK_WITH_CANN", *re.findall(r"#define (OPSDK_[A-Z_]+)", headers)}
    for name in set(re.findall(r"\bOPSDK_[A-Z_]+\b", _text(guide))) - macros:
        assert f'"{name}"' in source, f"{guide.name}: opsdk never reads {name}"


def test_relative_links_resolve(guide):
    for target in re.findall(r"\]\(([^)#]+)\)", _text(guide)):
        if "://" not in target:
            assert (guide.parent / target).exists(), f"{guide.name}: broken link {target}"


def test_readme_links_both_guides():
    readme = _text(ROOT / "README.md")
    for g in GUIDES:
        assert f"(docs/{g.name})" in readme, f"README.md does not link docs/{g.name}"


def _code_after_docstring(path: Path) -> str:
    """A module's text after its docstring: the code a reader copies."""
    import ast

    lines = path.read_text().splitlines(keepends=True)
    return "".join(lines[ast.parse("".join(lines)).body[0].end_lineno :]).lstrip("\n")


def test_the_specs_shown_for_the_default_add_are_what_opsdk_new_writes(scaffolds):
    written = _code_after_docstring(scaffolds.shared("my_add") / "my_add" / "specs.py")
    for doc in (ROOT / "README.md", *GUIDES):
        shown = [block for block in FENCE.findall(_text(doc)) if "  # empty" in block]
        assert len(shown) == 1, f"{doc.name}: one specs.py block of the default add"
        assert shown[0] == written, f"{doc.name}: the specs.py shown is not what opsdk new writes"


def test_the_reg_op_export_shown_is_what_opsdk_ir_prints(guide):
    """The guides' `opsdk ir /tmp/g/my_op --format reg_op` output, for their my_op: the
    schema of §3 and the fake function of §5 (no specs: the default float32 case)."""
    import torch

    from opsdk._runtime import converters, meta, spec
    from opsdk.cann import exports
    from opsdk.harness import dtypes

    text = _text(guide)
    assert '"my_op(Tensor x, float scale) -> Tensor"' in text and "meta.same_as(x)" in text
    lib = torch.library.Library("docs_ir", "FRAGMENT")
    lib.define("my_op(Tensor x, float scale) -> Tensor")
    torch.library.register_fake("docs_ir::my_op", lambda x, scale: meta.same_as(x), lib=lib)
    ir = converters.ir_def_for(spec.of(torch.ops.docs_ir.my_op.default))
    blocks = FENCE.findall(text)
    [at] = [
        i for i, b in enumerate(blocks) if b.startswith("opsdk ir /tmp/g/my_op --format reg_op")
    ]
    printed = exports.reg_op(dtypes.model(ir))
    # The block trims with "..." lines: what is left is the output's, in order.
    shown = [part for part in re.split(r"^\.\.\.\n", blocks[at + 1], flags=re.M) if part]
    assert "REG_OP(MyOp)" in "".join(shown), guide.name
    position = 0
    for part in shown:
        found = printed.find(part, position)
        assert found >= 0, f"{guide.name}: opsdk ir prints no\n{part}\nbut:\n{printed}"
        position = found + len(part)
