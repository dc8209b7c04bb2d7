{%- import "macros.jinja" as m -%}
{%- set op = cookiecutter.op -%}
{%- set pair = cookiecutter.pair -%}
{%- set attach = cookiecutter.attach -%}
"""Fake function of the op{{ "s" if pair else "" }}: output shapes and dtypes, no data.

torch.compile traces the op with fake tensors (and symbolic sizes when shapes
are dynamic); this function tells it what the op returns: contiguous tensors, as
the kernel's outputs are. opsdk.meta has helpers for the common op families that
stay correct with symbolic sizes (``torch.empty_like(x)`` would keep ``x``'s layout).
{%- if attach %}
Attached: registered only if the op's own library registered none (torch_npu
registers Meta kernels with ``Library("npu", "IMPL", "Meta")``).
{%- endif %}
"""

import torch
{%- if attach %}

from opsdk import attach
{%- endif %}
{%- if op.working or op.from_cann or pair %}
from opsdk import meta
{%- elif op.returns and not op.returns_input and not op.from_cann %}
from opsdk import ImplementMe
{%- endif %}

{% if cookiecutter.style == "custom_op" %}from .schema import {{ op.name }}
{%- elif cookiecutter.style == "library" %}from .schema import {% if pair %}FUNCTIONAL_OP, {% endif %}LIB, OP
{%- else %}{{ m.import_op("cpp") }}{% endif %}
{%- if op.from_cann and cookiecutter.style != "cpp" %}
from .kernels import {{ op.name }}_reference
{%- elif op.from_cann %}

from opsdk.cpp_build import reference
{%- endif %}

{% if attach %}
@attach.register_fake(OP, lib=LIB)
{%- elif cookiecutter.style == "custom_op" %}
@{{ op.name }}.register_fake
{%- elif cookiecutter.style == "cpp" %}
@torch.library.register_fake(OP)
{%- else %}
@torch.library.register_fake(OP, lib=LIB)
{%- endif %}
{{ m.def_(op.name ~ "_fake", op) }}
    """What the op returns, from its inputs' metadata alone."""
{%- if op.working and op.returns_input %}
    meta.inplace(x, y)
    return x
{%- elif op.working and not op.returns %}
    meta.inplace(x, y)
{%- elif op.returns_input %}
{{- m.comment(op.meta_fit) }}
    return {{ op.returns_input }}  # the input it writes, unchanged in shape and dtype
{%- elif not op.returns %}
{{- m.comment(op.meta_fit) }}
    return None  # the op returns nothing; its writes are declared by Tensor(a!)
{%- elif op.working %}
    return meta.elementwise(x, y)
{%- elif op.from_cann and cookiecutter.style != "cpp" %}
    # The reference on fake tensors, contiguous as the kernel's outputs are: right while it
    # uses torch ops only (no .item(), no data-dependent sizes); opsdk.meta's helpers state
    # the shapes directly.
    return meta.contiguous({{ op.name }}_reference({{ m.call_args(op.args) }}))
{%- elif op.from_cann %}
    # The C++ reference on fake tensors, contiguous as the kernel's outputs are: right while
    # it uses tensor ops only (no data, and sym_sizes() rather than sizes(), which symbolic
    # shapes refuse); opsdk.meta's helpers state the shapes directly. The npu kernel
    # allocates its outputs from this function.
    return meta.contiguous(reference(OP, {{ m.call_args(op.args) }}))
{%- else %}
{{- m.comment(op.meta_fit) }}
    raise ImplementMe(__file__, "{{ op.name }}_fake", "return empty tensors of the output shapes")
{%- endif %}
{%- if pair %}


@{{ "attach.register_fake" if attach else "torch.library.register_fake" }}(FUNCTIONAL_OP, lib=LIB)
{{ m.def_(pair.name ~ "_fake", pair) }}
    """What the functional op returns: a new tensor like the one {{ op.name }} writes."""
    {{ op.name }}_fake({{ m.params(pair.args, annotate=False) }})
    return meta.same_as({{ op.returns_input }})
{%- endif %}
