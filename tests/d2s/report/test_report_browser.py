"""The HTML report in a real browser: headless Chromium loads the page (both layouts), a small
script added to a copy of the page writes the drawing's bounding box and any script error into
the DOM (`--dump-dom` prints it), and a screenshot is kept. Skips only where Chromium is not
installed (`apt-get install chromium graphviz`; `.ci/run` installs both).

The screenshots go to the test's tmp_path, and also to $D2S_ARTIFACTS when it is set (CI keeps
that folder)."""
import os
import re
import shutil
import subprocess

import pytest
import report_model

import runtime as rt
from d2s import report_svg

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
PROBE = """<script>
window.addEventListener("error", e => {
  document.body.insertAdjacentHTML("beforeend", "<p id='probe-error'>" + e.message + "</p>");
});
window.addEventListener("load", () => {
  const svg = document.querySelector("svg.program");
  const box = svg ? svg.getBBox() : {width: 0, height: 0};
  const ops = document.querySelectorAll("svg.program [id^='op_']").length;
  document.body.insertAdjacentHTML("beforeend",
    `<p id="probe">bbox ${Math.round(box.width)}x${Math.round(box.height)} ops ${ops}</p>`);
});
</script>"""


def _browser() -> str | None:
    return next((p for p in map(shutil.which, BROWSERS) if p is not None), None)


def _run(browser: str, *args: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--enable-logging=stderr", "--v=0"]
    return subprocess.run([browser, *flags, *args], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.slow  # (two browser starts: 5-10 s; .ci/run runs it by name)
@pytest.mark.parametrize("layout", ["layered", "dot"])
def test_the_page_renders_in_chromium(layout, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    if layout == "dot" and not report_svg.has_dot():
        pytest.skip("Graphviz `dot` is not installed (apt-get install graphviz)")
    page = report_model.branchy.report_html(rt.ones([3]), 2, layout=layout)
    assert "<script" not in page  # (the probe is only in the copy under test)
    path = tmp_path / f"report_{layout}.html"
    path.write_text(page.replace("</body>", PROBE + "</body>"))
    url = path.as_uri()

    dom = _run(browser, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    probe = re.search(r'<p id="probe">bbox (\d+)x(\d+) ops (\d+)</p>', dom.stdout)
    assert probe is not None, dom.stdout[-2000:]
    width, height, ops = map(int, probe.groups())
    program = report_model.branchy.get_concrete_program(rt.ones([3]), 2).main_program
    assert width > 100 and height > 200
    assert ops >= sum(1 for _ in program.ops())
    assert '<p id="probe-error">' not in dom.stdout
    assert not re.search(r"CONSOLE.*(Uncaught|Error)", dom.stderr), dom.stderr[-2000:]

    shot = tmp_path / f"report_{layout}.png"
    done = _run(browser, f"--screenshot={shot}", "--window-size=1200,1600", url)
    assert done.returncode == 0 and shot.stat().st_size > 20_000, done.stderr[-2000:]
    keep = os.environ.get("D2S_ARTIFACTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(shot, keep)
