"""Dialect family index: the dialects of this family, in precedence order."""

from __future__ import annotations

from ._base import Dialect

__all__ = ["DIALECTS"]

DIALECTS: tuple[Dialect, ...] = ()
