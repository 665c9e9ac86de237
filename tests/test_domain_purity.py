"""The domain (studio/domain/) is pure: every module there imports the standard library and the domain only.

import-linter checks it too (pyproject.toml); this test walks every file of the package, so a module added there, or
a library nobody thought of forbidding, is caught without anyone updating a list."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import studio.domain

DOMAIN = Path(studio.domain.__file__).parent


def imports_of(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            found.add(node.module)
    return found


def test_the_domain_imports_the_standard_library_and_itself_only() -> None:
    modules = sorted(DOMAIN.rglob("*.py"))
    assert len(modules) > 20
    for path in modules:
        for name in imports_of(path):
            top = name.split(".")[0]
            allowed = top in sys.stdlib_module_names or name == "studio.domain" or name.startswith("studio.domain.")
            assert allowed, f"{path.relative_to(DOMAIN.parent.parent)} imports {name}"


def test_the_check_itself_sees_a_forbidden_import(tmp_path: Path) -> None:
    impure = tmp_path / "impure.py"
    impure.write_text("import json\nfrom sqlalchemy import select\nfrom studio.ports import Clock\n")
    assert imports_of(impure) == {"json", "sqlalchemy", "studio.ports"}
