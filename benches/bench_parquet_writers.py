"""Whether Python interpreters with different polars versions write the same table bytes.

Each interpreter given (one per polars install; it needs polars alone, reasonaudio is read from this
source tree) writes, through `reasonaudio.io.parquet.write_table`, the sample table of
tests/support/parquet_sample.py and, with `--bench DIR`, every table of that benchmark directory
(read with its own polars, then written again). It also writes them with polars' own footer
(`created_by` with its version), to show what pinning the writer's name removes. Prints one sha256
per table and interpreter, and whether they agree.

    python benches/bench_parquet_writers.py --python /venvs/pl139/bin/python --python /venvs/pl21/bin/python \\
        [--bench BENCHMARK_DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs in each interpreter: loads the two modules by file path, so that neither reasonaudio's
# extension nor its other dependencies need to be installed there.
CHILD = r"""
import hashlib, importlib.util, json, sys
from pathlib import Path
import polars as pl

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

root, bench, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
writer = load("ra_parquet", root / "python/reasonaudio/io/parquet.py")
sample = load("ra_parquet_sample", root / "tests/support/parquet_sample.py")
tables = {"sample": sample.sample_frame()}
if bench:
    tables.update({p.stem: pl.read_parquet(p) for p in sorted(Path(bench).glob("*.parquet"))})
result = {"polars": pl.__version__, "pinned": {}, "native": {}}
for name, frame in tables.items():
    for how in ("pinned", "native"):
        path = out / f"{how}-{name}.parquet"
        if how == "pinned":
            writer.write_table(frame, path)
        else:
            frame.write_parquet(path, **writer.TABLE_WRITE_OPTIONS)
        result[how][name] = hashlib.sha256(path.read_bytes()).hexdigest()
print(json.dumps(result))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="append", required=True, help="an interpreter with polars installed (repeat)")
    ap.add_argument("--bench", default="", help="a benchmark directory whose tables are written too")
    args = ap.parse_args()
    runs = []
    for python in args.python:
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run([python, "-c", CHILD, str(ROOT), args.bench, tmp], capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{python}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'failed'}")
        runs.append(json.loads(done.stdout))
    versions = [r["polars"] for r in runs]
    print(f"polars versions: {', '.join(versions)}")
    titles = {"native": "polars' own footer (created_by with its version)", "pinned": "reasonaudio.io.parquet.write_table"}
    for how, title in titles.items():
        print(f"\n{title}:")
        agree = 0
        for name in runs[0][how]:
            digests = [r[how][name] for r in runs]
            same = len(set(digests)) == 1
            agree += same
            print(f"  {name:<22} {'same' if same else 'DIFFER':<7} " + "  ".join(d[:12] for d in digests))
        print(f"  {agree} of {len(runs[0][how])} tables byte-identical across {len(runs)} polars versions")


if __name__ == "__main__":
    main()
