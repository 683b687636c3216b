"""The model profile a request is salvaged under: ``--model-profile NAME``, or picked from the
request's ``model`` field by the table below (``--model-profile none``: never a profile).

A profile tells the salvager the model's reasoning convention, so a stream sends each call the
moment it closes instead of holding everything until the reply ends (a lone ``</think>`` could
otherwise still turn all before it into reasoning). The proxy keeps salvaging every built-in
dialect under a profile: a model behind a proxy is the one that writes a call in the wrong
format, and a profile picked from a name must not cost a repair today's salvage makes.

The table is data: rows of tokens, tried in order (the more specific first); a row matches
when each of its tokens is one of the name's tokens, the name read lower-case and cut at
every character other than a letter, a digit or ``.`` (``Qwen/Qwen3-Coder-30B-A3B`` gives
``qwen``, ``qwen3``, ``coder``, ``30b``, ``a3b``). Tokens are compared whole, so ``qwen3``
is not ``qwen3.5`` and ``gemma-3-4b`` is no ``gemma 4``. A family is in the table only where
its chat template's reasoning convention is known: a wrong one could read a call written
inside reasoning as a call, so an unknown name gets no profile (today's holding). DeepSeek
V3.1 and V3.2 are left out for that reason: in thinking mode their templates open ``<think>``,
in the other mode they do not, and the name does not say which mode a request is in.
"""

from __future__ import annotations

import re

from .._salvage import DIALECTS, ModelProfile, model_profile

__all__ = ["EVERY_DIALECT", "NO_PROFILE", "PROFILE_BY_MODEL", "profile_for", "profile_named"]

NO_PROFILE = "none"  # `--model-profile none`: no profile, whatever the request's model

# Every built-in dialect, by name: what the proxy salvages with or without a profile.
EVERY_DIALECT: tuple[str, ...] = tuple(d if isinstance(d, str) else d.name for d in DIALECTS)

# (tokens every one of which the model name holds) -> the profile, first match wins.
PROFILE_BY_MODEL: tuple[tuple[tuple[str, ...], str], ...] = (
    # A distilled model is named after its teacher, then its base (DeepSeek-R1-0528-Qwen3-8B)
    # and speaks the teacher's template: the teachers' rows come first.
    (("deepseek", "r1"), "deepseek-r1"),
    (("deepseek", "v3"), "deepseek-v3"),
    (("qwen3", "coder"), "qwen3-coder"),
    (("qwen3", "thinking"), "qwen3-thinking"),
    (("qwen3.5",), "qwen3.5"),
    (("qwen3",), "qwen3"),
    (("gpt", "oss"), "gpt-oss"),
    (("gemma", "4"), "gemma4"),
    (("gemma4",), "gemma4"),
    (("kimi", "k2", "thinking"), "kimi-k2-thinking"),
    (("kimi", "k2"), "kimi-k2"),
    (("kimi", "k3"), "kimi-k3"),
    (("glm", "4.7"), "glm-4.7"),
    (("glm", "5"), "glm-4.7"),
    (("mistral",), "mistral"),
    (("devstral",), "mistral"),
    (("magistral",), "mistral"),
)

_CUT = re.compile(r"[^a-z0-9.]+")
_MAX_NAME = 256  # characters of a model name read: names are short; a long field costs no more


def _tokens(name: str) -> frozenset[str]:
    return frozenset(t for t in _CUT.split(name[:_MAX_NAME].lower()) if t)


def profile_named(setting: str | None) -> ModelProfile | None:
    """The profile ``--model-profile`` names (None for none or ``none``); ValueError, with
    the known names, for an unknown one."""
    if setting is None or setting == NO_PROFILE:
        return None
    return model_profile(setting)


def profile_for(setting: str | None, model: object) -> ModelProfile | None:
    """The profile one request is salvaged under: the named one, else the table's pick for the
    request's ``model`` (a str; anything else picks none). O(len(model) + table).

    >>> [getattr(profile_for(None, m), "name", None) for m in ("qwen3:8b", "Qwen/Qwen3-Coder-30B", "llama3")]
    ['qwen3', 'qwen3-coder', None]
    >>> profile_for("none", "qwen3:8b") is None
    True
    """
    if setting is not None:
        return profile_named(setting)
    if not isinstance(model, str):
        return None
    tokens = _tokens(model)
    for wanted, name in PROFILE_BY_MODEL:
        if tokens.issuperset(wanted):
            return model_profile(name)
    return None
