"""The one traversal of the backward graph. Iterative, so graphs of any depth work."""


def count_dependencies(roots):
    """{node: number of edges pointing at it} over every node reachable from roots."""
    counts = {}
    stack = list(dict.fromkeys(roots))  # two outputs of one node: walk below it once
    # the roots are walked from the start; a single root is no node's descendant (a DAG)
    on_stack = set(stack) if len(stack) > 1 else ()
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                if child in counts:
                    counts[child] += 1
                else:  # first seen: walk on below it
                    counts[child] = 1
                    if child not in on_stack:
                        stack.append(child)
    return counts


def topological_order(roots, counts=None):
    """Every node reachable from roots, each after all the nodes that point at it
    (Kahn's algorithm over count_dependencies(roots), or `counts` if the caller has them:
    they are used up): the order backward runs them in."""
    if counts is None:
        counts = count_dependencies(roots)
    order = []
    ready = [r for r in dict.fromkeys(roots) if r not in counts]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            left = counts[child] - 1
            counts[child] = left
            if left == 0:
                ready.append(child)
    return order
