"""Pick a model from the catalog by id, or import one from a config.json path: one entry point."""

from __future__ import annotations

from pathlib import Path

from planner.catalog.config_import import model_from_config
from planner.catalog.lookup import get_model
from planner.catalog.schemas import ModelSpec
from planner.errors import InputError


def resolve_model(
    model_id: str | None = None,
    config_path: str | Path | None = None,
    field: str = "model",
    speculator_kind: str | None = None,
) -> ModelSpec:
    """A catalog model (``model_id``) or an imported one (``config_path``), exactly one of them.

    ``speculator_kind`` marks an imported config as a head of that kind when it declares none itself.
    """
    if (model_id is None) == (config_path is None):
        raise InputError(field, None, f"exactly one of --{field} ID or a config.json path")
    if model_id is not None:
        return get_model(model_id)
    return model_from_config(
        config_path, field=f"{field}_config" if field != "model" else "config", speculator_kind=speculator_kind
    )
