"""What a report reads from a file's source besides running it: the lines inside a loop body or a
comprehension (a line there runs more than once), and the line of each name's last assignment.

One parse and one walk per version of a file, whoever asks: a file holding one 6 MB list literal
was parsed twice and walked twice node by node (ast.walk over 700,000 constants), which made
`gradviz run` take 2.5 times as long as `python file.py`.
"""

import ast
import os

from .runner import UsageError, read_source

__all__ = ["SourceFacts", "source_facts", "scan"]

# Nodes that hold nothing a scan looks for: not walked into (a list literal's numbers)
_LEAVES = frozenset((ast.Constant, ast.Load, ast.Store, ast.Del))
_LOOPS = frozenset((ast.For, ast.AsyncFor, ast.While))
_COMPREHENSIONS = frozenset((ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
_ASSIGNMENTS = frozenset((ast.Assign, ast.AnnAssign, ast.AugAssign))

# path -> ((inode, size, mtime), SourceFacts): a report asks once per tensor
_cache = {}


class SourceFacts:
    """loop_lines: the lines of a for/while body or of a comprehension; assigned: name -> line
    of the last assignment (anywhere in the file) that binds it."""

    def __init__(self, loop_lines, assigned):
        self.loop_lines = frozenset(loop_lines)
        self.assigned = assigned


_NOTHING = SourceFacts((), {})


def source_facts(path):
    """The SourceFacts of the file at path as it is now; empty when it cannot be read or parsed
    (code from exec() is "<string>", a file may be gone since it ran)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return _NOTHING
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        facts = scan(ast.parse(read_source(path)))
    except (OSError, UsageError, SyntaxError, ValueError, MemoryError, RecursionError):
        facts = _NOTHING
    _cache[path] = (key, facts)
    return facts


def scan(tree):
    """The SourceFacts of a syntax tree, in one walk.

    >>> facts = scan(ast.parse("for i in range(3):\\n    y = i\\nz = [y for y in x]\\ny = 1\\n"))
    >>> sorted(facts.loop_lines), facts.assigned
    ([2, 3], {'y': 4, 'z': 3})
    """
    loops, assigned = set(), {}
    todo = [tree]
    while todo:
        node = todo.pop()
        kind = type(node)
        if kind in _LOOPS:
            for stmt in node.body:
                loops.update(range(stmt.lineno, stmt.end_lineno + 1))
        elif kind in _COMPREHENSIONS:
            loops.update(range(node.lineno, node.end_lineno + 1))
        elif kind in _ASSIGNMENTS:
            for target in (node.targets if kind is ast.Assign else [node.target]):
                for n in ast.walk(target):
                    if type(n) is ast.Name and node.lineno > assigned.get(n.id, 0):
                        assigned[n.id] = node.lineno
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                todo.extend([v for v in value if isinstance(v, ast.AST)
                             and type(v) not in _LEAVES])
            elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
                todo.append(value)
    return SourceFacts(loops, dict(sorted(assigned.items())))
