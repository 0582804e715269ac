"""Drive headless Chromium over the DevTools protocol, through --remote-debugging-pipe.

No dependency: Chromium reads commands on its fd 3 and writes replies and events on its fd 4,
each a JSON message ended by a NUL byte. The test suite (tests/test_report_html.py) and
docs/update_readme.py (the README's screenshot) use it.

    with Browser.start() as browser:         # None-safe: Browser.find() is None without one
        page = browser.open("file:///tmp/report.html")
        page.evaluate("document.title")
"""

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

__all__ = ["Browser", "BrowserError", "find_browser"]

# No network here: without these flags Chromium keeps trying to reach its services.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-pipe", "--hide-scrollbars",
         "--force-device-scale-factor=1", "--font-render-hinting=none"]


class BrowserError(Exception):
    """Chromium did not answer in time, exited, or answered a command with an error."""


def find_browser():
    """The path of Chromium (or Chrome), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def _child_fds(commands, replies):
    """In the child: the pipe ends Chromium uses as fds 3 (commands) and 4 (replies)."""
    import fcntl
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands, replies)]
    os.dup2(high[0], 3)
    os.dup2(high[1], 4)


class Browser:
    """One headless Chromium process and its DevTools pipe."""

    def __init__(self, proc, send_fd, recv_fd, profile):
        self.proc, self.send_fd, self.recv_fd, self.profile = proc, send_fd, recv_fd, profile
        self.buffer = b""
        self.next_id = 0
        self.events = []

    @classmethod
    def start(cls, path=None, timeout=60):
        path = path or find_browser()
        if path is None:
            raise BrowserError("no chromium on PATH")
        profile = tempfile.mkdtemp(prefix="gradviz-chromium-")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        proc = subprocess.Popen(
            [path, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # close_fds=False: fds 3 and 4 are made in preexec_fn, after which subprocess would
            # close them (Python's own fds are not inheritable, so nothing else leaks).
            close_fds=False, preexec_fn=lambda: _child_fds(to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)
        browser = cls(proc, to_child_w, from_child_r, profile)
        browser.timeout = timeout
        return browser

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for fd in (self.send_fd, self.recv_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    # ----- The protocol -----

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            poller = select.poll()
            poller.register(self.recv_fd, select.POLLIN | select.POLLHUP)
            if not poller.poll(int(left * 1000) + 1):
                continue
            chunk = os.read(self.recv_fd, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe (exit {self.proc.poll()})")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=None):
        """Send one command and return its result; events that arrive meanwhile are kept in
        self.events."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.send_fd, data):]
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, timeout=None, session=None):
        """Wait for an event named method (one that already arrived counts) and return it."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and (session is None or
                                                      event.get("sessionId") == session):
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def open(self, url, width=1280, height=800):
        """A new tab at url, loaded, with console, errors and network requests recorded."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Network", "Log"):
            page.send(f"{domain}.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", session=session)
        return page


class Page:
    """One tab: evaluate JavaScript, click, type, take a screenshot."""

    def __init__(self, browser, session):
        self.browser, self.session = browser, session

    def send(self, method, params=None):
        return self.browser.send(method, params, session=self.session)

    def evaluate(self, expression):
        """The value of a JavaScript expression (JSON-serializable); BrowserError if it
        throws."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise BrowserError(f"{expression}: {text}")
        return result["result"].get("value")

    def click(self, selector):
        """A real mouse click at the middle of the first element matching selector."""
        box = self.evaluate(
            f"(function () {{ var r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }())")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def key(self, key, code=None, text=None):
        """Press and release one key (ArrowRight, Home, Enter ...)."""
        params = {"key": key, "code": code or key}
        if text:
            params["text"] = text
        self.send("Input.dispatchKeyEvent", dict(params, type="keyDown"))
        self.send("Input.dispatchKeyEvent", dict(params, type="keyUp"))

    def type(self, text):
        self.send("Input.insertText", {"text": text})

    def screenshot(self):
        """The viewport as PNG bytes."""
        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])

    def events(self, *methods):
        """Every event of this tab so far whose method is one of methods."""
        self.browser.send("Browser.getVersion")      # collects what arrived meanwhile
        return [e for e in self.browser.events
                if e.get("sessionId") == self.session and e.get("method") in methods]
