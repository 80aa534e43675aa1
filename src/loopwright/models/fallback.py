"""Room: providers (on models.base). Owns FallbackModel; may import data types and models.base.

`--fallback-model M[,M2...]` (Claude Code's): when the model in use is overloaded or unavailable
after its own retries (HTTP 529 or 503, an `overloaded_error`), the same request goes to the
next model of the list, announced by `SystemMessage("model_fallback", {"from_model",
"to_model", "error", "status"})`. The switch lasts for the rest of the run: the overloaded
model is not asked again on every call (each retry cycle costs up to a minute). Any other
failure (a 400, a refused key) is the run's error, as without fallbacks. Each response keeps
the name of the model that gave it, so its cost is priced at that model's price.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from ..messages import SystemMessage
from .base import Model, ModelError, ModelEvent, ModelRequest, close_model, has_own_cost

FALLBACK_STATUS = frozenset({503, 529})


def is_unavailable(e: ModelError) -> bool:
    """Overloaded or unavailable: the failures a fallback model is for."""
    return e.status in FALLBACK_STATUS or "overloaded" in str(e).lower()


class FallbackModel:
    """`FallbackModel([main, fallback, ...])`: a Model that moves down the list when one is overloaded."""

    def __init__(self, models: Sequence[Model]) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        self.models = list(models)
        self.current = 0
        self.name = self.models[0].name  # the model in use
        self.has_own_cost = all(has_own_cost(m) for m in self.models)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.models]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        while True:
            model = self.models[self.current]
            try:
                async for ev in model.stream(request):
                    yield ev
                return
            except ModelError as e:
                if not is_unavailable(e) or self.current + 1 >= len(self.models):
                    raise
                self.current += 1
                self.name = self.models[self.current].name
                yield SystemMessage("model_fallback", {
                    "from_model": model.name, "to_model": self.models[self.current].name,
                    "error": str(e), "status": e.status})

    async def aclose(self) -> None:
        for m in self.models:
            await close_model(m)


__all__ = ["FallbackModel", "is_unavailable"]
