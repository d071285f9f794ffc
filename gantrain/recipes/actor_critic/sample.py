"""``gantrain sample`` for actor-critic runs: greedy episodes of the trained actor."""

from __future__ import annotations

from pathlib import Path

from ..sampling import Drawn, SampleOptions, load_player_nets
from .cartpole import make_env
from .config import ActorCriticConfig
from .rollout import compiled_forward, greedy_returns
from .run import build_actor


def sample(ckpt: Path, config: ActorCriticConfig, options: SampleOptions) -> Drawn:
    """``options.n`` greedy episodes from start states drawn with ``options.seed``; their
    returns are what ``--out`` saves."""
    actor = build_actor(config)
    load_player_nets(ckpt, "actor", {"actor": actor})
    rl = config.rl
    env = make_env(rl.env, options.n, rl.max_episode_steps, options.seed)
    returns = greedy_returns(env, compiled_forward(actor))
    listed = " ".join(f"{r:.0f}" for r in returns)
    summary = (f"{len(returns)} greedy episodes of {rl.env}: mean return {returns.mean():.1f}, "
               f"min {returns.min():.0f}, max {returns.max():.0f}\n{listed}")
    return Drawn(returns, summary, save_by_default=False)
