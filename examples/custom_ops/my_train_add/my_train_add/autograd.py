"""Autograd formula of the op: its backward, and what the forward saves for it.

``register_autograd`` attaches both to the op on every device. Eager training
calls them directly; under torch.compile AOT autograd traces the backward into
the backward graph, which TorchAir compiles to a GE graph like the forward.
"""

from .schema import my_train_add


def my_train_add_setup_context(ctx, inputs: tuple, output) -> None:
    """Keep on ``ctx`` what the backward needs from the forward's inputs and output."""
    x, y = inputs
    ctx.x_shape, ctx.y_shape = x.shape, y.shape


def my_train_add_backward(ctx, grad_out) -> tuple:
    """One gradient per input (None where there is none), from the outputs' gradients."""
    # x + y broadcasts: each input's gradient is summed back to the input's shape.
    return grad_out.sum_to_size(ctx.x_shape), grad_out.sum_to_size(ctx.y_shape)


my_train_add.register_autograd(my_train_add_backward, setup_context=my_train_add_setup_context)
