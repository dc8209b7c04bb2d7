{%- set op = cookiecutter.op -%}
"""Fake function of the op: output shapes and dtypes, no data.

Schema:
    {{ op.schema | docwrap(8) }}

torch.compile traces the op with fake tensors (and symbolic sizes when shapes
are dynamic); this function tells it what the op returns. opsdk.meta has
helpers for the common op families that stay correct with symbolic sizes.
"""

import torch
{%- if op.working %}
from opsdk import meta
{%- elif not op.returns_nothing %}
from opsdk import ImplementMe
{%- endif %}

{%- if cookiecutter.style != "cpp" %}

from .schema import {% if cookiecutter.style == "custom_op" %}{{ op.name }}{% else %}LIB{% endif %}
{%- endif %}

{% if cookiecutter.style == "custom_op" %}
@{{ op.name }}.register_fake
{%- elif cookiecutter.style == "cpp" %}
@torch.library.register_fake({{ (op.namespace ~ "::" ~ op.impl_name) | pystr }})
{%- else %}
@torch.library.register_fake({{ (op.namespace ~ "::" ~ op.impl_name) | pystr }}, lib=LIB)
{%- endif %}
{{ op.fake_def }}
    """What the op returns, from its inputs' metadata alone."""
{%- if op.working and op.returns_nothing %}
    meta.inplace(x, y)
{%- elif op.returns_nothing %}
    return None  # the op returns nothing; its writes are declared by Tensor(a!)
{%- elif op.working %}
    return meta.elementwise(x, y)
{%- else %}
    raise ImplementMe(__file__, "{{ op.name }}_fake", "return empty tensors of the output shapes")
{%- endif %}

