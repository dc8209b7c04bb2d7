"""What expressions evaluate to besides Python's own values (lists, dicts, str, numbers):
CANN's constants, undefined names, CANN's objects, iterators, functions; and the members
of vectors, maps and strings the files call. A member or builtin takes the running
interpreter (``i``, :class:`~.run.Interpreter`) to call back and to fail with a line."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

from .lex import CppError, Tok
from .parse import SCALAR_TYPES, TypeInfo
from .program import ClassDef, Func, ParamDecl

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

    def copy(self) -> Self:
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
    key: object  # END: end()

    def __eq__(self, other):
        return isinstance(other, MapIter) and other.table is self.table and other.key == self.key


END = object()


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
        scope: Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope
            scope = scope.parent
        return None


def copied(value):
    if isinstance(value, list):
        return [copied(v) for v in value]
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, Native):
        return value.copy()
    return value


def enum_elements(typ: TypeInfo) -> bool:
    return typ.text.replace(" ", "").endswith(("<ge::DataType>", "<ge::Format>"))


def is_count(items: list) -> bool:
    return len(items) == 2 and isinstance(items[0], int) and not isinstance(items[0], bool)


def unwrapped(items: list, typ: TypeInfo) -> list:
    """``std::vector<T> v = {{a, b}}`` or ``{other}``: one braced element that is itself
    the list copy-constructs the vector (T is no container)."""
    element = typ.text.split("<", 1)[1] if "<" in typ.text else ""
    nested = typ.kind == "map" or any(w in element for w in ("vector", "list", "array", "map"))
    if len(items) == 1 and isinstance(items[0], list) and not nested:
        return items[0]
    return items


def as_kind(items: list, kind: str):
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


def equal(a, b) -> bool:
    if isinstance(a, Sym) and isinstance(b, int) and not isinstance(b, bool):
        return a.value == b
    if isinstance(b, Sym) and isinstance(a, int) and not isinstance(a, bool):
        return b.value == a
    return a == b


def describe(value) -> str:
    if isinstance(value, Native):
        return f"a {value.type_name}"
    if isinstance(value, Unknown):
        return value.name
    if isinstance(value, Sym):
        return value.name
    if isinstance(value, (Bound, Lambda, Builtin)):
        return "a function"
    return type(value).__name__


def number_of(value, t: Tok, interp):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, Sym) and value.value is not None:
        return value.value
    interp.fail(t, f"cannot read arithmetic on {describe(value)}")


def arith(op: str, a, b, t: Tok):
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


def cast(type_text: str, value):
    last = type_text.replace("*", "").replace("&", "").split()[-1] if type_text.split() else ""
    if last in ("float", "double") and isinstance(value, (int, float)):
        return float(value)
    if last in SCALAR_TYPES and last not in ("float", "double", "bool"):
        if isinstance(value, Sym) and value.value is not None:
            return value.value
        if isinstance(value, (int, float)):
            return int(value)
    if last == "bool" and isinstance(value, (int, float)):
        return bool(value)
    return value


def deref(value, t: Tok, interp):
    if isinstance(value, Iter):
        if not 0 <= value.pos < len(value.seq):
            interp.fail(t, "cannot read an iterator past its container")
        return value.seq[value.pos]
    if isinstance(value, MapIter):
        if value.key is END:
            interp.fail(t, "cannot read find(...) of a key the map does not hold")
        return Pair(value.key, value.table[value.key])
    return value


def kind_of(value) -> str:
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
    seq[args[0].pos : args[0].pos] = [copied(v) for v in values]
    return Iter(seq, args[0].pos)


def _list_resize(i, seq, args, t):
    n = args[0]
    fill = args[1] if len(args) > 1 else 0
    del seq[n:]
    seq.extend([fill] * (n - len(seq)))


def _map_find(i, table, args, t):
    return MapIter(table, args[0] if args[0] in table else END)


def _map_at(i, table, args, t):
    if args[0] not in table:
        i.fail(t, f"cannot read at({args[0]!r}): the map does not hold it")
    return table[args[0]]


METHODS: dict[tuple[str, str], Callable] = {
    ("list", "push_back"): lambda i, s, a, t: s.append(copied(a[0])),
    ("list", "emplace_back"): lambda i, s, a, t: s.append(copied(a[0])),
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
    ("map", "end"): lambda i, m, a, t: MapIter(m, END),
    ("map", "count"): lambda i, m, a, t: int(a[0] in m),
    ("map", "at"): _map_at,
    ("map", "size"): _size,
    ("map", "empty"): lambda i, m, a, t: not m,
}


def _for_each(i, args, t):
    if len(args) != 3 or not all(isinstance(a, Iter) for a in args[:2]):
        i.fail(t, "cannot read this std::for_each")
    for item in list(args[0].seq[args[0].pos : args[1].pos]):
        i.apply(args[2], [item], t)
    return args[2]


def _strcmp(i, args, t):
    if not all(isinstance(a, str) for a in args[:2]):
        if any(isinstance(a, Unknown) for a in args):
            return next(a for a in args if isinstance(a, Unknown))
        i.fail(t, "cannot read strcmp on what is not a string")
    a, b = args[0], args[1]
    return (a > b) - (a < b)


def _to_string(i, args, t):
    value = args[0]
    if isinstance(value, Unknown):
        return value
    if isinstance(value, float):
        return f"{value:f}"
    return str(value)


BUILTINS = {
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
