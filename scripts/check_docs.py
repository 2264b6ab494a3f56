#!/usr/bin/env python3
"""Checks the user documentation (README.md and docs/):
- README.md has at most 200 lines and links to at least five pages under docs/;
- every relative link in README.md and docs/*.md names a file that exists;
- nothing points outside the repository (no ../ path out of it, no shared spec folder);
- docs/protocol.md names every command and every event of schemas/.

Usage: check_docs.py [ROOT]; exit 1 with one line per problem."""
import json
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
problems = []
pages = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")

readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
lines = readme.count("\n")
if lines > 200:
    problems.append(f"README.md: {lines} lines (at most 200)")
linked_docs = {t for t in LINK.findall(readme) if t.startswith("docs/")}
if len(linked_docs) < 5:
    problems.append(f"README.md links to {len(linked_docs)} pages under docs/ (at least 5)")

for page in pages:
    path = os.path.join(root, page)
    text = open(path, encoding="utf-8").read()
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor on the same page
        file = target.split("#", 1)[0]
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file))
        if not resolved.startswith(root + os.sep):
            problems.append(f"{page}: link {target} leads outside the repository")
        elif not os.path.exists(resolved):
            problems.append(f"{page}: link {target} names no file")
    for bad in ("../shared", "shared/spec"):
        if bad in text:
            problems.append(f"{page}: mentions {bad}, which is outside the repository")

protocol = open(os.path.join(root, "docs", "protocol.md"), encoding="utf-8").read()
commands = json.load(open(os.path.join(root, "schemas", "commands.schema.json")))["$defs"]
events = json.load(open(os.path.join(root, "schemas", "events.schema.json")))["$defs"]
for name in sorted(commands):
    if f"`{name}`" not in protocol:
        problems.append(f"docs/protocol.md: the command {name} is not named")
for name in sorted(e for e in events if not e.startswith("AM")):  # AMD_/AME_: message parts
    if f"`{name}`" not in protocol:
        problems.append(f"docs/protocol.md: the event {name} is not named")

for p in problems:
    print(p)
if problems:
    sys.exit(1)
print(f"docs: README {lines} lines linking {len(linked_docs)} docs pages; {len(pages)} pages, "
      f"every link resolves; {len(commands)} commands and the events named in docs/protocol.md")
