"""Runs the constructor of an OpDef class: statements, expressions, calls."""

from __future__ import annotations

from dataclasses import replace
from typing import NoReturn

from .lex import CppError, Tok
from .parse import SCALAR_TYPES, Parser, TypeInfo
from .program import ClassDef, Func, ParamDecl, Program
from .values import (
    BUILTINS,
    METHODS,
    Bound,
    Builtin,
    Iter,
    Lambda,
    MapIter,
    Native,
    Pair,
    Scope,
    Sym,
    Unknown,
    arith,
    as_kind,
    cast,
    copied,
    deref,
    describe,
    enum_elements,
    equal,
    is_count,
    kind_of,
    number_of,
    unwrapped,
)


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
        self.this: object = None

    # -- entry
    def construct(self, cls: ClassDef, this: Native, op_type: str) -> None:
        """Run ``cls``'s constructor on ``this`` (its ``name`` parameter: ``op_type``)."""
        self.classes_of[id(this)] = cls
        if not cls.ctors:
            return
        ctor = cls.ctors[0]
        self._call(ctor, [op_type][: len(ctor.params)], this, ctor.tok)

    def fail(self, t: Tok, what: str) -> NoReturn:
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
                value = args[k] if k < len(args) else self._default(param, scope, site)
                if param.name is not None:
                    scope.vars[param.name] = value if param.ref else copied(value)
            self._block(func.ast, scope)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
            self.cls, self.this = saved
        return None

    def _default(self, param: ParamDecl, scope: Scope, site: Tok):
        if param.default is None:
            self.fail(site, f"cannot read a call leaving out {param.name or 'a parameter'}")
        return self.eval(Parser(self.p, *param.default).expression(), scope)

    def _call_lambda(self, fn: Lambda, args: list, site: Tok):
        if len(args) != len(fn.params):
            self.fail(site, f"a lambda takes {len(fn.params)} arguments, given {len(args)}")
        scope = Scope(fn.env)
        for param, value in zip(fn.params, args, strict=True):
            if param.name is not None:
                scope.vars[param.name] = value if param.ref else copied(value)
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
        items: list
        if isinstance(seq, dict):
            items = [Pair(k, v) for k, v in seq.items()]
        elif isinstance(seq, (list, str)):
            items = list(seq)
        else:
            self.fail(t, f"cannot read a for loop over {describe(seq)}")
        for item in items:
            inner = Scope(scope)
            inner.vars[name] = item if typ.ref else copied(item)
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
            if s[0] == "case" and equal(self.eval(s[2], scope), value):
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
            if kind == "list" and enum_elements(typ) and is_count(items):
                # No int converts to an enum: {n, value} is vector(n, value), not a list.
                return self._construct(typ.base, items, t, kind)
            if kind in ("list", "map") or array:
                return as_kind(unwrapped(items, typ), kind)
            return self._construct(typ.base, items, t, kind)
        value = self.eval(node, scope)
        if kind in ("list", "map") and isinstance(value, list):
            value = as_kind(unwrapped(value, typ), kind)
        return value if typ.ref else copied(value)

    # -- expressions
    def truth(self, value, t: Tok) -> bool:
        if isinstance(value, Unknown):
            self._undefined(value)
        if isinstance(value, (Native, Sym, list, dict, Lambda, Bound)):
            self.fail(t, f"cannot read a condition on {describe(value)}")
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
            return cast(node[2], self.eval(node[3], scope))
        if kind == "lambda":
            return Lambda(node[2], node[3], scope, self.this, self.cls)
        if kind == "construct":
            args = [self.eval(a, scope) for a in node[4]]
            typ = TypeInfo(node[2] + (f"<{node[3]}>" if node[3] else ""))
            if node[5] and typ.kind in ("list", "map"):
                return as_kind(args, typ.kind)
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
        builtin = BUILTINS.get(qualname) or BUILTINS.get(name)
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
        self.fail(t, f"cannot call {describe(fn)}")

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
        method = METHODS.get((kind_of(obj), name))
        if method is None:
            self.fail(t, f"cannot read the call .{name}() on {describe(obj)}")
        return method(self, obj, args, t)

    def _member(self, obj, name: str, t: Tok):
        if isinstance(obj, (Pair, MapIter)):
            pair = obj if isinstance(obj, Pair) else deref(obj, t, self)
            if name in ("first", "second"):
                return getattr(pair, name)
        if isinstance(obj, Unknown):
            return replace(obj, name=f"{obj.name}.{name}")
        self.fail(t, f"cannot read the member {name} of {describe(obj)}")

    def _index(self, obj, key, t: Tok):
        if isinstance(obj, (list, str)) and isinstance(key, int) and -len(obj) <= key < len(obj):
            return obj[key]
        if isinstance(obj, dict) and key in obj:
            return obj[key]
        if isinstance(obj, Unknown) or isinstance(key, Unknown):
            return obj if isinstance(obj, Unknown) else key
        self.fail(t, f"cannot read the element {key!r} of {describe(obj)}")

    def _unary(self, node, scope: Scope):
        _, t, op, operand = node
        if op in ("++", "--"):
            return self._increment(operand, op, scope, t, post=False)
        value = self.eval(operand, scope)
        if op in ("*", "&"):
            return deref(value, t, self) if op == "*" else value
        if isinstance(value, Unknown):
            return value
        if op == "!":
            return not self.truth(value, t)
        if op == "-":
            return -number_of(value, t, self)
        if op == "+":
            return number_of(value, t, self)
        return ~number_of(value, t, self)

    def _increment(self, target, op: str, scope: Scope, t: Tok, post: bool):
        old = self.eval(target, scope)
        if isinstance(old, Iter):
            new = Iter(old.seq, old.pos + (1 if op == "++" else -1))
        else:
            new = number_of(old, t, self) + (1 if op == "++" else -1)
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
            return equal(left, right)
        if op == "!=":
            return not equal(left, right)
        if isinstance(left, Iter) and op in "+-" and isinstance(right, int):
            return Iter(left.seq, left.pos + (right if op == "+" else -right))
        if op == "+" and isinstance(left, str) and isinstance(right, str):
            return left + right
        a, b = number_of(left, t, self), number_of(right, t, self)
        return arith(op, a, b, t)

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
                value = arith(op[:-1], number_of(old, t, self), number_of(value, t, self), t)
        self._store(target, copied(value), scope, t)
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
            return as_kind(args[0] if len(args) == 1 and isinstance(args[0], list) else [], "map")
        if kind == "str":
            return "" if not args else str(args[0]) if isinstance(args[0], str) else args[0]
        made = self.construct_native(base.split("::")[-1], args, t)
        if made is not None:
            return made
        if len(args) == 1:
            return args[0]  # a scalar's functional cast: int(x), ge::DataType(x)
        if not args:
            return 0 if base.split("::")[-1] in SCALAR_TYPES else Unknown(base, t)
        self.fail(t, f"cannot read the construction of {base}")
