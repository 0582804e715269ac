"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp and vhp, built on grad().

Each follows the same steps as torch 2.13's (reverse mode, one backward pass per output
element for jacobian; jvp and hvp by the double-backward trick), so results have torch's
values and, with create_graph=True, torch's history; without it they are detached. Vectorized
jacobian with `vectorize=True` makes one batched grad() call, as torch's does (without
create_graph, whose batched graph gradviz does not build); hessian's `vectorize=True` and forward
mode (`strategy="forward-mode"`) are refused.

>>> import gradviz as torch
>>> from gradviz.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""

from .engine import grad as _grad
from .grad_mode import _state, enable_grad as _enable_grad, set_grad_enabled as _set_grad_enabled
from .._missing import module_getattr as _module_getattr

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _refuse(fn, what):
    raise NotImplementedError(f"gradviz: torch.autograd.functional.{fn}({what}) is not "
                              "implemented by gradviz's core; run with --backend torch to use "
                              "PyTorch")


def _as_tuple(inp, arg_name, fn_name):
    """(was it a tuple, the tuple of Tensors), with torch's TypeError for anything else."""
    from .._tensor import Tensor
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, inp


def _unpack(res, to_unpack):
    """Undo _as_tuple on a result (to_unpack: one flag, or (outputs, inputs) flags)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _preprocess(inputs, create_graph, need_graph):
    # Always a new Tensor object, so that the inputs given as arguments differ from the same
    # tensors captured by the function itself (torch does the same).
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _postprocess(res, create_graph):
    from .._tensor import Tensor
    if isinstance(res[0], Tensor):
        return res if create_graph else tuple(r.detach() for r in res)
    return tuple(_postprocess(r, create_graph) for r in res)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


_STRICT = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on "
                "the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode."),
}


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_STRICT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """grad() that skips outputs which are None or do not require grad (allow_unused)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                 allow_unused=True, create_graph=create_graph, retain_graph=retain_graph,
                 is_grads_batched=is_grads_batched)


_FILL = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """None gradients become zeros (or torch's error in strict mode)."""
    from .._creation import zeros_like
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v, against, is_tuple, create_graph, fn, none_message):
    if v is not None:
        _, v = _as_tuple(v, "v", fn)
        v = _preprocess(v, create_graph, need_graph=False)
        _validate_v(v, against, is_tuple)
    elif len(against) != 1 or against[0].nelement() != 1:
        raise RuntimeError(none_message)
    return v


_V_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.")


def _setup(inputs, fn, create_graph):
    """The inputs as a tuple of new tensors that require grad: (was it a tuple, the tuple)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    return is_inputs_tuple, _preprocess(inputs, create_graph, need_graph=True)


def _call(func, inputs, fn, strict):
    """func(*inputs) as (was it a tuple, the tuple of outputs), checked for strict mode."""
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                          fn)
    _check_requires_grad(outputs, "outputs", strict)
    return is_outputs_tuple, outputs


def _last_backward(outputs, inputs, v, refs, strict, create_graph, stage):
    """The final backward pass, with v as grad_outputs: recorded only with create_graph (or
    when grad mode was on outside), None gradients filled as zeros shaped like refs."""
    with _set_grad_enabled(True if create_graph else _state.enabled):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        return _fill_in_zeros(grad_res, refs, strict, create_graph, stage)


def _results(outputs, is_outputs_tuple, res, is_res_tuple, create_graph):
    """(func's outputs, the product), each detached unless create_graph, tuples unpacked."""
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(res, create_graph), is_res_tuple))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs.

    >>> import gradviz as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> torch.autograd.functional.vjp(lambda x: x ** 2, x, torch.tensor([1.0, 0.5]))[1]
    tensor([2., 2.])
    """
    with _enable_grad():
        is_inputs_tuple, inputs = _setup(inputs, "vjp", create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns a "
                       "single Tensor with a single element.")
    res = _last_backward(outputs, inputs, v, inputs, strict, create_graph, "back")
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick.

    >>> import gradviz as torch
    >>> torch.autograd.functional.jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    from .._creation import zeros_like
    with _enable_grad():
        is_inputs_tuple, inputs = _setup(inputs, "jvp", create_graph)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_INPUT)
        is_outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # The trick: the gradient of (u^T J) with respect to u, applied to v, is J v.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    res = _last_backward(grad_inputs, grad_outputs, v, outputs, strict, create_graph,
                         "back_trick")
    return _results(outputs, is_outputs_tuple, res, is_outputs_tuple, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for each output and input, a tensor of shape
    output.shape + input.shape (nested tuples when either is a tuple).

    >>> import gradviz as torch
    >>> torch.autograd.functional.jacobian(lambda x: 3 * x, torch.tensor([1.0, 2.0]))
    tensor([[3., 0.],
            [0., 3.]])
    """
    from .._creation import zeros_like
    from .._ops.views import stack
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        _refuse("jacobian", "strategy='forward-mode'")
    if vectorize and create_graph:
        _refuse("jacobian", "vectorize=True, create_graph=True")
    with _enable_grad():
        is_inputs_tuple, inputs = _setup(inputs, "jacobian", create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            jac = _vectorized_jacobian(outputs, inputs, strict)
            return _unpack(_postprocess(jac, False), (is_outputs_tuple, is_inputs_tuple))
        jac = []
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            for j in range(out.nelement()):
                vj = _autograd_grad((out.reshape(-1)[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not allowed "
                                               "in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    row.append(g)
            jac.append(tuple(stack(row, dim=0).view(out.size() + inputs[k].size())
                             for k, row in enumerate(rows)))
        return _unpack(_postprocess(tuple(jac), create_graph),
                       (is_outputs_tuple, is_inputs_tuple))


def _vectorized_jacobian(outputs, inputs, strict):
    """jacobian(vectorize=True) as torch computes it: one grad() call whose batched
    grad_outputs are the standard basis of all outputs' elements, split back per output."""
    from .._creation import zeros_like
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    numels = tuple(out.numel() for out in outputs)
    total = sum(numels)
    basis, start = [], 0
    for out, n in zip(outputs, numels):
        chunk = out.new_zeros(total, n)
        chunk.diagonal(start).fill_(1)
        basis.append(chunk)
        start -= n
    flat = tuple(out.reshape(-1) for out in outputs)
    per_input = _autograd_grad(flat, inputs, tuple(basis), is_grads_batched=True)
    per_input = [zeros_like(inp).expand((total,) + inp.shape) if g is None else g
                 for g, inp in zip(per_input, inputs)]
    return tuple(zip(*[tuple(j.view(out.shape + inp.shape)
                             for j, out in zip(g.split(numels, dim=0), outputs))
                       for g, inp in zip(per_input, inputs)]))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning one element: the Jacobian of its Jacobian.

    >>> import gradviz as torch
    >>> torch.autograd.functional.hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode":
        _refuse("hessian", "outer_jacobian_strategy='forward-mode'")
    if vectorize:
        _refuse("hessian", "vectorize=True")

    def single_output(*inp):
        return _scalar_function(func, inp, "hessian", strict)[1][0].squeeze()

    def jac_func(*inp):
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict)
    return _unpack(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function(func, inputs, fn, strict):
    """func(*inputs), which must be a single Tensor of one element: (False, (output,))."""
    is_outputs_tuple, outputs = _call(func, inputs, fn, strict)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain "
                           "a single element")
    return is_outputs_tuple, outputs


def _second_order(fn, func, inputs, v, create_graph, strict):
    """vhp (v^T H: one more backward through the gradient, with v as its grad_outputs) and hvp
    (H v by the double-backward trick), in torch's steps and with torch's strict checks."""
    from .._creation import zeros_like
    with _enable_grad():
        is_inputs_tuple, inputs = _setup(inputs, fn, create_graph)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, fn, _V_INPUT)
        is_outputs_tuple, outputs = _scalar_function(func, inputs, fn, strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        if fn == "vhp":
            last, wrt, stage = jac, inputs, "double_back"
        else:
            grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
            double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
            # torch checks jac again here, under the hessian's message.
            _check_requires_grad(jac, "hessian", strict)
            last, wrt, stage = double_back, grad_jac, "double_back_trick"
    res = _last_backward(last, wrt, v, inputs, strict, create_graph, stage)
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function returning one element.

    >>> import gradviz as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> torch.autograd.functional.vhp(lambda x: (x ** 3).sum(), x, torch.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    return _second_order("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function returning one element (double-backward trick).

    >>> import gradviz as torch
    >>> f = lambda x: (x ** 3).sum()
    >>> torch.autograd.functional.hvp(f, torch.tensor([1.0, 2.0]), torch.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _second_order("hvp", func, inputs, v, create_graph, strict)


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("autograd.functional", __name__, globals())
