"""A one-shot run's scratch directory (the tests' and the soak's): agent/settings.json, the
script, and work/ (the run's cwd); returns the environment the run gets (HOME the directory,
no provider key)."""
import json
import os


def prepare(d, script, settings):
    os.makedirs(os.path.join(d, "agent"))
    os.makedirs(os.path.join(d, "work"))
    with open(os.path.join(d, "agent", "settings.json"), "w") as f:
        json.dump(settings, f)
    with open(os.path.join(d, "script.json"), "w") as f:
        json.dump(script, f)
    return dict(os.environ, HOME=d, OPENAI_API_KEY="", ANTHROPIC_API_KEY="")
