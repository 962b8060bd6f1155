"""The deployment options shared by ``size``, ``speedup``, ``matrix`` and later commands."""

from __future__ import annotations

import argparse

from planner.catalog import SPECULATOR_KINDS
from planner.catalog.importing import resolve_model
from planner.catalog.lookup import get_gpu, get_node
from planner.cli.common import catalog_name, fraction, input_of, path_arg, positive_float, positive_int
from planner.defaults import NUM_SPECULATIVE_TOKENS
from planner.deployment import ENGINES, Deployment
from planner.engines.names import find_engine_id
from planner.errors import InputError
from planner.speed import VERIFICATIONS
from planner.units import gib_to_bytes

__all__ = ["add_deployment_args", "deployment_from_args", "fraction", "positive_float", "positive_int"]


def engine_name(text: str) -> str:
    """``--engine``: any spelling the engine normaliser knows (vLLM, TensorRT-LLM...), else as typed."""
    return find_engine_id(text) or text


def add_deployment_args(parser: argparse.ArgumentParser, *, draft: bool = True) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--target", metavar="ID", type=catalog_name, help="target model (catalog id)")
    target.add_argument("--target-config", metavar="PATH", type=path_arg, help="target config.json or model folder")
    if draft:
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--draft", metavar="ID", type=catalog_name, help="draft model (catalog id)")
        group.add_argument("--draft-config", metavar="PATH", type=path_arg, help="draft config.json or model folder")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--node", metavar="NODE", type=catalog_name, help="node type, e.g. 8x-h100-sxm-80gb")
    where.add_argument("--gpu", metavar="GPU", type=catalog_name, help="GPU id, e.g. h100-sxm-80gb")
    parser.add_argument("--gpus", type=positive_int, help="GPUs with --gpu (default tp x pp)")
    parser.add_argument("--gpu-memory-gib", type=input_of("gpu_memory_gib"), help="override the device total (GiB)")
    parser.add_argument("--tp", type=input_of("tp"), default=1, help="target tensor parallel size")
    parser.add_argument("--pp", type=input_of("pp"), default=1, help="target pipeline parallel size")
    if draft:
        parser.add_argument(
            "--method",
            choices=SPECULATOR_KINDS,
            help="how tokens are proposed (default: the draft's kind: an EAGLE/EAGLE-3 head's, else draft_model); "
            "ngram and mtp (the target's own MTP layers) need no --draft",
        )
        parser.add_argument("--draft-tp", type=positive_int, help="draft tensor parallel size: 1 or --tp")
        parser.add_argument("--draft-dtype", help="draft weight format (default: --dtype)")
    parser.add_argument(
        "--dtype",
        help="target weight format: fp32, bf16, fp16, fp8, int8, int4-awq, "
        "int4-gptq, nvfp4, mxfp4 (default: the checkpoint's)",
    )
    parser.add_argument("--kv-dtype", default="auto", help="auto, bf16, fp16, fp8 or fp32")
    parser.add_argument("--engine", default="vllm", type=engine_name, choices=ENGINES)
    parser.add_argument(
        "--engine-version", type=catalog_name, help="engine release, e.g. 0.19.0 (default: the newest profiled)"
    )
    parser.add_argument(
        "--gpu-memory-utilization",
        "--memory-fraction",
        dest="memory_fraction",
        type=input_of("memory_fraction"),
        help="the engine's memory knob (vLLM gpu_memory_utilization, SGLang mem_fraction_static, "
        "TensorRT-LLM free_gpu_memory_fraction)",
    )
    parser.add_argument("--max-model-len", type=input_of("max_model_len"))
    parser.add_argument(
        "--allow-long-max-model-len",
        action="store_true",
        help="the engine's override for a max length above the model's context is set "
        "(VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1); planned as a risk",
    )
    parser.add_argument("--max-num-batched-tokens", type=input_of("max_num_batched_tokens"))
    parser.add_argument("--max-num-seqs", type=input_of("max_num_seqs"))
    parser.add_argument(
        "--num-speculative-tokens",
        "--k",
        dest="k",
        type=input_of("k"),
        default=None,
        help=f"draft length K (default {NUM_SPECULATIVE_TOKENS}, for every speculator kind)",
    )
    parser.add_argument("--enforce-eager", action="store_true", help="no CUDA graphs")
    parser.add_argument(
        "--hf-batch-size",
        type=positive_int,
        default=1,
        help="engine hf: sequences of max-model-len tokens to hold",
    )


def add_verification_args(parser: argparse.ArgumentParser) -> None:
    """How the target verifies the draft's tokens: a chain of K (vLLM) or SGLang's EAGLE draft tree."""
    parser.add_argument(
        "--verification",
        choices=VERIFICATIONS,
        default="chain",
        help="verify a chain of K tokens (vLLM) or a draft tree of depth K (SGLang's EAGLE worker; heads and MTP)",
    )
    parser.add_argument(
        "--tree-topk", type=positive_int, help="with --verification tree: branching per level (default: SGLang's 4)"
    )
    parser.add_argument(
        "--tree-verify-tokens",
        type=positive_int,
        help="with --verification tree: tokens it verifies, root included (default: SGLang's 8)",
    )


def deployment_from_args(args: argparse.Namespace) -> Deployment:
    target = resolve_model(args.target, args.target_config, field="target")
    draft_id, draft_config = getattr(args, "draft", None), getattr(args, "draft_config", None)
    method = getattr(args, "method", None)
    draft = (
        resolve_model(draft_id, draft_config, field="draft", speculator_kind=method)
        if (draft_id or draft_config)
        else None
    )
    if args.node is not None:
        node = get_node(args.node)
        if args.gpus:
            raise InputError("gpus", args.gpus, "no value with --node (the node fixes the GPU count)")
        gpu, count, node_id = get_gpu(node.gpu), node.gpu_count, node.id
    else:
        gpu, count, node_id = get_gpu(args.gpu), args.gpus or args.tp * args.pp, None
    fields = {
        "target": target,
        "draft": draft,
        "gpu": gpu,
        "gpu_count": count,
        "node_id": node_id,
        "gpu_memory_bytes": gib_to_bytes(args.gpu_memory_gib) if args.gpu_memory_gib else None,
        "tp": args.tp,
        "pp": args.pp,
        "draft_tp": getattr(args, "draft_tp", None),
        "method": method,
        "dtype": args.dtype,
        "draft_dtype": getattr(args, "draft_dtype", None),
        "kv_dtype": args.kv_dtype,
        "engine": args.engine,
        "engine_version": args.engine_version,
        "memory_fraction": args.memory_fraction,
        "max_model_len": args.max_model_len,
        "max_num_batched_tokens": args.max_num_batched_tokens,
        "max_num_seqs": args.max_num_seqs,
        "enforce_eager": args.enforce_eager,
        "allow_long_max_model_len": args.allow_long_max_model_len,
        "hf_batch_size": args.hf_batch_size,
    }
    if args.k is not None:
        fields["num_speculative_tokens"] = args.k
    return Deployment.build(**fields)
