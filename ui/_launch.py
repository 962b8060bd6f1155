"""The "Launch" section pages share: the engine command with a copy button, docker, Kubernetes, downloads."""

from __future__ import annotations

import streamlit as st

from planner.deployment import Deployment
from planner.launch import NotLaunchableError, launch_config, render_launch
from planner.memory import MemoryPlan
from ui._common import guarded

_ENGINE_FORMAT = {"vllm": "vllm", "vllm-v0": "vllm", "sglang": "sglang", "trtllm": "trtllm"}


def _launch_or_reason(dep: Deployment, plan: MemoryPlan | None):
    """The launch configuration, or the plan's reason why there is none."""
    try:
        return launch_config(dep, plan)
    except NotLaunchableError as exc:
        return exc.reason


def launch_section(dep: Deployment | None, plan: MemoryPlan | None, key: str, *, title: str = "Launch") -> None:
    """An expander with the launch of ``dep``: st.code blocks (each has a copy button) and manifest downloads."""
    with st.expander(title):
        if dep is None:
            st.info("No deployment to launch.")
            return
        if dep.engine not in _ENGINE_FORMAT:
            st.info(f"{dep.engine} has no server to launch: choose vLLM, SGLang or TensorRT-LLM in the sidebar.")
            return
        config = guarded(lambda: _launch_or_reason(dep, plan), "the launch command")
        if config is None:
            return
        if isinstance(config, str):
            st.warning(f"No launch command: {config}", icon="🛑")
            return
        st.caption(
            f"For {config.engine} {config.release}: every value comes from this plan; lines starting "
            "`# assumed:` are values the planner filled in. Flags as the release defines them: "
            f"{config.release_source}" + (f". Note: {config.kernels_note}." if config.kernels_note else "")
        )
        engine_text = render_launch(config, _ENGINE_FORMAT[dep.engine])
        tabs = st.tabs(["Engine command", "docker run", "Kubernetes"])
        with tabs[0]:
            st.code(config.command, language="bash")
            if config.options_file:
                st.caption(f"Options file `{config.options_file_name}` (the command names it):")
                st.code(config.options_file, language="yaml")
            st.download_button(
                "Download the command",
                lambda: engine_text,
                file_name="launch.sh",
                mime="text/x-shellscript",
                key=f"{key}_launch_sh",
            )
        with tabs[1]:
            st.code(config.docker, language="bash")
        with tabs[2]:
            st.code(config.kubernetes, language="yaml")
            st.download_button(
                "Download the manifest",
                lambda: config.kubernetes,
                file_name="deployment.yaml",
                mime="application/yaml",
                key=f"{key}_launch_k8s",
            )
