"""verify's cache of the builds of mutants, attempts and the speed exercises' programs."""

import hashlib
import json
import threading
import time
from pathlib import Path


class BuildCache:
    """Within one verify, a source built once for each command line: the background build and the
    job that runs it share one binary (a folder per sha256 of both, one lock each, so two jobs
    never build one key at once)."""

    def __init__(self, folder):
        self.folder, self.locks, self.guard = Path(folder), {}, threading.Lock()

    def build(self, text, argv, compile_in):
        key = hashlib.sha256((text + "\0" + "\0".join(argv)).encode("utf-8")).hexdigest()
        with self.guard:
            lock = self.locks.setdefault(key, threading.Lock())
        with lock:
            folder = self.folder / key
            done = folder / "built.json"
            if done.is_file():
                got = json.loads(done.read_text(encoding="utf-8"))
                return (Path(got["binary"]) if got["binary"] else None), got["failure"]
            folder.mkdir(parents=True, exist_ok=True)
            binary, failure = compile_in(folder)
            done.write_text(json.dumps({"binary": str(binary) if binary else None, "failure": failure}),
                            encoding="utf-8")
            return binary, failure


BUILD_CACHE = None  # verify sets a BuildCache for its run; None: every build on its own


class Stopwatch:
    """Seconds spent in named steps (verify's record keeps them, to say where a slow job goes)."""

    def __init__(self):
        self.laps = {}

    def lap(self, name, fn, *args, **kwargs):
        start = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            self.laps[name] = round(time.monotonic() - start, 1)
