"""The name of a model imported from a ``config.json``, and the fingerprint that says two configs are the same.

A model imported from an upload is named by the name a person typed, else by the config's own
``_name_or_path`` (what ``save_pretrained`` writes), else ``custom-<model_type>`` — never by the
uploaded file's name, so two uploads both called ``config.json`` do not collide. A name that is
already a catalog model (its id or the part after the slash, any case) is refused: the import would
shadow the catalog's entry.

The fingerprint is the SHA-256 of the config written canonically (keys sorted, no spaces), so the same
config uploaded twice, with its keys in another order or re-indented, has the same fingerprint.

>>> import_name({"_name_or_path": "acme/tiny-7b", "model_type": "llama"})
'acme/tiny-7b'
>>> import_name({"model_type": "llama"}), import_name({"model_type": "llama"}, "  my draft ")
('custom-llama', 'my draft')
>>> config_fingerprint({"b": 1, "a": 2}) == config_fingerprint({"a": 2, "b": 1})
True
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from planner.catalog.lookup import list_models
from planner.errors import InputError
from planner.input_types import checked_name

#: The longest model name kept (a Hugging Face id is at most 96 characters; local paths can be longer).
MAX_MODEL_NAME_CHARS = 200


def config_fingerprint(config: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``config`` as canonical JSON: equal for equal configs whatever their key order."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


def checked_model_name(name: object, field: str = "model_name") -> str:
    """``name`` trimmed (NFC); refused when empty, too long, holding control characters, or a catalog model's."""
    text = checked_name(name, field, MAX_MODEL_NAME_CHARS)
    key = text.lower()
    clash = next((m.id for m in list_models() if key in (m.id.lower(), m.short_name.lower())), None)
    if clash is not None:
        raise InputError(
            field, text, f"a name that is not a catalog model ({clash} is one): type another name for this import"
        )
    return text


def import_name(config: dict[str, Any], typed: str | None = None, field: str = "model_name") -> str:
    """The typed name, else the config's ``_name_or_path``, else ``custom-<model_type>`` (checked)."""
    if typed is not None and typed.strip():
        return checked_model_name(typed, field)
    own = config.get("_name_or_path")
    if isinstance(own, str) and own.strip():
        return checked_model_name(own.strip()[:MAX_MODEL_NAME_CHARS], field)
    return checked_model_name(f"custom-{str(config.get('model_type') or 'model')[:60]}", field)
