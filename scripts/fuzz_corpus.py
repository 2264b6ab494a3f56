#!/usr/bin/env python3
"""The saved fuzz inputs, one archive per target: tests/fuzz/corpus/<target>.tar.gz.

The archives keep the tree small (one tracked file per target instead of thousands); the test
build unpacks them at configure time (tests/fuzz/CMakeLists.txt) and replays every input.
Archives are written reproducibly: names sorted, no times, no owners, so the same inputs give
the same bytes.

Usage:
  fuzz_corpus.py unpack TARGET DIR     the target's inputs into DIR (created)
  fuzz_corpus.py add TARGET DIR...     the files of each DIR added to the target's archive
                                       (a name already there keeps its bytes)
  fuzz_corpus.py pack TARGET DIR       the archive made anew from DIR's files (after a merge)
  fuzz_corpus.py list                  each target with its input count
"""
import gzip
import io
import os
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def archive_of(target):
    return os.path.join(CORPUS, f"{target}.tar.gz")


def read(target):
    """The target's inputs as {name: bytes}."""
    out = {}
    path = archive_of(target)
    if not os.path.exists(path):
        return out
    with tarfile.open(path, "r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and "/" not in member.name and not member.name.startswith("."):
                out[member.name] = tar.extractfile(member).read()
    return out


def write(target, inputs):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(inputs):
            info = tarfile.TarInfo(name)
            info.size = len(inputs[name])
            info.mode = 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(inputs[name]))
    with open(archive_of(target), "wb") as f:
        # mtime 0 and no file name in the gzip header: the same inputs give the same bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as gz:
            gz.write(raw.getvalue())


def files_of(directory):
    out = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isfile(path) and not name.startswith("."):
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


def main(args):
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    command = args[0]
    if command == "list":
        for name in sorted(os.listdir(CORPUS)):
            if name.endswith(".tar.gz"):
                target = name[: -len(".tar.gz")]
                print(f"{target} {len(read(target))}")
        return 0
    if command == "unpack" and len(args) == 3:
        target, directory = args[1], args[2]
        os.makedirs(directory, exist_ok=True)
        for name, data in read(target).items():
            with open(os.path.join(directory, name), "wb") as f:
                f.write(data)
        return 0
    if command == "add" and len(args) >= 3:
        target = args[1]
        inputs = read(target)
        before = len(inputs)
        for directory in args[2:]:
            for name, data in files_of(directory).items():
                inputs.setdefault(name, data)
        write(target, inputs)
        print(f"{target}: {before} -> {len(inputs)} inputs")
        return 0
    if command == "pack" and len(args) == 3:
        target, directory = args[1], args[2]
        inputs = files_of(directory)
        write(target, inputs)
        print(f"{target}: {len(inputs)} inputs")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
