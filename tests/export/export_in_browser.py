#!/usr/bin/env python3
"""export_html's page as a person sees it (sessions.md section 12): a session with hostile
messages is exported by the real server, then opened in headless Chromium. The DOM must show the
hostile <script> and <img onerror> as text (no such element exists), the title must be the one
Rebound wrote (no script ran), the page must fetch nothing (a listener on 127.0.0.1 that the
messages point at counts requests), and a screenshot of it must not be blank.

Usage: export_in_browser.py REBOUND CHROMIUM [SCREENSHOT_COPY]
"""
import http.server
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import zlib

rebound, chromium = os.path.abspath(sys.argv[1]), sys.argv[2]
copy_to = sys.argv[3] if len(sys.argv) > 3 else None
failures = []
passes = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    (passes if cond else failures).append(what)


class Counter(http.server.BaseHTTPRequestHandler):
    requests = []

    def do_GET(self):
        Counter.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Counter)
port = server.server_address[1]
threading.Thread(target=server.serve_forever, daemon=True).start()

work = tempfile.mkdtemp(prefix="rebound-export-")
agent = os.path.join(work, "agent")
os.makedirs(agent)
with open(os.path.join(agent, "settings.json"), "w") as f:
    json.dump({"retry": {"enabled": True, "baseDelayMs": 20}}, f)
answer = ("Done. <script>document.title='PWNED-AI'</script> **bold** `code <i>x</i>`\n\n"
          f"![remote](http://127.0.0.1:{port}/markdown.png) and [a link](http://127.0.0.1:{port}/link)\n\n"
          "```python\nprint('<b>hi</b>')\n```\n\n"
          f"<img src=\"http://127.0.0.1:{port}/raw.png\" onerror=\"document.title='PWNED-IMG'\">")
with open(os.path.join(work, "script.json"), "w") as f:
    json.dump([{"error": "503 overloaded"},
               {"text": answer, "thinking": "Thinking about <this>."}], f)
user = (f"<script>document.title='PWNED-USER'</script> "
        f"<img src=\"http://127.0.0.1:{port}/user.png\" onerror=\"document.title='PWNED-USER-IMG'\">")
commands = [
    {"id": "n", "type": "set_session_name", "name": "Export <check>"},
    {"id": "p", "type": "prompt", "message": user},
]
proc = subprocess.Popen([rebound, "--agent-dir", agent, "--no-session", "--provider", "scripted",
                         "--script", os.path.join(work, "script.json")],
                        cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True)


def send(obj):
    proc.stdin.write(json.dumps(obj) + "\n")
    proc.stdin.flush()


def read_until(pred):
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("the server ended early")
        obj = json.loads(line)
        if pred(obj):
            return obj


for c in commands:
    send(c)
read_until(lambda o: o.get("type") == "auto_retry_end")
send({"id": "x", "type": "export_html", "outputPath": "page.html"})
answer_line = read_until(lambda o: o.get("id") == "x")
proc.stdin.close()
proc.wait(timeout=10)
check(answer_line.get("success") is True, "export_html answered success")
page = answer_line["data"]["path"]
check(page == os.path.join(work, "page.html"), "the answer's path is absolute")

flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--user-data-dir=" + os.path.join(work, "profile")]
dom = subprocess.run([chromium, *flags, "--virtual-time-budget=2000", "--dump-dom",
                      "file://" + page], capture_output=True, text=True, timeout=120).stdout
shot = os.path.join(work, "shot.png")
subprocess.run([chromium, *flags, "--window-size=1200,1400", "--screenshot=" + shot,
                "file://" + page], capture_output=True, timeout=120)

check("<title>Export &lt;check&gt;</title>" in dom, "the title is untouched (no script ran)")
check("PWNED" not in dom.split("</title>")[0], "no script changed the title")
check("<script" not in dom, "no <script> element in the DOM")
check("&lt;script&gt;document.title='PWNED-USER'&lt;/script&gt;" in dom,
      "the user's <script> is shown as text")
check("&lt;img src=\"http://127.0.0.1" in dom and "onerror" in dom,
      "the <img onerror> is shown as text")
imgs = [chunk for chunk in dom.split("<img")[1:]]
check(all(i.lstrip().startswith('alt="image" src="data:') for i in imgs), "no <img> but data: images")
check("<strong>bold</strong>" in dom, "Markdown is rendered")
check(f"[image: remote] (http://127.0.0.1:{port}/markdown.png)" in dom,
      "a Markdown image is its text and URL")
check("href=" not in dom, "no link leaves the page")
check("Attempt failed, retried: 503 overloaded" in dom, "the retried attempt is shown as such")
check(Counter.requests == [], f"the page fetched nothing (requests: {Counter.requests})")


def png_is_blank(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return True
    pos, idat = 8, b""
    width = height = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        if kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    # Distinct byte values over the image: a blank page holds a handful, text and colours many.
    return width == 0 or height == 0 or len(set(raw)) < 32


check(os.path.exists(shot) and not png_is_blank(shot), "the screenshot is not blank")
if copy_to and os.path.exists(shot):
    shutil.copyfile(shot, copy_to)
server.shutdown()
shutil.rmtree(work, ignore_errors=True)
print(f"{len(passes)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
