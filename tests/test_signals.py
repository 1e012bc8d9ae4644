"""Ctrl-C stops every long Rust call within 2 s with KeyboardInterrupt, never a PanicException.

Each case runs one long call in a fresh interpreter, sends SIGINT while it runs and times the exit.
The child prints "ready" just before the call and reports how the call ended on stdout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# The work of each call, sized to run far longer than the test waits (seconds even on a fast
# machine), so an interrupt that is not honoured shows up as a timeout.
PRELUDE = """
import sys, time, json
import numpy as np
from reasonaudio import _core
"""

CASES = {
    # rust-numpy loads numpy's C-API lazily on a process's first array call, running Python code
    # where a pending Ctrl-C would surface as "PanicException: Failed to access NumPy array API
    # capsule" (Ctrl-C while the default library renders, early in every build).
    "procedural_atoms": """
# re-rendered under other seeds so that a fast machine is still inside it when SIGINT comes
call = lambda: [_core.procedural_atoms(48000, seed) for seed in range(1, 40)]
""",
    "plan_corpus": """
natives = np.full(200, 16000, np.int64)
params = _core.plan_params_default()
call = lambda: _core.plan_corpus(natives, 50_000_000, 0.4, 1, params, 1)
""",
    "annotate_csr": """
rng = np.random.default_rng(0)
n_clips, n_ev, n_labels = 200_000, 1_000_000, 50
clip = np.sort(rng.integers(0, n_clips, n_ev)).astype(np.uint32)
label = rng.integers(0, n_labels, n_ev).astype(np.uint32)
onset = rng.integers(0, 1000, n_ev).astype(np.int64)
offset = onset + 100
labels = [f"l{i}" for i in range(n_labels)]
q = json.dumps({"all": [{"before": ["l1", "l2"]}, {"not": "l3"}]})
table = _core.EventLabels(clip=clip, label=label, onset=onset, offset=offset, n_clips=n_clips, rate=10.0, labels=labels)
call = lambda: _core.annotate_csr(table, [q] * 200_000, None, 1)
""",
    "render_corpus_flac": """
import os
out = sys.argv[1]
sr, n = 16000, 200_000
atom = (0.3 * np.sin(np.arange(sr) * 0.05)).astype(np.float32)
k = np.arange(n)
events = _core.EventTable(ev_clip=k.astype(np.uint32), ev_atom=np.zeros(n, np.uint32), ev_onset=np.zeros(n, np.int64),
                          ev_length=np.full(n, sr, np.int64), ev_gain_db=np.zeros(n, np.float32),
                          clip_length=np.full(n, 10 * sr, np.int64))
corpus = _core.Corpus(_core.AudioBank(atom, np.array([0, sr], np.uint64)), events)
paths = [os.path.join(out, f"{i}.flac") for i in range(n)]
call = lambda: _core.render_corpus(corpus, paths, _core.Mixer(sr), format="flac16", threads=1)
""",
}

CHILD = """
print("ready", flush=True)
t0 = time.monotonic()
try:
    call()
except KeyboardInterrupt:
    print("interrupted after %.2f s" % (time.monotonic() - t0), flush=True)
    sys.exit(130)
print("finished", flush=True)
"""


def _interrupt(code: str, args: list[str], delay: float) -> tuple[float, int, str, str]:
    """Runs `code`, sends SIGINT `delay` s after "ready"; returns (seconds to exit, rc, stdout, stderr)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready", p.stderr.read() if p.stderr else ""
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            pytest.fail(f"still running 10 s after SIGINT: {out!r} {err[-2000:]!r}")
        return time.monotonic() - t0, p.returncode, out, err
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("name", list(CASES))
def test_sigint_stops_long_call(name: str, tmp_path: Path) -> None:
    code = PRELUDE + textwrap.dedent(CASES[name]) + CHILD
    # procedural_atoms is the shortest call (seconds): interrupt it early, as a user would.
    took, rc, out, err = _interrupt(code, [str(tmp_path)], 0.2 if name == "procedural_atoms" else 0.5)
    assert "PanicException" not in err and "panicked" not in err, err[-2000:]
    assert "interrupted after" in out, (out, err[-2000:])
    assert rc == 130, (rc, out, err[-2000:])
    assert took < 2.0, f"{name}: exited {took:.2f} s after SIGINT"
    if name == "render_corpus_flac":
        written = os.listdir(tmp_path)
        assert 0 < len(written) < 200_000
        # Every file a cancelled render leaves is whole: temporaries are renamed, never left behind.
        assert not [f for f in written if not f.endswith(".flac")], written[:5]


def test_sigint_during_cli_flac_build_exits_130(tmp_path: Path) -> None:
    """Ctrl-C a FLAC build while it renders clips."""
    out_dir = tmp_path / "b"
    p = subprocess.Popen(
        [sys.executable, "-m", "reasonaudio", "build", "--out", str(out_dir), "--clips", "3000",
         "--queries-per-task", "2", "--format", "flac16"],
        # the render bar says when rendering runs; off a terminal it is drawn only when asked for
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, REASONAUDIO_PROGRESS="1"),
    )
    rendering = threading.Event()
    chunks: list[str] = []

    def read() -> None:
        assert p.stdout is not None
        for chunk in iter(lambda: p.stdout.read(1), ""):
            chunks.append(chunk)
            if not rendering.is_set() and "render:" in "".join(chunks[-200:]):
                rendering.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert rendering.wait(120), "".join(chunks)[-2000:]
        time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        rc = p.wait(timeout=10)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    reader.join(5)
    text = "".join(chunks)
    assert "PanicException" not in text, text[-2000:]
    assert rc == 130 and "interrupted" in text, (rc, text[-2000:])
    assert took < 2.0, f"build exited {took:.2f} s after SIGINT"
    assert not list(tmp_path.iterdir()), "an interrupted render leaves nothing beside --out"
