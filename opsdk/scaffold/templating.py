"""Jinja filters the `opsdk new` templates use to put user text into code safely.

Names reach templates only after validation as identifiers; everything else a
user wrote (schemas, defaults) goes through these filters, so it lands in the
generated Python or C++ as a string literal, docstring or comment text, never
as code.
"""

import json
import textwrap

from jinja2.ext import Extension

from opsdk._runtime.spec import check_identifier

SPLIT_AT = 80


def _literal(value: str) -> str:
    text = repr(value)
    if text.startswith("'") and '"' not in value:
        text = '"' + text[1:-1].replace("\\'", "'") + '"'
    return text


def pystr(value: str) -> str:
    """A Python string literal for ``value``; long ones become a parenthesized
    implicit concatenation split after commas, so no line grows past the limit."""
    value = str(value)
    if len(value) <= SPLIT_AT:
        return _literal(value)
    pieces, current = [], ""
    for part in value.split(", "):
        candidate = f"{current}, {part}" if current else part
        if current and len(candidate) > SPLIT_AT:
            pieces.append(current + ", ")
            current = part
        else:
            current = candidate
    pieces.append(current)
    return "(" + " ".join(_literal(p) for p in pieces) + ")"


def docstring(value: str) -> str:
    """``value`` safe inside a triple-quoted docstring."""
    return str(value).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def docwrap(value: str, indent: int = 4) -> str:
    """Docstring-safe ``value`` wrapped at commas, continuation lines indented."""
    pad = " " * indent
    return textwrap.fill(
        docstring(value),
        width=92,
        subsequent_indent=pad,
        break_long_words=False,
        break_on_hyphens=False,
    )


def cppstr(value: str) -> str:
    """A C++ string literal for ``value``. Control characters become octal escapes,
    which, unlike ``\\x``, cannot swallow the hex digits that follow them."""
    out = []
    for char in str(value):
        if char in '\\"':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\{ord(char):03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def cppcomment(value: str) -> str:
    """``value`` wrapped for indented ``//`` comment lines (the template writes the
    first ``//``). No line but the last ends in a backslash, which would splice the
    line after it into the comment; a schema ends in its return type."""
    lines: list[str] = []
    for line in textwrap.wrap(str(value), width=90, break_long_words=False, break_on_hyphens=False):
        if lines and lines[-1].endswith("\\"):
            lines[-1] += " " + line
        else:
            lines.append(line)
    return "\n//     ".join(lines)


def tomlstr(value: str) -> str:
    """A TOML basic string (JSON string syntax is valid TOML)."""
    return json.dumps(str(value))


def pyname(value: str) -> str:
    """``value`` as an identifier, or a refusal (templates never emit other text as code)."""
    return check_identifier("name", value)


class OpsdkExtension(Extension):
    """Registers the filters; loaded by cookiecutter through ``_extensions``."""

    def __init__(self, environment):
        super().__init__(environment)
        environment.filters.update(
            pystr=pystr,
            docstring=docstring,
            docwrap=docwrap,
            pyname=pyname,
            tomlstr=tomlstr,
            cppstr=cppstr,
            cppcomment=cppcomment,
        )
