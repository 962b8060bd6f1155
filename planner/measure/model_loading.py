"""Load the target and draft for a measured run: a local Hugging Face folder, or a config with random weights.

* A folder: weights read with safetensors only (``use_safetensors=True``), ``trust_remote_code=False``,
  ``local_files_only=True`` — nothing is fetched and no repository code runs.
* ``random_weights``: the model is built from its ``config.json`` directly on the device in the
  chosen dtype, after ``torch.manual_seed(seed)``. The same config and seed always give the same
  weights, so a draft whose config equals the target's is an exact copy of it. Memory and speed
  are real; acceptance is not meaningful (random logits).

torch and transformers are imported here at module level (planner/measure is allowed to).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from planner.catalog.config_import import load_config
from planner.errors import InputError
from planner.model.dtypes import precision_id

TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def resolve_dtype(text: str | None, device: str, field_name: str = "dtype") -> str:
    """The weight format id for ``--dtype`` (default bf16 on CUDA, fp32 on CPU)."""
    if text is None:
        return "bf16" if device.startswith("cuda") else "fp32"
    fmt = precision_id(text)
    if fmt not in TORCH_DTYPES:
        raise InputError(field_name, text, "one of bf16, fp16, fp32 (bfloat16, float16, float32)")
    return fmt


def resolve_device(text: str | None) -> str:
    """``cuda`` (the first visible GPU) or ``cpu``; default cuda when available."""
    if text is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    value = text.strip().lower()
    if value.startswith("cuda"):
        if not torch.cuda.is_available():
            raise InputError("device", text, "cpu: no CUDA device is visible to torch on this machine")
        return value
    if value != "cpu":
        raise InputError("device", text, "cuda or cpu")
    return "cpu"


@dataclass
class LoadedModel:
    """A model ready to run, with the facts a record needs about it."""

    model: Any
    name: str
    source: str  # "random-weights" or "folder"
    path: str
    config: dict[str, Any]
    dtype: str
    weights_bytes: int
    parameters: int
    vocab_size: int
    notes: list[str] = field(default_factory=list)

    @property
    def cache_kwarg(self) -> str:
        """The keyword the model's forward takes its KV cache by (transformers 5 renamed it)."""
        params = inspect.signature(self.model.forward).parameters
        return "cache" if "cache" in params else "past_key_values"


def _weights(model: Any) -> tuple[int, int]:
    """(bytes, count) of the parameters as allocated (tied tensors counted once)."""
    seen, total_bytes, total = set(), 0, 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        total_bytes += p.numel() * p.element_size()
        total += p.numel()
    return total_bytes, total


def _name(config: dict[str, Any], path: str | Path | None, fallback: str) -> str:
    name = config.get("_name_or_path")
    if name:
        return str(name)
    if path is not None:
        p = Path(path)
        if p.is_dir():
            return p.name
        return p.stem if p.name != "config.json" else (p.parent.name or p.stem)
    return fallback


def random_model(
    source: str | Path | dict[str, Any], *, device: str, dtype: str, seed: int, field_name: str
) -> LoadedModel:
    """Build a model from a config with seeded random weights, created directly on ``device``."""
    from transformers.models.auto.configuration_auto import AutoConfig
    from transformers.models.auto.modeling_auto import AutoModelForCausalLM

    config = load_config(source)
    raw = dict(config)
    notes = []
    if raw.pop("quantization_config", None) is not None:
        notes.append(f"quantization_config ignored: random weights are created in {dtype}")
    model_type = raw.pop("model_type", None)
    if not model_type:
        raise InputError(field_name, str(source)[:80], "a config.json with a model_type")
    for key in ("torch_dtype", "dtype", "auto_map", "transformers_version"):
        raw.pop(key, None)
    try:
        hf_config = AutoConfig.for_model(model_type, **raw)
    except (ValueError, KeyError) as exc:
        raise InputError(field_name, model_type, f"a model_type this transformers build knows ({exc})") from None
    torch.manual_seed(seed)  # one config + one seed -> the same weights (an identical draft is an exact copy)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(hf_config, dtype=TORCH_DTYPES[dtype], trust_remote_code=False)
    model.eval()
    weights_bytes, count = _weights(model)
    path = str(source) if not isinstance(source, dict) else "(config dict)"
    return LoadedModel(
        model=model,
        name=_name(config, None if isinstance(source, dict) else source, f"random-{model_type}"),
        source="random-weights",
        path=path,
        config=config,
        dtype=dtype,
        weights_bytes=weights_bytes,
        parameters=count,
        vocab_size=int(model.get_output_embeddings().weight.shape[0]),
        notes=notes,
    )


def folder_model(path: str | Path, *, device: str, dtype: str, field_name: str) -> LoadedModel:
    """Load a local Hugging Face folder (safetensors only, no remote code, nothing fetched)."""
    from transformers.models.auto.modeling_auto import AutoModelForCausalLM

    folder = Path(path)
    if not folder.is_dir():
        raise InputError(field_name, str(path), "a local model folder (or --random-weights with a config.json)")
    if not any(folder.glob("*.safetensors")):
        raise InputError(field_name, str(path), "a folder with *.safetensors weights (other formats are not loaded)")
    config = load_config(folder)
    model = AutoModelForCausalLM.from_pretrained(
        folder,
        dtype=TORCH_DTYPES[dtype],
        use_safetensors=True,
        trust_remote_code=False,
        local_files_only=True,
    )
    model.to(device)
    model.eval()
    weights_bytes, count = _weights(model)
    return LoadedModel(
        model=model,
        name=_name(config, folder, folder.name),
        source="folder",
        path=str(folder),
        config=config,
        dtype=dtype,
        weights_bytes=weights_bytes,
        parameters=count,
        vocab_size=int(model.get_output_embeddings().weight.shape[0]),
    )


def load_model(
    source: str | Path | dict[str, Any],
    *,
    random_weights: bool,
    device: str,
    dtype: str,
    seed: int = 0,
    field_name: str = "target",
) -> LoadedModel:
    """A folder (real weights) or, with ``random_weights``, a config (file, folder or dict)."""
    if random_weights:
        return random_model(source, device=device, dtype=dtype, seed=seed, field_name=field_name)
    if isinstance(source, dict):
        raise InputError(field_name, "(config dict)", "a model folder, or random weights for a bare config")
    return folder_model(source, device=device, dtype=dtype, field_name=field_name)


# ----- tokenization -----------------------------------------------------------------------


@dataclass
class TokenCodec:
    """Text -> token ids for the target (the draft shares them: speculation needs one vocabulary)."""

    name: str
    encode_fn: Any
    vocab_size: int

    def encode(self, text: str) -> list[int]:
        ids = [int(i) for i in self.encode_fn(text)]
        return [i % self.vocab_size for i in ids] or [0]


def byte_codec(vocab_size: int) -> TokenCodec:
    """UTF-8 bytes as ids (ids >= vocab wrap around): for random weights, which have no tokenizer.

    >>> byte_codec(300).encode("Hi")
    [72, 105]
    """
    return TokenCodec(
        name="utf-8 bytes (no tokenizer: random weights)", encode_fn=lambda t: t.encode(), vocab_size=vocab_size
    )


def token_codec(model: LoadedModel, vocab_size: int) -> TokenCodec:
    """The folder's own tokenizer (local files only), else UTF-8 bytes."""
    if model.source == "folder":
        try:
            from transformers.models.auto.tokenization_auto import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(model.path, local_files_only=True, trust_remote_code=False)
        except Exception as exc:  # no tokenizer files in the folder: fall back, and say so
            model.notes.append(f"no tokenizer loaded from {model.path} ({type(exc).__name__}); prompts as UTF-8 bytes")
        else:
            return TokenCodec(
                name=f"{type(tokenizer).__name__} from {model.path}",
                encode_fn=lambda t: tokenizer(t, add_special_tokens=True)["input_ids"],
                vocab_size=vocab_size,
            )
    return byte_codec(vocab_size)
