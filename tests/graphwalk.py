"""Walking an autograd graph in tests, the same way on gradviz and on torch."""


def graph_nodes(*roots):
    """Every node reachable from `roots` (grad_fn nodes; None is skipped), each once, breadth
    first in next_functions order. The list keeps the nodes alive, so no id() is reused."""
    seen, queue, out = set(), list(roots), []
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        queue.extend(n for n, _ in node.next_functions)
    return out
