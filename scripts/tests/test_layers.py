"""The tool's modules form layers: no import loop among scripts/suitelib's modules (imports inside
functions counted too), and no import inside a function except an optional dependency."""

import ast
import unittest
from pathlib import Path

from helpers import SCRIPTS

PACKAGE = SCRIPTS / "suitelib"
OPTIONAL = {"matplotlib"}  # may be imported where it is used: the tool runs without it


def imports(path):
    """[(module imported from the package, at top level?)] and [(optional-free function-level import, line)]."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, inner = [], []
    top = set(id(n) for n in tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
            found += [(n.split(".")[0], id(node) in top) for n in names]
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
            roots = {(a.name if isinstance(node, ast.Import) else (node.module or "")).split(".")[0] for a in node.names}
            if not roots <= OPTIONAL:
                inner.append((node.lineno, ast.unparse(node)))
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    return [(m, t) for m, t in found if m in modules], inner


def graph(package=PACKAGE):
    return {p.stem: {m for m, _ in imports(p)[0] if m != p.stem} for p in sorted(package.glob("*.py"))
            if p.stem != "__init__"}


def find_loop(edges):
    """One import loop as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                loop = visit(nxt, path + [nxt])
                if loop:
                    return loop
        state[node] = "done"
        return None

    for start in sorted(edges):
        if start not in state:
            loop = visit(start, [start])
            if loop:
                return loop
    return None


class TestLayers(unittest.TestCase):
    def test_no_import_loop(self):
        loop = find_loop(graph())
        self.assertIsNone(loop, f"import loop: {' -> '.join(loop or [])}")

    def test_no_import_inside_a_function(self):
        found = [f"{p.name}:{line}: {text}" for p in sorted(PACKAGE.glob("*.py")) for line, text in imports(p)[1]]
        self.assertEqual(found, [], "imports inside functions (only optional dependencies may be):\n" + "\n".join(found))

    def test_the_loop_finder_sees_a_planted_loop(self):
        self.assertEqual(find_loop({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(find_loop({"a": {"b"}, "b": {"c"}, "c": set()}))


if __name__ == "__main__":
    unittest.main()
