"""A small evaluator for the C++ that AscendC ``op_host`` OpDef files are written in.

An OpDef file is a program: its constructor calls ``this->Input("x").DataType(...)``,
often through file-level constants, helper functions and templates, per-chip config
objects, local vectors, macros and the odd loop. Reading it means running that subset:

- :func:`preprocess` tokenizes (comments dropped, line numbers kept), follows
  ``#include "..."`` files that a resolver finds (a project's own headers; CANN's are
  not there and not needed), expands ``#define`` macros (object- and function-like,
  ``#``, ``##``, ``__VA_ARGS__``) and keeps ``#if(n)def`` branches;
- :class:`Program` splits the tokens into declarations: namespaces, classes, functions
  (bodies parsed only when called), constants (evaluated when first used), ``enum`` s,
  ``OP_ADD(...)``;
- :class:`Interpreter` runs a constructor: declarations, expressions, ``if``/``else``,
  ``for`` (range and counted), ``while``, ``switch``, ``return``, lambdas, calls with
  argument binding (defaults, by-value copies, by-reference sharing), vectors, maps and
  strings with the members the files use. CANN's own objects (``OpDef``, ``OpParamDef``,
  ``OpAICoreConfig``...) are Python objects the caller provides (:class:`Native`).

An identifier the file does not define evaluates to :class:`Unknown` (a tiling
function passed to ``SetTiling``, a CANN constant no prototype depends on); it becomes an
error only where a value is needed (a data type, a name, a condition) or when it is
called as a statement. Whatever cannot be read raises :class:`CppError` with the file
and line of the construct.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

# --------------------------------------------------------------------------- tokens


class CppError(Exception):
    """The construct at ``file:line`` cannot be read: ``what`` names it."""

    def __init__(self, file: str, line: int, what: str):
        super().__init__(f"{file}:{line}: {what}")
        self.file, self.line, self.what = file, line, what


@dataclass(frozen=True)
class Tok:
    kind: str  # id num str chr op
    text: str
    line: int
    file: str
    space: bool = field(default=False, compare=False)  # blanks before it (macro definitions)


_TOKEN = re.compile(
    r"""
    (?P<nl>\n)
  | (?P<cont>\\\n)
  | (?P<ws>[ \t\r\f\v]+)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*.*?\*/)
  | (?P<str>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
  | (?P<rstr>R"(?P<delim>[^(\s]*)\((?:.|\n)*?\)(?P=delim)")
  | (?P<chr>(?:u8|[uUL])?'(?:\\.|[^'\\\n])+')
  | (?P<num>(?:0[xX][0-9a-fA-F']+|0[bB][01']+
      |(?:\d[\d']*(?:\.[\d']*)?|\.\d[\d']*)(?:[eE][+-]?\d+)?)[uUlLfF]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<op>\.\.\.|<<=|>>=|->|::|\#\#|\+\+|--|&&|\|\||<<|>>|[-+*/%&|^!=<>]=
      |[][(){};:,.?~!%^&*+\-/<>=\#])
    """,
    re.VERBOSE | re.DOTALL,
)


def _lex(text: str, file: str) -> list[tuple[Tok, bool]]:
    """``(token, starts_a_line)`` pairs of ``text``; comments and blanks dropped."""
    out: list[tuple[Tok, bool]] = []
    pos, line, bol, space = 0, 1, True, False
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CppError(file, line, f"cannot read the character {text[pos]!r}")
        kind = m.lastgroup
        chunk = m.group()
        if kind == "delim":  # the named subgroup of a raw string
            kind = "rstr"
        if kind == "nl":
            bol = space = True
        elif kind in ("cont", "ws", "lc", "bc"):
            space = True
        else:
            if kind == "rstr":
                body = chunk[chunk.index("(") + 1 : chunk.rindex(")")]
                tok = Tok("str", _quote(body), line, file, space)
            else:
                tok = Tok(kind, chunk, line, file, space)
            out.append((tok, bol))
            bol = space = False
        line += chunk.count("\n")
        pos = m.end()
    return out


def _quote(body: str) -> str:
    return '"' + body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# --------------------------------------------------------------------------- preprocessor

Resolver = Callable[[str, str], "tuple[str, str] | None"]
# Include roots of CANN's own headers: never beside a project's file, never its names.
_CANN_INCLUDES = ("register/", "graph/", "exe_graph/", "platform/", "tiling/", "aclnn/", "acl/")


@dataclass
class _Macro:
    params: list[str] | None  # None: object-like
    body: list[Tok]
    variadic: bool = False


@dataclass
class Preprocessed:
    tokens: list[Tok]
    missing: list[str] = field(default_factory=list)  # quoted includes not found
    included: list[str] = field(default_factory=list)  # files read besides the main one


def preprocess(text: str, file: str, resolve: Resolver | None = None) -> Preprocessed:
    """The tokens of ``text`` after the preprocessor; ``resolve(include, from_file)`` gives
    the text and name of a quoted ``#include`` (None: not found, skipped)."""
    macros: dict[str, _Macro] = {}
    result = Preprocessed([])
    seen: set[str] = set()

    def run(text: str, file: str, depth: int) -> list[Tok]:
        lexed = _lex(text, file)
        out: list[Tok] = []
        conds: list[list[bool]] = []  # [taking, taken_before]
        i = 0
        while i < len(lexed):
            tok, bol = lexed[i]
            if tok.text == "#" and bol:
                j = i + 1
                while j < len(lexed) and not lexed[j][1]:
                    j += 1
                directive = [t for t, _ in lexed[i + 1 : j]]
                i = j
                active = all(c[0] for c in conds)
                _directive(directive, tok, active, conds, out, depth)
                continue
            if all(c[0] for c in conds):
                out.append(tok)
            i += 1
        if conds:
            raise CppError(file, lexed[-1][0].line if lexed else 1, "an #if without #endif")
        return _expand(out, macros, frozenset())

    def _directive(words, hash_tok, active, conds, out, depth):
        name = words[0].text if words else ""
        where = hash_tok
        if name in ("ifdef", "ifndef"):
            if not active:
                conds.append([False, True])
                return
            defined = len(words) > 1 and words[1].text in macros
            take = defined if name == "ifdef" else not defined
            conds.append([take, take])
        elif name in ("if", "elif"):
            if name == "elif":
                if not conds:
                    raise CppError(where.file, where.line, "an #elif without #if")
                cond = conds[-1]
                if cond[1] or not all(c[0] for c in conds[:-1]):
                    cond[0] = False
                    return
                value = _if_value(words[1:], where, macros)
                cond[0] = cond[1] = value
                return
            if not active:
                conds.append([False, True])
                return
            value = _if_value(words[1:], where, macros)
            conds.append([value, value])
        elif name == "else":
            if not conds:
                raise CppError(where.file, where.line, "an #else without #if")
            cond = conds[-1]
            parents = all(c[0] for c in conds[:-1])
            cond[0] = parents and not cond[1]
            cond[1] = True
        elif name == "endif":
            if not conds:
                raise CppError(where.file, where.line, "an #endif without #if")
            conds.pop()
        elif not active:
            return
        elif name == "define":
            _define(words[1:], where, macros)
        elif name == "undef":
            if len(words) > 1:
                macros.pop(words[1].text, None)
        elif name == "include":
            if len(words) > 1 and words[1].kind == "str":
                target = words[1].text[1:-1]
                found = resolve(target, where.file) if resolve is not None else None
                if found is None:
                    if not target.startswith(_CANN_INCLUDES):
                        result.missing.append(target)
                    return
                inc_text, inc_file = found
                if inc_file in seen or depth > 16:
                    return
                seen.add(inc_file)
                result.included.append(inc_file)
                out.extend(run(inc_text, inc_file, depth + 1))
        # pragma, error, warning, line: nothing the prototype depends on

    seen.add(file)
    result.tokens = run(text, file, 0)
    return result


def _define(words: list[Tok], where: Tok, macros: dict[str, _Macro]) -> None:
    if not words or words[0].kind != "id":
        raise CppError(where.file, where.line, "a #define without a name")
    name = words[0]
    rest = words[1:]
    # A function-like macro's '(' follows its name with no blank between them.
    if rest and rest[0].text == "(" and not rest[0].space:
        close = next((k for k, t in enumerate(rest) if t.text == ")"), None)
        if close is None:
            raise CppError(
                where.file, where.line, f"cannot read the macro {name.text}'s parameters"
            )
        params = [t.text for t in rest[1:close] if t.text != ","]
        variadic = bool(params) and params[-1] == "..."
        if variadic:
            params[-1] = "__VA_ARGS__"
        macros[name.text] = _Macro(params, rest[close + 1 :], variadic)
    else:
        macros[name.text] = _Macro(None, rest)


def _if_value(words: list[Tok], where: Tok, macros: dict[str, _Macro]) -> bool:
    text = " ".join(t.text for t in words)
    m = re.fullmatch(r"(!\s*)?(?:defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+))", text)
    if m:
        value = (m.group(2) or m.group(3)) in macros
        return not value if m.group(1) else value
    if re.fullmatch(r"\d+", text):
        return int(text) != 0
    raise CppError(where.file, where.line, f"cannot read the condition #if {text}")


def _expand(tokens: list[Tok], macros: dict[str, _Macro], hidden: frozenset) -> list[Tok]:
    out: list[Tok] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        macro = macros.get(tok.text) if tok.kind == "id" and tok.text not in hidden else None
        if macro is None:
            out.append(tok)
            i += 1
            continue
        if macro.params is None:
            body = [Tok(t.kind, t.text, tok.line, tok.file) for t in macro.body]
            out.extend(_expand(body, macros, hidden | {tok.text}))
            i += 1
            continue
        if i + 1 >= len(tokens) or tokens[i + 1].text != "(":
            out.append(tok)  # a function-like macro's name alone is no invocation
            i += 1
            continue
        args, i = _macro_args(tokens, i + 1, tok)
        body = _substitute(macro, args, tok, macros, hidden)
        out.extend(_expand(body, macros, hidden | {tok.text}))
    return out


def _macro_args(tokens: list[Tok], open_at: int, name: Tok) -> tuple[list[list[Tok]], int]:
    args: list[list[Tok]] = [[]]
    depth = 0
    i = open_at + 1
    while i < len(tokens):
        t = tokens[i]
        if t.text in "([{" and t.kind == "op":
            depth += 1
        elif t.text in ")]}" and t.kind == "op":
            if depth == 0 and t.text == ")":
                return ([] if args == [[]] else args), i + 1
            depth -= 1
        if t.text == "," and depth == 0:
            args.append([])
        else:
            args[-1].append(t)
        i += 1
    raise CppError(name.file, name.line, f"the macro call {name.text}( is never closed")


def _substitute(macro: _Macro, args, site: Tok, macros, hidden) -> list[Tok]:
    params = macro.params or []
    if macro.variadic:
        fixed = len(params) - 1
        va: list[Tok] = []
        for k, arg in enumerate(args[fixed:]):
            if k:
                va.append(Tok("op", ",", site.line, site.file))
            va.extend(arg)
        args = list(args[:fixed]) + [va]
    if len(args) < len(params):
        args = list(args) + [[] for _ in range(len(params) - len(args))]
    bound = dict(zip(params, args[: len(params)], strict=True))
    body = macro.body
    out: list[Tok] = []
    k = 0
    while k < len(body):
        t = body[k]
        if t.text == "#" and k + 1 < len(body) and body[k + 1].text in bound:
            text = " ".join(a.text for a in bound[body[k + 1].text])
            out.append(Tok("str", _quote(text), site.line, site.file))
            k += 2
            continue
        if t.text == "##" and out and k + 1 < len(body):
            right = body[k + 1]
            right_toks = bound.get(right.text, [right])
            left = out.pop()
            glued = left.text + (right_toks[0].text if right_toks else "")
            kind = "id" if re.fullmatch(r"[A-Za-z_]\w*", glued) else left.kind
            out.append(Tok(kind, glued, site.line, site.file))
            out.extend(Tok(x.kind, x.text, site.line, site.file) for x in right_toks[1:])
            k += 2
            continue
        if t.text in bound:
            pasted = k + 1 < len(body) and body[k + 1].text == "##"
            arg = bound[t.text]
            out.extend(
                Tok(x.kind, x.text, site.line, site.file)
                for x in (arg if pasted else _expand(arg, macros, hidden))
            )
        else:
            out.append(Tok(t.kind, t.text, site.line, site.file))
        k += 1
    return out


# --------------------------------------------------------------------------- declarations

_SPECIFIERS = {
    "static", "const", "constexpr", "consteval", "constinit", "inline", "extern", "volatile",
    "thread_local", "register", "mutable", "unsigned", "signed", "long", "short", "typename",
    "virtual", "explicit", "friend", "struct", "class", "enum",
}  # fmt: skip
_KEYWORDS = {
    "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
    "continue", "this", "true", "false", "nullptr", "new", "delete", "sizeof", "using",
    "typedef", "goto", "throw", "try", "catch", "operator", "static_assert",
}  # fmt: skip
_CASTS = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"}


@dataclass
class ParamDecl:
    name: str | None
    ref: bool
    default: tuple[int, int] | None  # token range of the default value


@dataclass
class Func:
    name: str
    params: list[ParamDecl]
    body: tuple[int, int]  # token range inside the braces
    tok: Tok
    cls: ClassDef | None = None
    ast: list | None = None


@dataclass
class ClassDef:
    name: str
    bases: list[str]
    tok: Tok
    ctors: list[Func] = field(default_factory=list)
    methods: dict[str, list[Func]] = field(default_factory=dict)
    statics: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> decl range


class Program:
    """The declarations of a preprocessed file: what a constructor may refer to."""

    def __init__(self, pre: Preprocessed, file: str):
        self.toks = pre.tokens
        self.file = file
        self.missing = pre.missing
        self.match = _brackets(self.toks, file)
        self.functions: dict[str, list[Func]] = {}
        self.globals: dict[str, tuple[int, int]] = {}
        self.classes: dict[str, ClassDef] = {}
        self.enums: dict[str, object] = {}
        self.op_adds: list[tuple[str, Tok]] = []
        self._scope(0, len(self.toks), None)

    # -- helpers over the token list
    def tok(self, i: int) -> Tok:
        if i < len(self.toks):
            return self.toks[i]
        last = self.toks[-1] if self.toks else Tok("op", "", 1, self.file)
        return Tok("eof", "", last.line, last.file)

    def _to_semicolon(self, i: int, end: int) -> int:
        while i < end and self.toks[i].text != ";":
            i = self.match[i] + 1 if self.toks[i].text in "([{" else i + 1
        return i + 1

    def skip_angles(self, i: int, end: int) -> int | None:
        """Index after the ``>`` closing the ``<`` at ``i`` (None: not a template group)."""
        depth = 0
        while i < end:
            x = self.toks[i]
            if x.kind == "op" and x.text in "([{":
                i = self.match[i] + 1
                continue
            if x.text == "<":
                depth += 1
            elif x.text == ">":
                depth -= 1
            elif x.text == ">>":
                depth -= 2
            elif x.text in (";", "{", "}", ")", "]", "&&", "||"):
                return None
            i += 1
            if depth <= 0:
                return i if depth == 0 else None
        return None

    # -- the scan
    def _scope(self, i: int, end: int, cls: ClassDef | None) -> None:
        while i < end:
            t = self.toks[i]
            x = t.text
            nxt = self.tok(i + 1).text
            if x == ";":
                i += 1
            elif x == "namespace":
                j = i + 1
                while j < end and self.toks[j].text not in ("{", ";"):
                    j += 1
                if j < end and self.toks[j].text == "{":
                    self._scope(j + 1, self.match[j], cls)
                    i = self.match[j] + 1
                else:
                    i = j + 1
            elif x == "extern" and self.tok(i + 1).kind == "str":
                if self.tok(i + 2).text == "{":
                    self._scope(i + 3, self.match[i + 2], cls)
                    i = self.match[i + 2] + 1
                else:
                    i += 2
            elif x in ("using", "typedef", "static_assert", "friend"):
                i = self._to_semicolon(i, end)
            elif x == "template" and nxt == "<":
                i = self.skip_angles(i + 1, end) or self._to_semicolon(i, end)
            elif x in ("public", "private", "protected") and nxt == ":":
                i += 2
            elif x in ("class", "struct", "union"):
                i = self._class(i, end)
            elif x == "enum":
                i = self._enum(i, end)
            elif x == "OP_ADD" and nxt == "(":
                self.op_adds.append((self.tok(i + 2).text, t))
                i = self.match[i + 1] + 1
            else:
                i = self._declaration(i, end, cls)

    def _class(self, i: int, end: int) -> int:
        j = i + 1
        name = None
        if self.tok(j).kind == "id" and self.tok(j).text not in ("final", "alignas"):
            name = self.toks[j]
            j += 1
        while j < end and self.toks[j].text not in ("{", ";", ":"):
            j += 1
        bases: list[str] = []
        if j < end and self.toks[j].text == ":":
            k = j + 1
            while k < end and self.toks[k].text not in ("{", ";"):
                if self.toks[k].kind == "id" and self.toks[k].text not in (
                    "public", "private", "protected", "virtual",
                ) and self.tok(k + 1).text != "::":  # fmt: skip
                    bases.append(self.toks[k].text)
                k += 1
            j = k
        if j >= end or self.toks[j].text == ";":
            return j + 1
        cls = ClassDef(name.text if name else "", bases, name or self.toks[i])
        if name is not None:
            self.classes[name.text] = cls
        self._scope(j + 1, self.match[j], cls)
        return self._to_semicolon(self.match[j] + 1, end)

    def _enum(self, i: int, end: int) -> int:
        j = i + 1
        while j < end and self.toks[j].text not in ("{", ";"):
            j += 1
        if j >= end or self.toks[j].text == ";":
            return j + 1
        value: object = -1
        k = j + 1
        while k < self.match[j]:
            name = self.toks[k]
            k += 1
            explicit: list[Tok] = []
            if self.tok(k).text == "=":
                k += 1
                while k < self.match[j] and self.toks[k].text != ",":
                    explicit.append(self.toks[k])
                    k += 1
            if explicit:
                text = "".join(t.text for t in explicit)
                try:
                    value = int(text.rstrip("uUlL"), 0)
                except ValueError:
                    value = None
            else:
                value = value + 1 if isinstance(value, int) else None
            if name.kind == "id":
                self.enums[name.text] = value
            if self.tok(k).text == ",":
                k += 1
        return self._to_semicolon(self.match[j] + 1, end)

    def _declaration(self, i: int, end: int, cls: ClassDef | None) -> int:
        """A function definition (its body kept for later) or variables (kept by name)."""
        j, seen_eq = i, False
        while j < end:
            x = self.toks[j].text
            if x == ";":
                self._variables(i, j, cls)
                return j + 1
            if x == "=":
                seen_eq = True
            elif x in ("class", "struct", "namespace", "template", "enum") and j > i:
                return j  # the tokens before were a macro call CANN's headers define: skip them
            elif x == "{" and not seen_eq:
                func = self._function(i, j, cls)
                if func is not None:
                    return self.match[j] + 1
            if self.toks[j].kind == "op" and x in "([{":
                j = self.match[j] + 1
                continue
            j += 1
        return end

    def _function(self, i: int, brace: int, cls: ClassDef | None) -> Func | None:
        """The function whose body opens at ``brace``; None if it is a brace initializer."""
        j = i
        while j < brace:
            if self.toks[j].text == "(":
                close = self.match[j]
                if self._declarator_ends(close + 1, brace) and j > i:
                    break
                j = close + 1
                continue
            j += 1
        else:
            return None
        name_tok = self.toks[j - 1]
        if name_tok.kind != "id":
            return None
        params = self.params(j + 1, self.match[j])
        func = Func(name_tok.text, params, (brace + 1, self.match[brace]), name_tok, cls)
        if cls is not None and name_tok.text == cls.name:
            cls.ctors.append(func)
        elif self.tok(j - 2).text == "~":
            pass  # a destructor
        elif cls is not None:
            cls.methods.setdefault(name_tok.text, []).append(func)
        else:
            self.functions.setdefault(name_tok.text, []).append(func)
        return func

    def _declarator_ends(self, k: int, brace: int) -> bool:
        """The tokens between a parameter list and a function body."""
        if k == brace or self.toks[k].text in (":", "->"):
            return True
        return all(
            t.text in ("const", "noexcept", "override", "final", "volatile", "&", "&&")
            for t in self.toks[k:brace]
        )

    def params(self, i: int, end: int) -> list[ParamDecl]:
        """The parameters between ``i`` and ``end`` (a function's or a lambda's)."""
        out: list[ParamDecl] = []
        for start, stop in self._split(i, end):
            words = self.toks[start:stop]
            if not words or [t.text for t in words] == ["void"] or words[0].text == "...":
                continue
            eq = next((k for k, t in enumerate(words) if t.text == "="), None)
            decl = words if eq is None else words[:eq]
            names = [t for t in decl if t.kind == "id" and t.text not in _SPECIFIERS]
            ref = any(t.text in ("&", "&&") for t in decl)
            default = None if eq is None else (start + eq + 1, stop)
            out.append(ParamDecl(names[-1].text if len(names) > 1 else None, ref, default))
        return out

    def _split(self, i: int, end: int) -> list[tuple[int, int]]:
        """Comma-separated parts of a parameter list (template brackets count as brackets)."""
        parts, start, angle = [], i, 0
        k = i
        while k < end:
            x = self.toks[k].text
            if self.toks[k].kind == "op" and x in "([{":
                k = self.match[k] + 1
                continue
            if x == "<":
                angle += 1
            elif x == ">":
                angle = max(angle - 1, 0)
            elif x == ">>":
                angle = max(angle - 2, 0)
            elif x == "," and angle == 0:
                parts.append((start, k))
                start = k + 1
            k += 1
        parts.append((start, end))
        return [(a, b) for a, b in parts if a < b]

    def _variables(self, i: int, end: int, cls: ClassDef | None) -> None:
        """Remember the names a declaration ``[i, end)`` declares (evaluated when used)."""
        names: list[str] = []
        k, angle, first = i, 0, True
        while k < end:
            t = self.toks[k]
            x = t.text
            if t.kind == "op" and x in "([{":
                if first and k > i and self.toks[k - 1].kind == "id":
                    names.append(self.toks[k - 1].text)
                    first = False
                k = self.match[k] + 1
                continue
            if x == "<":
                angle += 1
            elif x in (">", ">>"):
                angle = max(angle - len(x), 0)
            elif angle == 0 and x == "=" and first and k > i:
                if self.toks[k - 1].kind == "id":
                    names.append(self.toks[k - 1].text)
                first = False
            elif angle == 0 and x == ",":
                if first and self.toks[k - 1].kind == "id":
                    names.append(self.toks[k - 1].text)
                nxt = k + 1
                while nxt < end and self.toks[nxt].text in ("*", "&", "const"):
                    nxt += 1
                if nxt < end and self.toks[nxt].kind == "id":
                    names.append(self.toks[nxt].text)
                first = False
            k += 1
        if first and end > i and self.toks[end - 1].kind == "id" and end - i > 1:
            names.append(self.toks[end - 1].text)
        store = cls.statics if cls is not None else self.globals
        for name in names:
            store.setdefault(name, (i, end))


def _brackets(toks: list[Tok], file: str) -> dict[int, int]:
    """Index of the closing bracket of each opening one (and back)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[int] = []
    match: dict[int, int] = {}
    for k, t in enumerate(toks):
        if t.kind != "op":
            continue
        if t.text in pairs:
            stack.append(k)
        elif t.text in (")", "]", "}"):
            if not stack:
                raise CppError(t.file, t.line, f"an unbalanced {t.text!r}")
            if pairs[toks[stack[-1]].text] != t.text:
                opener = toks[stack[-1]]
                raise CppError(opener.file, opener.line, f"an unclosed {opener.text!r}")
            open_at = stack.pop()
            match[open_at] = k
            match[k] = open_at
    if stack:
        t = toks[stack[-1]]
        raise CppError(t.file, t.line, f"an unclosed {t.text!r}")
    return match


# --------------------------------------------------------------------------- parser

_BINARY = {
    "*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11,
    "<": 9, "<=": 9, ">": 9, ">=": 9, "==": 8, "!=": 8, "&": 7, "^": 6, "|": 5,
    "&&": 4, "||": 3,
}  # fmt: skip
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>="}
# Scalar types a C-style cast names.
_SCALAR_TYPES = {
    "int", "unsigned", "long", "short", "char", "bool", "float", "double", "size_t",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
}  # fmt: skip


@dataclass
class TypeInfo:
    """What a declaration's type tells the evaluator: a container to copy, a reference."""

    text: str
    ref: bool = False

    @property
    def base(self) -> str:
        words = [w for w in self.text.split() if w not in _SPECIFIERS]
        return "".join(words).split("<", 1)[0]

    @property
    def kind(self) -> str:
        base = self.base.split("::")[-1]
        if base in ("map", "unordered_map"):
            return "map"
        if base in ("vector", "initializer_list", "array", "list", "set", "unordered_set"):
            return "list"
        if base in ("string", "AscendString", "string_view"):
            return "str"
        return base


class Parser:
    """Statements and expressions of one function body (token range of a :class:`Program`)."""

    def __init__(self, program: Program, start: int, end: int):
        self.p = program
        self.toks = program.toks
        self.i = start
        self.end = end

    # -- tokens
    def peek(self, k: int = 0) -> Tok:
        j = self.i + k
        return self.toks[j] if j < self.end else Tok("eof", "", self._last_line(), self.p.file)

    def _last_line(self) -> int:
        t = self.toks[min(self.end, len(self.toks)) - 1] if self.toks else None
        return t.line if t is not None else 1

    def next(self) -> Tok:
        t = self.peek()
        self.i += 1
        return t

    def expect(self, text: str) -> Tok:
        t = self.peek()
        if t.text != text:
            self.fail(t, f"expected {text!r} before {t.text or 'the end'!r}")
        self.i += 1
        return t

    def fail(self, t: Tok, what: str):
        raise CppError(t.file, t.line, what)

    # -- statements
    def block(self) -> list:
        out = []
        while self.peek().kind != "eof":
            out.append(self.statement())
        return out

    def statement(self):
        t = self.peek()
        x = t.text
        if x == "{" and t.kind == "op":
            close = self.p.match[self.i]
            inner = Parser(self.p, self.i + 1, close)
            self.i = close + 1
            return ("block", t, inner.block())
        if x == ";":
            self.i += 1
            return ("nop", t)
        if t.kind == "id":
            keyword = getattr(self, f"_stmt_{x}", None)
            if keyword is not None and x in (
                "if", "for", "while", "do", "switch", "case", "default", "break", "continue",
                "return", "using", "typedef", "static_assert", "try", "throw", "goto",
            ):  # fmt: skip
                self.i += 1
                return keyword(t)
            if x in ("class", "struct", "union", "enum") and self.peek(2).text in ("{", ":"):
                self.fail(t, f"cannot read a {x} declared inside a function")
            if self._is_declaration():
                return self.declaration()
        e = self.expression()
        self.expect(";")
        return ("expr", t, e)

    def _parenthesized(self):
        self.expect("(")
        value = self.expression()
        self.expect(")")
        return value

    def _stmt_if(self, t):
        if self.peek().text == "constexpr":
            self.i += 1
        cond = self._parenthesized()
        then = self.statement()
        other = None
        if self.peek().text == "else":
            self.i += 1
            other = self.statement()
        return ("if", t, cond, then, other)

    def _stmt_for(self, t):
        open_at = self.i
        self.expect("(")
        close = self.p.match[open_at]
        head = Parser(self.p, self.i, close)
        if head._is_declaration():
            decl = head.declaration(range_for=True)
            if decl[0] == "range":
                _, _, name, typ = decl
                iterable = head.expression()
                self.i = close + 1
                return ("range_for", t, name, typ, iterable, self.statement())
            init = decl
        else:
            init = ("nop", t) if head.peek().text == ";" else ("expr", t, head.expression())
            head.expect(";")
        cond = None if head.peek().text == ";" else head.expression()
        head.expect(";")
        step = None if head.peek().kind == "eof" else head.expression()
        self.i = close + 1
        return ("for", t, init, cond, step, self.statement())

    def _stmt_while(self, t):
        return ("while", t, self._parenthesized(), self.statement())

    def _stmt_do(self, t):
        body = self.statement()
        if self.next().text != "while":
            self.fail(t, "expected while after do")
        cond = self._parenthesized()
        self.expect(";")
        return ("do", t, body, cond)

    def _stmt_switch(self, t):
        return ("switch", t, self._parenthesized(), self.statement())

    def _stmt_case(self, t):
        value = self.expression()
        self.expect(":")
        return ("case", t, value)

    def _stmt_default(self, t):
        self.expect(":")
        return ("default", t)

    def _stmt_break(self, t):
        self.expect(";")
        return ("break", t)

    def _stmt_continue(self, t):
        self.expect(";")
        return ("continue", t)

    def _stmt_return(self, t):
        value = None if self.peek().text == ";" else self.expression()
        self.expect(";")
        return ("return", t, value)

    def _skip_statement(self, t):
        while self.peek().kind != "eof" and self.peek().text != ";":
            self.i = self.p.match[self.i] + 1 if self.peek().text in "([{" else self.i + 1
        self.expect(";")
        return ("nop", t)

    _stmt_using = _stmt_typedef = _stmt_static_assert = _skip_statement

    def _unsupported(self, t):
        self.fail(t, f"cannot read a {t.text} statement")

    _stmt_try = _stmt_throw = _stmt_goto = _unsupported

    # -- declarations
    def _is_declaration(self) -> bool:
        k = self.i
        while self.toks[k].text in _SPECIFIERS and k < self.end:
            k += 1
        t = self.peek(k - self.i)
        if t.kind != "id" or t.text in _KEYWORDS:
            return False
        k = self._type_end(k)
        if k is None:
            return False
        while k < self.end and self.toks[k].text in ("*", "&", "&&", "const"):
            k += 1
        if k >= self.end or self.toks[k].kind != "id" or self.toks[k].text in _KEYWORDS:
            return False
        after = self.toks[k + 1].text if k + 1 < self.end else ";"
        return after in ("=", ";", "(", "{", "[", ",", ":")

    def _type_end(self, k: int) -> int | None:
        """Index after a qualified type name starting at ``k`` (template arguments included)."""
        while True:
            if k >= self.end or self.toks[k].kind != "id":
                return None
            k += 1
            if k < self.end and self.toks[k].text == "<":
                k = self.p.skip_angles(k, self.end)
                if k is None:
                    return None
            if k < self.end and self.toks[k].text == "::":
                k += 1
                continue
            return k

    def declaration(self, range_for: bool = False):
        t = self.peek()
        start = self.i
        while self.peek().text in _SPECIFIERS:
            self.i += 1
        end = self._type_end(self.i)
        base = self.toks[start:end]
        self.i = end
        decls = []
        while True:
            ref = False
            while self.peek().text in ("*", "&", "&&", "const"):
                ref = ref or self.peek().text in ("&", "&&")
                self.i += 1
            name = self.next()
            typ = TypeInfo(" ".join(x.text for x in base), ref)
            array = False
            while self.peek().text == "[":
                array = True
                self.i = self.p.match[self.i] + 1
            nxt = self.peek().text
            if range_for and nxt == ":":
                self.i += 1
                return ("range", t, name.text, typ)
            if nxt == "=":
                self.i += 1
                init = ("assign", self.assignment())
            elif nxt == "{":
                init = ("brace", self.primary()[2])
            elif nxt == "(":
                init = ("ctor", self._call_args())
            else:
                init = None
            decls.append((name.text, typ, init, array))
            if self.peek().text == ",":
                self.i += 1
                continue
            break
        self.expect(";")
        return ("decl", t, decls)

    # -- expressions
    def expression(self):
        return self.assignment()

    def assignment(self):
        left = self.binary(0)
        t = self.peek()
        if t.text == "?":
            self.i += 1
            a = self.assignment()
            self.expect(":")
            b = self.assignment()
            return ("cond", t, left, a, b)
        if t.text in _ASSIGN:
            self.i += 1
            return ("assign", t, t.text, left, self.assignment())
        return left

    def binary(self, min_prec: int):
        left = self.unary()
        while True:
            t = self.peek()
            prec = _BINARY.get(t.text) if t.kind == "op" else None
            if prec is None or prec <= min_prec:
                return left
            self.i += 1
            right = self.binary(prec)
            left = ("binary", t, t.text, left, right)

    def unary(self):
        t = self.peek()
        if t.kind == "op" and t.text in ("!", "-", "+", "~", "*", "&", "++", "--"):
            self.i += 1
            return ("unary", t, t.text, self.unary())
        if t.text == "(" and self._c_cast():
            close = self.p.match[self.i]
            words = " ".join(x.text for x in self.toks[self.i + 1 : close])
            self.i = close + 1
            return ("cast", t, words, self.unary())
        return self.postfix(self.primary())

    def _c_cast(self) -> bool:
        close = self.p.match[self.i]
        inner = self.toks[self.i + 1 : close]
        if not inner or any(x.kind != "id" and x.text not in ("::", "*", "&") for x in inner):
            return False
        names = [x.text for x in inner if x.kind == "id" and x.text != "const"]
        following = self.toks[close + 1] if close + 1 < self.end else None
        return (
            bool(names)
            and (names[0] in _SCALAR_TYPES or names[-1] in ("DataType", "Format"))
            and following is not None
            and (following.kind in ("id", "num", "str", "chr") or following.text in ("(", "-"))
        )

    def postfix(self, node):
        while True:
            t = self.peek()
            if t.text == "(":
                node = ("call", t, node, self._call_args())
            elif t.text in (".", "->"):
                self.i += 1
                if self.peek().text == "template":
                    self.i += 1
                name = self.next()
                if name.kind != "id":
                    self.fail(name, f"cannot read the member {name.text!r}")
                node = ("member", t, node, name.text)
            elif t.text == "[":
                close = self.p.match[self.i]
                inner = Parser(self.p, self.i + 1, close)
                node = ("index", t, node, inner.expression())
                self.i = close + 1
            elif t.text in ("++", "--"):
                self.i += 1
                node = ("postfix", t, t.text, node)
            else:
                return node

    def _call_args(self) -> list:
        return self._items(self.i, "an argument list")

    def _items(self, open_at: int, where: str) -> list:
        """The comma-separated expressions in the brackets opening at ``open_at``."""
        close = self.p.match[open_at]
        inner = Parser(self.p, open_at + 1, close)
        items = []
        while inner.peek().kind != "eof":
            items.append(inner.assignment())
            if inner.peek().text == ",":
                inner.i += 1
            elif inner.peek().kind != "eof":
                inner.fail(inner.peek(), f"cannot read {inner.peek().text!r} in {where}")
        self.i = close + 1
        return items

    def primary(self):
        t = self.next()
        x = t.text
        if t.kind == "num":
            return ("lit", t, _number(t))
        if t.kind == "str":
            text = _string(t)
            while self.peek().kind == "str":
                text += _string(self.next())
            return ("lit", t, text)
        if t.kind == "chr":
            return ("lit", t, ord(_string(t, "'") or "\0"))
        if x == "(":
            close = self.p.match[self.i - 1]
            inner = Parser(self.p, self.i, close)
            e = inner.expression()
            if inner.peek().kind != "eof":
                inner.fail(inner.peek(), f"cannot read {inner.peek().text!r} in parentheses")
            self.i = close + 1
            return e
        if x == "{":
            return ("brace", t, self._items(self.i - 1, "braces"))
        if x == "[":
            return self._lambda(t)
        if t.kind == "id":
            if x in ("true", "false"):
                return ("lit", t, x == "true")
            if x in ("nullptr", "NULL"):
                return ("lit", t, None)
            if x == "this":
                return ("this", t)
            if x in ("new", "delete", "sizeof", "throw", "operator", "typeid", "co_await"):
                self.fail(t, f"cannot read {x}")
            if x in _CASTS:
                end = self.p.skip_angles(self.i, self.end)
                if end is None:
                    self.fail(t, f"cannot read {x}")
                words = " ".join(w.text for w in self.toks[self.i + 1 : end - 1])
                self.i = end
                self.expect("(")
                self.i -= 1
                close = self.p.match[self.i]
                inner = Parser(self.p, self.i + 1, close)
                self.i = close + 1
                return ("cast", t, words, inner.expression())
            return self._name(t)
        if x == "::" and self.peek().kind == "id":
            return self._name(self.next())
        self.fail(t, f"cannot read {x!r} in an expression")

    def _name(self, t: Tok):
        """A qualified name, a template type's construction (``std::vector<T>{...}``)."""
        parts = [t.text]
        targs = None
        while True:
            if self.peek().text == "<":
                end = self.p.skip_angles(self.i, self.end)
                if end is not None and (
                    (end < self.end and self.toks[end].text in ("(", "{", "::"))
                    or parts[0] == "std"
                ):
                    targs = " ".join(w.text for w in self.toks[self.i + 1 : end - 1])
                    self.i = end
            if self.peek().text == "::" and self.peek(1).kind == "id":
                self.i += 1
                parts.append(self.next().text)
                continue
            break
        name = "::".join(parts)
        if targs is not None or (self.peek().text == "{" and t.text != "this"):
            if self.peek().text == "{":
                return ("construct", t, name, targs, self.primary()[2], True)
            if self.peek().text == "(":
                return ("construct", t, name, targs, self._call_args(), False)
            return ("type", t, name, targs)
        return ("name", t, name)

    def _lambda(self, t: Tok):
        close = self.p.match[self.i - 1]
        self.i = close + 1
        params: list[ParamDecl] = []
        if self.peek().text == "(":
            params = self.p.params(self.i + 1, self.p.match[self.i])
            self.i = self.p.match[self.i] + 1
        while self.peek().kind != "eof" and self.peek().text != "{":
            self.i += 1  # mutable, noexcept, -> type
        if self.peek().text != "{":
            self.fail(t, "cannot read a lambda without a body")
        close = self.p.match[self.i]
        body = Parser(self.p, self.i + 1, close).block()
        self.i = close + 1
        return ("lambda", t, params, body)


def _number(t: Tok):
    text = t.text.replace("'", "")
    is_hex = text[:2].lower() == "0x"
    stripped = text.rstrip("uUlL") if is_hex else text.rstrip("uUlLfF")
    try:
        if is_hex or text[:2].lower() == "0b":
            return int(stripped, 0)
        if any(c in stripped for c in ".eE"):
            return float(stripped)
        return int(stripped, 8) if len(stripped) > 1 and stripped[0] == "0" else int(stripped)
    except ValueError:
        raise CppError(t.file, t.line, f"cannot read the number {t.text}") from None


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def _string(t: Tok, quote: str = '"') -> str:
    text = t.text[t.text.index(quote) + 1 : -1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Sym:
    """A constant CANN's headers define (``ge::DT_FLOAT``, ``REQUIRED``): its name, and its
    number where one is known (GE's value of a data type)."""

    name: str
    value: int | None = field(default=None, compare=False)


@dataclass
class Unknown:
    """A name the file does not define; an error only where its value is needed.
    ``missing``: the quoted includes not found, which may have defined it."""

    name: str
    tok: Tok
    called: bool = False
    missing: tuple[str, ...] = ()

    def error(self) -> CppError:
        where = f"{self.name}(...)" if self.called else self.name
        hint = f" (its includes not found: {', '.join(self.missing)})" if self.missing else ""
        return CppError(
            self.tok.file,
            self.tok.line,
            f"cannot read {where}: it is not defined in this file{hint}",
        )


class Native:
    """A CANN object a file calls methods of (``OpDef``, ``OpParamDef``...); subclasses
    implement :meth:`call`."""

    type_name = "object"

    def call(self, method: str, args: list, site: Tok):  # pragma: no cover - interface
        raise NotImplementedError

    def copy(self) -> Native:
        return copy.deepcopy(self)


@dataclass
class Iter:
    seq: list
    pos: int

    def __eq__(self, other):
        return isinstance(other, Iter) and other.seq is self.seq and other.pos == self.pos


@dataclass
class Pair:
    first: object
    second: object


@dataclass
class MapIter:
    table: dict
    key: object  # _END: end()

    def __eq__(self, other):
        return isinstance(other, MapIter) and other.table is self.table and other.key == self.key


_END = object()


@dataclass
class Lambda:
    params: list[ParamDecl]
    body: list
    env: Scope
    this: object
    cls: ClassDef | None


@dataclass
class Bound:
    """A file's function (or a class's method with its object)."""

    funcs: list[Func]
    this: object = None


@dataclass
class Builtin:
    name: str
    fn: Callable


class Scope:
    def __init__(self, parent: Scope | None = None):
        self.vars: dict[str, object] = {}
        self.parent = parent

    def find(self, name: str):
        scope = self
        while scope is not None:
            if name in scope.vars:
                return scope
            scope = scope.parent
        return None


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_MAX_STEPS = 100_000
_MAX_DEPTH = 64


# --------------------------------------------------------------------------- interpreter


class Interpreter:
    """Runs the constructor of an OpDef class. ``symbols(qualname)`` names CANN's own
    constants (None: unknown); ``construct(type, args, site)`` makes CANN's objects
    (``OpAICoreConfig``), None for other types."""

    def __init__(self, program: Program, symbols, construct):
        self.p = program
        self.symbols = symbols
        self.construct_native = construct
        self.global_values: dict[str, object] = {}
        self.static_values: dict[tuple[str, str], object] = {}
        self.evaluating: set = set()
        self.classes_of: dict[int, ClassDef] = {}  # id(native this) -> its class
        self.steps = 0
        self.depth = 0
        self.cls: ClassDef | None = None
        self.this = None

    # -- entry
    def construct(self, cls: ClassDef, this: Native, op_type: str) -> None:
        """Run ``cls``'s constructor on ``this`` (its ``name`` parameter: ``op_type``)."""
        self.classes_of[id(this)] = cls
        if not cls.ctors:
            return
        ctor = cls.ctors[0]
        self._call(ctor, [op_type][: len(ctor.params)], this, ctor.tok)

    def fail(self, t: Tok, what: str):
        raise CppError(t.file, t.line, what)

    # -- functions
    def _call(self, func: Func, args: list, this, site: Tok):
        if self.depth >= _MAX_DEPTH:
            self.fail(site, f"cannot read the recursion of {func.name}()")
        required = sum(1 for p in func.params if p.default is None)
        if not required <= len(args) <= len(func.params):
            self.fail(site, f"{func.name}() takes {len(func.params)} arguments, given {len(args)}")
        if func.ast is None:
            func.ast = Parser(self.p, *func.body).block()
        saved = (self.cls, self.this)
        self.cls, self.this = func.cls, this
        self.depth += 1
        try:
            scope = Scope()
            for k, param in enumerate(func.params):
                value = args[k] if k < len(args) else self._default(param, scope)
                if param.name is not None:
                    scope.vars[param.name] = value if param.ref else _copied(value)
            self._block(func.ast, scope)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
            self.cls, self.this = saved
        return None

    def _default(self, param: ParamDecl, scope: Scope):
        return self.eval(Parser(self.p, *param.default).expression(), scope)

    def _call_lambda(self, fn: Lambda, args: list, site: Tok):
        if len(args) != len(fn.params):
            self.fail(site, f"a lambda takes {len(fn.params)} arguments, given {len(args)}")
        scope = Scope(fn.env)
        for param, value in zip(fn.params, args, strict=True):
            if param.name is not None:
                scope.vars[param.name] = value if param.ref else _copied(value)
        saved = (self.cls, self.this)
        self.cls, self.this = fn.cls, fn.this
        try:
            self._block(fn.body, scope)
        except _Return as ret:
            return ret.value
        finally:
            self.cls, self.this = saved
        return None

    # -- statements
    def _block(self, stmts: list, scope: Scope) -> None:
        for stmt in stmts:
            self.exec(stmt, scope)

    def exec(self, stmt, scope: Scope) -> None:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            self.fail(stmt[1], "cannot read a loop that does not end")
        kind, t = stmt[0], stmt[1]
        if kind == "expr":
            value = self.eval(stmt[2], scope)
            if isinstance(value, Unknown) and value.called:
                self._undefined(value)
        elif kind == "decl":
            for name, typ, init, array in stmt[2]:
                scope.vars[name] = self._declared(typ, init, array, scope, t)
        elif kind == "block":
            self._block(stmt[2], Scope(scope))
        elif kind == "if":
            if self.truth(self.eval(stmt[2], scope), t):
                self.exec(stmt[3], Scope(scope))
            elif stmt[4] is not None:
                self.exec(stmt[4], Scope(scope))
        elif kind in ("for", "while", "do"):
            self._loop(stmt, scope)
        elif kind == "range_for":
            self._range_for(stmt, scope)
        elif kind == "switch":
            self._switch(stmt, scope)
        elif kind == "return":
            raise _Return(None if stmt[2] is None else self.eval(stmt[2], scope))
        elif kind == "break":
            raise _Break
        elif kind == "continue":
            raise _Continue
        elif kind in ("case", "default"):
            self.fail(t, f"cannot read a {kind} label outside a switch")
        # nop

    def _loop(self, stmt, scope: Scope) -> None:
        kind, t = stmt[0], stmt[1]
        inner = Scope(scope)
        if kind == "for":
            _, _, init, cond, step, body = stmt
            self.exec(init, inner)
        elif kind == "while":
            _, _, cond, body = stmt
            step = None
        else:
            _, _, body, cond = stmt
            step = None
        first = kind == "do"
        while first or cond is None or self.truth(self.eval(cond, inner), t):
            first = False
            try:
                self.exec(body, Scope(inner))
            except _Break:
                break
            except _Continue:
                pass
            if step is not None:
                self.eval(step, inner)

    def _range_for(self, stmt, scope: Scope) -> None:
        _, t, name, typ, iterable, body = stmt
        seq = self.eval(iterable, scope)
        if isinstance(seq, dict):
            items = [Pair(k, v) for k, v in seq.items()]
        elif isinstance(seq, (list, str)):
            items = list(seq)
        else:
            self.fail(t, f"cannot read a for loop over {_describe(seq)}")
        for item in items:
            inner = Scope(scope)
            inner.vars[name] = item if typ.ref else _copied(item)
            try:
                self.exec(body, inner)
            except _Break:
                break
            except _Continue:
                continue

    def _switch(self, stmt, scope: Scope) -> None:
        _, t, value_node, body = stmt
        value = self.eval(value_node, scope)
        if isinstance(value, Unknown):
            self._undefined(value)
        stmts = body[2] if body[0] == "block" else [body]
        start = None
        for k, s in enumerate(stmts):
            if s[0] == "case" and _equal(self.eval(s[2], scope), value):
                start = k
                break
        if start is None:
            start = next((k for k, s in enumerate(stmts) if s[0] == "default"), None)
        if start is None:
            return
        inner = Scope(scope)
        try:
            for s in stmts[start:]:
                if s[0] not in ("case", "default"):
                    self.exec(s, inner)
        except _Break:
            pass

    def _declared(self, typ: TypeInfo, init, array: bool, scope: Scope, t: Tok):
        kind = typ.kind
        if init is None:
            if array or kind == "list":
                return []
            if kind == "map":
                return {}
            if kind == "str":
                return ""
            made = self.construct_native(typ.base, [], t)
            return made if made is not None else Unknown(typ.text, t)
        how, node = init
        if how == "ctor":
            return self._construct(typ.base, [self.eval(a, scope) for a in node], t, kind)
        if how == "brace":
            items = [self.eval(a, scope) for a in node]
            if kind == "list" and _enum_elements(typ) and _is_count(items):
                # No int converts to an enum: {n, value} is vector(n, value), not a list.
                return self._construct(typ.base, items, t, kind)
            if kind in ("list", "map") or array:
                return _as_kind(_unwrapped(items, typ), kind)
            return self._construct(typ.base, items, t, kind)
        value = self.eval(node, scope)
        if kind in ("list", "map") and isinstance(value, list):
            value = _as_kind(_unwrapped(value, typ), kind)
        return value if typ.ref else _copied(value)

    # -- expressions
    def truth(self, value, t: Tok) -> bool:
        if isinstance(value, Unknown):
            self._undefined(value)
        if isinstance(value, (Native, Sym, list, dict, Lambda, Bound)):
            self.fail(t, f"cannot read a condition on {_describe(value)}")
        return bool(value)

    def _undefined(self, value: Unknown):
        raise value.error()

    def eval(self, node, scope: Scope):
        kind, t = node[0], node[1]
        if kind == "lit":
            return node[2]
        if kind == "name":
            return self.lookup(node[2], scope, t)
        if kind == "this":
            return self.this
        if kind == "brace":
            return [self.eval(a, scope) for a in node[2]]
        if kind == "call":
            return self._eval_call(node, scope)
        if kind == "member":
            return self._member(self.eval(node[2], scope), node[3], t)
        if kind == "index":
            return self._index(self.eval(node[2], scope), self.eval(node[3], scope), t)
        if kind == "unary":
            return self._unary(node, scope)
        if kind == "postfix":
            return self._increment(node[3], node[2], scope, t, post=True)
        if kind == "binary":
            return self._binary(node, scope)
        if kind == "assign":
            return self._assign(node, scope)
        if kind == "cond":
            chosen = node[3] if self.truth(self.eval(node[2], scope), t) else node[4]
            return self.eval(chosen, scope)
        if kind == "cast":
            return _cast(node[2], self.eval(node[3], scope))
        if kind == "lambda":
            return Lambda(node[2], node[3], scope, self.this, self.cls)
        if kind == "construct":
            args = [self.eval(a, scope) for a in node[4]]
            typ = TypeInfo(node[2] + (f"<{node[3]}>" if node[3] else ""))
            if node[5] and typ.kind in ("list", "map"):
                return _as_kind(args, typ.kind)
            return self._construct(typ.base, args, t, typ.kind)
        if kind == "type":
            return Unknown(node[2], t)
        self.fail(t, f"cannot read {kind}")

    def lookup(self, qualname: str, scope: Scope, t: Tok):
        parts = qualname.split("::")
        name = parts[-1]
        if parts[0] == "ge":  # CANN's namespace: a file's own FORMAT_ND does not hide it
            symbol = self.symbols(qualname)
            if symbol is not None:
                return symbol
        if len(parts) == 1:
            found = scope.find(name)
            if found is not None:
                return found.vars[name]
        cls = self.p.classes.get(parts[-2]) if len(parts) > 1 else self.cls
        if cls is not None:
            if name in cls.statics:
                return self._static(cls, name, t)
            if name in cls.methods:
                return Bound(cls.methods[name], self.this if cls is self.cls else None)
        if name in self.p.functions:
            return Bound(self.p.functions[name])
        if name in self.p.globals:
            return self._global(name, t)
        if name in self.p.enums and self.p.enums[name] is not None:
            return self.p.enums[name]
        builtin = _BUILTINS.get(qualname) or _BUILTINS.get(name)
        if builtin is not None:
            return builtin
        symbol = self.symbols(qualname)
        if symbol is not None:
            return symbol
        return Unknown(qualname, t, missing=tuple(self.p.missing))

    def _global(self, name: str, t: Tok):
        if name not in self.global_values:
            self._run_declaration(self.p.globals[name], self.global_values, ("g", name), t)
        return self.global_values[name]

    def _static(self, cls: ClassDef, name: str, t: Tok):
        key = (cls.name, name)
        if key not in self.static_values:
            store: dict = {}
            self._run_declaration(cls.statics[name], store, key, t)
            for k, v in store.items():
                self.static_values[(cls.name, k)] = v
        return self.static_values[key]

    def _run_declaration(self, span: tuple[int, int], store: dict, key, t: Tok) -> None:
        if key in self.evaluating:
            self.fail(t, f"cannot read {key[1]}: its value depends on itself")
        self.evaluating.add(key)
        try:
            parser = Parser(self.p, span[0], span[1] + 1)
            if not parser._is_declaration():
                first = self.p.toks[span[0]]
                self.fail(first, f"cannot read the declaration of {key[1]}")
            decl = parser.declaration()
            saved = (self.cls, self.this)
            if key[0] != "g":
                self.cls = self.p.classes.get(key[0])
            scope = Scope()
            try:
                self.exec(decl, scope)
            finally:
                self.cls, self.this = saved
            store.update(scope.vars)
        finally:
            self.evaluating.discard(key)

    def _eval_call(self, node, scope: Scope):
        _, t, fn_node, arg_nodes = node
        if fn_node[0] == "member":
            obj = self.eval(fn_node[2], scope)
            args = [self.eval(a, scope) for a in arg_nodes]
            return self._method(obj, fn_node[3], args, t)
        fn = self.eval(fn_node, scope)
        args = [self.eval(a, scope) for a in arg_nodes]
        return self.apply(fn, args, t)

    def apply(self, fn, args: list, t: Tok):
        if isinstance(fn, Bound):
            return self._call(self._overload(fn.funcs, args, t), args, fn.this, t)
        if isinstance(fn, Lambda):
            return self._call_lambda(fn, args, t)
        if isinstance(fn, Builtin):
            return fn.fn(self, args, t)
        if isinstance(fn, Unknown):
            made = self.construct_native(fn.name.split("::")[-1], args, t)
            if made is not None:
                return made
            return replace(fn, called=True)
        self.fail(t, f"cannot call {_describe(fn)}")

    def _overload(self, funcs: list[Func], args: list, t: Tok) -> Func:
        for func in funcs:
            required = sum(1 for p in func.params if p.default is None)
            if required <= len(args) <= len(func.params):
                return func
        return funcs[0]

    def _method(self, obj, name: str, args: list, t: Tok):
        if isinstance(obj, Unknown):
            return replace(obj, name=f"{obj.name}.{name}", called=True)
        if isinstance(obj, Native):
            cls = self.classes_of.get(id(obj))
            if cls is not None and name in cls.methods:
                return self._call(self._overload(cls.methods[name], args, t), args, obj, t)
            return obj.call(name, args, t)
        method = _METHODS.get((_kind_of(obj), name))
        if method is None:
            self.fail(t, f"cannot read the call .{name}() on {_describe(obj)}")
        return method(self, obj, args, t)

    def _member(self, obj, name: str, t: Tok):
        if isinstance(obj, (Pair, MapIter)):
            pair = obj if isinstance(obj, Pair) else _deref(obj, t, self)
            if name in ("first", "second"):
                return getattr(pair, name)
        if isinstance(obj, Unknown):
            return replace(obj, name=f"{obj.name}.{name}")
        self.fail(t, f"cannot read the member {name} of {_describe(obj)}")

    def _index(self, obj, key, t: Tok):
        if isinstance(obj, (list, str)) and isinstance(key, int) and -len(obj) <= key < len(obj):
            return obj[key]
        if isinstance(obj, dict) and key in obj:
            return obj[key]
        if isinstance(obj, Unknown) or isinstance(key, Unknown):
            return obj if isinstance(obj, Unknown) else key
        self.fail(t, f"cannot read the element {key!r} of {_describe(obj)}")

    def _unary(self, node, scope: Scope):
        _, t, op, operand = node
        if op in ("++", "--"):
            return self._increment(operand, op, scope, t, post=False)
        value = self.eval(operand, scope)
        if op in ("*", "&"):
            return _deref(value, t, self) if op == "*" else value
        if isinstance(value, Unknown):
            return value
        if op == "!":
            return not self.truth(value, t)
        if op == "-":
            return -_number_of(value, t, self)
        if op == "+":
            return _number_of(value, t, self)
        return ~_number_of(value, t, self)

    def _increment(self, target, op: str, scope: Scope, t: Tok, post: bool):
        old = self.eval(target, scope)
        if isinstance(old, Iter):
            new = Iter(old.seq, old.pos + (1 if op == "++" else -1))
        else:
            new = _number_of(old, t, self) + (1 if op == "++" else -1)
        self._store(target, new, scope, t)
        return old if post else new

    def _binary(self, node, scope: Scope):
        _, t, op, left_node, right_node = node
        left = self.eval(left_node, scope)
        if op in ("&&", "||"):
            first = self.truth(left, t)
            if first == (op == "||"):
                return first
            return self.truth(self.eval(right_node, scope), t)
        right = self.eval(right_node, scope)
        if isinstance(left, Unknown) or isinstance(right, Unknown):
            return left if isinstance(left, Unknown) else right
        if op == "==":
            return _equal(left, right)
        if op == "!=":
            return not _equal(left, right)
        if isinstance(left, Iter) and op in "+-" and isinstance(right, int):
            return Iter(left.seq, left.pos + (right if op == "+" else -right))
        if op == "+" and isinstance(left, str) and isinstance(right, str):
            return left + right
        a, b = _number_of(left, t, self), _number_of(right, t, self)
        return _arith(op, a, b, t)

    def _assign(self, node, scope: Scope):
        _, t, op, target, value_node = node
        value = self.eval(value_node, scope)
        if op != "=":
            old = self.eval(target, scope)
            if op == "+=" and isinstance(old, str):
                value = old + value
            elif op == "+=" and isinstance(old, list):
                value = old + list(value)
            else:
                value = _arith(op[:-1], _number_of(old, t, self), _number_of(value, t, self), t)
        self._store(target, _copied(value), scope, t)
        return value

    def _store(self, target, value, scope: Scope, t: Tok) -> None:
        if target[0] == "name" and "::" not in target[2]:
            found = scope.find(target[2])
            if found is not None:
                found.vars[target[2]] = value
                return
            if target[2] in self.p.globals:
                self._global(target[2], t)
                self.global_values[target[2]] = value
                return
        elif target[0] == "index":
            obj = self.eval(target[2], scope)
            key = self.eval(target[3], scope)
            if isinstance(obj, dict):
                obj[key] = value
                return
            if isinstance(obj, list) and isinstance(key, int) and 0 <= key < len(obj):
                obj[key] = value
                return
        elif target[0] == "unary" and target[2] == "*":
            it = self.eval(target[3], scope)
            if isinstance(it, Iter) and 0 <= it.pos < len(it.seq):
                it.seq[it.pos] = value
                return
        self.fail(t, "cannot read this assignment")

    def _construct(self, base: str, args: list, t: Tok, kind: str):
        if kind == "list":
            if not args:
                return []
            if len(args) == 2 and isinstance(args[0], Iter) and isinstance(args[1], Iter):
                return list(args[0].seq[args[0].pos : args[1].pos])
            if len(args) in (1, 2) and isinstance(args[0], int) and not isinstance(args[0], bool):
                return [args[1] if len(args) == 2 else 0] * args[0]
            if len(args) == 1 and isinstance(args[0], list):
                return list(args[0])
            self.fail(t, f"cannot read this construction of a {base}")
        if kind == "map":
            return _as_kind(args[0] if len(args) == 1 and isinstance(args[0], list) else [], "map")
        if kind == "str":
            return "" if not args else str(args[0]) if isinstance(args[0], str) else args[0]
        made = self.construct_native(base.split("::")[-1], args, t)
        if made is not None:
            return made
        if len(args) == 1:
            return args[0]  # a scalar's functional cast: int(x), ge::DataType(x)
        if not args:
            return 0 if base.split("::")[-1] in _SCALAR_TYPES else Unknown(base, t)
        self.fail(t, f"cannot read the construction of {base}")


def _copied(value):
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, Native):
        return value.copy()
    return value


def _enum_elements(typ: TypeInfo) -> bool:
    return typ.text.replace(" ", "").endswith(("<ge::DataType>", "<ge::Format>"))


def _is_count(items: list) -> bool:
    return len(items) == 2 and isinstance(items[0], int) and not isinstance(items[0], bool)


def _unwrapped(items: list, typ: TypeInfo) -> list:
    """``std::vector<T> v = {{a, b}}`` or ``{other}``: one braced element that is itself
    the list copy-constructs the vector (T is no container)."""
    element = typ.text.split("<", 1)[1] if "<" in typ.text else ""
    nested = typ.kind == "map" or any(w in element for w in ("vector", "list", "array", "map"))
    if len(items) == 1 and isinstance(items[0], list) and not nested:
        return items[0]
    return items


def _as_kind(items: list, kind: str):
    if kind != "map":
        return list(items)
    table = {}
    for item in items:
        if isinstance(item, Pair):
            table[item.first] = item.second
        elif isinstance(item, list) and len(item) == 2:
            table[item[0]] = item[1]
        else:
            return list(items)
    return table


def _equal(a, b) -> bool:
    if isinstance(a, Sym) and isinstance(b, int) and not isinstance(b, bool):
        return a.value == b
    if isinstance(b, Sym) and isinstance(a, int) and not isinstance(a, bool):
        return b.value == a
    return a == b


def _describe(value) -> str:
    if isinstance(value, Native):
        return f"a {value.type_name}"
    if isinstance(value, Unknown):
        return value.name
    if isinstance(value, Sym):
        return value.name
    if isinstance(value, (Bound, Lambda, Builtin)):
        return "a function"
    return type(value).__name__


def _number_of(value, t: Tok, interp: Interpreter):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, Sym) and value.value is not None:
        return value.value
    interp.fail(t, f"cannot read arithmetic on {_describe(value)}")


def _arith(op: str, a, b, t: Tok):
    if op in ("/", "%") and b == 0:
        raise CppError(t.file, t.line, "cannot read a division by zero")
    ints = isinstance(a, int) and isinstance(b, int)
    if op == "/":
        return int(a / b) if ints else a / b
    if op == "%":
        return int(a - b * int(a / b)) if ints else a % b
    table = {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
        "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
        "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
        "<<": lambda: a << b, ">>": lambda: a >> b,
    }  # fmt: skip
    if op not in table or (op in "&|^<<>>" and not ints):
        raise CppError(t.file, t.line, f"cannot read the operator {op}")
    return table[op]()


def _cast(type_text: str, value):
    last = type_text.replace("*", "").replace("&", "").split()[-1] if type_text.split() else ""
    if last in ("float", "double") and isinstance(value, (int, float)):
        return float(value)
    if last in _SCALAR_TYPES and last not in ("float", "double", "bool"):
        if isinstance(value, Sym) and value.value is not None:
            return value.value
        if isinstance(value, (int, float)):
            return int(value)
    if last == "bool" and isinstance(value, (int, float)):
        return bool(value)
    return value


def _deref(value, t: Tok, interp: Interpreter):
    if isinstance(value, Iter):
        if not 0 <= value.pos < len(value.seq):
            interp.fail(t, "cannot read an iterator past its container")
        return value.seq[value.pos]
    if isinstance(value, MapIter):
        if value.key is _END:
            interp.fail(t, "cannot read find(...) of a key the map does not hold")
        return Pair(value.key, value.table[value.key])
    return value


def _kind_of(value) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "str"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, (Iter, MapIter)):
        return "iter"
    return type(value).__name__


def _size(i, obj, args, t):
    return len(obj)


def _list_insert(i, seq, args, t):
    if len(args) == 2 and isinstance(args[0], Iter):
        values = args[1] if isinstance(args[1], list) else [args[1]]
    elif len(args) == 3 and isinstance(args[0], Iter) and isinstance(args[1], Iter):
        values = args[1].seq[args[1].pos : args[2].pos]
    else:
        i.fail(t, "cannot read this insert(...)")
    seq[args[0].pos : args[0].pos] = [_copied(v) for v in values]
    return Iter(seq, args[0].pos)


def _list_resize(i, seq, args, t):
    n = args[0]
    fill = args[1] if len(args) > 1 else 0
    del seq[n:]
    seq.extend([fill] * (n - len(seq)))


def _map_find(i, table, args, t):
    return MapIter(table, args[0] if args[0] in table else _END)


def _map_at(i, table, args, t):
    if args[0] not in table:
        i.fail(t, f"cannot read at({args[0]!r}): the map does not hold it")
    return table[args[0]]


_METHODS: dict[tuple[str, str], Callable] = {
    ("list", "push_back"): lambda i, s, a, t: s.append(_copied(a[0])),
    ("list", "emplace_back"): lambda i, s, a, t: s.append(_copied(a[0])),
    ("list", "size"): _size,
    ("list", "empty"): lambda i, s, a, t: not s,
    ("list", "begin"): lambda i, s, a, t: Iter(s, 0),
    ("list", "cbegin"): lambda i, s, a, t: Iter(s, 0),
    ("list", "end"): lambda i, s, a, t: Iter(s, len(s)),
    ("list", "cend"): lambda i, s, a, t: Iter(s, len(s)),
    ("list", "at"): lambda i, s, a, t: i._index(s, a[0], t),
    ("list", "front"): lambda i, s, a, t: i._index(s, 0, t),
    ("list", "back"): lambda i, s, a, t: i._index(s, -1, t),
    ("list", "clear"): lambda i, s, a, t: s.clear(),
    ("list", "reserve"): lambda i, s, a, t: None,
    ("list", "pop_back"): lambda i, s, a, t: s.pop(),
    ("list", "insert"): _list_insert,
    ("list", "resize"): _list_resize,
    ("str", "c_str"): lambda i, s, a, t: s,
    ("str", "data"): lambda i, s, a, t: s,
    ("str", "GetString"): lambda i, s, a, t: s,
    ("str", "size"): _size,
    ("str", "length"): _size,
    ("str", "empty"): lambda i, s, a, t: not s,
    ("map", "find"): _map_find,
    ("map", "end"): lambda i, m, a, t: MapIter(m, _END),
    ("map", "count"): lambda i, m, a, t: int(a[0] in m),
    ("map", "at"): _map_at,
    ("map", "size"): _size,
    ("map", "empty"): lambda i, m, a, t: not m,
}


def _for_each(i: Interpreter, args, t):
    if len(args) != 3 or not all(isinstance(a, Iter) for a in args[:2]):
        i.fail(t, "cannot read this std::for_each")
    for item in list(args[0].seq[args[0].pos : args[1].pos]):
        i.apply(args[2], [item], t)
    return args[2]


def _strcmp(i: Interpreter, args, t):
    if not all(isinstance(a, str) for a in args[:2]):
        if any(isinstance(a, Unknown) for a in args):
            return next(a for a in args if isinstance(a, Unknown))
        i.fail(t, "cannot read strcmp on what is not a string")
    a, b = args[0], args[1]
    return (a > b) - (a < b)


def _to_string(i: Interpreter, args, t):
    value = args[0]
    if isinstance(value, Unknown):
        return value
    if isinstance(value, float):
        return f"{value:f}"
    return str(value)


_BUILTINS = {
    "std::for_each": Builtin("for_each", _for_each),
    "strcmp": Builtin("strcmp", _strcmp),
    "std::strcmp": Builtin("strcmp", _strcmp),
    "std::to_string": Builtin("to_string", _to_string),
    "std::move": Builtin("move", lambda i, a, t: a[0]),
    "std::make_pair": Builtin("make_pair", lambda i, a, t: Pair(a[0], a[1])),
    "std::min": Builtin("min", lambda i, a, t: min(a[:2])),
    "std::max": Builtin("max", lambda i, a, t: max(a[:2])),
    "std::size": Builtin("size", lambda i, a, t: len(a[0])),
    "std::begin": Builtin("begin", lambda i, a, t: Iter(a[0], 0)),
    "std::end": Builtin("end", lambda i, a, t: Iter(a[0], len(a[0]))),
}
