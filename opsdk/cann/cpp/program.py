"""The declarations of a preprocessed file: namespaces, classes, functions (bodies kept
for when they are called), variables (kept by name, evaluated when used), enums,
``OP_ADD``."""

from __future__ import annotations

from dataclasses import dataclass, field

from .lex import CppError, Preprocessed, Tok

# --------------------------------------------------------------------------- declarations

SPECIFIERS = {
    "static", "const", "constexpr", "consteval", "constinit", "inline", "extern", "volatile",
    "thread_local", "register", "mutable", "unsigned", "signed", "long", "short", "typename",
    "virtual", "explicit", "friend", "struct", "class", "enum",
}  # fmt: skip
KEYWORDS = {
    "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
    "continue", "this", "true", "false", "nullptr", "new", "delete", "sizeof", "using",
    "typedef", "goto", "throw", "try", "catch", "operator", "static_assert",
}  # fmt: skip
CASTS = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"}


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
            names = [t for t in decl if t.kind == "id" and t.text not in SPECIFIERS]
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
