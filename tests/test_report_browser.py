"""The report of a short real run, opened in a real headless browser: it renders (the
screenshot is not blank), the slider script runs, and the page logs no console errors.
Skipped when no Chromium is installed (``.ci/run`` installs it from the system packages)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gantrain.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from screenshot_report import find_browser, screenshot  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_browser() is None, reason="no headless Chromium here")]


def test_a_real_report_renders_without_console_errors(in_tmp):
    assert main(["train", "dcgan_digits", "--name", "r", "--set", "train.steps=20",
                 "--set", "train.sample_every=10", "--set", "train.log_every=5",
                 "--set", "train.progress=false", "--set", "data.args.n=256"]) == 0
    page = in_tmp / "runs" / "r" / "report.html"
    messages = screenshot(page, in_tmp / "shot.png", width=1000, height=1600)
    assert messages == []
    pixels = np.asarray(Image.open(in_tmp / "shot.png").convert("L"), dtype=np.float64)
    assert pixels.shape == (1600, 1000)
    # a blank page is one colour; curves, text and the sample grid give many dark pixels
    assert pixels.std() > 5 and (pixels < 128).mean() > 0.003


def test_the_check_sees_a_script_error(in_tmp):
    page = in_tmp / "bad.html"
    page.write_text("<html><body><p>x</p><script>notDefined();</script></body></html>")
    messages = screenshot(page, in_tmp / "bad.png", width=200, height=200)
    assert any("notDefined" in m for m in messages)
