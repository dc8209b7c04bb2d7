"""Option profiles: TorchAir and npugraph_ex settings serving teams turn on, each a
variant of its column (``ge+frozen_parameter``, ``npugraph_ex+capture_limit``).

A profile names options as the installed TorchAir spells them: a dotted path into
TorchAir's ``CompilerConfig`` for ``ge`` (``experimental_config.frozen_parameter``),
an ``options={...}`` key of ``torch.compile(backend="npugraph_ex")`` for
``npugraph_ex`` (an attribute of npugraph_ex's ``CompilerConfig``). The column hands
them to the one place it builds its backend; the real config classes validate them.
:func:`declared` reads those classes' options and defaults from TorchAir's source,
so a test can hold every profile to them without importing TorchAir.

A profile that cannot change what a cell checks (its option acts on something the
cell's graph does not have) makes the cell a skip with the reason: never a pass
that checked nothing. Importable without torch: the CLI parser needs the names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from opsdk.axes import SHAPE_MODES
from opsdk.errors import OpsdkError, SetupError

__all__ = [
    "ALL",
    "PROFILES",
    "Declared",
    "Profile",
    "apply",
    "declared",
    "get",
    "idle_reason",
    "names",
    "options",
    "parse",
    "require_reached",
    "unreached",
]

ALL = "all"


@dataclass(frozen=True)
class Profile:
    """One setting users turn on, per column it applies to.

    ``settings`` maps a column to its options (``{option: value}``); ``shapes`` are the
    shape modes it means something in; ``writes_only``: only an op that writes an
    input is affected; ``needs`` says what the cell's graph must hold for the option to
    act (checked by the column after compiling, :func:`idle_reason`); ``catches`` is
    what it finds, for the guide and ``--help``.
    """

    name: str
    settings: dict[str, dict[str, Any]]
    catches: str
    shapes: tuple[str, ...] = SHAPE_MODES
    writes_only: bool = False
    needs: str = ""

    def applies(self, column: str, shapes: str) -> bool:
        return column in self.settings and shapes in self.shapes

    def options(self, column: str) -> dict[str, Any]:
        return dict(self.settings.get(column, {}))


PROFILES: tuple[Profile, ...] = (
    Profile(
        "frozen_parameter",
        {
            "ge": {"experimental_config.frozen_parameter": True},
            "npugraph_ex": {"frozen_parameter": True},
        },
        "an op that breaks when its weights (nn.Parameter, mark_static_address inputs) keep "
        "one address for the whole run",
        shapes=("static", "mark_static"),  # TorchAir refuses a frozen input whose shape changes
        needs="parameters",
    ),
    Profile(
        "no_input_mutations",
        {"ge": {"experimental_config.keep_inference_input_mutations": False}},
        "an in-place op whose write only survives when AOT keeps the mutation in the graph "
        "(here it returns the new value and copies it back after the graph)",
        writes_only=True,
    ),
    Profile(
        "no_view_optimize",
        {"ge": {"experimental_config.enable_view_optimize": False}},
        "views around the op lowered by their own converters instead of TorchAir's view folding",
        needs="views",
    ),
    Profile(
        "keep_noop_ops",
        {"ge": {"experimental_config.remove_noop_ops": False}},
        "no-op nodes (a same-dtype copy, a full slice) left in the graph and lowered",
        needs="noop_ops",
    ),
    Profile(
        "no_clone_input",
        {"npugraph_ex": {"clone_input": False}},
        "a kernel captured on the caller's own buffers (layout included) instead of "
        "npugraph_ex's contiguous copies: e.g. a host fallback for non-contiguous inputs",
    ),
    Profile(
        "no_inplace_pass",
        {"npugraph_ex": {"inplace_pass": False}},
        "an in-place/functional pair whose functional op runs where npugraph_ex would "
        "otherwise reinplace it (an intermediate input)",
        needs="intermediates",
    ),
    Profile(
        "no_input_inplace_pass",
        {"npugraph_ex": {"input_inplace_pass": False}},
        "an in-place op run functionally (on a copy, written back) instead of on the input",
        writes_only=True,
    ),
    Profile(
        "capture_limit",
        {"npugraph_ex": {"capture_limit": 1}},
        "the op past the limit, where npugraph_ex stops capturing and runs the graph "
        "eagerly for every later call",
        shapes=("dynamic",),  # the limit is reached by a shape change
    ),
)

_BY_NAME = {p.name: p for p in PROFILES}

# What a cell's graph must hold for a profile's option to act, as a skip reason.
_NEEDS = {
    "parameters": "it acts only on nn.Parameter or mark_static_address inputs, and this cell "
    "passes plain tensors: run it with a module context",
    "views": "the op's graph has no view node for it to act on: run it with a usage context "
    "that puts views around the op",
    "noop_ops": "the op's graph has no no-op node for it to keep: run it with a usage "
    "context that chains aten ops around the op",
    "intermediates": "the op's inputs are graph inputs, never intermediates it could "
    "reinplace: run it with a usage context that chains aten ops around the op",
}


def names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def get(name: str) -> Profile:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise OpsdkError(
            f"unknown option profile {name!r}: choose from {', '.join(names())} or {ALL}"
        ) from None


def parse(items) -> tuple[str, ...]:
    """Profile names from a list (``["all"]`` is every profile), checked."""
    items = [i.strip() for i in items if i.strip()]
    if ALL in items:
        return names()
    return tuple(get(i).name for i in dict.fromkeys(items))


# What a usage context puts in the graph around the op, of what profiles need (the
# plain cell, context None, has the op alone on graph inputs).
_CONTEXT_HAS: dict[str | None, set[str]] = {
    "view": {"views"},
    "chain": {"views", "noop_ops", "intermediates"},
    "twice": {"intermediates"},
    "buffer": {"parameters"},
}


def idle_reason(profile: Profile, spec, context: str | None = None) -> str | None:
    """Why ``profile`` cannot change what a cell of the op ``spec`` in ``context``
    checks (the cell is then a skip), or None."""
    if profile.writes_only and not spec.inplace:
        return f"{profile.name} acts only on ops that write an input, and this op writes none"
    if profile.needs and profile.needs not in _CONTEXT_HAS.get(context, ()):
        return f"{profile.name} would check nothing here: {_NEEDS[profile.needs]}"
    return None


def options(profile: str | None, column: str) -> dict[str, Any]:
    """The options ``column`` sets for ``profile`` (none for a plain cell)."""
    return get(profile).options(column) if profile else {}


def require_reached(profile: str | None, column: str, configs) -> None:
    """Raise :class:`SetupError` unless every config a graph of ``column`` was compiled with
    holds ``profile``'s options: a profile that did not take effect checked nothing."""
    wanted = options(profile, column)
    for config in configs if wanted else ():
        missing = unreached(config, wanted)
        if missing:
            raise SetupError(
                f"{column} compiled a graph without {', '.join(missing)}: profile {profile} "
                "did not take effect; check the TorchAir this runs on"
            )


def apply(config, options: dict[str, Any]) -> None:
    """Set ``options`` (dotted paths) on a TorchAir ``CompilerConfig``; its option classes
    refuse an unknown name or value."""
    for path, value in options.items():
        *parents, name = path.split(".")
        target = config
        for part in parents:
            target = getattr(target, part)
        setattr(target, name, value)


def unreached(config, options: dict[str, Any]) -> list[str]:
    """The options whose value the config a graph was compiled with does not hold."""
    missing = []
    for path, value in options.items():
        held = config
        for part in path.split("."):
            held = getattr(held, part, None)
        held = getattr(held, "value", held)  # an OptionValue: its value, maybe as a string
        if held not in (value, str(value), {True: "1", False: "0"}.get(value)):
            missing.append(f"{path}={value!r} (the graph's config has {held!r})")
    return missing


# --------------------------------------------------------------------------- TorchAir's own


@dataclass(frozen=True)
class Declared:
    """An option as TorchAir's config class declares it."""

    kind: str  # OptionValue, IntRangeValue, ...
    default: Any
    choices: tuple | None = None  # OptionValue's allowed values
    minimum: int | None = None  # IntRangeValue's lower bound

    def allows(self, value: Any) -> bool:
        if self.choices is not None:
            return value in self.choices
        if self.minimum is not None:
            return isinstance(value, int) and value >= self.minimum
        return True


# Where each column's config class lives under the directory holding ``torchair``.
_CONFIG_SOURCES = {"ge": "torchair/configs", "npugraph_ex": "npugraph_ex/configs"}


def declared(column: str) -> dict[str, Declared]:
    """The options of the ``CompilerConfig`` that ``column`` builds, by dotted path, read
    from the source of the TorchAir opsdk runs (the cache offline, torch_npu's on a
    host), not imported: importing TorchAir costs seconds and installs its patches."""
    from opsdk._runtime import locator

    folder = locator.locate().path / _CONFIG_SOURCES[column]
    modules = {f.stem: ast.parse(f.read_text()) for f in sorted(folder.glob("*.py"))}
    return dict(_options(modules, "compiler_config", "CompilerConfig", ""))


def _class(modules: dict[str, ast.Module], module: str, name: str):
    """``(module, ClassDef)`` of the config class ``name`` as ``module`` sees it (defined
    there, or imported from a sibling: two modules define an ``_ExperimentalConfig``)."""
    for node in modules[module].body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return module, node
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            source = (node.module or "").rpartition(".")[2]
            if source in modules and source != module:
                return _class(modules, source, name)
    return None


def _options(modules: dict[str, ast.Module], module: str, name: str, prefix: str):
    """``(path, Declared)`` for each ``self.NAME = Kind(...)`` in the ``__init__`` of the
    config class ``name``, nested config classes followed."""
    _, cls = _class(modules, module, name)
    init = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
    for stmt in init[0].body if init else ():
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else None
        value = getattr(stmt, "value", None)
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
        ):
            continue
        kind, path = value.func.id, prefix + target.attr
        nested = _class(modules, module, kind)
        if nested is not None and not kind.endswith("Value"):  # a config, not an option
            yield from _options(modules, nested[0], kind, path + ".")
            continue
        literals = [_literal(a) for a in value.args]
        default = literals[0] if literals else None
        choices = literals[1] if kind == "OptionValue" and len(literals) > 1 else None
        minimum = literals[1] if kind == "IntRangeValue" and len(literals) > 1 else None
        yield path, Declared(kind, default, tuple(choices) if choices else None, minimum)


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None  # a name (INT64_MAX): not needed to check a profile
