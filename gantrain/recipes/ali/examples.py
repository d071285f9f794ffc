"""Real examples for ALI's reconstructions, held out from training where the data has them.

A reconstruction of a training example says how well E and G remember it; one of an example the
run never saw says whether ``x -> E -> G`` keeps what an example is, which is what ALI's
inference claim is about (Dumoulin et al. 2017, Sec. 4). The run's evaluation, ``gantrain
sample`` and ``gantrain eval`` all reconstruct such examples: a 2D mixture's fresh draws, the
embedded digits of a seed no preset trains on, or a labelled dataset's test split.
"""

from __future__ import annotations

import numpy as np

from ...config.strict import ConfigError
from ...data.dataset import ArrayDataset
from ...data.errors import DatasetError
from ...data.registry import DataBundle, build_data
from .config import ALIConfig

HELD_OUT_DIGITS_SEED = 2000  # the evaluation classifier's test digits (metrics.classifier)
LABELLED_SPLITS = ("mnist", "fashion_mnist", "cifar10")  # datasets with a "test" split


def held_out_examples(config: ALIConfig, n: int) -> tuple[ArrayDataset, str]:
    """Up to ``n`` labelled examples the run did not train on, and where they come from: the
    embedded digits of a seed no preset trains on, or a labelled dataset's test split."""
    d = config.data
    if d.dataset == "digits":
        from ...data.digits import embedded_digits

        size = int(d.args.get("size", 28))
        return (embedded_digits(n=n, size=size, seed=HELD_OUT_DIGITS_SEED),
                f"embedded digits, seed {HELD_OUT_DIGITS_SEED}")
    if d.dataset in LABELLED_SPLITS:
        args = {**d.args, "split": "test", "limit": n}
        return build_data(d.dataset, args, 1, config.seed).dataset, f"{d.dataset} test split"
    raise ConfigError(f"reconstruction metrics need held-out labelled examples; data.dataset = "
                      f"{d.dataset!r} has none (digits or {', '.join(LABELLED_SPLITS)} do)")


def evaluation_examples(config: ALIConfig, data: DataBundle, n: int,
                            seed: int) -> tuple[np.ndarray, str]:
    """``n`` real examples to reconstruct and where they come from: fresh draws of a mixture,
    else held-out examples, else (a dataset without a test split, or whose test files are
    missing) the first training examples, said so in the returned source."""
    if data.mixture is not None:
        return data.mixture.sample(np.random.default_rng([seed, 2]), n), "fresh mixture draws"
    try:
        held, source = held_out_examples(config, n)
    except (ConfigError, DatasetError) as exc:
        return (np.asarray(data.dataset.x[:n], np.float32),
                f"training examples, none held out ({str(exc).splitlines()[0].rstrip(':')})")
    return np.asarray(held.x, np.float32), source
