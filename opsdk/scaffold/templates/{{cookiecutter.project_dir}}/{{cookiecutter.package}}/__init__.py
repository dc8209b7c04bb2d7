{%- set op = cookiecutter.op -%}
{%- set pair = cookiecutter.pair -%}
{%- set specs = op.has_specs -%}
{%- set entry = cookiecutter.style == "cpp" and cookiecutter.cpp.entry -%}
"""An Ascend NPU custom op, scaffolded by opsdk.

Importing this package makes sure an "npu" device exists (torch_npu on an NPU
host, opsdk's emulated device elsewhere), then registers the op from its modules:

{% if cookiecutter.style == "cpp" -%}
- {{ op.name }}.cpp: schema and kernels in C++ (compiled on the first import,
  then cached by opsdk.cpp_build)
{%- if entry %}, and the op's fast entry point,
  exported here as {{ op.name }}()
{%- endif %}
{%- else -%}
- schema.py, kernels.py: the schema and the kernels
{%- endif %}
- fake.py: the fake function{% if not cookiecutter.ge %}, all npugraph_ex needs to capture the op
  (made for npugraph_ex alone: no GE IR, no converter){% endif %}
{%- if cookiecutter.ge %}
- ir.py: the GE IR definition
{%- endif %}
{%- if specs %}
- specs.py: the inputs the op supports
{%- endif %}
{%- if cookiecutter.autograd %}
- autograd.py: the backward
{%- endif %}
{%- if cookiecutter.updatable %}
- updatable.py: {{ cookiecutter.updatable.params | join(", ") }} updated on npugraph_ex replay
{%- endif %}
{%- if cookiecutter.ge %}
- converter.py: the GE converter, loaded as soon as TorchAir is importable
{%- endif %}
{%- if cookiecutter.pattern %}
- patterns.py: the op's fusion pattern, the torch code it replaces in graphs
{%- endif %}

Each subpackage with an ``OPS`` tuple is one more op of this library (``opsdk
new --into``): it is imported, and its ops listed in ``OPS`` here too.
"""
{%- if cookiecutter.style == "cpp" %}

from pathlib import Path

import torch
{%- endif %}
{%- if cookiecutter.ge %}

from opsdk.converters import load_converters
{%- endif %}
{%- if entry %}
from opsdk.cpp_build import load_module
{%- elif cookiecutter.style == "cpp" %}
from opsdk.cpp_build import load_library
{%- endif %}
from opsdk.device import ensure_npu
{%- if entry %}
from opsdk.fast_entry import traceable
{%- endif %}
from opsdk.oplib import import_added_ops

ensure_npu()
{%- if cookiecutter.style == "cpp" %}
{% if entry %}_library = load_module{% else %}load_library{% endif %}(Path(__file__).with_name("{{ op.name }}.cpp"))

# The op's OpOverload, which the package's other modules import.
OP = torch.ops.{{ op.namespace }}.{{ op.name }}.{{ op.overload_attr }}

from . import {% if cookiecutter.autograd %}autograd, {% endif %}fake{% if cookiecutter.ge %}, ir{% endif %}{% if specs %}, specs{% endif %}  # noqa: E402, F401  (imported to register the op)
{%- else %}

from . import {% if cookiecutter.autograd %}autograd, {% endif %}fake{% if cookiecutter.ge %}, ir{% endif %}{% if specs %}, specs{% endif %}{% if cookiecutter.updatable %}, updatable{% endif %}  # noqa: E402, F401  (imported to register the op)
from .schema import {% if pair %}FUNCTIONAL_OP, {% endif %}OP  # noqa: E402
{%- endif %}

# This op{% if pair %} and its functional partner{% endif %}, then those `opsdk new --into` added as subpackages.
OPS = (OP, {% if pair %}FUNCTIONAL_OP, {% endif %}*import_added_ops(__name__, __path__))
{%- if not cookiecutter.ge %}
# The graph modes the package is made for: `opsdk check` lays out no ge or fusion cell.
MODES = ({% for m in cookiecutter.modes %}"{{ m }}",{% if not loop.last %} {% endif %}{% endfor %})
{%- endif %}
{%- if entry %}

# The fastest way to call the op from Python; same semantics as OP (which torch.compile
# traces in its place).
{{ op.name }} = traceable(_library.{{ op.name }}, OP)
{%- endif %}
{%- if cookiecutter.ge %}

load_converters(f"{__name__}.converter")
{%- endif %}
{%- if cookiecutter.pattern %}

from . import patterns  # noqa: E402, F401  (imported to register the op's fusion pattern)
{%- endif %}
