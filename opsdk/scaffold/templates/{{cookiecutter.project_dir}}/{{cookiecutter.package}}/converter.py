{%- set op = cookiecutter.op -%}
"""TorchAir GE converter of the op.

The FX node becomes the GE op {{ op.ir_name }}. Schema:
    {{ op.schema | docwrap(8) }}

The same code runs offline (opsdk's GE stand-in) and on an NPU host (CANN).
{%- if op.inplace %}
In-place: the IR output of the written input shares its name; TorchAir lowers
``auto_functionalized_v2`` around this op, so the converter returns only the
op's own outputs.
{%- endif %}
"""

import torch
import torchair
from torchair import ge
{%- if op.ge_attrs %}
from torchair.ge import attr
{%- endif %}
{%- if op.host_inputs %}

from opsdk.converters import {{ op.host_inputs | join(", ") }}
{%- endif %}


@torchair.register_fx_node_ge_converter(torch.ops.{{ op.namespace }}.{{ op.name }}.{{ op.overload_attr }})
{{ op.converter_def }}
    """Lower the FX node to the GE op {{ op.ir_name }}."""
{{ op.converter_body }}
