"""Tokens and the preprocessor: comments dropped, lines kept, includes followed, macros
expanded, ``#if(n)def`` branches kept."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

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
        kind, chunk = m.lastgroup, m.group()
        if kind is None:  # every alternative of _TOKEN is a named group
            raise CppError(file, line, f"cannot read {chunk!r}")
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
