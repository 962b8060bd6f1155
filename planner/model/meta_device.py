"""Counting with transformers on the ``meta`` device: the reference and the fallback.

Instantiating a model on the meta device allocates no memory and downloads nothing, yet yields every
parameter tensor with its real shape. The planner uses it (1) in tests, as the ground truth its
closed-form counts must equal to the parameter, and (2) for architectures the formulas do not know.
``trust_remote_code`` is never used and no weights are ever loaded.

A config is data, never code: every field is bounds-checked first
(:func:`planner.model.config_bounds.validate_config_fields`), keys that could make transformers
import or fetch code (``auto_map``, ``trust_remote_code``, an attention or kernel implementation
naming a hub repository, quantization back-ends) are dropped at every nesting level, the attention
implementation is forced to ``eager``, and only the model classes transformers ships are built.

>>> counts = count_on_meta_device({"model_type": "gpt_neox", "num_hidden_layers": 2,
...     "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 1000})
>>> counts.total_params
228096
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import threading
from dataclasses import astuple
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from planner.errors import ConfigError
from planner.model.config_bounds import validate_config_fields
from planner.model.geometry import Architecture, MoeGeometry, rope_type_of
from planner.model.tensors import WeightTensor

#: Keys never handed to transformers: names, code references, kernel / attention / quantization back-ends and
#: dtypes (counting on the meta device needs shapes only). Keys starting with "_" are dropped too.
_NON_CONFIG_KEYS = frozenset(
    {
        "architectures",
        "transformers_version",
        "auto_map",
        "trust_remote_code",
        "custom_pipelines",
        "attn_implementation",
        "experts_implementation",
        "use_kernels",
        "kernel_config",
        "quantization_config",
        "torch_dtype",
        "dtype",
        "base_model_name_or_path",
        "name_or_path",
    }
)
_EAGER = "eager"


def data_only(value: Any) -> Any:
    """``value`` with every code-bearing key removed, at every nesting level (dicts inside dicts and lists).

    >>> data_only({"auto_map": {"AutoModel": "x--y.Z"}, "_attn_implementation": "kernels-community/fa",
    ...            "text_config": {"trust_remote_code": True, "hidden_size": 8}, "vocab_size": 10})
    {'text_config': {'hidden_size': 8}, 'vocab_size': 10}
    """
    if isinstance(value, dict):
        return {
            k: data_only(v)
            for k, v in value.items()
            if isinstance(k, str) and k not in _NON_CONFIG_KEYS and not k.startswith("_")
        }
    if isinstance(value, list):
        return [data_only(v) for v in value]
    return value


class MetaCount(BaseModel):
    """Parameter and persistent-buffer counts of a model instantiated on the meta device."""

    total_params: int
    persistent_buffer_elements: int
    params_by_module: dict[str, int]
    model_class: str


def transformers_config(cfg: dict[str, Any]):
    """Build transformers' own config object for ``cfg`` (raises ConfigError on unknown types)."""
    try:
        from transformers.models.auto.configuration_auto import AutoConfig
    except ImportError as exc:  # pragma: no cover - transformers is a runtime requirement
        missing = isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == "transformers"
        why = "is not installed" if missing else f"could not be imported ({str(exc)[:100]})"
        raise ConfigError(f"transformers {why}, so only the built-in families can be counted") from exc
    validate_config_fields(cfg)
    model_type = cfg.get("model_type")
    kwargs = {k: v for k, v in data_only(cfg).items() if k != "model_type"}
    try:
        with _quiet():
            config = AutoConfig.for_model(model_type, **kwargs)
            _force_eager(config)
            _tie_as_the_text_model(config, cfg)
            return config
    except ValueError as exc:
        if "Unrecognized" in str(exc) or "model_type" in str(exc) or "not" in str(exc):
            raise ConfigError(
                f"`model_type` = {model_type!r} is not an architecture transformers knows; "
                "use a supported model_type (e.g. llama, qwen2, mistral, gemma2, falcon, gpt_neox)",
                field="model_type",
            ) from exc
        raise ConfigError(f"config.json is not valid for {model_type!r}: {exc}") from exc
    except (TypeError, KeyError, AttributeError, IndexError, ZeroDivisionError, OverflowError) as exc:
        raise ConfigError(f"config.json is not valid for {model_type!r}: {_first_line(exc)}") from exc
    except Exception as exc:  # transformers' typed configs raise huggingface_hub's StrictDataclassError
        if type(exc).__name__.startswith("StrictDataclass"):
            raise ConfigError(f"config.json is not valid for {model_type!r}: {_first_line(exc)}") from exc
        raise


def _tie_as_the_text_model(config, cfg: dict[str, Any]) -> None:
    """A multimodal wrapper whose config.json does not state ``tie_word_embeddings`` ties the LM head as its language
    model's config does: vLLM builds the language model from ``text_config`` (``init_vllm_registered_model`` in
    https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/mistral3.py), whereas transformers 5's
    ``Mistral3Config`` defaults the wrapper to a tied head. Mistral-Small-3.1's checkpoint has its own ``lm_head``."""
    if has_vision_encoder(cfg) and "tie_word_embeddings" not in cfg and hasattr(config, "get_text_config"):
        with contextlib.suppress(AttributeError, TypeError, ValueError):
            config.tie_word_embeddings = bool(config.get_text_config().tie_word_embeddings)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _force_eager(config) -> None:
    """The eager attention implementation on the config and every sub-config: no kernel is looked up."""
    configs = [config] + [getattr(config, key, None) for key in getattr(config, "sub_configs", {})]
    for item in configs:
        if item is None or isinstance(item, dict):
            continue
        for name in ("_attn_implementation", "_attn_implementation_internal"):
            with contextlib.suppress(AttributeError, TypeError, ValueError):
                setattr(item, name, _EAGER)
        for name in ("auto_map",):
            with contextlib.suppress(AttributeError):
                delattr(item, name)


def _shipped_causal_lm_class(config):
    """The causal-LM class transformers ships for this config (never a registered or remote one).

    A checkpoint with a ``vision_config`` is built as its image-text-to-text class (Gemma-3's, Llama-4's and
    Mistral-3's ``...ForConditionalGeneration``): serving engines load the vision tower and projector with the language
    model.
    """
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING,
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING,
    )

    model_class = None
    mappings = [MODEL_FOR_CAUSAL_LM_MAPPING]
    if getattr(config, "vision_config", None) is not None:
        mappings.insert(0, MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING)
    for mapping in mappings:
        try:
            model_class = mapping[type(config)]
            break
        except KeyError:
            continue
    if isinstance(model_class, list | tuple):
        model_class = model_class[0]
    if model_class is None or not model_class.__module__.startswith("transformers.models."):
        raise ConfigError(
            f"`model_type` = {getattr(config, 'model_type', '?')!r} has no causal-LM class in transformers",
            field="model_type",
        )
    return model_class


#: One build at a time: the logger level and ``sys.stdout`` that :func:`_quiet` swaps are the process's own, so two
#: threads interleaving their swaps would leave the server printing into a discarded buffer.
_QUIET_LOCK = threading.RLock()


@contextlib.contextmanager
def _quiet():
    """Silence transformers' logger and stray prints while a config or model is built (one thread at a time)."""
    with _QUIET_LOCK:
        logger = logging.getLogger("transformers")
        previous = logger.level
        logger.setLevel(logging.ERROR)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                yield
        finally:
            logger.setLevel(previous)


def build_on_meta_device(cfg: dict[str, Any]):
    """``AutoModelForCausalLM.from_config`` on the meta device: real shapes, no memory, no weights."""
    config = transformers_config(cfg)
    import torch

    model_class = _shipped_causal_lm_class(config)
    try:
        with _quiet(), torch.device("meta"):
            return model_class._from_config(config, attn_implementation=_EAGER)
    except ValueError as exc:
        raise ConfigError(f"transformers cannot build this config: {_first_line(exc)}", field="config") from exc
    except (RuntimeError, TypeError, AttributeError, IndexError, KeyError, ZeroDivisionError, OverflowError) as exc:
        raise ConfigError(f"transformers cannot build this config: {_first_line(exc)}", field="config") from exc


def count_on_meta_device(cfg: dict[str, Any]) -> MetaCount:
    """Count the parameters and persistent buffers of the model transformers builds for ``cfg``."""
    model = build_on_meta_device(cfg)
    persistent = set(model.state_dict().keys())
    seen: set[int] = set()
    by_module: dict[str, int] = {}
    total = 0
    for name, param in model.named_parameters(remove_duplicate=True):
        if id(param) in seen:
            continue
        seen.add(id(param))
        total += param.numel()
        top = _module_bucket(name)
        by_module[top] = by_module.get(top, 0) + param.numel()
    buffers = sum(buf.numel() for name, buf in model.named_buffers() if name in persistent)
    return MetaCount(
        total_params=total,
        persistent_buffer_elements=buffers,
        params_by_module=by_module,
        model_class=type(model).__name__,
    )


#: Module-name fragments of a multimodal checkpoint's encoder side: the vision tower and the projector that maps its
#: features into the language model (transformers' ``vision_tower``, ``vision_model``, ``visual`` and
#: ``multi_modal_projector`` modules).
_ENCODER_MARKERS = ("vision_tower.", "vision_model.", "visual.", "multi_modal_projector.")


def has_vision_encoder(cfg: dict[str, Any]) -> bool:
    """Whether ``cfg`` is a multimodal wrapper: a ``vision_config`` beside the language model's ``text_config``.

    >>> has_vision_encoder({"model_type": "mistral3", "text_config": {}, "vision_config": {}})
    True
    """
    return isinstance(cfg.get("vision_config"), dict) and isinstance(cfg.get("text_config"), dict)


def _module_bucket(name: str) -> str:
    """Map a parameter name to a coarse component (vision, embedding, attention, mlp, norm, lm_head...)."""
    lowered = name.lower()
    if any(marker in "." + lowered for marker in _ENCODER_MARKERS):
        return "vision"
    if "lm_head" in lowered or lowered.startswith("embed_out"):
        return "lm_head"
    if "embed" in lowered or "wte" in lowered or "wpe" in lowered:
        return "embedding"
    if "norm" in lowered or "ln_" in lowered or "layernorm" in lowered:
        return "norms"
    if ".router." in lowered:  # gpt-oss ``mlp.router``, Llama-4 ``feed_forward.router``
        return "router"
    if "shared_expert" in lowered:
        return "shared_experts"
    if "expert" in lowered:
        return "experts"
    if any(key in lowered for key in ("attn", "attention", "q_proj", "k_proj", "v_proj", "qkv")):
        return "attention"
    if any(key in lowered for key in ("mlp", "ffn", "feed_forward", "dense_h_to_4h", "dense_4h_to_h", "fc")):
        return "mlp"
    return "other"


#: The code that classifies meta-device tensors and the tensor record it fills, part of the disk cache's key: a layout
#: cached by another version of either (an older release, another checkout sharing the cache folder) is never read back.
_CODE_DIGEST = hashlib.sha256(
    Path(__file__).read_bytes() + (Path(__file__).parent / "tensors.py").read_bytes()
).hexdigest()[:16]

_LAYER_INDEX = re.compile(r"\.(?:layers|h|blocks|layer|decoder_layers)\.(\d+)\.")


def meta_weight_tensors(cfg: dict[str, Any]) -> list[WeightTensor]:
    """The tensor layout of a model transformers builds, for families the formulas do not know.

    Sharding under tensor parallelism is not known for arbitrary families: matrices are assumed to
    split evenly, vectors to be replicated, embeddings to split by vocabulary.
    """
    return list(_meta_weight_tensors_cached(json.dumps(cfg, sort_keys=True, default=str)))


@lru_cache(maxsize=1)
def _transformers_release() -> str | None:
    """The installed transformers release, read once per process (reading package metadata takes milliseconds)."""
    try:
        return version("transformers")
    except PackageNotFoundError:  # pragma: no cover - transformers is a runtime requirement
        return None


def _disk_cache_path(cfg_json: str, kind: str = "meta-layouts"):
    """Where a layout is kept between processes: keyed by the config, the layout rules and the transformers release."""
    release = _transformers_release()
    if release is None:  # pragma: no cover - transformers is a runtime requirement
        return None
    root = Path(
        os.environ.get("PLANNER_CACHE_DIR")
        or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sd-capacity-planner"
    )
    digest = hashlib.sha256(f"{release}\n{_CODE_DIGEST}\n{cfg_json}".encode()).hexdigest()[:24]
    return root / kind / f"{digest}.json"


@lru_cache(maxsize=32)
def _meta_weight_tensors_cached(cfg_json: str) -> tuple:
    """Instantiate on the meta device once; later processes read the layout from a disk cache."""
    path = _disk_cache_path(cfg_json)
    if path is not None and path.is_file():
        try:
            return tuple(
                WeightTensor(c, k, r, co, p, tuple(layers), st)
                for c, k, r, co, p, layers, st in json.loads(path.read_text())
            )
        except (ValueError, TypeError):
            pass  # a damaged cache entry is rebuilt below
    tensors = _build_meta_layout(cfg_json)
    _write_cache(path, json.dumps([astuple(t) for t in tensors]))
    return tensors


def _write_cache(path, text: str) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError:
        pass  # the cache is an optimisation; a read-only home still works


def _build_meta_layout(cfg_json: str) -> tuple:
    model = build_on_meta_device(json.loads(cfg_json))
    persistent = set(model.state_dict().keys())
    seen: set[int] = set()
    tensors = []
    for name, param in model.named_parameters(remove_duplicate=True):
        if id(param) in seen:
            continue
        seen.add(id(param))
        tensors.append(_as_weight_tensor(WeightTensor, name, tuple(param.shape), buffer=False))
    for name, buf in model.named_buffers():
        if name in persistent:
            tensors.append(_as_weight_tensor(WeightTensor, name, tuple(buf.shape), buffer=True))
    return tuple(tensors)


def _as_weight_tensor(cls, name: str, shape: tuple[int, ...], *, buffer: bool):
    bucket = _module_bucket(name)
    encoder = bucket == "vision"
    component = "vision" if encoder else ("buffers" if buffer else bucket)
    match = None if encoder else _LAYER_INDEX.search("." + name)  # encoder layers are not decoder layers
    layers = (int(match.group(1)),) if match else ()
    rows = shape[-2] if len(shape) >= 2 else (shape[0] if shape else 1)
    cols = shape[-1] if len(shape) >= 2 else 1
    per_layer = 1
    for extra in shape[:-2]:
        per_layer *= extra
    if buffer:
        kind, style = "buffer", "replicated"
    elif component in ("embedding", "lm_head"):
        kind, style = component, "vocab"
    elif component == "router":
        kind, style = "router", "replicated"
    elif len(shape) <= 1:
        kind, style = ("bias" if name.endswith("bias") else "norm"), "replicated"
    elif encoder and len(shape) > 2:
        kind, style = "linear", "replicated"  # an encoder's patch convolution: a plain nn.Conv2d in vLLM
    elif name.endswith("bias"):  # a stacked per-expert bias (gpt-oss ``gate_up_proj_bias``): sharded, never quantized
        kind, style = "bias", "column"
    else:
        kind, style = "linear", "column"
    return cls(component, kind, rows, cols, per_layer, layers, style)


def encoder_weight_tensors(cfg: dict[str, Any]) -> list[WeightTensor]:
    """The vision tower and projector of a multimodal checkpoint (``vision_config`` beside ``text_config``).

    Built on the meta device with a one-layer language model: the encoder's tensors do not depend on the decoder's
    depth, only on its width (the projector's output). Every 2-D weight is treated as a tensor-parallel linear layer
    (vLLM's SigLIP and Pixtral encoders shard attention and MLP as the decoder does); vectors and the patch
    convolution are replicated.
    """
    if not has_vision_encoder(cfg):
        return []
    text = {k: v for k, v in cfg["text_config"].items() if k not in ("layer_types", "mlp_only_layers")}
    reduced = {**cfg, "text_config": {**text, "num_hidden_layers": 1}}
    return [t for t in meta_weight_tensors(reduced) if t.component == "vision"]


def architecture_via_transformers(cfg: dict[str, Any]) -> Architecture:
    """The geometry of a family the formulas do not know (disk-cached like the layouts)."""
    cfg_json = json.dumps(cfg, sort_keys=True, default=str)
    path = _disk_cache_path(cfg_json, "architectures")
    if path is not None and path.is_file():
        try:
            return Architecture.model_validate_json(path.read_text())
        except ValueError:
            pass
    arch = _architecture_from_transformers(cfg)
    _write_cache(path, arch.model_dump_json())
    return arch


def _architecture_from_transformers(cfg: dict[str, Any]) -> Architecture:
    """Resolve the attention geometry of a family the formulas do not know, from transformers.

    Reads the standard attribute names transformers configs expose (``num_hidden_layers``,
    ``num_key_value_heads``, ``head_dim``, ``layer_types``), including the aliases older
    architectures use (Falcon's ``multi_query`` / ``num_kv_heads``).
    """
    config = transformers_config(cfg)
    get = config.__dict__.get

    def attr(*names: str, default=None):
        for name in names:
            value = getattr(config, name, None)
            if value is not None:
                return value
        return default

    layers = attr("num_hidden_layers", "n_layer", "num_layers")
    hidden = attr("hidden_size", "n_embd", "d_model")
    heads = attr("num_attention_heads", "n_head", "num_heads")
    if not layers or not hidden or not heads:
        raise ConfigError(
            "config.json must give num_hidden_layers, hidden_size and num_attention_heads",
            field="num_hidden_layers",
        )
    kv_heads = attr("num_key_value_heads", "num_kv_heads", "n_head_kv")
    if cfg.get("model_type") == "falcon" and not get("new_decoder_architecture", False):
        kv_heads = 1 if get("multi_query", True) else heads
    kv_heads = kv_heads or heads
    head_dim = attr("head_dim") or hidden // heads
    kinds = tuple(getattr(config, "layer_types", None) or ("full_attention",) * layers)
    chunk = attr("attention_chunk_size")
    known = ("full_attention", "sliding_attention") + (("chunked_attention",) if chunk else ())
    kinds = tuple(k if k in known else "full_attention" for k in kinds)
    window = getattr(config, "sliding_window", None) if "sliding_attention" in kinds else None
    return Architecture(
        model_type=cfg["model_type"],
        formula_family=None,
        num_layers=layers,
        hidden_size=hidden,
        intermediate_size=attr("intermediate_size", "ffn_hidden_size", "n_inner", default=4 * hidden),
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=attr("vocab_size"),
        tie_word_embeddings=bool(getattr(config, "tie_word_embeddings", False)),
        max_position_embeddings=attr("max_position_embeddings", "n_positions"),
        layer_types=kinds,
        sliding_window=window,
        attention_chunk_size=chunk if "chunked_attention" in kinds else None,
        moe=_moe_via_transformers(config, layers),
        rope_type=rope_type_of(cfg),
        torch_dtype=str(cfg.get("torch_dtype") or "bfloat16").removeprefix("torch."),
    )


def _moe_via_transformers(config, layers: int) -> MoeGeometry | None:
    """The routed-expert layout of a transformers config that names ``num_local_experts`` (gpt-oss, Llama-4).

    Experts are ``intermediate_size`` wide (``GptOssExperts``, ``Llama4TextExperts``); the layers that route are
    ``moe_layers`` where the config lists them (Llama-4), else every layer; Llama-4 adds an always-on shared
    expert of the same width (``Llama4TextMoe.shared_expert``).
    """
    experts = getattr(config, "num_local_experts", None)
    top_k = getattr(config, "num_experts_per_tok", None) or getattr(config, "experts_per_token", None)
    width = getattr(config, "intermediate_size", None)
    if not experts or not top_k or not width:
        return None
    moe_layers = getattr(config, "moe_layers", None)
    moe_layers = tuple(range(layers)) if moe_layers is None else tuple(int(i) for i in moe_layers if 0 <= i < layers)
    shared = width if getattr(config, "model_type", "") == "llama4_text" else 0
    return MoeGeometry(
        num_experts=experts,
        experts_per_token=top_k,
        expert_intermediate_size=width,
        shared_intermediate_size=shared,
        moe_layers=moe_layers,
    )
