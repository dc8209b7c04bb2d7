{%- import "macros.jinja" as m -%}
{%- set op = cookiecutter.op -%}
"""TorchAir GE converter of the op.

The FX node of OP becomes the GE op {{ op.ir_name }}. The same code runs offline
(opsdk's GE stand-in) and on an NPU host (CANN).
{%- if op.inplace %}
In-place: the IR output of the written input shares its name; TorchAir lowers
``auto_functionalized_v2`` around this op, so the converter returns only the
op's own outputs.
{%- endif %}
"""

{% if "torch." in (op.args | rejectattr("tensor") | map(attribute="py_type") | join(" ")) -%}
import torch
{% endif -%}
import torchair
from torchair import ge
{%- if op.ge_attrs %}
from torchair.ge import attr
{%- endif %}
{%- if op.ge_values %}
from torchair.ge._ge_graph import {{ op.ge_values | join(", ") }}
{%- endif %}
{%- if op.host_inputs %}

from opsdk.converters import {{ op.host_inputs | join(", ") }}
{%- endif %}

{{ m.import_op(cookiecutter.style) }}


@torchair.register_fx_node_ge_converter(OP)
{{ m.converter_def(op) }}
    """Lower the FX node to the GE op {{ op.ir_name }}."""
{{- m.converter_body(op) }}
