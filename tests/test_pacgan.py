"""PacGAN (Lin et al. 2018): D judges m samples at once. The packing joins consecutive samples
along the feature axis, the presets for m = 2, 3, 4 train end to end, and a pack that does not
fit the batch or the discriminator is a clear error."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn

from gantrain.config import ConfigError
from gantrain.recipes.gan.wrappers import Critic, Unconditional, packed
from gantrain.recipes.registry import build_run, load_config


class Linear(nn.Cell):
    def __init__(self, weights: np.ndarray) -> None:
        super().__init__()
        self.fc = nn.Dense(len(weights), 1, has_bias=False)
        self.fc.weight.set_data(Tensor(weights[None].astype(np.float32)))

    def construct(self, x):
        return self.fc(x)


def test_pack_joins_consecutive_samples_along_features():
    m, w = 3, np.arange(1, 7, dtype=np.float32)  # D sees (x1, y1, x2, y2, x3, y3)
    critic = Critic(Unconditional(packed(Linear(w), m)))
    x = np.random.default_rng(0).standard_normal((12, 2)).astype(np.float32)
    out = critic(Tensor(x), None).asnumpy()
    want = x.reshape(4, 6) @ w
    np.testing.assert_allclose(out, want, rtol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("m", [2, 3, 4])
def test_pacgan_presets_train_end_to_end(m, in_tmp):
    config = load_config(f"pacgan{m}_2d_grid", [
        "train.steps=30", "train.sample_every=30", "train.checkpoint_every=30",
        "train.samples=200", "train.progress=false", "data.batch_size=96"])
    run = build_run(config, "runs/pac")
    D = run.gan.discriminator.nets["D"]
    d_in = D.trainable_params()[0].shape[1]
    # D's first Dense takes the m packed 2-D points, or one point at a time in shared layers
    assert d_in * (D.pack if D.shared else 1) == 2 * m
    before = run.gan.discriminator.parameters[0].asnumpy().copy()
    run.train()
    assert run.loop.iteration == 30
    assert not np.allclose(before, run.gan.discriminator.parameters[0].asnumpy())
    report = run.last_report  # scored by the 2-D protocol (learning itself: test_train_2d)
    assert report is not None and report.total_modes == 25 and report.samples == 200
    assert (in_tmp / "runs/pac/samples/step_000030.png").is_file()


def test_pack_must_divide_the_batch(in_tmp):
    with pytest.raises(ConfigError, match=r"gan.pack = 3 must .* divide data.batch_size = 64"):
        build_run(load_config("pacgan3_2d_grid", ["data.batch_size=64"]), "runs/x")


def test_pack_must_match_the_discriminator_input(in_tmp):
    with pytest.raises(ConfigError, match=r"discriminator .*\(2, 6\).*packed x3"):
        build_run(load_config("pacgan2_2d_grid", [  # a plain MLP D over 2 packed samples
            "gan.pack=3", "data.batch_size=96", "discriminator.args.shared=0",
            "discriminator.args.pack=1"]), "runs/x")


def test_a_discriminator_that_splits_packs_must_split_gan_pack(in_tmp):
    # 6 features split as 2 samples of 3 would run without a shape error
    with pytest.raises(ConfigError, match=r"splits its input into pack = 2 .* gan.pack = 3"):
        build_run(load_config("pacgan3_2d_grid", ["discriminator.args.pack=2"]), "runs/x")
