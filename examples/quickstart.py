"""Salvage the tool calls a local model wrote as text, repair them, run them, and show what changed.

    python examples/quickstart.py [REPLY_FILE]

The default reply is a Qwen2.5-7B answer in the Hermes format with three typical mistakes:
a drifted tool name, arguments sent as a broken JSON string, and a tool that was never offered
(plus an example call inside its reasoning, which must not run).
"""

from __future__ import annotations

import pathlib
import sys
from typing import Literal

import toolrepair as tr

HERE = pathlib.Path(__file__).resolve().parent


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, object]:
    """Current weather for a city."""
    return {"city": city, "temperature": 21 if unit == "celsius" else 70, "unit": unit}


def web_search(query: str, limit: int = 5) -> list[str]:
    """Search the web."""
    return [f"result {i + 1} for {query!r}" for i in range(limit)]


def main(path: pathlib.Path) -> int:
    reply = path.read_text(encoding="utf-8")
    registry = tr.ToolRegistry([get_weather, web_search])
    print(f"reply: {path.name} ({len(reply)} characters)\n")

    salvaged = registry.salvage(reply)
    print(f"salvaged {len(salvaged.calls)} call(s) written as text:")
    for call in salvaged.calls:
        start, end = call.span or (0, 0)
        written = " ".join(reply[start:end].split())
        print(f"  [{call.dialect}] {call.name} {call.arguments}\n      written as: {written[:100]}")
    for rejection in salvaged.rejected:
        print(f"  refused [{rejection.reason}]: {rejection.name!r}")
    print(f"content left for the user: {salvaged.content!r}\n")

    with registry.turn():
        for call in salvaged.calls:
            outcome = registry.run(call)
            for event in outcome.events:
                print(f"  repaired ({event.kind}): {event.message}")
            status = "ok " if outcome.ok else "ERR"
            print(f"{status} {outcome.call.name}({outcome.call.arguments}) -> {outcome.content}")
    return 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "replies" / "qwen2.5-7b-hermes.txt"))
