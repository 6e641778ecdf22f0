"""Make the shared extract test helpers (tests/nodes/test_extract_support.py) importable."""

from __future__ import annotations

import sys
from pathlib import Path

_NODES = str(Path(__file__).resolve().parent.parent / "nodes")
if _NODES not in sys.path:
    sys.path.insert(0, _NODES)
