"""The engine command inside its official image: a ``docker run`` line and a Kubernetes Deployment + Service.

The image, port, health endpoint and shared-memory size are facts of ``data/engine_flags.json`` (with sources);
GPUs are the replica's tensor x pipeline GPUs; the model cache is a PersistentVolumeClaim sized from the weights
the plan loads. The manifest is plain YAML (``kubectl apply -f``).

>>> name_for("meta-llama/Llama-3.1-70B")
'llama-3-1-70b'
"""

from __future__ import annotations

import math
import re
import shlex

import yaml

from planner.launch.engine_command import OPTIONS_FILE, EngineCommand, options_yaml
from planner.launch.releases import EngineFlags, EngineRelease
from planner.launch.shell_text import shell_block
from planner.units import GIB

#: Where the engines' Hugging Face cache lives inside their images (``HF_HOME`` unset, root user).
HF_CACHE = "/root/.cache/huggingface"
OPTIONS_DIR = "/etc/planner-launch"


#: The Hugging Face token, from a Secret ``hf-token`` when the cluster has one (gated models need it).
_HF_SECRET = {"name": "hf-token", "key": "token", "optional": True}


def name_for(model_id: str) -> str:
    """A Kubernetes object name (RFC 1123 label) for a model id."""
    return re.sub(r"[^a-z0-9]+", "-", model_id.rsplit("/", 1)[-1].lower()).strip("-")[:50] or "engine"


def image_for(flags: EngineFlags, release: EngineRelease, version: str | None) -> str:
    """The official image of the release (an unversioned source record takes the requested version, else latest)."""
    tag = release.release if release.version != (0, 0, 0) else (version or "latest")
    image = flags.image.format(release=tag)
    return image.replace(":vlatest", ":latest")


def _container_args(cmd: EngineCommand, flags: EngineFlags) -> list[str]:
    """The engine command with the options file at its mounted path."""
    argv = list(cmd.argv)
    if cmd.options is not None:
        argv = [f"{OPTIONS_DIR}/{OPTIONS_FILE}" if word == OPTIONS_FILE else word for word in argv]
    return argv


def docker_run(
    cmd: EngineCommand, flags: EngineFlags, image: str, gpus: int, head: int, env: dict[str, str] | None = None
) -> str:
    """``docker run`` of the engine command in ``image`` on ``gpus`` GPUs, sharing the host's HF cache (``head``:
    the command's words before its first flag; ``env``: variables the engine needs, such as ``VLLM_USE_V1=0``)."""
    argv = _container_args(cmd, flags)
    parts = [
        "docker run --rm",
        f"--gpus {gpus}" if gpus > 1 else "--gpus 1",
        "--ipc=host",
        f"-p {flags.port}:{flags.port}",
        f"-v ~/.cache/huggingface:{HF_CACHE}",
        '--env "HF_TOKEN=$HF_TOKEN"',
        *(f"--env {shlex.quote(f'{name}={value}')}" for name, value in (env or {}).items()),
    ]
    if cmd.options is not None:
        parts.append(f'-v "$PWD/{OPTIONS_FILE}:{OPTIONS_DIR}/{OPTIONS_FILE}:ro"')
    parts.append(f"--entrypoint {shlex.quote(argv[0])} {image}")
    engine = shell_block(argv[1:], [], head=head - 1).splitlines()
    return " \\\n  ".join(parts) + " \\\n  " + "\n".join(engine)


def kubernetes_objects(
    cmd: EngineCommand,
    flags: EngineFlags,
    image: str,
    gpus: int,
    name: str,
    cache_bytes: int,
    env: dict[str, str] | None = None,
) -> list[dict]:
    """A PersistentVolumeClaim (model cache), a Deployment and a Service, as plain Kubernetes objects."""
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "speculative-decoding-planner"}
    volumes: list[dict] = [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": f"{name}-model-cache"}},
        {"name": "shm", "emptyDir": {"medium": "Memory", **({"sizeLimit": flags.shm_size} if flags.shm_size else {})}},
    ]
    mounts = [{"name": "model-cache", "mountPath": HF_CACHE}, {"name": "shm", "mountPath": "/dev/shm"}]
    objects: list[dict] = [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": f"{name}-model-cache", "labels": labels},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": f"{max(1, math.ceil(cache_bytes / GIB))}Gi"}},
            },
        }
    ]
    if cmd.options is not None:
        volumes.append({"name": "engine-options", "configMap": {"name": f"{name}-options"}})
        mounts.append({"name": "engine-options", "mountPath": OPTIONS_DIR, "readOnly": True})
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{name}-options", "labels": labels},
                "data": {OPTIONS_FILE: options_yaml(cmd.options)},
            }
        )
    probe = {"httpGet": {"path": flags.health_path, "port": flags.port}, "periodSeconds": 10}
    container = {
        "name": "engine",
        "image": image,
        "command": _container_args(cmd, flags),
        "ports": [{"name": "http", "containerPort": flags.port}],
        "env": [
            {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": _HF_SECRET}},
            *({"name": key, "value": value} for key, value in (env or {}).items()),
        ],
        "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}},
        "volumeMounts": mounts,
        "readinessProbe": {**probe, "initialDelaySeconds": 60},
        "startupProbe": {**probe, "failureThreshold": 180},
    }
    objects.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [container], "volumes": volumes}},
            },
        }
    )
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "selector": {"app.kubernetes.io/name": name},
                "ports": [{"name": "http", "port": flags.port, "targetPort": "http"}],
            },
        }
    )
    return objects


class _NoAliases(yaml.SafeDumper):
    """Plain YAML: a repeated object is written out again, never as an ``&id`` anchor."""

    def ignore_aliases(self, data) -> bool:
        return True


def manifest_yaml(objects: list[dict], comments: list[str]) -> str:
    """The objects as one multi-document YAML, with ``comments`` on top."""
    head = "".join(f"# {c}\n" for c in comments)
    return head + "---\n".join(yaml.dump(obj, Dumper=_NoAliases, sort_keys=False) for obj in objects)
