"""The requests adapters build their replies through requests' public hooks."""

from __future__ import annotations

import ast
from pathlib import Path

NET = Path(__file__).resolve().parents[2] / "cctx_research"

PRIVATE = {"_content", "_content_consumed"}


def test_no_module_sets_or_reads_a_replys_private_content():
    # requests keeps a reply's body in Response._content: a module that writes it
    # bypasses how requests and requests-cache read a body (WholeBody is the public way)
    found = [
        f"{path.relative_to(NET.parent)}:{node.lineno}"
        for path in NET.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE
    ]
    assert found == []
