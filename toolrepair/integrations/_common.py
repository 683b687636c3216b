"""What the framework adapters share: lazy imports, stable ids, plain-dict views of SDK objects."""

from __future__ import annotations

import copy
import hashlib
import importlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from .._registry import ToolRegistry
from .._types import SalvageResult

__all__ = ["PendingMessages", "as_dict", "lazy_classes", "rejection_errors", "require", "stable_id"]

# Distributions behind each extra, for the message of a failed import.
_EXTRA_PACKAGES = {
    "langchain": "langchain, langchain-core and langgraph",
    "llamaindex": "llama-index-core",
    "mcp": "mcp",
    "openai": "openai",
    "anthropic": "anthropic",
}


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise an ImportError that says which extra provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"toolrepair.integrations.{extra} needs {_EXTRA_PACKAGES[extra]} "
            f"(missing module {module!r}): pip install 'toolrepair[{extra}]'"
        ) from exc


def stable_id(prefix: str, text: str, index: int) -> str:
    """An id for a call salvaged from text: the same reply always gives the same ids, so a
    retried or replayed turn does not invent new ones.

    >>> stable_id("call_", "hello", 0) == stable_id("call_", "hello", 0)
    True
    """
    digest = hashlib.sha256(f"{index}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}{digest[:24]}"


def as_dict(obj: Any) -> dict[str, Any]:
    """A deep, plain-dict copy of a pydantic SDK object (fields that were set) or a mapping."""
    if isinstance(obj, Mapping):
        return copy.deepcopy(dict(obj))
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        # exclude_unset keeps the payload's own shape: no null fields the API never sent.
        data = dump(mode="json", exclude_unset=True, by_alias=True)
        if isinstance(data, dict):
            return data
    raise TypeError(f"expected a mapping or an SDK model, not {type(obj).__name__}")


def rejection_errors(result: SalvageResult, registry: ToolRegistry, id_key: str) -> list[dict[str, Any]]:
    """Text calls the salvage refused, as error entries the application can show the model."""
    errors: list[dict[str, Any]] = []
    for rejection in result.rejected:
        if rejection.reason == "not-offered" and rejection.name:
            repair = registry.repair({"name": rejection.name, "arguments": {}})
            message = str(repair.error) if repair.error is not None else f"Tool {rejection.name!r} not found."
        else:
            message = f"A tool call written as text could not be used ({rejection.reason})."
        errors.append({id_key: None, "name": rejection.name, "message": message, "reason": rejection.reason})
    return errors


def lazy_classes(module: str, factories: Mapping[str, Callable[[], type]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that builds each named class on first use and keeps it.

    Classes that subclass a framework's own class are built this way, so that importing the
    integration module never imports the framework.
    """
    built: dict[str, type] = {}

    def __getattr__(name: str) -> Any:
        factory = factories.get(name)
        if factory is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        if name not in built:
            built[name] = factory()
        return built[name]

    return __getattr__


class PendingMessages:
    """Corrective messages kept by tool-call id until the framework dispatches that call.
    Bounded: a message never asked for is forgotten, oldest first. Thread-safe."""

    LIMIT = 1024

    def __init__(self) -> None:
        self._items: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, ident: str, message: str) -> None:
        with self._lock:
            self._items[ident] = message
            while len(self._items) > self.LIMIT:
                self._items.popitem(last=False)

    def pop(self, ident: Any) -> str | None:
        with self._lock:
            return self._items.pop(ident, None) if isinstance(ident, str) else None
