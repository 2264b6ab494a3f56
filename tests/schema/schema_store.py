"""Loads schemas/*.schema.json into one validator store (draft 2020-12, python3-jsonschema)."""
import json
import os

import jsonschema


def load(schema_dir):
    store = {}
    for name in sorted(os.listdir(schema_dir)):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name)) as f:
                doc = json.load(f)
            jsonschema.Draft202012Validator.check_schema(doc)
            store[doc["$id"]] = doc
            store[name] = doc
    return store


def validator(store, name):
    schema = store[name]
    resolver = jsonschema.RefResolver(base_uri=schema["$id"], referrer=schema, store=store)
    return jsonschema.Draft202012Validator(schema, resolver=resolver)
