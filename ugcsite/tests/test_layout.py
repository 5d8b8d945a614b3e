"""The layout holds: dependencies point ugcsite -> feeds -> social, the HTTP layer imports no
app, no two modules import each other (directly or round a loop), imports sit at the top, and a
test module takes what tests share from a support module or conftest.py, never from another
test_* module."""

import ast
import os
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
# The site's platform: the package ugcsite.platform, whose modules import no app, so every app
# may use them. The rest of ugcsite is the wiring, which imports the apps.
PLATFORM = {name for name in MODULES if name == "ugcsite.platform" or name.startswith("ugcsite.platform.")}
WIRING = {name for name in MODULES if name.startswith("ugcsite") and name not in PLATFORM}


def _imports(path: Path, *, top_level: bool) -> set[str]:
    """The project modules ``path`` imports: at module level, or inside functions."""
    tree = ast.parse(path.read_text())
    nodes = (
        tree.body
        if top_level
        else [n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)]
    )
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name in MODULES}


def test_the_modules_are_found():
    assert {"ugcsite.platform.http", "feeds.services.boards", "social.graph"} <= MODULES.keys()


def test_social_imports_nothing_of_feeds_or_of_the_site():
    for name, path in MODULES.items():
        if name.startswith("social"):
            wrong = {
                m
                for m in _imports(path, top_level=True) | _imports(path, top_level=False)
                if m.startswith(("feeds", "ugcsite")) and m not in PLATFORM
            }
            assert not wrong, f"{name} imports {sorted(wrong)}"


def test_feeds_imports_no_module_of_the_site_but_its_platform():
    for name, path in MODULES.items():
        if name.startswith("feeds"):
            wrong = {m for m in _imports(path, top_level=True) if m.startswith("ugcsite")} - PLATFORM
            assert not wrong, f"{name} imports {sorted(wrong)}"


@pytest.mark.parametrize("name", sorted(PLATFORM))
def test_the_platform_imports_no_app(name):
    """Nothing of feeds, social or the wiring: only the platform's own modules."""
    imported = _imports(MODULES[name], top_level=True) | _imports(MODULES[name], top_level=False)
    assert imported <= {"ugcsite"} | PLATFORM


def test_every_module_of_the_wiring_imports_an_app_or_the_platform():
    """A module of ugcsite's top that needs neither belongs in the platform (but the entry points
    and the backups' beat task, which no app imports)."""
    lonely = {
        name
        for name in WIRING - {"ugcsite", "ugcsite.celery", "ugcsite.settings", "ugcsite.wsgi", "ugcsite.backups"}
        if not {m for m in _imports(MODULES[name], top_level=True) if m.startswith(("feeds", "social", "ugcsite"))}
    }
    assert lonely == set()


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
                pytest.fail(
                    "import cycle: " + " -> ".join(trail[trail.index(nxt) :] + [node, nxt])
                    if nxt in trail
                    else f"import cycle through {node} -> {nxt}"
                )
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def test_imports_sit_at_the_top():
    inside = {name: sorted(_imports(path, top_level=False)) for name, path in MODULES.items()}
    assert {name: found for name, found in inside.items() if found} == {}


def _test_folders() -> list[Path]:
    """Every tests/ folder of the project (not of the virtualenvs: folders starting with a dot)."""
    found = []
    for folder, subfolders, _ in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if not name.startswith(".") and name != "node_modules"]
        if Path(folder).name == "tests":
            found.append(Path(folder))
    return sorted(found)


def _test_modules_imported(source: str, path: Path) -> set[str]:
    """The project's test_* modules that the code ``source`` (of the file ``path``) imports,
    anywhere in it: ``import a.test_b``, ``from a.test_b import c``, ``from a import test_b``,
    and the same relative to the file's package."""
    package = path.relative_to(ROOT).parent.parts
    named = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] if node.level else ())
            module = ".".join(part for part in (base, node.module) if part)
            named.add(module)
            named.update(f"{module}.{alias.name}" for alias in node.names)
    return {
        name
        for name in named
        if name.rpartition(".")[2].startswith("test_") and ROOT.joinpath(*name.split(".")).with_suffix(".py").is_file()
    }


def test_the_test_folders_are_found():
    assert {ROOT / app / "tests" for app in APPS} <= set(_test_folders())


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("import feeds.tests.test_history", id="import"),
        pytest.param("from feeds.tests.test_history import sql_feed", id="from-the-module"),
        pytest.param("from feeds.tests import support, test_history", id="from-the-package"),
        pytest.param("from .test_history import sql_feed", id="relative"),
        pytest.param("from . import test_history", id="relative-from-the-package"),
        pytest.param("from ..tests.test_history import sql_feed", id="relative-from-the-parent"),
        pytest.param("def helper():\n    from feeds.tests.test_history import sql_feed", id="in-a-function"),
    ],
)
def test_an_import_of_a_test_module_is_seen(source):
    assert _test_modules_imported(source, ROOT / "feeds" / "tests" / "test_rebuild.py") == {"feeds.tests.test_history"}


def test_no_test_module_imports_another():
    """Shared helpers live in a support module (feeds/tests/support.py, ugcsite/tests/support.py),
    shared fixtures in conftest.py, where pytest finds them without an import."""
    found = {}
    for folder in _test_folders():
        for path in sorted(folder.rglob("*.py")):
            imported = _test_modules_imported(path.read_text(), path)
            if imported:
                found[str(path.relative_to(ROOT))] = sorted(imported)
    assert found == {}
