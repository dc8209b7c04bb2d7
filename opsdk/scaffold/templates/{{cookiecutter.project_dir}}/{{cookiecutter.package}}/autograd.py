{%- if cookiecutter.autograd -%}
{%- set op = cookiecutter.op -%}
{%- set ag = cookiecutter.autograd -%}
"""Autograd formula of the op: its backward, and what the forward saves for it.

Schema:
    {{ op.schema | docwrap(8) }}

``register_autograd`` attaches both to the op on every device. Eager training
calls them directly; under torch.compile AOT autograd traces the backward into
the backward graph, which TorchAir compiles to a GE graph like the forward.
"""

{% if cookiecutter.style == "cpp" or cookiecutter.style == "library" -%}
import torch
{%- endif %}
{%- if not op.working %}
from opsdk import ImplementMe
{%- endif %}
{%- if cookiecutter.style != "cpp" %}

from .schema import {% if cookiecutter.style == "custom_op" %}{{ op.name }}{% else %}LIB{% endif %}
{%- endif %}


def {{ op.name }}_setup_context(ctx, inputs: tuple, output) -> None:
    """Keep on ``ctx`` what the backward needs from the forward's inputs and output."""
    {{ ag.unpack }} = inputs
{%- if op.working %}
    ctx.x_shape, ctx.y_shape = x.shape, y.shape
{%- else %}
    ctx.save_for_backward({{ ag.saved }})
{%- endif %}


{{ ag.backward_def }}
    """One gradient per input (None where there is none), from the outputs' gradients."""
{%- if op.working %}
    # x + y broadcasts: each input's gradient is summed back to the input's shape.
    return grad_out.sum_to_size(ctx.x_shape), grad_out.sum_to_size(ctx.y_shape)
{%- else %}
    raise ImplementMe(
        __file__,
        "{{ op.name }}_backward",
        "return the gradients of {{ ag.grads_for }} (None for the other inputs)",
    )
{%- endif %}

{% if cookiecutter.style == "custom_op" %}
{{ op.name }}.register_autograd({{ op.name }}_backward, setup_context={{ op.name }}_setup_context)
{%- else %}
torch.library.register_autograd(
    {{ op.qualname | pystr }},
    {{ op.name }}_backward,
    setup_context={{ op.name }}_setup_context,
{%- if cookiecutter.style == "library" %}
    lib=LIB,
{%- endif %}
)
{%- endif %}
{% endif -%}
