"""The layout holds: dependencies point ugcsite -> feeds -> social, the HTTP layer imports no
app, no two modules import each other (directly or round a loop), and imports sit at the top."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("ugcsite", "feeds", "social")


def _modules() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "tests" in parts or "migrations" in parts or parts[-1] == "testing":
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()
# The site's platform: modules of ugcsite that import no app, so every app may use them.
PLATFORM = {"ugcsite.redis", "ugcsite.errors", "ugcsite.http", "ugcsite.metrics", "ugcsite.ratelimits", "ugcsite.logs", "ugcsite.sql"}


def _imports(path: Path, *, top_level: bool) -> set[str]:
    """The project modules ``path`` imports: at module level, or inside functions."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level else [n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                                         for n in ast.walk(f)]
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name in MODULES}


def test_the_modules_are_found():
    assert {"ugcsite.http", "feeds.services.boards", "social.graph"} <= MODULES.keys()


def test_social_imports_nothing_of_feeds_or_of_the_site():
    for name, path in MODULES.items():
        if name.startswith("social"):
            wrong = {m for m in _imports(path, top_level=True) | _imports(path, top_level=False)
                     if m.startswith(("feeds", "ugcsite")) and m not in PLATFORM}
            assert not wrong, f"{name} imports {sorted(wrong)}"


def test_feeds_imports_no_module_of_the_site_but_its_platform():
    for name, path in MODULES.items():
        if name.startswith("feeds"):
            wrong = {m for m in _imports(path, top_level=True) if m.startswith("ugcsite")} - PLATFORM
            assert not wrong, f"{name} imports {sorted(wrong)}"


@pytest.mark.parametrize("name", sorted(PLATFORM))
def test_the_platform_imports_no_app(name):
    assert _imports(MODULES[name], top_level=True) <= {"ugcsite", "ugcsite.errors"}


def test_no_import_cycle():
    graph = {name: {m for m in _imports(path, top_level=True) if m != name} for name, path in MODULES.items()}
    # a package's __init__ is imported before any of its modules: count it as a step of the path
    for name in MODULES:
        parent = name.rpartition(".")[0]
        if parent in graph:
            graph[name].add(parent)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1 and not node.startswith(nxt + "."):
                pytest.fail("import cycle: " + " -> ".join(trail[trail.index(nxt):] + [node, nxt]) if nxt in trail
                            else f"import cycle through {node} -> {nxt}")
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def test_imports_sit_at_the_top():
    inside = {name: sorted(_imports(path, top_level=False)) for name, path in MODULES.items()}
    assert {name: found for name, found in inside.items() if found} == {}
