{%- set op = cookiecutter.op -%}
"""Definition of the op: its schema and which kernel serves which device.

Schema:
    {{ op.schema | docwrap(8) }}
{%- if op.inplace %}

{{ ("In-place: the op writes " ~ (op.mutates | map("pyname") | join(", ")) ~ " (marked ``Tensor(a!)``) and returns nothing for it, which is what auto-functionalization needs to put it in a graph.") | docwrap(0) }}
{%- endif %}
"""

import torch

from .kernels import {{ op.name }}_npu, {{ op.name }}_reference
{% if cookiecutter.style == "custom_op" %}
{{ op.name }} = torch.library.custom_op(
    {{ op.qualname | pystr }},
    {{ op.name }}_npu,
    mutates_args=({% for m in op.mutates %}{{ m | pystr }},{% endfor %}),
    device_types="npu",
    schema={{ op.schema_args | pystr }},
)
{{ op.name }}.register_kernel("cpu", {{ op.name }}_reference)
{%- else %}
LIB = torch.library.Library({{ op.namespace | pystr }}, "FRAGMENT")
LIB.define({{ op.schema | pystr }})
LIB.impl({{ op.impl_name | pystr }}, {{ op.name }}_npu, "PrivateUse1")
LIB.impl({{ op.impl_name | pystr }}, {{ op.name }}_reference, "CPU")
{%- endif %}
