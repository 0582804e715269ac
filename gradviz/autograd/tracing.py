"""The tracer interface: what the autograd core reports while it runs, and to whom.

The core knows nothing about who listens. A listener subclasses `Tracer`, overrides the
methods it cares about (each one is a no-op here, but `sent`, which calls two of them) and is
installed for a run:

    >>> import gradviz as torch
    >>> from gradviz.autograd import tracing
    >>> class Names(tracing.Tracer):
    ...     def __init__(self):
    ...         self.seen = []
    ...     def node(self, node):
    ...         self.seen.append(type(node).__name__)
    >>> x = torch.ones(2, requires_grad=True)
    >>> with tracing.installed(Names()) as t:
    ...     y = (x * 2).sum()
    >>> t.seen
    ['AccumulateGrad', 'MulBackward0', 'SumBackward0']

`METHODS` names every method the core calls, in the order they are defined below; adding one
is adding a documented no-op method to `Tracer` (and its call in the core). At most one tracer
is installed at a time. The core's hot paths read the module attribute `tracing.active`
(None, or the installed tracer) once and call nothing when it is None; everyone else calls
`current()`. The core never imports the inspector (gradviz.inspect implements a Tracer).
"""

__all__ = ["Tracer", "METHODS", "current", "install", "installed"]

# The installed tracer, or None. Read as `tracing.active` by the core (one module attribute
# lookup per op when nothing listens); written only by install().
active = None


class Tracer:
    """Base class of everything that listens to the core: each method is a no-op (`sent` calls
    `produced` and `ran`).

    Arguments are the core's own objects, alive while the method runs: nodes (grad_fn
    objects, `gradviz.autograd.graph.Node`), tensors, and gradients as NumPy arrays or, with
    create_graph, Tensors. A tracer must not change them.
    """

    # Read by the engine: True keeps every node's saved values after backward (as if each
    # backward had retain_graph=True), so that a checker can run the graph again.
    retain_all = False
    # Read by the engine: True gives a node without hooks one `applied` call once it ran, in
    # place of `grad` before and `sent` after (a tracer whose `grad` reads nothing the node's
    # backward changes, such as the leaf's .grad an AccumulateGrad writes).
    applies = False

    # ----- forward ---------------------------------------------------------------------------

    def created(self, tensor):
        """Any new tensor, the moment it is made (before it has a grad_fn): every op's result,
        factory functions, views. Called from the op itself, so the user's frame that made the
        tensor is on the stack (gradviz.autograd.callsite finds it)."""

    def leaf(self, tensor):
        """A tensor was made to require grad (`requires_grad=True`, `requires_grad_()`); it
        did not before."""

    def node(self, node):
        """A new node of the backward graph (a grad_fn, an AccumulateGrad, a CopySlices),
        with its next_functions set; called before `made` for its outputs."""

    def made(self, tensor, node):
        """`tensor` is output number `tensor.output_nr` of `node` (its grad_fn from now on);
        once per differentiable output."""

    def recorded(self, node, tensor):
        """`node` and then `made(tensor, node)`, for an op's new node and its output 0: the
        core makes one call where nothing happens between the two (every op it records). A
        tracer that overrides either gets them both called, as here."""
        self.node(node)
        self.made(tensor, node)

    def inplace(self, tensor, op):
        """`tensor` was edited in place by `op` (a name such as "add_" or "setitem"); its
        version counter was already bumped."""

    def refused(self, tensor, message):
        """Autograd is about to refuse an in-place edit of `tensor` (a leaf that requires
        grad, a view of one, a multi-output view) with RuntimeError(message)."""

    def module_call(self, module, args):
        """The file called an nn.Module: `module(*args)` begins (before its forward hooks).
        Every node made until the matching `module_return` was made inside this call (or
        inside a call nested in it)."""

    def module_return(self, module, result):
        """The innermost open call of module returned result (None when it raised)."""

    def module_hook(self, kind, module, hook, given, returned, node):
        """A hook the user registered on an nn.Module ran. kind: "forward_pre" or "forward"
        (node is None; given and returned are the args or output) or "backward_pre" or
        "backward" (node is where it fired; given and returned are gradient tuples)."""

    # ----- backward --------------------------------------------------------------------------

    def begin(self, roots, inputs, capture):
        """A backward pass starts (Tensor.backward, autograd.backward or autograd.grad).
        roots: [(node, output_nr)] it starts from; inputs: the tensors of `inputs=` / grad's
        inputs, or None; capture: True for autograd.grad (gradients are returned, .grad is
        not written)."""

    def end(self):
        """The backward pass that the last `begin` on this thread started is over (it returned
        or raised); a pass begun inside it (a hook's backward) ended before."""

    def fired(self, node, kind, nr, hook, given, returned):
        """A hook the user registered ran at node, in the engine's order. kind: "tensor"
        (Tensor.register_hook; nr is the output it watches), "retain_grad" (hook is None),
        "pre" (Node.register_prehook), "post" (Node.register_hook) or "post_accumulate"
        (Tensor.register_post_accumulate_grad_hook; node is the AccumulateGrad). given is what
        it received (for post_accumulate: .grad's values before it ran), returned what it
        returned (for post_accumulate: the tensor's .grad after it ran)."""

    def hooked(self, node, nr, hook):
        """A tensor hook at node (output nr) returned a gradient that replaces the one it
        received; called after `fired`."""

    def grad(self, node, grads):
        """The gradients node is about to run with (one per output, None for none), after its
        tensor hooks and pre-hooks. Its saved values are still there."""

    def produced(self, node, outs):
        """What node's backward computed, one gradient per next function, before its
        post-hooks."""

    def ran(self, node, outs):
        """node is done: outs is what goes to each next function, after its post-hooks.
        Saved values are freed after this call (unless retain_graph or retain_all)."""

    def sent(self, node, outs):
        """`produced` and then `ran`, for a node without post-hooks (what it produced is what
        it sends): the engine makes one call where there is nothing between the two. A tracer
        that overrides either gets them both called, as here."""
        self.produced(node, outs)
        self.ran(node, outs)

    def applied(self, node, grads, outs):
        """`grad(node, grads)` and then `sent(node, outs)`, for a node without hooks of any
        kind, made once it ran (its saved values are still there): the engine's one call per
        node of a plain backward pass, to a tracer whose `applies` is True. What the node's
        backward made meanwhile (the .grad an AccumulateGrad creates) was reported before it.
        When its backward raises, `grad` alone is called. The default calls both, as here."""
        self.grad(node, grads)
        self.sent(node, outs)


METHODS = tuple(name for name, value in vars(Tracer).items()
                if callable(value) and not name.startswith("_"))


def current():
    """The installed tracer, or None."""
    return active


def install(tracer):
    """Install `tracer` (a Tracer, or None for none) and return the one it replaces."""
    global active
    if tracer is not None and not isinstance(tracer, Tracer):
        raise TypeError(f"a tracer must be a gradviz.autograd.tracing.Tracer, not "
                        f"{type(tracer).__name__}")
    previous, active = active, tracer
    return previous


class installed:
    """`with installed(tracer):` the tracer listens inside, and whatever was installed
    before is back after (exceptions too)."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        self._previous = install(self.tracer)
        return self.tracer

    def __exit__(self, *exc):
        install(self._previous)
        return False
