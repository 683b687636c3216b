"""Errors the proxy answers with, in the OpenAI error shape clients already parse."""

from __future__ import annotations

from typing import Any

from .._errors import ToolRepairError

__all__ = ["ProxyError", "error_body"]


class ProxyError(ToolRepairError):
    """A request the proxy refuses or cannot complete: an HTTP status and an OpenAI-style body."""

    def __init__(self, status: int, message: str, *, kind: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.param = param

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.kind, self.param)


def error_body(message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    """``{"error": {"message", "type", "param", "code"}}``, as the OpenAI API answers errors."""
    return {"error": {"message": message, "type": kind, "param": param, "code": kind}}
