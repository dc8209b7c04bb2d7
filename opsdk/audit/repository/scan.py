"""An op library's C++ registrations read from its sources, as its compiler sees them.

Each C/C++ file is read with its comments blanked and the branches of its ``#if`` s that
the build's macros (``defines``) leave out blanked too, line numbers kept. A block is a
``TORCH_LIBRARY`` / ``TORCH_LIBRARY_FRAGMENT`` / ``TORCH_LIBRARY_IMPL`` or a macro the
project wraps one in (vllm-ascend's ``TORCH_LIBRARY_EXPAND(CONCAT(_C, _ascend), ops)``),
its arguments expanded through the project's own ``#define`` s; in its body every
``VAR.def(...)`` is a schema (adjacent string literals joined) and every ``VAR.impl(...)``
a registration under its dispatch key. Nothing is compiled here: what a Meta function
does is :mod:`opsdk.audit.repository.build`'s.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Function", "Registration", "Registry", "Schema", "call_args", "read", "sources"]

SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh")
SKIPPED = {".git", "build", "dist", "node_modules", "__pycache__", ".opsdk_cache"}
HEADS = ("TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT", "TORCH_LIBRARY_IMPL")
# what makes a file worth reading: a registration, a macro, a kernel's aclnn call or an
# aclnn's definition (:mod:`opsdk.audit.repository.writes` reads the last two)
_WORTH_READING = ("TORCH_LIBRARY", "#define", "EXEC_NPU_CMD", "GetWorkspaceSize", "OpDef")
_OPDEF = re.compile(r"\bclass\s+(\w+)\s*:\s*public\s+OpDef\b")
_BODY_OPENS = re.compile(r"\s*(?:const\s*)?(?:noexcept\s*)?(?:->[^{;]*)?\{")
_IDENT_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"', re.S)  # a backslash-newline continues one
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)(.*)$")
_DEFINE = re.compile(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)", re.S)
# the dispatch keys a registration names, as torch spells them in C++
_KEY = re.compile(r"(?:torch|c10)::(?:k(\w+)|DispatchKey::(\w+))|\"(\w+)\"")


@dataclass(frozen=True)
class Schema:
    """One ``def``: its schema text as torch would parse it, where it is, and the C++
    function it registers with it (a catch-all kernel), if any."""

    namespace: str
    text: str
    path: Path
    line: int
    kernel: str | None = None

    @property
    def name(self) -> str:
        """``op`` or ``op.overload``, as a registration names it."""
        return self.text.partition("(")[0].strip()


@dataclass(frozen=True)
class Registration:
    """One ``impl``: the op name, its dispatch key, the C++ function (last name of its
    qualified name; None for a lambda) and where."""

    namespace: str
    name: str
    key: str
    function: str | None
    path: Path
    line: int


@dataclass(frozen=True)
class Function:
    """A C++ function's definition: its parameters' text and its body."""

    name: str
    path: Path
    line: int
    params: list[str]
    body: str
    body_line: int


@dataclass
class Registry:
    """What a library's C++ registers, and its active text (to look functions up)."""

    schemas: list[Schema] = field(default_factory=list)
    registrations: list[Registration] = field(default_factory=list)
    texts: dict[Path, str] = field(default_factory=dict)

    @functools.cached_property
    def opdefs(self) -> dict[str, tuple[Path, int]]:
        """Each ``class X : public OpDef`` (an AscendC op's definition): X -> where its
        body starts (path, offset)."""
        found: dict[str, tuple[Path, int]] = {}
        for path, text in self.texts.items():
            if "OpDef" in text:
                for match in _OPDEF.finditer(text):
                    found.setdefault(match.group(1), (path, match.end()))
        return found

    def functions(self, name: str) -> list[Function]:
        """Every definition of a function called ``name`` (any namespace)."""
        found = []
        pattern = re.compile(rf"\b{re.escape(name)}\s*\(")
        for path, text in self.texts.items():
            if name not in text:
                continue
            for match in pattern.finditer(text):
                if _is_call(text, match.start()):
                    continue
                args, end = _balanced(text, match.end() - 1)
                rest = _BODY_OPENS.match(text, end)
                if args is None or rest is None:
                    continue
                open_at = rest.end() - 1
                body, _ = _balanced(text, open_at, "{", "}")
                found.append(
                    Function(
                        name,
                        path,
                        _line(text, match.start()),
                        split_args(args),
                        body or "",
                        _line(text, open_at),
                    )
                )
        return found


def read(root: Path, defines: dict[str, str] | None = None) -> Registry:
    """The registrations of every C/C++ file under ``root`` (``defines``: the macros the
    build sets, as ``-D`` would)."""
    defines = dict(defines or {})
    files = sorted(sources(root))
    registry, macros, unread = Registry(), {}, []
    for path in files:
        raw = path.read_text(errors="replace")
        if not any(word in raw for word in _WORTH_READING):
            unread.append((path, raw))
            continue
        text, own = _active(_uncommented(raw), defines)
        macros.update(own)
        registry.texts[path] = text
    wrappers = set(_wrappers(macros))
    for path, raw in unread:  # a block opened only through the project's own macro
        if any(w in raw for w in wrappers):
            registry.texts[path] = _active(_uncommented(raw), defines)[0]
    for path, text in registry.texts.items():
        if "TORCH_LIBRARY" in text or any(m in text for m in wrappers):
            _blocks(path, text, macros, wrappers, registry)
    return registry


def sources(root: Path):
    """The C/C++ files under ``root`` (build outputs and VCS folders left out)."""
    for path in root.rglob("*"):
        if path.suffix in SUFFIXES and path.is_file():
            if not SKIPPED & set(path.relative_to(root).parts[:-1]):
                yield path


_LEXEMES = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def _uncommented(text: str) -> str:
    """``text`` with its comments blanked (newlines kept), string literals untouched."""

    def blank(match):
        lexeme = match.group(0)
        return re.sub(r"[^\n]", " ", lexeme) if lexeme[0] == "/" else lexeme

    return _LEXEMES.sub(blank, text)


def _active(text: str, defines: dict[str, str]) -> tuple[str, dict]:
    """``text`` with the lines its ``#if`` s leave out blanked and every directive line
    blanked; the macros its active ``#define`` s make (name -> (params or None, body))."""
    defines = dict(defines)
    macros: dict[str, tuple[list[str] | None, str]] = {}
    lines = text.replace("\\\n", "\x00").split("\n")  # a continued line stays one
    out: list[str] = []
    stack: list[tuple[bool, bool, bool]] = []  # (parent active, a branch taken, this active)
    for line in lines:
        active = all(s[2] for s in stack)
        directive = _DIRECTIVE.match(line.replace("\x00", " ")) if "#" in line else None
        if directive is None:  # an inactive line keeps only its continuations
            out.append(line if active else "\x00" * line.count("\x00"))
            continue
        word, rest = directive.group(1), directive.group(2).strip()
        if word in ("if", "ifdef", "ifndef"):
            taken = active and _true(word, rest, defines)
            stack.append((active, taken, taken))
        elif word == "elif" and stack:
            parent, done, _ = stack[-1]
            taken = parent and not done and _true("if", rest, defines)
            stack[-1] = (parent, done or taken, taken)
        elif word == "else" and stack:
            parent, done, _ = stack[-1]
            stack[-1] = (parent, True, parent and not done)
        elif word == "endif" and stack:
            stack.pop()
        elif word == "define" and active:
            found = _DEFINE.match(rest)
            if found:
                name, params, body = found.group(1), found.group(3), found.group(4).strip()
                if found.group(2) is None:
                    defines.setdefault(name, body or "1")
                macros[name] = (
                    [p.strip() for p in params.split(",")] if params is not None else None,
                    body,
                )
        elif word == "undef" and active:
            defines.pop(rest, None)
            macros.pop(rest, None)
        out.append("\x00" * line.count("\x00"))
    return "\n".join(out).replace("\x00", "\\\n"), macros


def _true(word: str, rest: str, defines: dict[str, str]) -> bool:
    """Whether a condition holds for ``defines`` (an unknown name is 0, as in C)."""
    if word in ("ifdef", "ifndef"):
        return (rest.split()[0] in defines if rest else False) == (word == "ifdef")
    expr = re.sub(
        r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
        lambda m: str(int((m.group(1) or m.group(2)) in defines)),
        rest,
    )
    expr = re.sub(r"[A-Za-z_]\w*", lambda m: _number(defines.get(m.group(0), "0")), expr)
    expr = expr.replace("&&", " and ").replace("||", " or ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    if not re.fullmatch(r"(?:[\d\s()<>=+\-*/%]|and|or|not)*", expr):
        return False  # what is left is no arithmetic (``__has_include(<x>)``)
    try:
        return bool(eval(expr, {"__builtins__": {}}))  # noqa: S307 - digits and operators only
    except Exception:  # noqa: BLE001 - a condition opsdk cannot evaluate is false
        return False


def _number(value: str) -> str:
    value = value.strip().rstrip("uUlL")
    return value if re.fullmatch(r"\d+", value) else "0"


def _wrappers(macros: dict) -> list[str]:
    """The project's macros whose expansion opens a registration block."""
    return [n for n, (_, body) in macros.items() if "TORCH_LIBRARY" in _expand(body, macros)]


def _blocks(path: Path, text: str, macros: dict, wrappers: set, registry: Registry) -> None:
    for match in _IDENT_CALL.finditer(text):
        name = match.group(1)
        if name not in HEADS and name not in wrappers:
            continue
        args, end = _balanced(text, match.end() - 1)
        opening = re.match(r"\s*\{", text[end:])
        if args is None or opening is None:
            continue
        head = re.search(
            r"\b(TORCH_LIBRARY(?:_FRAGMENT|_IMPL)?)\s*\((.*)\)",
            _expand(f"{name}({args})", macros),
            re.S,
        )
        if head is None:
            continue
        parts = [p.strip() for p in split_args(head.group(2))]
        impl = head.group(1) == "TORCH_LIBRARY_IMPL"
        if len(parts) != (3 if impl else 2):
            continue
        namespace, var = parts[0], parts[-1]
        body_at = end + opening.end() - 1
        body, _ = _balanced(text, body_at, "{", "}")
        _statements(
            path, text, body_at, body or "", namespace, parts[1] if impl else None, var, registry
        )


def _statements(path, text, body_at, body, namespace, key, var, registry) -> None:
    for call in re.finditer(rf"\b{re.escape(var)}\s*\.\s*(def|impl)\s*\(", body):
        args, _ = _balanced(body, call.end() - 1)
        if args is None:
            continue
        parts = split_args(args)
        # the line of its name: where its first string starts (``def(`` may stand alone)
        line = _line(text, body_at + max(body.find('"', call.end()), call.start()))
        literal = _literal(parts[0]) if parts else None
        if literal is None:
            continue
        if call.group(1) == "def":
            kernel = _function(parts[1]) if len(parts) > 1 else None
            inline = kernel or ("<lambda>" if len(parts) > 1 else None)
            registry.schemas.append(
                Schema(namespace, " ".join(literal.split()), path, line, inline)
            )
            continue
        where = key or (_key(parts[1]) if len(parts) > 2 else "CompositeImplicitAutograd")
        function = _function(parts[-1]) if len(parts) > 1 else None
        registry.registrations.append(Registration(namespace, literal, where, function, path, line))


def _key(text: str) -> str:
    found = _KEY.search(text)
    return next(g for g in found.groups() if g) if found else text.strip()


def _function(text: str) -> str | None:
    """The last name of the function an argument points at (``&ns::f``,
    ``TORCH_FN(ns::f)``, ``static_cast<...>(&ns::f)``); None for a lambda."""
    text = text.strip()
    if text.startswith("["):
        return None
    text = re.sub(r"^static_cast\s*<.*>\s*", "", text, flags=re.S)
    names = re.findall(r"[A-Za-z_][\w:]*", text.replace("TORCH_FN", ""))
    return names[-1].split("::")[-1] if names else None


def _literal(text: str) -> str | None:
    """The C string adjacent literals in ``text`` make, None if it is not only those."""
    pieces = [p.replace("\\\n", "") for p in _STRING.findall(text)]
    if not pieces or _STRING.sub("", text).strip():
        return None
    try:
        return "".join(ast.literal_eval(f'"{p}"') for p in pieces)
    except (SyntaxError, ValueError):
        return "".join(pieces)


def _expand(text: str, macros: dict, depth: int = 0) -> str:
    """``text`` with the project's macros expanded (``#`` and ``##`` as C does)."""
    if depth > 16:
        return text
    out, i = [], 0
    for match in re.finditer(r"[A-Za-z_]\w*", text):
        name = match.group(0)
        if match.start() < i or name not in macros:
            continue
        params, body = macros[name]
        others = {k: v for k, v in macros.items() if k != name}  # no recursion, as in C
        if params is None:
            out += [text[i : match.start()], _expand(body, others, depth + 1)]
            i = match.end()
            continue
        args, after = _balanced(text, match.end())
        if args is None:
            continue
        values = [a.strip() for a in split_args(args)] if params != [""] else []
        result = _substituted(body, dict(zip(params, values, strict=False)), macros, depth)
        out += [text[i : match.start()], _expand(result, others, depth + 1)]
        i = after
    out.append(text[i:])
    return "".join(out)


def _substituted(body: str, named: dict[str, str], macros: dict, depth: int) -> str:
    """A function-like macro's ``body`` with its parameters replaced: stringified after
    ``#``, pasted as given beside ``##``, else expanded first."""
    pasted = re.sub(r"\s*##\s*", "\x01", body)
    pasted = re.sub(
        r"#\s*(\w+)",
        lambda m: f'"{named[m.group(1)]}"' if m.group(1) in named else m.group(0),
        pasted,
    )

    def substitute(m):
        word = m.group(0)
        if word not in named:
            return word
        near = pasted[max(m.start() - 1, 0) : m.start()] == "\x01" or (
            pasted[m.end() : m.end() + 1] == "\x01"
        )
        return named[word] if near else _expand(named[word], macros, depth + 1)

    return re.sub(r"[A-Za-z_]\w*", substitute, pasted).replace("\x01", "")


def _balanced(text: str, at: int, opening: str = "(", closing: str = ")") -> tuple[str | None, int]:
    """The text between the bracket at (or after spaces from) ``at`` and its match, and
    the index after the match; (None, at) when there is none. String-literal aware."""
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text) or text[at] != opening:
        return None, at
    depth, i = 0, at
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = _past_literal(text, i)
            continue
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return text[at + 1 : i], i + 1
        i += 1
    return None, at


def _past_literal(text: str, at: int) -> int:
    """The index after the string or character literal opening at ``at``."""
    j = at + 1
    while j < len(text) and text[j] != text[at]:
        j += 2 if text[j] == "\\" else 1
    return j + 1


def split_args(text: str) -> list[str]:
    """Top-level comma-separated parts of an argument list (brackets, templates and
    strings kept whole)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = _past_literal(text, i)
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}>" and depth:
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()] if text.strip() else []


def call_args(body: str, callee: str) -> list[tuple[list[str], int]]:
    """Each call of ``callee`` in ``body``: its arguments and its offset in ``body``."""
    found = []
    for match in re.finditer(rf"\b{re.escape(callee)}\s*\(", body):
        args, _ = _balanced(body, match.end() - 1)
        if args is not None:
            found.append((split_args(args), match.start()))
    return found


def _is_call(text: str, at: int) -> bool:
    """Whether the name at ``at`` is called there, not defined: a definition's name
    follows a type (a name, ``>``, ``&`` or ``*``), a call follows an operator."""
    before = text[max(at - 80, 0) : at].rstrip()
    return not before or before[-1] in "=(,;{}!+-/%|?:" or before.endswith("return")


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1
