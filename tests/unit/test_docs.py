"""The README and the user guides stay true to the code they describe.

Checks the guide's pages (docs/guide/*.md, docs/guide/zh-CN/*.md) against the CLI
parser, the column registry, the harness's layers, the public modules, opsdk._runtime.meta
and the repository, and against each other (same pages, headings, examples); the README
(at most 8 KB, its two commands, its matrix and columns) against the code and .ci/run;
and every relative link of them all.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from public_modules import public_modules

from opsdk.cli import parser as _parser
from opsdk.harness.cell import LAYERS

ROOT = Path(__file__).resolve().parents[2]
# One folder of pages per language; a guide's text is its pages in its index's order.
GUIDES = [ROOT / "docs" / "guide", ROOT / "docs" / "guide" / "zh-CN"]
INDEX_LINK = re.compile(r"^\s*- \[[^\]]*\]\(([\w-]+\.md)\)", re.M)
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
# `opsdk SUB ...` where a command starts: a line or span, after `&&`/`;`, a backquote,
# "next: " (what `opsdk new` prints), or environment assignments.
COMMAND = re.compile(
    r"(?:^|&&\s*|;\s*|`|next:\s+)(?:[A-Z_]+=\S+\s+)*"
    r"opsdk\s+([a-z][a-z-]*)(?=[\s`]|$)([^`\n]*)"
)


def _pages(guide: Path) -> list[Path]:
    """A guide's index and the pages it lists, in its order."""
    index = guide / "index.md"
    return [index, *(guide / name for name in INDEX_LINK.findall(index.read_text("utf-8")))]


def _text(path: Path) -> str:
    """A file's text, or a guide folder's: its pages joined."""
    if path.is_dir():
        return "\n".join(_text(page) for page in _pages(path))
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
    return _commands_of(_code(text, spans))


def _commands_of(lines: list[str]) -> list[tuple[str, str]]:
    """``(subcommand, rest of the command)`` for each ``opsdk SUB ...`` of ``lines``."""
    found = []
    for line in lines:
        for sub, rest in COMMAND.findall(line.replace("\\|", "|")):
            found.append((sub, re.split(r"&&|;|\|\|", rest)[0].strip()))
    return found


def _cells(row: str) -> list[str]:
    """A Markdown table row's cells (a ``\\|`` inside one is no border)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]]


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


@pytest.fixture(params=GUIDES, ids=("en", "zh-CN"))
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


def _table(text: str, marker: str) -> list[str]:
    """The first `cell` of each row of the table under ``<!-- marker ...``; a row that
    does not start with one fails (a table must name what it lists)."""
    block = text.split(f"<!-- {marker}", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("|")][2:]
    named = [m.group(1) for r in rows if (m := re.match(r"\|\s*`([^`]+)`", r))]
    assert len(named) == len(rows), f"a row of the {marker} table names no `{marker}`"
    return named


def test_layer_table_is_the_harness_layers(guide):
    named = _table(_text(guide / "failures.md"), "layers")
    assert named == list(LAYERS), f"{guide.name}: layer table {named} != LAYERS {LAYERS}"


def test_column_table_is_the_column_registry(guide):
    from opsdk.harness import columns

    named = _table(_text(guide / "check.md"), "columns")
    assert named == list(columns.names()), f"{guide.name}: columns {named} != {columns.names()}"


def test_public_module_table_is_the_public_modules(guide):
    """The table lists each public module once, and the names it gives of one (bare
    identifiers in code, e.g. `ensure_npu`) are in that module's ``__all__``."""
    import importlib

    text = _text(guide / "commands.md")
    named = _table(text, "public modules")
    assert sorted(named) == sorted(public_modules()), f"{guide.name}: public modules {named}"
    block = text.split("<!-- public modules", 1)[1].split("\n\n", 1)[0]
    for module in named:
        [row] = [r for r in block.splitlines() if r.startswith(f"| `{module}` |")]
        given = {n for n in SPAN.findall(_cells(row)[1]) if re.fullmatch(r"[A-Za-z_]\w*", n)}
        unknown = given - set(importlib.import_module(module).__all__)
        assert not unknown, f"{guide.name}: {module} has no {sorted(unknown)} in __all__"


def test_environment_table_names_every_variable_of_the_guide(guide):
    """The one table of environment variables lists each OPSDK_ variable a page names."""
    table = {v.split("=")[0] for v in _table(_text(guide / "commands.md"), "environment")}
    named = _variables(_text(guide))
    assert named <= table, f"{guide.name}: the environment table lacks {sorted(named - table)}"


def _leaf_parsers(parser, name: str = ""):
    """``(command, parser)`` of each command that takes no subcommand (``report merge``)."""
    _, nested = _subparsers(parser)
    if not nested:
        yield name, parser
    for sub, child in nested.items():
        yield from _leaf_parsers(child, f"{name} {sub}".strip())


def test_command_summary_names_every_flag(guide):
    """The command summary's rows of a command name each flag its parser has (those
    ``--help`` hides aside), so the one table of flags is complete."""
    import argparse

    rows = [
        line for line in _text(guide / "commands.md").splitlines() if line.startswith("| `opsdk")
    ]
    for command, parser in _leaf_parsers(_subparsers()[0]):
        if not command:
            continue
        shown = " ".join(_cells(r)[0] for r in rows if r.startswith(f"| `opsdk {command}"))
        assert shown, f"{guide.name}: the command summary has no `opsdk {command}` row"
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            flags = set(action.option_strings) - {"-h", "--help"}
            named = [f for f in flags if re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", shown)]
            assert named or not flags, (
                f"{guide.name}: the command summary's `opsdk {command}` rows lack {sorted(flags)}"
            )


def _headings(text: str) -> list[int]:
    return [len(m.group(1)) for m in re.finditer(r"^(#+) ", _prose(text), re.M)]


def test_guides_have_the_same_pages_and_structure():
    english, chinese = GUIDES
    assert [p.name for p in _pages(english)] == [p.name for p in _pages(chinese)]
    assert len(_pages(english)) >= 10
    for page in _pages(english):
        other = chinese / page.name
        assert _headings(_text(page)) == _headings(_text(other)), f"{page.name}: headings differ"
        levels = _headings(_text(page))
        assert levels[:1] == [1] and levels.count(1) == 1, f"{page.name}: one title, first"
        # Same examples too: every fenced block of the English page that is output or a
        # command (not a translated comment) is in the Chinese one.
        blocks = [FENCE.findall(_text(p)) for p in (page, other)]
        assert len(blocks[0]) == len(blocks[1]), f"{page.name}: fenced blocks differ"
        commands = [_commands(_text(p)) for p in (page, other)]
        assert commands[0] == commands[1], f"{page.name}: the pages show different commands"


def test_every_page_is_in_its_index(guide):
    listed = {p.name for p in _pages(guide)}
    assert {p.name for p in guide.glob("*.md")} == listed, f"{guide.name}: a page not in index.md"


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


def _variables(text: str) -> set[str]:
    """The OPSDK_ environment variables ``text`` names: C++ names aside (the CANN
    build's define and the macros of opsdk's headers)."""
    headers = "\n".join(p.read_text() for p in (ROOT / "opsdk").rglob("*.h"))
    macros = {"OPSDK_WITH_CANN", *re.findall(r"#define (OPSDK_[A-Z_]+)", headers)}
    return set(re.findall(r"\bOPSDK_[A-Z_]+\b", text)) - macros


def test_environment_variables_in_the_guide_are_read_by_opsdk(guide):
    source = "\n".join(p.read_text() for p in (ROOT / "opsdk").rglob("*.py"))
    for name in _variables(_text(guide)):
        assert f'"{name}"' in source, f"{guide.name}: opsdk never reads {name}"


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped,
    spaces as ``-``; a repeated heading gets ``-1``, ``-2``, ...)."""
    found: set[str] = set()
    for heading in re.findall(r"^#+ (.*)$", _prose(text), re.M):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(
            next(
                f"{anchor}{n}"
                for n in ("", *(f"-{i}" for i in range(1, 99)))
                if f"{anchor}{n}" not in found
            )
        )
    return found


def _documents() -> list[Path]:
    """The README, the guides' pages and the other documents beside them."""
    return [ROOT / "README.md", *(p for g in GUIDES for p in _pages(g))] + sorted(
        (ROOT / "docs").glob("*.md")
    )


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc):
    """Each relative link of the README and the pages reaches a file, and its
    ``#anchor``, when it has one, a heading of that file."""
    for target in re.findall(r"\]\(([^)\s]+)\)", _prose(_text(doc))):
        if "://" in target or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        assert linked.exists(), f"{doc.name}: broken link {target}"
        if anchor:
            assert anchor in _anchors(_text(linked)), f"{doc.name}: no heading for {target}"


def test_readme_links_both_guides():
    readme = _text(ROOT / "README.md")
    for g in GUIDES:
        link = (g / "index.md").relative_to(ROOT).as_posix()
        assert f"({link})" in readme, f"README.md does not link {link}"


README_LIMIT = 8 * 1024


def test_readme_is_a_front_page():
    """At most 8 KB, opening with the two commands: the main job (scaffold an op, run
    its matrix), whose opsdk commands parse, and the test command .ci/run runs."""
    readme = _text(ROOT / "README.md")
    assert len(readme.encode()) <= README_LIMIT, f"README.md is {len(readme.encode())} bytes"
    first = FENCE.search(readme)
    assert readme[: first.start()].strip() == "# opsdk", "README.md must open with its commands"
    main, tests = first.group(1).splitlines()
    commands = _commands_of([part.strip() for part in main.split("&&")])
    assert [sub for sub, _ in commands] == ["new", "check"], main
    parser, _ = _subparsers()
    for sub, rest in commands:
        parser.parse_args([sub, *shlex.split(rest)])
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci, f".ci/run does not run the README's test command {tests!r}"


def test_readme_install_table_is_pyproject_s_extras():
    """One row for the base install, one per extra pyproject.toml defines."""
    import tomllib

    extras = tomllib.loads(_text(ROOT / "pyproject.toml"))["project"]["optional-dependencies"]
    rows = [
        re.search(r'\.\[(\w+)\]"$', cell) for cell in _table(_text(ROOT / "README.md"), "extras")
    ]
    named = [row.group(1) if row else None for row in rows]
    assert named.count(None) == 1, "README.md: one row installs opsdk without an extra"
    assert sorted(n for n in named if n) == sorted(extras), f"README.md: extras {named}"


def test_readme_column_list_is_the_column_registry():
    from opsdk.harness import columns

    block = _text(ROOT / "README.md").split("<!-- columns", 1)[1].split("\n\n", 1)[0]
    named = re.findall(r"^- `([^`]+)`:", block, re.M)
    assert named == list(columns.names()), f"README.md: columns {named} != {columns.names()}"


def test_readme_matrix_is_one_opsdk_prints():
    """The matrix shown is what `opsdk check` prints (to a pipe: 100 characters wide)
    for the cells it shows, read back by its own legend: layout, legend and summary
    are the renderer's, its columns the registry's (a context after the `/`)."""
    from opsdk import report
    from opsdk.harness import columns
    from opsdk.harness.cell import Result
    from opsdk.harness.variants import contexts

    [block] = [b for b in FENCE.findall(_text(ROOT / "README.md")) if "(s = static" in b]
    shown = block.split("\nwrote ", 1)[0].rstrip("\n")
    legend = re.search(r"^\((.*); (.*)\)$", shown, re.M)
    modes = dict(re.findall(r"(\w) = (\w+)", legend.group(1)))
    status = dict(re.findall(r"(\S+) ([a-z ]+?)(?:,|$)", legend.group(2)))
    results = []
    for table in shown[: legend.start()].strip("\n").split("\n\n"):
        heads, _, *rows = table.splitlines()
        cells = [(variant, mode) for variant in heads.split() for mode in modes.values()]
        for row in rows:
            op, *marks = row.split()
            for (variant, mode), mark in zip(cells, marks, strict=True):
                column, _, context = variant.partition("/")
                assert column in columns.names(), f"README.md: no column {column}"
                assert context in ("", *contexts.names()), f"README.md: no context {context}"
                results.append(Result(op, column, mode, status[mark], context=context or None))
    assert report.matrix(results, width=100) == shown, "README.md: not the matrix opsdk prints"


def _code_after_docstring(path: Path) -> str:
    """A module's text after its docstring: the code a reader copies."""
    import ast

    lines = path.read_text().splitlines(keepends=True)
    return "".join(lines[ast.parse("".join(lines)).body[0].end_lineno :]).lstrip("\n")


def test_the_specs_shown_for_the_default_add_are_what_opsdk_new_writes():
    """Read from the example `opsdk new my_add` wrote, which tests/e2e/test_examples.py
    holds to what it writes now (running it here would start ruff)."""
    written = _code_after_docstring(
        ROOT / "examples" / "custom_ops" / "my_add" / "my_add" / "specs.py"
    )
    for doc in GUIDES:
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


def _glossary_spans() -> list[str]:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    return SPAN.findall(doc.split("\n## Glossary\n", 1)[1])


def _resolves(dotted: str) -> bool:
    """``harness.cell.Cell`` (under ``opsdk.``) names a module or one of its attributes."""
    import importlib

    parts = dotted.removeprefix("opsdk.").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(["opsdk", *parts[:cut]]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name, None)
        return found is not None
    return False


def test_the_glossary_names_what_the_code_has():
    """The glossary (docs/architecture.md) names modules, classes and constants; a rename
    that leaves it behind fails here: dotted names resolve, paths exist, and a class or
    constant's bare name is defined in opsdk (or the import test's layer lists)."""
    spans = _glossary_spans()
    dotted = [
        s for s in spans if re.fullmatch(r"(harness|audit|axes|cann|errors|opsdk)(\.\w+)+", s)
    ]
    paths = [s for s in spans if "/" in s and " " not in s and not s.startswith("--")]
    named = [s for s in spans if re.fullmatch(r"[A-Z][A-Za-z]+|[A-Z][A-Z_]+", s)]
    assert len(dotted) > 10 and len(paths) > 10 and len(named) > 5, (dotted, paths, named)
    assert [d for d in dotted if not _resolves(d)] == []
    assert [p for p in paths if not list(ROOT.glob(p)) and not list((ROOT / "opsdk").glob(p))] == []
    sources = "\n".join(
        path.read_text()
        for path in [*(ROOT / "opsdk").rglob("*.py"), ROOT / "tests/unit/test_imports.py"]
    )
    cann_words = {"REG_OP", "OpDef"}  # CANN's names of its definitions, not opsdk's
    undefined = [
        n
        for n in named
        if n not in cann_words and not re.search(rf"^\s*(class {n}\b|{n} = )", sources, re.M)
    ]
    assert undefined == [], f"the glossary names {undefined}, which opsdk does not define"
