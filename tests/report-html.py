#!/usr/bin/env python3
"""Check a page of `gputrace report` (cli/cmd-report.c) with python's html.parser: every element
closed in order, no URL that leaves the file (src, href, url(), @import), no script from
outside, and the number of plot series, bars, steps and findings given on the command line.

Usage: report-html.py PAGE KEY=N...   (keys: traces busy-series memory-series kernel-bars
nvtx-bars step-points step-rows findings ranges)
Exits 0 when every check holds, 1 with a line per failure otherwise."""
import re
import sys
from html.parser import HTMLParser

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "source", "wbr"}
# SVG elements written self-closed (<line .../>)
SELF = {"line", "circle", "rect", "path", "polyline"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.count = {}
        self.section = None
        self.urls = []
        self.svg_in_section = {}

    def bump(self, key):
        self.count[key] = self.count.get(key, 0) + 1

    def handle_starttag(self, tag, attrs):
        self._start(tag, attrs, tag not in VOID)

    def handle_startendtag(self, tag, attrs):
        self._start(tag, attrs, False)

    def _start(self, tag, attrs, push):
        a = dict(attrs)
        for k, v in attrs:
            if v and (k in ("src", "href", "xlink:href", "action", "poster", "srcset")
                      or re.search(r"url\(|https?://|//", v) and k not in ("points",)):
                self.urls.append((tag, k, v))
        if tag in ("script", "link", "iframe", "img", "object", "embed"):
            self.urls.append((tag, "element", str(a)))
        if tag == "section":
            self.section = a.get("id")
        cls = a.get("class", "")
        if tag == "tr" and cls == "trace":
            self.bump("traces")
        if tag == "polyline" and cls == "series" and self.section in ("busy", "memory"):
            self.bump(self.section + "-series")
        if tag == "rect" and cls == "bar" and self.section in ("kernels", "nvtx"):
            self.bump(self.section.rstrip("s") + "-bars")
        if tag == "circle" and cls == "step":
            self.bump("step-points")
        if tag == "tr" and cls == "step":
            self.bump("step-rows")
        if tag == "div" and cls == "finding":
            self.bump("findings")
        if tag == "li" and cls == "range":
            self.bump("ranges")
        if push:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            top = self.stack[-1] if self.stack else "nothing"
            self.errors.append("</%s> closes <%s>" % (tag, top))
            return
        self.stack.pop()
        if tag == "section":
            self.section = None

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "style" and re.search(r"url\(|@import", data):
            self.urls.append(("style", "css", data[:80]))


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    p = Page()
    p.feed(text)
    p.close()
    bad = list(p.errors)
    if not text.startswith("<!DOCTYPE html>\n"):
        bad.append("no <!DOCTYPE html> first")
    if p.stack:
        bad.append("left open: %s" % p.stack)
    if re.search(r"https?://", text):
        bad.append("a URL in the page: %s" % re.search(r".{0,40}https?://.{0,40}", text).group(0))
    for u in p.urls:
        bad.append("a reference out of the file: %s" % (u,))
    for arg in sys.argv[2:]:
        key, want = arg.split("=")
        got = p.count.get(key, 0)
        if got != int(want):
            bad.append("%s: %d, expected %s" % (key, got, want))
    for b in bad:
        print("FAIL: %s: %s" % (sys.argv[1], b), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
