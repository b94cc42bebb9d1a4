"""Jupyter's parts (its server, nbformat, nbclient, nbconvert) loaded without the IRI grammar.

jsonschema imports ``rfc3987_syntax`` when it is installed (jupyter-events'
``format-nongpl`` extra installs it, for Jupyter's server), and that import compiles
Lark grammars: 1.4-2 s of CPU each time a process first imports jsonschema, as Jupyter's
server, nbformat's validator, nbclient and nbconvert all do, for the ``iri`` formats
none of their schemas uses (python-jsonschema/jsonschema#1428). Marked unimportable
in this process before jsonschema loads, it is skipped as if it were not installed;
jsonschema's other format checks stay. Once jsonschema has loaded, nothing changes.
"""

from __future__ import annotations

import sys

__all__ = ["without_iri_grammar"]


def without_iri_grammar() -> None:
    """Have jsonschema, when it loads in this process, skip the IRI grammar."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)
