"""The public modules: opsdk and its modules whose docstring starts ``Public:``, the
fronts op packages import (pinned by tests/unit/test_public_api.py, listed in the
guide's table of public modules, tests/unit/test_docs.py)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def public_modules() -> list[str]:
    found = ["opsdk"]
    for path in sorted((ROOT / "opsdk").glob("[!_]*.py")):
        if (ast.get_docstring(ast.parse(path.read_text())) or "").startswith("Public:"):
            found.append(f"opsdk.{path.stem}")
    return found
