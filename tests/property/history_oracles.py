"""Validators of chat histories written by others, for the history properties.

- ``turnsafe`` (a test dependency, imported as it is);
- ``tool-call-repair`` 0.1.0, whose wheel installs a top-level module named ``toolrepair`` that
  would shadow this package: it is never installed. ``.ci/run`` downloads its wheel into
  ``.cache/oracles`` (``pip download --no-deps tool-call-repair==0.1.0 -d .cache/oracles``) and
  this module loads the wheel's ``toolrepair.py`` under the name ``tool_call_repair_oracle``;
- the request types of the ``openai`` and ``anthropic`` SDKs, checked with pydantic.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from functools import cache
from types import ModuleType
from typing import Any

ORACLE_NAME = "tool_call_repair_oracle"
WHEELS = pathlib.Path(__file__).resolve().parents[2] / ".cache" / "oracles"
WHEEL_GLOB = "tool_call_repair-0.1.0-*.whl"


@cache
def tool_call_repair() -> ModuleType | None:
    """The ``tool-call-repair`` module loaded from its wheel under ``ORACLE_NAME``; None when
    the wheel has not been downloaded."""
    wheels = sorted(WHEELS.glob(WHEEL_GLOB))
    if not wheels:
        return None
    with zipfile.ZipFile(wheels[0]) as wheel:
        source = wheel.read("toolrepair.py")
    # A file of its own name, so that nothing can import it as ``toolrepair``.
    path = pathlib.Path(tempfile.mkdtemp(prefix="oracle-")) / f"{ORACLE_NAME}.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location(ORACLE_NAME, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[ORACLE_NAME] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


MISSING_WHEEL = (
    f"the tool-call-repair wheel is not in {WHEELS} (run: pip download --no-deps "
    f"tool-call-repair==0.1.0 -d .cache/oracles)"
)


@cache
def _adapters() -> dict[str, Any]:
    from anthropic.types import MessageParam
    from openai.types.chat import ChatCompletionMessageParam
    from pydantic import TypeAdapter

    return {"openai": TypeAdapter(list[ChatCompletionMessageParam]), "anthropic": TypeAdapter(list[MessageParam])}


def sdk_accepts(messages: list[Any], shape: str) -> None:
    """Raises pydantic's ``ValidationError`` unless the SDK's request type for ``shape``
    accepts ``messages``. The SDKs type content lists as iterables, which pydantic checks
    lazily, as they are iterated: every one is walked."""
    _walk(_adapters()[shape].validate_python(messages))


def _walk(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _walk(item)
    elif isinstance(value, (list, tuple, Iterator)):
        for item in value:
            _walk(item)
