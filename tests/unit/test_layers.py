"""The package's layers: no module imports a higher layer (not even inside a function), there is no
import cycle, and no module grows past 700 lines without saying why in its docstring.

    errors, durable, sortedfile, boundedlines, timestamps, surt, _ext, htmltext  <  warc  <  store  <  index
        <  collection, wacz (wacz packages collections)  <  capture, replay (siblings: neither imports
        the other), distributed  <  cli

(store sits on warc, whose reader makes a stored file's record table, and under index, collection and
replay, which read byte ranges of WARCs kept in a store.)
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "warchive"

LAYERS = {
    "warchive": 0, "warchive.errors": 0, "warchive.durable": 1, "warchive.sortedfile": 0,
    "warchive.boundedlines": 0, "warchive.timestamps": 0, "warchive.surt": 1, "warchive._ext": 0, "warchive.htmltext": 0,
    "warchive.warc": 2, "warchive.store": 3, "warchive.index": 4, "warchive.collection": 5, "warchive.wacz": 5,
    "warchive.capture": 6, "warchive.replay": 6, "warchive.distributed": 6, "warchive.cli": 7,
    "warchive.__main__": 8,
}
SIBLINGS = {("warchive.capture", "warchive.replay"), ("warchive.replay", "warchive.capture")}
LONG_OK = "long because"   # a module over 700 lines says why in its docstring: "It is long because ..."


def _modules():
    for p in sorted(SRC.rglob("*.py")):
        rel = p.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), p


def _imports(name, path):
    """Every warchive module `name` imports, at any depth of its code."""
    tree = ast.parse(path.read_text())
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("warchive"):
                out.add(mod)
                for a in node.names:   # `from . import x` imports the module warchive.x
                    out.add(f"{mod}.{a.name}")
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("warchive"))
    return out


def _layer(mod):
    best = None
    for prefix, level in LAYERS.items():
        if mod == prefix or mod.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, level)
    return best


def _graph():
    mods = dict(_modules())
    graph = {}
    for name, path in mods.items():
        graph[name] = {m for m in _imports(name, path) if m in mods and m != name}
    return graph


def test_no_module_imports_a_higher_layer():
    bad = []
    for name, deps in _graph().items():
        mine = _layer(name)
        for d in deps:
            theirs = _layer(d)
            if d == "warchive" or name.startswith(d + "."):
                continue   # the package itself (__version__), or a package's own __init__
            if theirs[1] > mine[1] or (mine[0], theirs[0]) in SIBLINGS:
                bad.append(f"{name} ({mine[0]}) imports {d} ({theirs[0]})")
    assert bad == []


def test_no_import_cycles():
    graph = _graph()
    state = {}
    cycles = []

    def visit(n, stack):
        state[n] = 1
        for d in sorted(graph[n]):
            if d.startswith(n + "."):
                continue   # a package importing its own modules
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, stack + [d])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    assert cycles == []


def test_importing_the_index_layer_loads_no_capture_or_replay():
    code = ("import sys, json, warchive.index.query, warchive.index.build, warchive.index.segment, "
            "warchive.index.zipnum, warchive.index.rix, warchive.collection; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('warchive.capture', "
            "'warchive.replay', 'warchive.cli')))))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == []


def test_long_modules_say_why():
    long = []
    for name, path in _modules():
        text = path.read_text()
        if text.count("\n") > 700:
            doc = " ".join((ast.get_docstring(ast.parse(text)) or "").split())
            if LONG_OK not in doc:
                long.append(f"{name}: {text.count(chr(10))} lines")
    assert long == []
