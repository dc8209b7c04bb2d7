{%- import "macros.jinja" as m -%}
{%- set op = cookiecutter.op -%}
{%- set pair = cookiecutter.pair -%}
{%- set attach = cookiecutter.attach -%}
{%- set register = "attach.register_converter" if attach else "torchair.register_fx_node_ge_converter" -%}
"""TorchAir GE converter of the op{{ "s" if pair else "" }}.

The FX node of OP becomes the GE op {{ op.ir_name }}. The same code runs offline
(opsdk's GE stand-in) and on an NPU host (CANN).
{%- if op.returns_input %}
In-place, torch_npu's convention: {{ op.ir_name }}'s output {{ op.returns_input }} is its input
{{ op.returns_input }} written in place (a ref output), which the converter returns.
{%- elif op.inplace %}
In-place: the IR output of the written input shares its name; TorchAir lowers
``auto_functionalized_v2`` around this op, so the converter returns only the
op's own outputs.
{%- endif %}
{%- if pair %}
FUNCTIONAL_OP lowers to the same GE op on a copy of {{ op.returns_input }} (``ge.TensorMove``),
as TorchAir's own converters do for torch_npu's in-place pairs.
{%- endif %}
{%- if attach %}
Attached: registered only if TorchAir has no converter for the op (it has its own
for many torch_npu ops).
{%- endif %}
"""

{% if "torch." in (op.args | rejectattr("tensor") | map(attribute="py_type") | join(" ")) -%}
import torch
{% endif -%}
{% if not attach -%}
import torchair
{% endif -%}
from torchair import ge
{%- if op.ge_attrs or op.counted %}
from torchair.ge import attr
{%- endif %}
{%- if op.ge_values %}
from torchair.ge._ge_graph import {{ op.ge_values | join(", ") }}
{%- endif %}
{%- if op.host_inputs or attach %}

{% if attach %}from opsdk import attach
{% endif %}
{%- if op.host_inputs %}from opsdk.converters import {{ op.host_inputs | join(", ") }}{% endif %}
{%- endif %}

{% if pair %}from .schema import FUNCTIONAL_OP, OP{% else %}{{ m.import_op(cookiecutter.style) }}{% endif %}


@{{ register }}(OP)
{{ m.converter_def(op) }}
    """Lower the FX node to the GE op {{ op.ir_name }}."""
{{- m.converter_body(op) }}
{%- if pair %}


@{{ register }}(FUNCTIONAL_OP)
{{ m.converter_def(pair) }}
    """Lower the FX node to {{ op.ir_name }} on a copy of {{ op.returns_input }}."""
{{- m.converter_body(op, moved=op.returns_input) }}
{%- endif %}
