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
from planner.catalog.speculators import imported_speculator, mtp_config
from planner.errors import ConfigError
from planner.model.architecture import unwrap_layer_config
from planner.model.config_bounds import validate_config_fields
from planner.user_files import read_user_file, shown_path

#: The largest config.json read (the biggest published ones, with long quantization module lists, are < 1 MiB).
MAX_CONFIG_BYTES = 4 * 2**20
EXPECTED = "a Hugging Face config.json (a file or a model folder holding one)"


def load_config(source: str | Path | bytes | dict[str, Any], *, field: str = "config") -> dict[str, Any]:
    """Read a config from a dict, JSON bytes, a ``config.json`` path or a folder that holds one."""
    if isinstance(source, dict):
        return dict(source)
    if isinstance(source, bytes | bytearray):
        if len(source) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"the uploaded config is {len(source):,} bytes: expected {EXPECTED} of at most 4 MiB", field=field
            )
        return _parse(bytes(source).decode("utf-8", errors="replace"), "uploaded file", field)
    path = Path(source)
    try:
        is_dir = path.is_dir()
    except (OSError, ValueError):
        is_dir = False
    if is_dir:
        path = path / "config.json"
        if not path.is_file():
            raise ConfigError(f"{shown_path(path.parent)} is a folder without a config.json", field=field)
    data = read_user_file(path, field=field, max_bytes=MAX_CONFIG_BYTES, expected=EXPECTED)
    return _parse(data.decode("utf-8", errors="replace"), shown_path(path), field)


def _parse(text: str, where: str, field: str = "config") -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where} is not JSON ({exc.msg} at line {exc.lineno}); expected a Hugging Face config.json",
            field=field,
        ) from exc
    except RecursionError:
        raise ConfigError(f"{where} is nested too deeply to be a Hugging Face config.json", field=field) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must hold a JSON object, not a {type(value).__name__}", field=field)
    return value


def model_from_config(
    source: str | Path | bytes | dict[str, Any],
    *,
    model_id: str | None = None,
    tokenizer: str | None = None,
    field: str = "config",
    speculator_kind: str | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec` for a custom model; its architecture is resolved (and validated) now.

    A speculator head (EAGLE, EAGLE-3, DeepSeek MTP) is recognised by its ``architectures`` or fields
    (:func:`planner.catalog.speculators.recognised_kind`) and gets a ``speculator`` block, so it is never sized
    as a one-layer model; ``speculator_kind`` (the deployment's ``--method``) marks a head whose config declares
    nothing (EAGLE-1 checkpoints publish a plain ``LlamaForCausalLM`` config). An imported head names no target.

    >>> head = model_from_config({"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
    ...     "num_hidden_layers": 1, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
    ...     "vocab_size": 1000, "draft_vocab_size": 100}, model_id="tiny-eagle3")
    >>> head.speculator.kind, head.speculator.draft_vocab_size, head.speculator.targets
    ('eagle3', 100, [])
    """
    config = load_config(source, field=field)
    validate_config_fields(config)  # every field read below (the head's included) is checked first
    block = imported_speculator(config, speculator_kind)
    if block is not None and block.kind == "mtp":
        config = mtp_config(config)
    if model_id is None:
        name = config.get("_name_or_path")
        if not isinstance(name, str) or not name.strip():
            name = None
        if not name and isinstance(source, str | Path):
            path = Path(source)
            name = shown_path(path.name if path.is_dir() else path.parent.name)
        model_id = str(name or f"custom-{config.get('model_type', 'model')}")[:200]
    spec = ModelSpec(
        id=model_id,
        tokenizer=tokenizer,
        lineage=Lineage(
            family=str(unwrap_layer_config(config).get("model_type", "unknown")),
            variant=f"imported {block.kind} head" if block else "imported",
        ),
        config=config,
        source="imported config.json",
        origin="imported",
        speculator=block,
    )
    _ = spec.architecture  # resolve now so that a bad config fails at import, naming its field
    return spec
