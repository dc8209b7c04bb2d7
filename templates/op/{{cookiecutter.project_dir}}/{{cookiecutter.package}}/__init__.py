{%- set op = cookiecutter.op -%}
"""An Ascend NPU custom op, scaffolded by opsdk.

Schema:
    {{ op.schema | docwrap(8) }}

{% if cookiecutter.style == "cpp" -%}
Importing this package makes sure an "npu" device exists (torch_npu on an NPU
host, opsdk's emulated device elsewhere), then loads the op library
{{ op.name }}.cpp, schema and kernels in C++ (compiled on the first import, then
cached by opsdk.cpp_build), and registers the fake function (fake.py), the GE
{% if op.working -%}
IR definition (ir.py), the input specs (specs.py) and, as soon as TorchAir is
importable, the GE converter (converter.py).
{%- else -%}
IR definition (ir.py) and, as soon as TorchAir is importable, the GE converter
(converter.py).
{%- endif %}
{%- else -%}
Importing this package makes sure an "npu" device exists (torch_npu on an NPU
host, opsdk's emulated device elsewhere), then registers the op: schema and
kernels (schema.py, kernels.py), fake function (fake.py), GE IR definition
{% if op.working -%}
(ir.py), input specs (specs.py) and, as soon as TorchAir is importable, the
GE converter (converter.py).
{%- else -%}
(ir.py) and, as soon as TorchAir is importable, the GE converter (converter.py).
{%- endif %}
{%- endif %}
"""
{%- if cookiecutter.style == "cpp" %}

from pathlib import Path
{%- endif %}

import torch
from opsdk.converters import load_converters
{%- if cookiecutter.style == "cpp" %}
from opsdk.cpp_build import load_library
{%- endif %}
from opsdk.device import ensure_npu

ensure_npu()
{%- if cookiecutter.style == "cpp" %}
load_library(Path(__file__).with_name("{{ op.name }}.cpp"))

from . import fake, ir{% if op.working %}, specs{% endif %}  # noqa: E402, F401  (imported to register the op)
{%- else %}

from . import fake, ir, schema{% if op.working %}, specs{% endif %}  # noqa: E402, F401  (imported to register the op)
{%- endif %}

OPS = (torch.ops.{{ op.namespace }}.{{ op.name }}.{{ op.overload_attr }},)

load_converters(f"{__name__}.converter")
