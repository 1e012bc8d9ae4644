"""Input faults of every command: each case is one CLI call with a bad option, a corrupt input or a
missing optional package, and the exit status and message fragment it must give (never a
traceback, never a hang). Cases that need a benchmark share one small build per module.

Optional packages are hidden in a subprocess (`sys.modules[name] = None` makes `import name` raise
ImportError) so that nothing this process imported earlier masks the missing package.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from reasonaudio.cli import main

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"  # the sources the AST check reads
HIDE_AND_RUN = (
    "import sys\n"
    "for name in sys.argv[1].split(','):\n"
    "    sys.modules[name] = None\n"
    "from reasonaudio.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def _env() -> dict:
    # the subprocess imports reasonaudio as this test did (the installed package in CI; the checkout
    # has no built extension there): the environment is passed on unchanged
    return dict(os.environ)


def run_hidden(hide: tuple[str, ...], argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE_AND_RUN, ",".join(hide), *argv], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=120)


# --- 1. optional packages: exit 2, one line, the extra to install ------------------------------------

@dataclass(frozen=True)
class Missing:
    id: str
    hide: tuple[str, ...]
    argv: tuple[str, ...]
    extra: str


MISSING = [
    Missing("detect-train-no-torch", ("torch",), ("detect", "train", "procedural", "--steps", "1"), "detect"),
    Missing("detect-run-no-torch", ("torch",), ("detect", "run", "m.pt", ".", "--out", "o.parquet"), "detect"),
    Missing("detect-run-no-scipy", ("scipy",), ("detect", "run", "m.pt", ".", "--out", "o.parquet"), "detect"),
    Missing("audit-score-no-sklearn", ("sklearn",), ("audit", "score", "j.json", "--bench", "."), "eval"),
    Missing("atoms-pack-no-debian", ("debian",), ("atoms", "pack", "debian", "--out", "lib"), "atoms"),
    Missing("build-ray-no-ray", ("ray",), ("build", "--ray", "local", "--out", "b", "--clips", "20", "--quiet"), "ray"),
]


@pytest.mark.parametrize("case", MISSING, ids=[c.id for c in MISSING])
def test_missing_optional_package_is_one_line_with_the_install_hint(case: Missing, tmp_path: Path):
    (tmp_path / "j.json").write_text("{}")
    done = run_hidden(case.hide, list(case.argv), tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert f"pip install 'reasonaudio[{case.extra}]'" in lines[0]
    assert f"'{case.hide[0]}'" in lines[0]


def test_require_imports_present_packages_and_names_missing_ones(monkeypatch):
    from reasonaudio.errors import UserError, require

    assert require("json", "x", "reading JSON").dumps([1]) == "[1]"
    monkeypatch.setitem(sys.modules, "some_absent_pkg", None)
    with pytest.raises(UserError, match=r"^doing it needs the Python package 'some_absent_pkg' .*pip install 'reasonaudio\[ex\]'$"):
        require("some_absent_pkg.sub", "ex", "doing it")
    with pytest.raises(UserError, match=r"install it: pip install other$"):
        require("some_absent_pkg", None, "doing it", hint="install it: pip install other")


def test_no_optional_package_is_imported_outside_the_helper():
    """Every optional import goes through `reasonaudio.errors.require` (or the detector's and the
    adapters' wrappers of it): a bare `import torch` in a function is a traceback without torch."""
    import ast

    optional = {"torch", "scipy", "sklearn", "jiwer", "faiss", "datasets", "mteb", "ray", "s3fs", "debian", "yaml",
                "transformers", "sed_scores_eval", "whisper_normalizer", "peft", "rank_bm25"}
    offenders = []
    for path in sorted((PYTHON_DIR / "reasonaudio").rglob("*.py")):
        tree = ast.parse(path.read_text())
        annotation_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                           and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in annotation_only:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            if any(name.split(".")[0] in optional for name in names):
                offenders.append(f"{path.relative_to(PYTHON_DIR)}:{node.lineno}: {ast.unparse(node)}")
    assert not offenders, offenders


# --- 2. Ctrl-C while the command is still importing -----------------------------------------------------

STARTED = "import sys; sys.stderr.write('started\\n'); sys.stderr.flush(); from reasonaudio.cli import main; sys.exit(main())"


@pytest.mark.parametrize("delay", [0.1, 0.15, 0.22, 0.3])
def test_sigint_during_startup_exits_130_quietly(delay: float, tmp_path: Path):
    """Ctrl-C while the command is still importing its libraries. The clock starts once the
    interpreter itself is up (its `site` start-up runs other packages' .pth hooks, before any code of
    ours can install a handler, and takes 0.1-0.3 s on a loaded machine)."""
    proc = subprocess.Popen([sys.executable, "-c", STARTED, "validate", str(tmp_path / "absent")], cwd=tmp_path,
                            env=_env(), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr.readline() == "started\n"
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    if proc.returncode in (2, -signal.SIGINT) and "absent" in err:
        # the whole command had already finished (a fast machine); the signal may then land while the
        # interpreter shuts down, after our handlers are gone — never as a traceback of ours
        assert "Traceback" not in err, err
        return
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().endswith("interrupted")


@pytest.mark.parametrize("signum, status, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_the_imports_is_acted_on_once_they_are_done(monkeypatch, capsys, signum, status, word):
    """Raised inside an extension's import-time code, a KeyboardInterrupt can come out as that
    extension's panic (polars 2.1's start-up hook unwraps it: a Rust backtrace and exit 1, seen in CI).
    So while the parser's modules load, a signal is only noted; the command then stops, one line."""
    import reasonaudio.cli as cli

    loaded = []
    real = cli.build_parser

    def loading_with_a_signal(commands=None):
        os.kill(os.getpid(), signum)
        time.sleep(0.05)  # the handler runs here: it must not raise into the imports
        loaded.append(True)
        return real(commands)

    monkeypatch.setattr(cli, "build_parser", loading_with_a_signal)
    assert main(["validate", "absent"]) == status
    err = capsys.readouterr().err
    assert loaded and err.strip() == f"reasonaudio: {word}"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handlers given back


def test_import_reasonaudio_does_not_load_the_extension():
    """`reasonaudio.cli` is imported before its signal handling exists: the package must stay light."""
    code = "import sys, reasonaudio.cli; print('reasonaudio._core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
    assert main is not None


# --- the table of input faults: (id, argv, exit status, fragment of stderr) --------------------------

@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]  # {tmp}: the test's folder; {bench}: the module's small benchmark
    code: int
    fragment: str


def cli(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        code = exit_.code
    captured = capsys.readouterr()
    return int(code or 0), captured.err + captured.out


def _expand(argv, tmp: Path, bench: Path | None) -> list[str]:
    return [a.format(tmp=tmp, bench=bench) for a in argv]


BOUNDS = [
    Case("build-clips-huge", ("build", "--out", "{tmp}/b", "--clips", "1000000000000"), 2, "--clips must be within 1..10,000,000"),
    Case("build-max-clip-s-huge", ("build", "--out", "{tmp}/b", "--max-clip-s", "1e9"), 2, "--max-clip-s must be within (0, 600]"),
    Case("build-max-clip-s-nan", ("build", "--out", "{tmp}/b", "--max-clip-s", "nan"), 2, "--max-clip-s must be within"),
    Case("build-seed-negative", ("build", "--out", "{tmp}/b", "--seed", "-1"), 2, "--seed must be within 0..2^64-1"),
    Case("build-plan-probability", ("build", "--out", "{tmp}/b", "--plan", "native_probability=2"), 2, "a probability, must be within [0, 1]"),
    Case("build-plan-overlap-probability", ("build", "--out", "{tmp}/b", "--plan", "overlap_probability=-0.5"), 2, "a probability"),
    Case("build-plan-min-events-0", ("build", "--out", "{tmp}/b", "--plan", "min_events=0"), 2, "min_events=0: must be at least 1"),
    Case("build-plan-min-events-above-max", ("build", "--out", "{tmp}/b", "--clips", "60", "--plan", "min_events=9"), 2, "9..8 is not a valid range"),
    Case("build-plan-nan", ("build", "--out", "{tmp}/b", "--plan", "margin_s=NaN"), 2, "numbers must be finite"),
    Case("build-hard-negatives-vs-clips", ("build", "--out", "{tmp}/b", "--clips", "60", "--min-hard-negatives", "1000"), 2,
         "--min-hard-negatives 1000 needs more clips"),
    Case("build-queries-huge", ("build", "--out", "{tmp}/b", "--queries-per-task", "1000001"), 2, "--queries-per-task must be within 0..1,000,000"),
    Case("compose-n-huge", ("compose", "build", "--out", "{tmp}/c", "--n", "4000000000"), 2, "argument --n: must be within 4..100,000"),
    Case("compose-rate-huge", ("compose", "build", "--out", "{tmp}/c", "--n", "8", "--sample-rate", "1000000000"), 2, "8000..192000"),
    Case("compose-seed-negative", ("compose", "build", "--out", "{tmp}/c", "--seed", "-1"), 2, "argument --seed: must be within 0..4,294,967,295"),
    Case("compose-run-limit-negative", ("compose", "run", "{tmp}", "--model", "cmd:true", "--out", "{tmp}/o.jsonl", "--limit", "-1"), 2,
         "argument --limit: must be at least 1"),
    Case("audit-bootstrap-huge", ("audit", "score", "{tmp}/j.json", "--bench", "{tmp}", "--bootstrap", "1000000000"), 2,
         "argument --bootstrap: must be within 1..20,000"),
    Case("eval-bootstrap-huge", ("eval", "{tmp}", "--model", "random", "--out", "{tmp}/r", "--bootstrap", "1000000000"), 2,
         "argument --bootstrap: must be within 0..20,000"),
    Case("detect-channels-0", ("detect", "train", "procedural", "--channels", "0"), 2, "argument --channels: must be within 1..2,048"),
    Case("detect-device-bogus", ("detect", "train", "procedural", "--steps", "1", "--device", "bogus"), 2, "--device bogus: expected cpu, cuda"),
    Case("detect-run-device-bogus", ("detect", "run", "{tmp}/m.pt", "{tmp}", "--out", "{tmp}/o.parquet", "--device", "bogus"), 2,
         "--device bogus: expected cpu, cuda"),
    Case("export-shard-mb-nan", ("export", "{tmp}", "--out", "{tmp}/hf", "--shard-mb", "nan"), 2, "argument --shard-mb: must be a finite number"),
    Case("export-shard-mb-inf", ("export", "{tmp}", "--out", "{tmp}/hf", "--shard-mb", "inf"), 2, "argument --shard-mb: must be a finite number"),
    Case("merge-threads-negative", ("merge", "{tmp}/s0", "--out", "{tmp}/m", "--threads", "-1"), 2, "argument --threads: must be within 0..1,024"),
    Case("atoms-show-columns-0", ("atoms", "show", "procedural", "--out", "{tmp}/s.png", "--columns", "0"), 2, "argument --columns: must be within 1..100"),
]


@pytest.mark.parametrize("case", BOUNDS, ids=[c.id for c in BOUNDS])
def test_numeric_options_are_bounded_before_any_work(case: Case, tmp_path: Path, capsys):
    (tmp_path / "j.json").write_text("{}")
    start = time.perf_counter()
    code, err = cli(_expand(case.argv, tmp_path, None), capsys)
    assert (code, "Traceback" in err) == (case.code, False), err
    assert case.fragment in err, err
    assert time.perf_counter() - start < 30  # refused up front, not after planning or rendering
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_detect_device_cuda_without_a_gpu_is_refused(tmp_path: Path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    code, err = cli(["detect", "train", "procedural", "--steps", "1", "--device", "cuda"], capsys)
    assert code == 2 and "--device cuda: no CUDA GPU is visible" in err, err


def test_queries_per_task_beyond_the_corpus_is_capped_up_front(tmp_path: Path, capsys):
    """A million queries asked of 60 clips: the search starts at the clip count, so the build takes
    the time of the queries the corpus hosts, not of the number asked."""
    start = time.perf_counter()
    code, err = cli(["build", "--out", str(tmp_path / "b"), "--clips", "60", "--queries-per-task", "1000000", "--quiet"], capsys)
    assert code == 0, err
    assert "60 clips host" in err and "(asked for 1000000)" in err
    assert time.perf_counter() - start < 90


# --- 4. corrupt inputs are named, never a traceback -----------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict:
    """One small build, its two shards, its saved plan, its Hub export and one results directory."""
    root = tmp_path_factory.mktemp("safety")
    small = ["--clips", "40", "--queries-per-task", "2", "--quiet"]
    assert main(["build", "--out", str(root / "bench"), *small]) == 0
    for k in (0, 1):
        assert main(["build", "--out", str(root / f"shard{k}"), "--shard", f"{k}/2", *small]) == 0
    assert main(["build", "--save-plan", str(root / "plan.npz"), *small[:-1]]) == 0
    assert main(["export", str(root / "bench"), "--out", str(root / "hf")]) == 0
    assert main(["eval", str(root / "bench"), "--model", "random", "--out", str(root / "results"), "--no-figures", "--quiet"]) == 0
    return {"root": root}


def _truncate(path: Path, keep: int = 300) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_truncated_render_parquet_of_a_shard_is_named(corpus, tmp_path: Path, capsys):
    broken = _copy(corpus["root"] / "shard0", tmp_path / "shard0")
    _truncate(broken / "render.parquet")
    code, err = cli(["merge", str(broken), str(corpus["root"] / "shard1"), "--out", str(tmp_path / "m"), "--quiet"], capsys)
    assert code == 2 and f"{broken}/render.parquet: cannot read parquet" in err and "Traceback" not in err, err
    assert not (tmp_path / "m").exists()


def test_merge_command_prints_its_summary(corpus, tmp_path: Path, capsys):
    """`reasonaudio merge` prints its summary and writes the manifest the plain build writes."""
    code, out = cli(["merge", str(corpus["root"] / "shard1"), str(corpus["root"] / "shard0"), "--out", str(tmp_path / "m"), "--quiet"], capsys)
    assert code == 0 and "merged 2 shards" in out and "40 clips" in out, out
    assert (tmp_path / "m" / "manifest.json").read_bytes() == (corpus["root"] / "bench" / "manifest.json").read_bytes()


@pytest.mark.parametrize("command", ["build", "merge"])
def test_truncated_plan_file_is_named(corpus, tmp_path: Path, capsys, command: str):
    plan = tmp_path / "plan.npz"
    plan.write_bytes((corpus["root"] / "plan.npz").read_bytes()[:500])
    if command == "build":
        argv = ["build", "--out", str(tmp_path / "b"), "--clips", "40", "--queries-per-task", "2", "--from-plan", str(plan), "--quiet"]
    else:
        argv = ["merge", str(corpus["root"] / "shard0"), str(corpus["root"] / "shard1"), "--out", str(tmp_path / "m"), "--from-plan", str(plan)]
    code, err = cli(argv, capsys)
    assert code == 2 and f"{plan}: not a reasonaudio plan file" in err and "Traceback" not in err, err


def test_truncated_export_shard_is_named(corpus, tmp_path: Path, capsys):
    hf = _copy(corpus["root"] / "hf", tmp_path / "hf")
    shard = sorted((hf / "corpus").glob("*.parquet"))[0]
    _truncate(shard, 1000)
    code, err = cli(["eval", str(hf), "--model", "random", "--out", str(tmp_path / "r"), "--no-figures", "--quiet"], capsys)
    assert code == 2 and f"{shard}: not a readable parquet file" in err and "Traceback" not in err, err


@pytest.mark.parametrize("value", ['"oops"', "[1, 2]"])
@pytest.mark.parametrize("command", ["validate", "eval", "export"])
def test_manifest_params_not_an_object(corpus, tmp_path: Path, capsys, command: str, value: str):
    import json

    bench = _copy(corpus["root"] / "bench", tmp_path / "bench")
    manifest = json.loads((bench / "manifest.json").read_text())
    manifest["params"] = json.loads(value)
    (bench / "manifest.json").write_text(json.dumps(manifest))
    argv = {"validate": ["validate", str(bench)],
            "eval": ["eval", str(bench), "--model", "random", "--out", str(tmp_path / "r"), "--no-figures", "--quiet"],
            "export": ["export", str(bench), "--out", str(tmp_path / "hf")]}[command]
    code, err = cli(argv, capsys)
    assert "Traceback" not in err, err
    if command == "validate":  # a contract violation of the manifest, reported as a failed check
        assert code == 1 and "manifest.json: params should be an object" in err, err
    else:
        assert code == 2 and "manifest.json: params should be a JSON object" in err, err


@pytest.mark.parametrize("content", ['{"oops": ', "[]", '{"format": "reasonaudio-results/1"}', "\xff\xfe"])
def test_malformed_results_json_in_report(corpus, tmp_path: Path, capsys, content: str):
    results = _copy(corpus["root"] / "results", tmp_path / "results")
    (results / "results.json").write_bytes(content.encode("latin-1"))
    code, err = cli(["report", str(results), "--out", str(tmp_path / "rep")], capsys)
    assert code == 2 and f"{results}/results.json" in err and "Traceback" not in err, err


def test_one_garbage_file_in_an_annotate_directory(corpus, tmp_path: Path, capsys):
    bench = corpus["root"] / "bench"
    events = tmp_path / "events"
    events.mkdir()
    (events / "a.parquet").write_bytes((bench / "events.parquet").read_bytes())
    (events / "zz.parquet").write_text("not parquet\n")
    code, err = cli(["annotate", "--events", str(events), "--queries", str(bench / "queries.parquet"),
                     "--clips", str(bench / "clips.parquet"), "--out", str(tmp_path / "q.parquet")], capsys)
    assert code == 2 and f"{events}/zz.parquet: not a readable parquet file" in err and "Traceback" not in err, err


def test_annotate_names_the_file_of_a_bad_row(corpus, tmp_path: Path, capsys):
    import polars as pl

    bench = corpus["root"] / "bench"
    events = pl.read_parquet(bench / "events.parquet")
    bad = events.with_columns(pl.when(pl.int_range(pl.len()) == 5).then(pl.col("onset_sample") + 10**7)
                              .otherwise(pl.col("onset_sample")).alias("onset_sample"))
    path = tmp_path / "events.parquet"
    bad.write_parquet(path)
    code, err = cli(["annotate", "--events", str(path), "--queries", str(bench / "queries.parquet"), "--sample-rate", "16000",
                     "--out", str(tmp_path / "q.parquet")], capsys)
    assert code == 2 and f"{path}: row 5 (0-based): offset_sample" in err and "is before onset_sample" in err, err
    # --clips with a clip listed twice names the --clips file
    code, err = cli(["annotate", "--events", str(bench), "--queries", str(bench / "queries.parquet"),
                     "--clips", str(bench / "events.parquet"), "--out", str(tmp_path / "q2.parquet")], capsys)
    assert code == 2 and f"{bench / 'events.parquet'} (the corpus's clip list)" in err and "listed twice" in err, err


def test_contact_sheet_with_a_non_image_suffix_is_refused_up_front(tmp_path: Path, capsys):
    code, err = cli(["atoms", "show", "procedural", "--out", str(tmp_path / "sheet.txt")], capsys)
    assert code == 2 and "expected an image file name ending in .png" in err, err


@pytest.mark.parametrize("spec, fragment", [
    ("cmd:python 'unbalanced", "No closing quotation"),
    (f"cmd:{sys.executable} -c \"import sys; sys.stdout.buffer.write(b'caf\\xe9')\"", "not UTF-8"),
])
def test_cmd_models_that_cannot_run_are_named(tmp_path: Path, capsys, spec: str, fragment: str):
    from reasonaudio.compose.runner import load_model
    from reasonaudio.errors import UserError

    with pytest.raises(UserError, match=fragment):
        load_model(spec).generate(str(tmp_path / "a.wav"), "prompt")


def test_non_utf8_output_names_are_refused_before_the_build(tmp_path: Path, capsys):
    out = os.fsdecode(bytes(tmp_path) + b"/bad\xffname")
    code, err = cli(["build", "--out", out, "--clips", "20", "--quiet"], capsys)
    assert code == 2 and "is not valid UTF-8" in err, err
    assert list(tmp_path.iterdir()) == []


def test_non_utf8_copyright_file_is_named(tmp_path: Path, monkeypatch):
    pytest.importorskip("debian.copyright")
    from reasonaudio.atoms.sources import debian
    from reasonaudio.errors import UserError

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "copyright").write_bytes(b"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
                                                 b"Upstream-Name: caf\xe9\n\nFiles: *\nCopyright: x\nLicense: GPL-2\n")
    monkeypatch.setattr(debian, "DOC_ROOT", tmp_path)
    with pytest.raises(UserError, match=r"pkg/copyright: not UTF-8 text \(byte \d+\)"):
        debian._copyright("pkg")


def test_a_long_listing_of_bad_files_is_capped():
    from reasonaudio.atoms.sources.common import LISTED, listing

    items = [(f"f{i}.wav", "missing: no such file") for i in range(200_000)]
    lines = listing(items).splitlines()
    assert len(lines) == LISTED + 1
    assert lines[-1] == f"  … and {200_000 - LISTED} more ({200_000 - LISTED} x missing)"
    assert listing(items[:3]).count("\n") == 2


# --- detectors: a missing model file, an unwritable --out, another vocabulary ---------------------------

@pytest.fixture(scope="module")
def tiny_detector(tmp_path_factory) -> Path:
    """A detector of 3 labels of the procedural library (one optimiser step: its vocabulary is what matters)."""
    pytest.importorskip("torch")
    pytest.importorskip("scipy")
    out = tmp_path_factory.mktemp("detector") / "m3.pt"
    assert main(["detect", "train", "procedural", "--labels", "3", "--steps", "1", "--channels", "8", "--valid-clips", "1",
                 "--batch", "1", "--device", "cpu", "--out", str(out), "--quiet"]) == 0
    return out


def test_missing_detector_model_file_is_named(corpus, tmp_path: Path, capsys):
    pytest.importorskip("torch")
    bench = corpus["root"] / "bench"
    for argv in (["eval", str(bench), "--model", "detect:/missing/model.pt", "--out", str(tmp_path / "r"), "--quiet"],
                 ["detect", "run", "/missing/model.pt", str(bench), "--out", str(tmp_path / "o.parquet"), "--device", "cpu"]):
        code, err = cli(argv, capsys)
        assert code == 2 and "/missing/model.pt: no such detector model file" in err and "atom library" in err, err


def test_detector_out_in_proc_is_refused_before_training(capsys):
    pytest.importorskip("torch")
    start = time.perf_counter()
    code, err = cli(["detect", "train", "procedural", "--out", "/proc/reasonaudio-test/m.pt", "--device", "cpu"], capsys)
    assert code == 2 and "--out /proc/reasonaudio-test/m.pt: cannot write into" in err, err
    assert time.perf_counter() - start < 30  # not after the 800 default steps


def test_metrics_against_another_vocabulary_are_refused(corpus, tiny_detector: Path, tmp_path: Path, capsys):
    bench = corpus["root"] / "bench"
    code, err = cli(["detect", "run", str(tiny_detector), str(bench), "--out", str(tmp_path / "o.parquet"),
                     "--metrics", str(tmp_path / "m.json"), "--device", "cpu", "--quiet"], capsys)
    assert code == 2 and "--metrics:" in err and "not in the model's vocabulary (3 labels of library 'procedural')" in err, err
    assert not (tmp_path / "o.parquet").exists()


def test_detector_of_another_vocabulary_is_refused_in_eval(corpus, tiny_detector: Path, tmp_path: Path, capsys):
    bench = corpus["root"] / "bench"
    code, err = cli(["eval", str(bench), "--model", f"detect:{tiny_detector}", "--device", "cpu", "--out", str(tmp_path / "r"),
                     "--no-figures", "--quiet"], capsys)
    assert code == 2 and "none of the 10 queries uses the detector's vocabulary (3 labels of library 'procedural'" in err, err


# --- 5. silently wrong inputs are refused ---------------------------------------------------------------

def _flip_inside_an_event(bench: Path, clip_dir: Path | None = None) -> Path:
    """400 bytes flipped inside the first event of the first clip (16-bit WAV: 44-byte header)."""
    import polars as pl

    event = pl.read_parquet(bench / "events.parquet").row(0, named=True)
    path = (clip_dir or bench / "audio") / f"{event['clip_id']}.wav"
    data = bytearray(path.read_bytes())
    start = 44 + 2 * int(event["onset_sample"]) + 1000
    for i in range(start, start + 400):
        data[i] ^= 0x55
    path.write_bytes(bytes(data))
    return path


def test_audio_hashes_are_written_beside_an_unchanged_manifest(corpus):
    import hashlib
    import json

    bench = corpus["root"] / "bench"
    lines = (bench / "audio.sha256").read_text().splitlines()
    assert len(lines) == 40 and lines == sorted(lines, key=lambda line: line[66:])
    digest, rel = lines[0].split("  ")
    assert rel == "audio/clip_000000.wav" and digest == hashlib.sha256((bench / rel).read_bytes()).hexdigest()
    assert "audio.sha256" not in json.loads((bench / "manifest.json").read_text())["hashes"]  # the manifest is unchanged


def test_validate_catches_bytes_flipped_inside_an_event(corpus, tmp_path: Path, capsys):
    bench = _copy(corpus["root"] / "bench", tmp_path / "bench")
    code, out = cli(["validate", str(bench)], capsys)
    assert code == 0, out
    flipped = _flip_inside_an_event(bench)
    code, out = cli(["validate", str(bench)], capsys)
    assert code == 1 and "audio.hashes" in out, out
    from reasonaudio.validate import validate_benchmark

    report = validate_benchmark(bench)
    failed = {c.name: c for c in report.checks if c.violations}
    assert list(failed) == ["audio.hashes"]  # the other audio checks cannot see it
    assert f"audio/{flipped.name}: sha256 differs from audio.sha256" in failed["audio.hashes"].examples[0]


def test_export_refuses_a_clip_that_changed_after_the_build(corpus, tmp_path: Path, capsys):
    bench = _copy(corpus["root"] / "bench", tmp_path / "bench")
    flipped = _flip_inside_an_event(bench)
    code, err = cli(["export", str(bench), "--out", str(tmp_path / "hf")], capsys)
    assert code == 2 and f"{flipped}: sha256 differs from" in err, err
    assert not (tmp_path / "hf").exists()


def test_merge_refuses_a_shard_wav_that_changed(corpus, tmp_path: Path, capsys):
    shard0 = _copy(corpus["root"] / "shard0", tmp_path / "shard0")
    assert (shard0 / "audio.sha256").is_file()
    flipped = _flip_inside_an_event(corpus["root"] / "bench", clip_dir=shard0 / "audio")
    code, err = cli(["merge", str(shard0), str(corpus["root"] / "shard1"), "--out", str(tmp_path / "m"), "--quiet"], capsys)
    assert code == 2 and f"{shard0}/audio/{flipped.name}: sha256 differs from" in err, err
    assert not (tmp_path / "m").exists()


# --- 6. values as users type them -------------------------------------------------------------------

AS_TYPED = [
    ("build-snr", ["build", "--out", "b", "--background", "noise:pink", "--snr", "-5,10"], "snr", "-5,10"),
    ("build-gain-db", ["build", "--out", "b", "--gain-db", "-6,0"], "gain_db", "-6,0"),
    ("build-pitch", ["build", "--out", "b", "--pitch", "-2,2"], "pitch", "-2,2"),
    ("scenes-varispeed", ["scenes", "--out", "s", "--varispeed", "-1e0,1"], "varispeed", "-1e0,1"),
    ("scenes-gain-db", ["scenes", "--out", "s", "--gain-db", "-12,-3"], "gain_db", "-12,-3"),
]


@pytest.mark.parametrize("argv, dest, value", [c[1:] for c in AS_TYPED], ids=[c[0] for c in AS_TYPED])
def test_negative_ranges_are_read_as_typed(argv, dest, value):
    from reasonaudio.cli import build_parser

    assert getattr(build_parser().parse_args(argv), dest) == value


def test_negative_ranges_inside_a_condition_and_options_still_refused(capsys):
    from reasonaudio.commands.scenes import parse_condition

    assert parse_condition("low=--background noise:pink --snr -5,10")[1]["snr_db"] == [-5.0, 10.0]
    code, err = cli(["build", "--out", "b", "--snr", "--quiet"], capsys)  # an option is still no value
    assert code == 2 and "argument --snr: expected one argument" in err, err


# --- 7. folders, hashed files, rooms and interrupted runs -------------------------------------------

def _wav_folder(where: Path, names: tuple[str, ...], seconds: float, decay_s: float | None = None) -> Path:
    """A folder of short recordings: noise beds, or (with `decay_s`) exponentially decaying responses."""
    import numpy as np
    import soundfile as sf

    where.mkdir()
    rng = np.random.default_rng(0)
    for name in names:
        t = np.arange(int(seconds * 16000)) / 16000
        x = rng.standard_normal(t.size) * (np.exp(-t / decay_s) if decay_s else 0.1)
        if decay_s:
            x[0] = 1.0
        sf.write(where / f"{name}.wav", (0.5 * x / np.abs(x).max()).astype("float32"), 16000)
    return where


SMALL_BUILD = ("--clips", "20", "--queries-per-task", "1", "--quiet")
INSIDE_FOLDERS = [
    ("build-out-in-background", ("build", "--out", "{beds}/x", "--background", "{beds}", "--snr", "10")),
    ("build-out-in-room", ("build", "--out", "{rirs}/sub", "--room", "{rirs}")),
    ("build-save-plan-in-room", ("build", "--save-plan", "{rirs}/p.npz", "--room", "{rirs}")),
    ("scenes-out-in-condition-room", ("scenes", "--out", "{rirs}/s", "--condition", "r=--room {rirs}")),
    ("scenes-out-in-condition-bed", ("scenes", "--out", "{beds}/s", "--condition", "a", "--condition", "b=--background {beds} --snr 10")),
]


@pytest.mark.parametrize("argv", [c[1] for c in INSIDE_FOLDERS], ids=[c[0] for c in INSIDE_FOLDERS])
def test_an_output_inside_a_bed_or_room_folder_is_refused(argv, tmp_path: Path, capsys):
    """The next build with the same --background or --room would read the benchmark's clips as beds or
    impulse responses: refused like --atoms LIB --out LIB/sub, before any work, nothing written."""
    beds = _wav_folder(tmp_path / "beds", ("hum", "fan"), 3.0)
    rirs = _wav_folder(tmp_path / "rirs", ("r0",), 0.2, decay_s=0.02)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, err = cli([a.format(beds=beds, rirs=rirs) for a in argv] + list(SMALL_BUILD), capsys)
    assert code == 2 and "lies inside the input" in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_an_interrupted_scenes_run_removes_the_out_folder_it_made(tmp_path: Path, capsys, monkeypatch):
    import reasonaudio.builder.run as run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "render_audio", interrupted)
    code, err = cli(["scenes", "--out", str(tmp_path / "new" / "root"), "--condition", "clean", *SMALL_BUILD], capsys)
    assert code == 130, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("room, want, unwanted", [
    ("condition", "--room simulated:1.2,1.5 (--condition r)", "--room None"),
    (None, "planner parameters: gap_s", "--room"),
])
def test_room_refusals_name_the_room_given_and_only_then(room, want, unwanted, tmp_path: Path, capsys):
    pytest.importorskip("pyroomacoustics", reason="simulated rooms need the scene extra")
    if room:  # bins set by --plan are not widened: the long tail breaks their threshold
        argv = ["scenes", "--out", str(tmp_path / "s"), "--condition", "r=--room simulated:1.2,1.5",
                "--plan", "duration_bins=[[0.6,1.4],[2.6,3.4],[4.6,6.0]]"]
    else:
        argv = ["build", "--out", str(tmp_path / "b"), "--plan", "gap_s=[0.3,1.0]"]
    code, err = cli([*argv, *SMALL_BUILD], capsys)
    assert code == 2 and want in err and unwanted not in err, err
    assert list(tmp_path.iterdir()) == []


def test_validate_fails_a_benchmark_missing_a_hashed_file(tmp_path: Path, capsys):
    """scene_events.parquet is optional in §4 but listed with its hash: gone, nothing vouches for it."""
    bench = tmp_path / "bed"
    assert main(["build", "--out", str(bench), "--background", "noise:pink", "--snr", "10", *SMALL_BUILD]) == 0
    (bench / "scene_events.parquet").unlink()
    code, out = cli(["validate", str(bench), "--no-audio"], capsys)
    assert code == 1 and "manifest hashes['scene_events.parquet']: scene_events.parquet is missing" in out, out


def test_validate_catches_a_duration_inside_the_room_band(tmp_path: Path, capsys):
    """§5 with a room: a duration may grow by 2m + tail_s. An event placed between m + tail_s and
    2m + tail_s below a duration threshold breaks the rule (the independent reading counts it)."""
    pytest.importorskip("pyroomacoustics", reason="simulated rooms need the scene extra")
    import json

    import polars as pl

    bench = tmp_path / "room"
    assert main(["build", "--out", str(bench), "--clips", "60", "--queries-per-task", "2", "--room", "simulated:0.3,0.3",
                 "--quiet"]) == 0
    code, out = cli(["validate", str(bench), "--no-audio"], capsys)
    assert code == 0, out
    manifest = json.loads((bench / "manifest.json").read_text())
    sr, threshold = manifest["sample_rate"], manifest["params"]["duration_thresholds_s"][0]
    events = pl.read_parquet(bench / "events.parquet")
    clips = pl.read_parquet(bench / "clips.parquet")
    row = events.join(clips.select("clip_id", "tail_s"), on="clip_id").filter(pl.col("tail_s") > 0).row(0, named=True)
    duration = threshold - (0.5 + row["tail_s"] - 0.02)  # inside (m + tail, 2m + tail] below the threshold
    offset = row["onset_sample"] + int(round(duration * sr))
    events = events.with_columns(pl.when((pl.col("clip_id") == row["clip_id"]) & (pl.col("event_index") == row["event_index"]))
                                 .then(offset).otherwise(pl.col("offset_sample")).alias("offset_sample"))
    events.write_parquet(bench / "events.parquet")
    code, out = cli(["validate", str(bench), "--no-audio"], capsys)
    assert code == 1 and "scene.tail_margin" in out and f"clip {row['clip_id']}: an event of {row['label']}" in out, out


def test_compose_score_on_a_binary_outputs_file_names_the_file_and_line(tmp_path: Path, capsys):
    """A binary file given as --outputs was a UnicodeDecodeError (exit 70)."""
    assert main(["compose", "build", "--out", str(tmp_path / "set"), "--cue", "environment", "--task", "math", "--n", "4"]) == 0
    outputs = tmp_path / "o.jsonl"
    outputs.write_bytes(b'{"id": "s00000", "layer": "selection", "output": "1"}\n' + bytes(range(128, 256)))
    capsys.readouterr()
    code, err = cli(["compose", "score", str(tmp_path / "set"), "--outputs", str(outputs), "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and f"{outputs}, line 2: not UTF-8 text (byte 0)" in err and "Traceback" not in err, err
    assert not (tmp_path / "r").exists()


def test_an_fsd50k_folder_without_its_metadata_is_noted(tmp_path: Path, capsys):
    """Imported as plain folders it gets folder labels and license 'unspecified': the user is told."""
    src = tmp_path / "FSD50K"
    src.mkdir()
    _wav_folder(src / "FSD50K.dev_audio", ("1001", "1002"), 1.0)
    _, err = cli(["atoms", "import", str(src), "--out", str(tmp_path / "lib")], capsys)
    assert "note:" in err and "FSD50K.dev_audio but no FSD50K.ground_truth/" in err and "license 'unspecified'" in err, err


# --- 6. annotations as they come, and compose files of another set ----------------------------------

STRONG_HEADER = "filename\tonset\toffset\tevent_label\n"
SAMPLES_HEADER = "clip_id,label,onset_sample,offset_sample,onset_s,offset_s\n"
ANNOTATE_QUERIES = (
    '{"query_id": "cat", "logic": {"all": [{"has": "cat"}]}}\n'
    '{"query_id": "cat_then_dog", "logic": {"all": [{"before": ["cat", "dog"]}]}}\n'
    '{"query_id": "no_cat", "logic": {"all": [{"not": "cat"}]}}\n'
)


@dataclass(frozen=True)
class FileCase:
    """One CLI call over small input files (`name.parquet` is written from its CSV text) and what it
    must give: exit status and the fragments of its message ({tmp} is the folder of the files)."""

    id: str
    files: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]
    code: int
    fragments: tuple[str, ...]


ANNOTATE_FILES = [
    FileCase("annotate-zero-length-kept",
             (("strong.tsv", STRONG_HEADER + "a.wav\t0.5\t1.5\tdog\nb.wav\t2.0\t2.0\tcat\nb.wav\t3.0\t4.0\tdog\n"),),
             ("--events", "{tmp}/strong.tsv"), 0,
             ("note: 1 event row(s) of {tmp}/strong.tsv last zero time (onset = offset): kept as events lasting 0 s",
              "3 queries x 2 clips", "3 relevant pairs")),
    FileCase("annotate-zero-length-dropped",
             (("strong.tsv", STRONG_HEADER + "a.wav\t0.5\t1.5\tdog\nb.wav\t2.0\t2.0\tcat\nb.wav\t3.0\t4.0\tdog\n"),),
             ("--events", "{tmp}/strong.tsv", "--drop-zero-length"), 0,
             ("note: dropped 1 event row(s) of {tmp}/strong.tsv that last zero time", "3 queries x 2 clips",
              "2 relevant pairs")),
    FileCase("annotate-reversed-tsv-row",
             (("strong.tsv", STRONG_HEADER + "a.wav\t0.5\t1.5\tdog\nb.wav\t2.0\t1.0\tcat\n"),),
             ("--events", "{tmp}/strong.tsv"), 2,
             ("{tmp}/strong.tsv, line 3: offset (1.0) is before onset (2.0); expected offset >= onset",)),
    FileCase("annotate-reversed-parquet-row",
             (("events.parquet", SAMPLES_HEADER + "c0,dog,0,16000,0.0,1.0\nc0,cat,48000,32000,3.0,2.0\n"),),
             ("--events", "{tmp}/events.parquet"), 2,
             ("{tmp}/events.parquet: row 1 (0-based): offset_sample (32000) is before onset_sample (48000); "
              "expected offset_sample >= onset_sample",)),
    FileCase("annotate-reversed-parquet-seconds",
             (("events.parquet", SAMPLES_HEADER + "c0,dog,0,16000,0.0,1.0\nc0,cat,32000,48000,3.0,2.0\n"),),
             ("--events", "{tmp}/events.parquet"), 2,
             ("{tmp}/events.parquet: row 1 (0-based): offset_s (2.0) is before onset_s (3.0)",)),
    FileCase("annotate-row-off-the-sample-rate",
             (("events.parquet", SAMPLES_HEADER + "c0,dog,0,16000,0.0,1.0\nc0,cat,32000,48000,2.0,3.5\n"
               "c1,dog,0,32000,0.0,2.0\n"),),
             ("--events", "{tmp}/events.parquet"), 2,
             ("{tmp}/events.parquet: row 1 (0-based): offset_sample 48000 / offset_s 3.5 disagrees with the sample "
              "rate 16000 Hz of the other rows",)),
    FileCase("annotate-empty-parquet", (("events.parquet", SAMPLES_HEADER),), ("--events", "{tmp}/events.parquet"), 2,
             ("{tmp}/events.parquet: no event rows; expected at least one event, or the corpus's clip list (--clips)",)),
    FileCase("annotate-header-only-tsv", (("strong.tsv", STRONG_HEADER),), ("--events", "{tmp}/strong.tsv"), 2,
             ("{tmp}/strong.tsv: no event rows",)),
    FileCase("annotate-empty-tsv", (("strong.tsv", ""),), ("--events", "{tmp}/strong.tsv"), 2,
             ("{tmp}/strong.tsv: the file is empty; expected a header row (filename, onset, offset, event_label)",)),
]


def _write_inputs(files: tuple[tuple[str, str], ...], where: Path) -> dict[str, bytes]:
    import io

    import polars as pl

    for name, text in files:
        if name.endswith(".parquet"):
            pl.read_csv(io.StringIO(text), schema_overrides={"clip_id": pl.String, "label": pl.String}).write_parquet(where / name)
        else:
            (where / name).write_text(text)
    return _snapshot(where)


def _snapshot(where: Path) -> dict[str, bytes]:
    return {str(p.relative_to(where)): p.read_bytes() for p in sorted(where.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", ANNOTATE_FILES, ids=[c.id for c in ANNOTATE_FILES])
def test_annotations_as_they_come(case: FileCase, tmp_path: Path, capsys):
    """Point annotations (onset = offset) are events lasting 0 s (contract §2), counted in a note;
    a reversed row, a row off the sample rate or a table without events is one line naming the
    file, the row and what was expected. Nothing is written on a refusal, and no input changes."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "q.jsonl").write_text(ANNOTATE_QUERIES)
    before = _write_inputs(case.files, inputs)
    out = tmp_path / "qrels.tsv"
    argv = ["annotate", *(a.format(tmp=inputs) for a in case.argv), "--queries", str(inputs / "q.jsonl"), "--out", str(out)]
    code, err = cli(argv, capsys)
    assert (code, "Traceback" in err) == (case.code, False), err
    for fragment in case.fragments:
        assert fragment.format(tmp=inputs) in err, err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and not out.exists(), err
    assert _snapshot(inputs) == before


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory) -> Path:
    """Two compose sets of the same shape (seeds 0 and 1, so the same sample ids), each with its
    prompts and the outputs of a one-sample run, plus outputs written before sets had a fingerprint."""
    import json

    root = tmp_path_factory.mktemp("sets")
    for name, seed in (("a", "0"), ("b", "1")):
        assert main(["compose", "build", "--out", str(root / name), "--cue", "environment", "--task", "math", "--n", "4",
                     "--seed", seed]) == 0
        assert main(["compose", "prompts", str(root / name), "--out", str(root / f"prompts_{name}.jsonl")]) == 0
        assert main(["compose", "run", str(root / name), "--model", "cmd:echo", "--limit", "1",
                     "--out", str(root / f"outputs_{name}.jsonl")]) == 0
    for kind in ("prompts", "outputs"):
        rows = [json.loads(line) for line in (root / f"{kind}_a.jsonl").read_text().splitlines()]
        (root / f"{kind}_a_unmarked.jsonl").write_text("".join(
            json.dumps({k: v for k, v in row.items() if k != "set_fingerprint"}) + "\n" for row in rows))
    return root


COMPOSE_FILES = [
    FileCase("compose-run-another-sets-prompts", (),
             ("run", "{tmp}/a", "--model", "cmd:echo", "--prompts", "{tmp}/prompts_b.jsonl", "--out", "{tmp}/new.jsonl"), 2,
             ("{tmp}/prompts_b.jsonl, row 1: prompts of another compose set (set_fingerprint ", "not of {tmp}/a (set_fingerprint ",
              "write this set's prompts with `reasonaudio compose prompts {tmp}/a --out FILE`")),
    FileCase("compose-run-prompts-without-fingerprint", (),
             ("run", "{tmp}/a", "--model", "cmd:echo", "--prompts", "{tmp}/prompts_a_unmarked.jsonl", "--limit", "1",
              "--out", "{tmp}/new.jsonl"), 0,
             ("note: {tmp}/prompts_a_unmarked.jsonl: 20 of its 20 rows carry no set_fingerprint", "wrote 5 outputs")),
    FileCase("compose-score-another-sets-outputs", (),
             ("score", "{tmp}/a", "--outputs", "{tmp}/outputs_b.jsonl", "--out", "{tmp}/new"), 2,
             ("{tmp}/outputs_b.jsonl, row 1: model outputs of another compose set", "not of {tmp}/a",
              "score each outputs file with the set it was run on")),
    FileCase("compose-score-outputs-swapped", (),
             ("score", "{tmp}/a", "{tmp}/b", "--outputs", "{tmp}/outputs_b.jsonl", "{tmp}/outputs_a.jsonl", "--out", "{tmp}/new"), 2,
             ("{tmp}/outputs_b.jsonl, row 1: model outputs of another compose set", ", that of {tmp}/b), not of {tmp}/a",
              "give one --outputs file per set, in the order of the sets")),
    FileCase("compose-score-outputs-without-fingerprint", (),
             ("score", "{tmp}/a", "--outputs", "{tmp}/outputs_a_unmarked.jsonl", "--out", "{tmp}/new"), 0,
             ("note: {tmp}/outputs_a_unmarked.jsonl: 5 of its 5 rows carry no set_fingerprint", "wrote results.json")),
    FileCase("compose-score-own-outputs", (),
             ("score", "{tmp}/a", "{tmp}/b", "--outputs", "{tmp}/outputs_a.jsonl", "{tmp}/outputs_b.jsonl", "--out", "{tmp}/new"), 0,
             ("wrote results.json",)),
]


@pytest.mark.parametrize("case", COMPOSE_FILES, ids=[c.id for c in COMPOSE_FILES])
def test_compose_files_of_another_set(case: FileCase, two_sets: Path, capsys):
    """Sets of one shape share sample ids, so ids alone cannot tell another set's prompts or outputs
    from this set's: their set_fingerprint does. Files without one are matched by id, with a note."""
    import shutil

    before = _snapshot(two_sets)
    code, err = cli(["compose", *(a.format(tmp=two_sets) for a in case.argv)], capsys)
    created = [two_sets / "new.jsonl", two_sets / "new"]
    try:
        assert (code, "Traceback" in err) == (case.code, False), err
        for fragment in case.fragments:
            assert fragment.format(tmp=two_sets) in err, err
        if code == 2:
            assert len(err.strip().splitlines()) == 1 and not any(p.exists() for p in created), err
            assert _snapshot(two_sets) == before
    finally:
        for p in created:
            shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)

