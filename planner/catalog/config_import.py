"""Import a Hugging Face ``config.json`` (a path, a model folder, raw bytes or a dict) as a model.

Only the config is read: no weights are loaded, nothing is fetched, and custom code
(``auto_map`` / ``trust_remote_code``) is never executed.

>>> spec = model_from_config({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
...     "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
...     "vocab_size": 100}, model_id="tiny-mistral")
>>> spec.architecture.num_kv_heads, spec.origin
(2, 'imported')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planner.catalog.schemas import Lineage, ModelSpec
from planner.errors import ConfigError


def load_config(source: str | Path | bytes | dict[str, Any]) -> dict[str, Any]:
    """Read a config from a dict, JSON bytes, a ``config.json`` path or a folder that holds one."""
    if isinstance(source, dict):
        return dict(source)
    if isinstance(source, bytes | bytearray):
        return _parse(bytes(source).decode("utf-8", errors="replace"), "uploaded file")
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
        if not path.is_file():
            raise ConfigError(f"{path.parent} is a folder without a config.json", field="config")
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist", field="config")
    return _parse(path.read_text(encoding="utf-8", errors="replace"), str(path))


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where} is not JSON ({exc.msg} at line {exc.lineno}); expected a Hugging Face config.json",
            field="config",
        ) from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must hold a JSON object, not a {type(value).__name__}", field="config")
    return value


def model_from_config(
    source: str | Path | bytes | dict[str, Any],
    *,
    model_id: str | None = None,
    tokenizer: str | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec` for a custom model; its architecture is resolved (and validated) now."""
    config = load_config(source)
    if model_id is None:
        name = config.get("_name_or_path")
        if not name and isinstance(source, str | Path):
            path = Path(source)
            name = path.name if path.is_dir() else path.parent.name
        model_id = str(name or f"custom-{config.get('model_type', 'model')}")
    spec = ModelSpec(
        id=model_id,
        tokenizer=tokenizer,
        lineage=Lineage(family=str(config.get("model_type", "unknown")), variant="imported"),
        config=config,
        source="imported config.json",
        origin="imported",
    )
    _ = spec.architecture  # resolve now so that a bad config fails at import, naming its field
    return spec
