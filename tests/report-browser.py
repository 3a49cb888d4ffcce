#!/usr/bin/env python3
"""Real-browser test of `gputrace report`: headless Chromium, driven through chromedriver,
opens the page of tests/data/ddp-rank0 and ddp-rank1 from disk (file://) and checks that

- the page asked for nothing: the Resource Timing list is empty, and no element has a src or
  href attribute (a request from the page itself; Chromium's own background requests are not
  the page's);
- every plot has data: each <svg class="plot"> holds a series whose line the browser laid
  out with a width, or a bar or step point it drew with one (getBBox);
- every section is there.

Skips (77) without chromium or chromedriver (Debian: chromium chromium-driver).
Usage: report-browser.py GPUTRACE DATA_DIR [SCREENSHOT.png]
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("view_browser",
                                              os.path.join(HERE, "view-browser.py"))
vb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vb)

SECTIONS = ["traces", "busy", "steps", "kernels", "memory", "nvtx", "findings"]
PROBE = """
const plots = [...document.querySelectorAll('svg.plot')].map(svg => {
    const marks = [...svg.querySelectorAll('polyline.series, rect.bar, circle.step')];
    const drawn = marks.filter(m => { const b = m.getBBox(); return b.width > 0; });
    return {id: svg.id, marks: marks.length, drawn: drawn.length};
});
return {
    resources: performance.getEntriesByType('resource').map(e => e.name),
    refs: [...document.querySelectorAll('[src],[href]')].map(e => e.outerHTML.slice(0, 80)),
    sections: [...document.querySelectorAll('section')].map(s => s.id),
    plots: plots,
    ready: document.readyState,
};
"""


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    gputrace, data = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shot_out = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    chromium = vb.find_chromium()
    chromedriver = shutil.which("chromedriver") or (
        "/usr/lib/chromium/chromedriver"
        if os.access("/usr/lib/chromium/chromedriver", os.X_OK) else None)
    if not chromium or not chromedriver:
        print("SKIP: needs chromium and chromedriver (apt-get install chromium chromium-driver)")
        return 77

    tmp = tempfile.mkdtemp(prefix="report-browser-")
    cd = None
    wd = None
    try:
        page = os.path.join(tmp, "report.html")
        subprocess.run([gputrace, "report", "ddp-rank0.gtrace", "ddp-rank1.gtrace", "-o", page],
                       cwd=data, check=True)
        cd, port, said = vb.start_chromedriver(chromedriver)
        if not port:
            vb.fail("chromedriver did not start; it printed:\n  " + "\n  ".join(said))
            return 1
        wd = vb.WebDriver(port)
        wd.start(chromium, [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--no-proxy-server", "--window-size=900,1500",
            "--user-data-dir=" + os.path.join(tmp, "profile")])
        # navigation returns once the page has loaded (the W3C "normal" page load strategy)
        wd.open("file://" + page)
        got = wd.call("POST", "/session/%s/execute/sync" % wd.sid,
                      {"script": PROBE, "args": []})
        if got["ready"] != "complete":
            vb.fail("the page is %s, not loaded" % got["ready"])
        if got["resources"]:
            vb.fail("the page requested: %s" % got["resources"])
        if got["refs"]:
            vb.fail("elements that refer out of the page: %s" % got["refs"])
        if got["sections"] != SECTIONS:
            vb.fail("sections %s, expected %s" % (got["sections"], SECTIONS))
        ids = [p["id"] for p in got["plots"]]
        want = ["busy-0", "busy-1", "steps-plot", "kernels-0", "kernels-1", "memory-0",
                "memory-1", "nvtx-0", "nvtx-1"]
        if ids != want:
            vb.fail("plots %s, expected %s" % (ids, want))
        for p in got["plots"]:
            if not p["marks"] or p["drawn"] != p["marks"]:
                vb.fail("plot %s: %d of its %d marks drawn" % (p["id"], p["drawn"], p["marks"]))
        if shot_out:
            with open(shot_out, "wb") as f:
                f.write(wd.screenshot())
    finally:
        if wd:
            wd.quit()
        if cd and cd.poll() is None:
            cd.terminate()
            cd.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if vb.failures:
        print("%d check(s) failed" % vb.failures, file=sys.stderr)
        return 1
    print("report-browser: the page loaded from disk with no request, every plot drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
