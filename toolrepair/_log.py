"""The package's logger, ``toolrepair``, made on first use: ``logging`` (and the traceback,
string and threading modules it imports) is a large share of ``import toolrepair`` if imported
with it, and most programs log nothing through it."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = ["logger"]


@functools.cache
def logger() -> logging.Logger:
    import logging

    return logging.getLogger("toolrepair")
