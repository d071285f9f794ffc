"""Open a run's report.html in headless Chromium and save a screenshot.

    python scripts/screenshot_report.py RUN_DIR [--out report.png] [--width 1280] [--height 2400]

Rebuilds RUN_DIR/report.html first, then prints the page's console messages (JavaScript errors
included) and exits 1 if there are any. Chromium comes from the system packages
(``apt-get install chromium`` on Debian); it is not a Python dependency.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
CONSOLE = re.compile(r":CONSOLE[^\]]*\] (.*)$")


def find_browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 2400,
               browser: str | None = None) -> list[str]:
    """Render ``page`` to ``png``; returns the console messages the page logged."""
    browser = browser or find_browser()
    if browser is None:
        raise FileNotFoundError(f"no headless browser found (looked for {', '.join(BROWSERS)}); "
                                "install one, e.g. `apt-get install chromium`")
    with tempfile.TemporaryDirectory(prefix="gantrain-chromium-") as profile:
        out = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={profile}", f"--window-size={width},{height}",
             f"--screenshot={png.resolve()}", "--enable-logging=stderr", "--v=0",
             page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120)
    if not png.is_file():
        raise RuntimeError(f"{browser} wrote no screenshot: {out.stderr[-1000:]}")
    return [m.group(1) for line in out.stderr.splitlines() if (m := CONSOLE.search(line))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run")
    p.add_argument("--out", default="report.png")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=2400)
    args = p.parse_args()
    from gantrain.viz.report import build_report

    page = Path(args.run) / "report.html"
    build_report([Path(args.run)], page)
    messages = screenshot(page, Path(args.out), args.width, args.height)
    for message in messages:
        print(f"console: {message}")
    print(f"wrote {args.out}")
    return 1 if messages else 0


if __name__ == "__main__":
    sys.exit(main())
