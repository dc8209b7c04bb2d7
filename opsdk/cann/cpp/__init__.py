"""A small evaluator for the C++ that AscendC ``op_host`` OpDef files are written in.

An OpDef file is a program: its constructor calls ``this->Input("x").DataType(...)``,
often through file-level constants, helper functions and templates, per-chip config
objects, local vectors, macros and the odd loop. Reading it means running that subset:

- :func:`~.lex.preprocess` tokenizes (comments dropped, line numbers kept), follows
  ``#include "..."`` files that a resolver finds (a project's own headers; CANN's are
  not there and not needed), expands ``#define`` macros (object- and function-like,
  ``#``, ``##``, ``__VA_ARGS__``) and keeps ``#if(n)def`` branches;
- :class:`~.program.Program` splits the tokens into declarations: namespaces, classes, functions
  (bodies parsed only when called), constants (evaluated when first used), ``enum`` s,
  ``OP_ADD(...)``;
- :class:`~.run.Interpreter` runs a constructor: declarations, expressions, ``if``/``else``,
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

from .interpret import Interpreter
from .lex import CppError, Preprocessed, Tok, preprocess
from .program import Program
from .values import Native, Sym, Unknown, describe

__all__ = [
    "CppError",
    "Interpreter",
    "Native",
    "Preprocessed",
    "Program",
    "Sym",
    "Tok",
    "Unknown",
    "describe",
    "preprocess",
]
