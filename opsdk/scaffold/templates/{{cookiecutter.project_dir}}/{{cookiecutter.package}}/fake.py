{%- import "macros.jinja" as m -%}
{%- set op = cookiecutter.op -%}
"""Fake function of the op: output shapes and dtypes, no data.

torch.compile traces the op with fake tensors (and symbolic sizes when shapes
are dynamic); this function tells it what the op returns: contiguous tensors, as
the kernel's outputs are. opsdk.meta has helpers for the common op families that
stay correct with symbolic sizes (``torch.empty_like(x)`` would keep ``x``'s layout).
"""

import torch
{%- if op.working %}
from opsdk import meta
{%- elif op.returns %}
from opsdk import ImplementMe
{%- endif %}

{% if cookiecutter.style == "custom_op" %}from .schema import {{ op.name }}
{%- elif cookiecutter.style == "library" %}from .schema import LIB, OP
{%- else %}{{ m.import_op("cpp") }}{% endif %}

{% if cookiecutter.style == "custom_op" %}
@{{ op.name }}.register_fake
{%- elif cookiecutter.style == "cpp" %}
@torch.library.register_fake(OP)
{%- else %}
@torch.library.register_fake(OP, lib=LIB)
{%- endif %}
{{ m.def_(op.name ~ "_fake", op) }}
    """What the op returns, from its inputs' metadata alone."""
{%- if op.working and not op.returns %}
    meta.inplace(x, y)
{%- elif not op.returns %}
    return None  # the op returns nothing; its writes are declared by Tensor(a!)
{%- elif op.working %}
    return meta.elementwise(x, y)
{%- else %}
    raise ImplementMe(__file__, "{{ op.name }}_fake", "return empty tensors of the output shapes")
{%- endif %}
