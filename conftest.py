"""Collection rules for the docstring examples (``--doctest-modules`` over ``toolrepair/``).

Integrations import their frameworks lazily and always collect; the proxy's server modules
import Starlette and httpx at the top, so without the ``proxy`` extra they are left out.
"""

from __future__ import annotations

import importlib.util

collect_ignore_glob: list[str] = []
if any(importlib.util.find_spec(name) is None for name in ("starlette", "httpx", "uvicorn")):
    collect_ignore_glob.append("toolrepair/proxy/*")
