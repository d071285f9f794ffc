"""What a recipe is: the config it reads, the run it trains and how a trained run is sampled.

Each recipe package (``gantrain/recipes/gan``, ``cyclegan``, ``ali``, ``actor_critic``) ends
with one ``RECIPE = Recipe(...)``; :mod:`gantrain.recipes.registry` lists them. A recipe of your
own is the same three things, registered with :func:`gantrain.recipes.registry.register`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config.schema import RunConfig
from .evaluation import EvalOptions
from .sampling import Drawn, SampleOptions

if TYPE_CHECKING:
    from .base import Run


@dataclass(frozen=True)
class Recipe:
    """One kind of training run.

    Args:
        task: the value of ``task`` in a config that selects this recipe.
        config: the recipe's config dataclass (a :class:`RunConfig` subclass). Its fields are
            the only keys a config of this task may hold: a key the recipe would ignore is
            refused when the config loads.
        run: the :class:`~gantrain.recipes.base.Run` subclass that builds players, schedule
            and evaluation from that config.
        sample: ``sample(checkpoint_dir, config, options) -> Drawn``: what ``gantrain sample``
            draws from a trained run (None: the recipe has nothing to sample).
        sample_options: the options dataclass ``sample`` takes (the common ``--n``, ``--seed``,
            ``--no-ema`` plus the recipe's own).
        evaluate: ``evaluate(checkpoint_dir, config, out, options) -> report``: what
            ``gantrain eval RUN`` runs (None: the recipe's runs are not scored); it writes the
            report as JSON to ``out`` and returns it with a printable ``table``.
        summary: a few words on what it trains, for error messages that list the tasks.
    """

    task: str
    config: type[RunConfig]
    run: type[Run]
    sample: Callable[[Path, Any, Any], Drawn] | None = None
    sample_options: type[SampleOptions] = SampleOptions
    evaluate: Callable[[Path, Any, Path, EvalOptions], dict[str, Any]] | None = None
    summary: str = ""
