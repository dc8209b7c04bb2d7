"""Statements and expressions of a function body, parsed when the function is called."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from .lex import CppError, Tok
from .program import CASTS, KEYWORDS, SPECIFIERS, ParamDecl, Program

# --------------------------------------------------------------------------- parser

_BINARY = {
    "*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11,
    "<": 9, "<=": 9, ">": 9, ">=": 9, "==": 8, "!=": 8, "&": 7, "^": 6, "|": 5,
    "&&": 4, "||": 3,
}  # fmt: skip
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>="}
# Scalar types a C-style cast names.
SCALAR_TYPES = {
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
        words = [w for w in self.text.split() if w not in SPECIFIERS]
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

    def fail(self, t: Tok, what: str) -> NoReturn:
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
        while self.toks[k].text in SPECIFIERS and k < self.end:
            k += 1
        t = self.peek(k - self.i)
        if t.kind != "id" or t.text in KEYWORDS:
            return False
        end = self._type_end(k)
        if end is None:
            return False
        k = end
        while k < self.end and self.toks[k].text in ("*", "&", "&&", "const"):
            k += 1
        if k >= self.end or self.toks[k].kind != "id" or self.toks[k].text in KEYWORDS:
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
                after = self.p.skip_angles(k, self.end)
                if after is None:
                    return None
                k = after
            if k < self.end and self.toks[k].text == "::":
                k += 1
                continue
            return k

    def declaration(self, range_for: bool = False):
        t = self.peek()
        start = self.i
        while self.peek().text in SPECIFIERS:
            self.i += 1
        end = self._type_end(self.i)
        if end is None:
            self.fail(self.peek(), "cannot read a declaration's type")
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
            and (names[0] in SCALAR_TYPES or names[-1] in ("DataType", "Format"))
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
            if x in CASTS:
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
