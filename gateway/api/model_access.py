"""A runtime key may be limited to some models (`allowed_models`): any route that names
a model refuses the others with a 403 `model_not_allowed`."""

from __future__ import annotations

from gateway.auth import Principal
from gateway.errors import Forbidden


def check_model_allowed(principal: Principal, model: str) -> None:
    if not principal.may_use(model):
        raise Forbidden(
            f"This API key may not use the model '{model}'.",
            param="model",
            code="model_not_allowed",
        )
