#!/usr/bin/env python3
"""Who wrote which object between two snapshots (kubectl get -o json Lists).

    object_writes.py BEFORE AFTER

A write is what a manager does to an object's spec or metadata: a changed
metadata.generation, labels or annotations, or a managedFields entry that is
not the status subresource's added, dropped, or changed (its time, API
version or fields). The status subresource is left out: the Deployment and
quota controllers keep writing status while pods come and go, and that is
nobody's hand-off. Prints one line per write, naming the object and what the
manager wrote; exits 1 when there is any, 0 when there is none.
"""

import json
import sys

# The most paths one entry's line lists: enough to say what changed.
SHOWN_PATHS = 6


def object_id(item):
    meta = item["metadata"]
    group = item["apiVersion"].rpartition("/")[0]
    return f'{meta.get("namespace", "")}_{meta["name"]}_{group}_{item["kind"]}'


def load(path):
    with open(path) as f:
        return {object_id(item): item for item in json.load(f).get("items", [])}


def field_paths(fields, prefix=""):
    """The paths a fieldsV1 set names, "spec.replicas" style."""
    for key, child in fields.items():
        if key == ".":
            yield prefix or "."
            continue
        path = prefix + ("." if prefix else "") + (key[2:] if key.startswith("f:") else key)
        if child:
            yield from field_paths(child, path)
        else:
            yield path


def listed(paths):
    paths = sorted(paths)
    more = len(paths) - SHOWN_PATHS
    return ", ".join(paths[:SHOWN_PATHS]) + (f" and {more} more" if more > 0 else "")


def spec_entries(item):
    """The managedFields entries outside the status subresource, by writer."""
    return {
        (entry.get("manager", ""), entry.get("operation", ""), entry.get("subresource", "")): entry
        for entry in item["metadata"].get("managedFields", [])
        if entry.get("subresource") != "status"
    }


def at(entry):
    # The API server gives no time to an entry whose write changed no value.
    return f" at {entry['time']}" if entry.get("time") else ""


def entry_writes(before, after):
    for key in sorted(set(before) | set(after)):
        manager, operation, subresource = key
        who = f"{manager} ({operation}{', ' + subresource if subresource else ''})"
        old, new = before.get(key), after.get(key)
        if old is None:
            yield f"{who} wrote {listed(field_paths(new.get('fieldsV1', {})))}{at(new)}"
            continue
        if new is None:
            yield f"{who} no longer manages {listed(field_paths(old.get('fieldsV1', {})))}"
            continue
        if old == new:
            continue
        old_paths = set(field_paths(old.get("fieldsV1", {})))
        new_paths = set(field_paths(new.get("fieldsV1", {})))
        what = []
        if new_paths - old_paths:
            what.append(f"took {listed(new_paths - old_paths)}")
        if old_paths - new_paths:
            what.append(f"gave up {listed(old_paths - new_paths)}")
        if old.get("apiVersion") != new.get("apiVersion"):
            what.append(f"as {new.get('apiVersion')} (was {old.get('apiVersion')})")
        if not what:
            what.append(f"rewrote its fields {listed(new_paths)}")
        yield f"{who} {'; '.join(what)}{at(new)}"


def map_writes(name, before, after):
    before, after = before or {}, after or {}
    changes = [f"+{k}" for k in sorted(set(after) - set(before))]
    changes += [f"-{k}" for k in sorted(set(before) - set(after))]
    changes += [
        f"{k}: {before[k]!r} -> {after[k]!r}"
        for k in sorted(set(before) & set(after))
        if before[k] != after[k]
    ]
    if changes:
        yield f"{name} {', '.join(changes)}"


def writes(before, after):
    old_meta, new_meta = before["metadata"], after["metadata"]
    if old_meta.get("uid") != new_meta.get("uid"):
        yield "was deleted and created again"
        return
    if old_meta.get("generation") != new_meta.get("generation"):
        yield f"generation {old_meta.get('generation')} -> {new_meta.get('generation')}"
    yield from map_writes("labels", old_meta.get("labels"), new_meta.get("labels"))
    yield from map_writes("annotations", old_meta.get("annotations"), new_meta.get("annotations"))
    yield from entry_writes(spec_entries(before), spec_entries(after))


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} BEFORE AFTER")
    before, after = load(sys.argv[1]), load(sys.argv[2])
    found = False
    for key in sorted(set(before) | set(after)):
        if key not in after:
            lines = ["is gone, or could not be read"]
        elif key not in before:
            lines = ["is new"]
        else:
            lines = list(writes(before[key], after[key]))
        for line in lines:
            print(f"{key}: {line}")
            found = True
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
