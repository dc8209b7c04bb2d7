{%- import "macros.jinja" as m -%}
{%- set op = cookiecutter.op -%}
"""GE IR definition of {{ op.ir_name }}.

The GE op that OP lowers to: the op prototype CANN registers with
``REG_OP({{ op.ir_name }})``, its inputs, outputs and attrs by name.
TorchAir's ``ge.custom_op`` checks the converter against it; offline, opsdk's
GE stand-in answers from it.
{%- if op.inplace %}
Each input the op writes in place has an output of the same name.
{%- endif %}
{%- if cookiecutter.pair %}
The functional partner {{ cookiecutter.pair.name }} lowers to the same GE op on a copy of its
input: opsdk finds this definition through the partner.
{%- endif %}
"""

{% if op.infer_dir %}from pathlib import Path

{% endif %}from opsdk.irdef import {% if op.ir_attrs %}Attr, {% endif %}{% if op.ir_inputs %}Input, {% endif %}IrDef, {% if op.ir_outputs %}Output, {% endif %}register

{{ m.import_op(cookiecutter.style) }}

{{ op.ir_const }} = register(
    IrDef(
        op_type={{ op.ir_name | pystr }},
        inputs=[{% for i in op.ir_inputs %}Input({{ i.name | pystr }}{% if i.kind != "required" %}, {{ i.kind | pystr }}{% endif %}{% if i.value_depend %}, value_depend={{ i.value_depend | pystr }}{% endif %}{% if i.scalar %}, scalar={{ i.scalar | pystr }}{% endif %}){% if not loop.last %}, {% endif %}{% endfor %}],
        outputs=[{% for o in op.ir_outputs %}Output({{ o.name | pystr }}{% if o.kind != "required" %}, {{ o.kind | pystr }}{% endif %}{% if o.depends_on_compute %}, depends_on_compute=True{% endif %}){% if not loop.last %}, {% endif %}{% endfor %}],
        attrs=[{% for a in op.ir_attrs %}Attr({{ a.name | pystr }}, {{ a.type | pystr }}{% if a.default is not none %}, {{ a.default }}{% endif %}{% if a.dtype %}, dtype=True{% endif %}){% if not loop.last %}, {% endif %}{% endfor %}],
{%- if op.arg_names %}
        arg_names={{ "{" }}{% for t, c in op.arg_names.items() %}{{ t | pystr }}: {{ c | pystr }}, {% endfor %}{{ "}" }},
{%- endif %}
{%- if op.ir_dtypes %}
        dtypes={{ "{" }}{% for t, row in op.ir_dtypes.items() %}{{ t | pystr }}: ({% for d in row %}{{ d | pystr }}{% if not loop.last or loop.length == 1 %}, {% endif %}{% endfor %}){% if not loop.last %}, {% endif %}{% endfor %}{{ "}" }},
{%- if op.ir_dtype_sets %}
        # REG_OP's TensorType: each tensor's list is a set of its own, not a row
        dtype_sets=True,
{%- endif %}
{%- endif %}
{%- if op.ir_formats %}
        formats={{ "{" }}{% for t, row in op.ir_formats.items() %}{{ t | pystr }}: ({% for d in row %}{{ d | pystr }}{% if not loop.last or loop.length == 1 %}, {% endif %}{% endfor %}){% if not loop.last %}, {% endif %}{% endfor %}{{ "}" }},
{%- endif %}
{%- if op.ir_chips %}
        chips=({% for c in op.ir_chips %}{{ c | pystr }}{% if not loop.last or loop.length == 1 %}, {% endif %}{% endfor %}),
{%- endif %}
{%- if op.infer_dir %}
        # the op's C++ InferShape / InferDataType, copied from its project: edit them here
        infer_root=str(Path(__file__).with_name({{ op.infer_dir | pystr }})),
{%- endif %}
        torch_op=OP.name(),
    )
)
