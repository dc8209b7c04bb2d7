"""Regenerate every committed example with this opsdk: `python examples/regenerate.py`.

tests/test_examples.py fails while an example differs from what `opsdk new` writes
for the inputs its pyproject.toml records; run this after changing the templates.
"""

import shutil
import tempfile
from pathlib import Path

from opsdk.scaffold.into import regenerate

for project in sorted(Path(__file__).parent.glob("custom_ops/*/pyproject.toml")):
    example = project.parent
    with tempfile.TemporaryDirectory() as tmp:
        fresh = regenerate(example, Path(tmp))
        shutil.rmtree(example)
        shutil.copytree(fresh, example)
    print(f"regenerated {example}")
