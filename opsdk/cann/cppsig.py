"""C++ spellings of an op's schema, for the kernels of ``opsdk new --style cpp``.

``TORCH_LIBRARY_IMPL`` infers a schema from each kernel's C++ signature and
refuses the library (at load time, by aborting the process) when it disagrees
with the ``m.def`` schema. So every schema type maps to exactly the C++ type
torch's unboxing expects, the one aten's own kernels use, and a schema type
without one is refused before anything is generated.
"""

from __future__ import annotations

from opsdk._runtime import types
from opsdk._runtime.spec import Arg, OpSchema, Return
from opsdk.errors import SpecError

# Passed by const reference, as aten does: copying them costs a refcount bump or more.
_BY_REF = {types.TYPES[t].cpp for t in ("Tensor", "Scalar")}
_BY_REF |= {f"std::optional<{cpp}>" for cpp in _BY_REF}
_CONTAINERS = ("c10::List<", "std::vector<")

# C++ keywords that a schema may use as an argument name; the kernel parameter gets a '_'.
_CPP_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq""".split()
)


def _unsupported(what: str, type_text: str) -> SpecError:
    return SpecError(
        f"{what} of type {type_text} has no C++ kernel type in opsdk's cpp style: "
        "use --style library (Python kernels), or a supported type"
    )


def arg_type(arg: Arg) -> str:
    """C++ parameter type of ``arg`` (``Tensor(a!)`` is written through: ``at::Tensor&``)."""
    optional = arg.is_optional
    base = arg.type[:-1] if optional else arg.type
    row = types.row(base)
    cpp: str | None
    if "[" in base:
        element = base[: base.index("[")]
        if element == "bool" and arg.size and not optional:
            cpp = f"std::array<bool, {arg.size}>"
        else:
            cpp = None if row is None else (row.cpp_optional if optional else row.cpp)
    else:
        cpp = None if row is None else row.cpp
        if cpp is not None and optional:
            cpp = f"std::optional<{cpp}>"
    if cpp is None:
        raise _unsupported(f"argument {arg.name!r}", arg.type)
    if arg.mutated:
        return f"{cpp}&"
    return f"const {cpp}&" if cpp in _BY_REF or cpp.startswith(_CONTAINERS) else cpp


def _return_type(ret: Return) -> str:
    optional = ret.type.endswith("?")
    base = ret.type[:-1] if optional else ret.type
    row = types.row(base)
    cpp = None if row is None else (row.cpp_return if base.endswith("]") else row.cpp)
    if cpp is None:
        raise _unsupported(f"return {ret.name or ''}".rstrip(), ret.type)
    return f"std::optional<{cpp}>" if optional else cpp


def return_type(spec: OpSchema) -> str:
    """``void``, one type, or a ``std::tuple`` of them."""
    types = [_return_type(r) for r in spec.returns]
    if not types:
        return "void"
    return types[0] if len(types) == 1 else f"std::tuple<{', '.join(types)}>"


def param_name(name: str) -> str:
    """``name`` as a C++ parameter: schema names are Python identifiers, not C++-safe ones."""
    return f"{name}_" if name in _CPP_KEYWORDS else name


def signature(name: str, spec: OpSchema) -> str:
    """``ret name(params)``: one kernel of the op; clang-format lays it out afterwards."""
    params = ", ".join(f"{arg_type(a)} {param_name(a.name)}" for a in spec.args)
    return f"{return_type(spec)} {name}({params})"


# Argument types the fast Python entry point takes from Python as they are
# (opsdk/include/opsdk/fast_entry.h); a schema with any other gets none.
_ENTRY_ARGS = frozenset({"Tensor", "int", "float", "bool"})


def has_fast_entry(spec: OpSchema) -> bool:
    """Whether the op gets a fast Python entry point: every argument of a type it takes, and
    positional (it passes a keyword call to the OpOverload, so a keyword-only argument would
    never be fast), every return a Tensor."""
    return all(a.type in _ENTRY_ARGS and not a.kwarg_only for a in spec.args) and all(
        r.type == "Tensor" for r in spec.returns
    )
