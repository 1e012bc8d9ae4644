"""The CLI's manners as a package: the issue tracker it names, a --help and --version that load no
command, -q/-v on every command, the environment report, shell completion, and a library that
prints nothing itself."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import reasonaudio.about as about
from reasonaudio.cli import COMMANDS, _leaves, build_parser, main

ROOT = Path(__file__).resolve().parent.parent


def test_the_license_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and "LICENSE" in project["license-files"]


def test_the_crate_package_carries_its_readme_and_licenses() -> None:
    import shutil

    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    done = subprocess.run(["cargo", "package", "--list", "--offline", "-p", "reasonaudio-core"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    files = set(done.stdout.split())
    assert {"README.md", "LICENSE", "THIRD_PARTY_NOTICES.md", "Cargo.toml", "src/lib.rs"} <= files, sorted(files)
    manifest = tomllib.loads((ROOT / "rust/core/Cargo.toml").read_text())["package"]
    assert {"description", "license", "readme", "documentation", "keywords", "categories"} <= manifest.keys()


class _Metadata:
    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    def get_all(self, key: str):
        return self.urls if key == "Project-URL" else None


@pytest.mark.parametrize("urls, tracker", [
    (["Homepage, https://example.org/ra", "Issues, https://example.org/ra/issues"], "https://example.org/ra/issues"),
    (["Homepage, https://example.org/ra"], None),
    ([], None),
])
def test_the_issue_tracker_is_the_one_the_installed_metadata_names(monkeypatch, urls, tracker) -> None:
    from importlib import metadata

    monkeypatch.setattr(metadata, "metadata", lambda name: _Metadata(urls))
    assert about.issues_url() == tracker
    epilog = build_parser([]).epilog
    assert (tracker in epilog) if tracker else ("http" not in epilog and "reasonaudio env" in epilog)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_help_and_version_import_no_command(argv: list[str]) -> None:
    code = (
        "import sys\nfrom reasonaudio.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        # commands.bounds (the option types and the negative-number pattern, standard library only) is the parser's own
        "print(sorted(m for m in sys.modules if (m.startswith('reasonaudio.commands.') and m != 'reasonaudio.commands.bounds')"
        " or m in ('polars', 'reasonaudio.builder')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


def test_every_command_takes_quiet_and_verbose() -> None:
    parser = build_parser()
    leaves = [p for p in _leaves(parser) if p is not parser]
    assert {p.prog.split()[1] for p in leaves} == set(COMMANDS)
    for leaf in leaves:
        options = {o for a in leaf._actions for o in a.option_strings}
        assert {"-q", "--quiet", "-v", "--verbose"} <= options, leaf.prog
    with pytest.raises(SystemExit):
        build_parser(["build"]).parse_args(["build", "--quiet", "--verbose"])  # one or the other
    assert isinstance(build_parser(["env"]).parse_args(["env", "-v"]), argparse.Namespace)


def test_env_reports_the_versions(capsys) -> None:
    assert main(["env", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["python"].startswith(sys.version.split()[0])
    assert report["reasonaudio._core"].split()[0] == report["reasonaudio"]
    assert report["numpy"] and report["polars"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "tcsh"])
def test_completion_knows_every_command(shell: str, capsys) -> None:
    pytest.importorskip("shtab")
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    for name in ("validate", "build") + (("--margin", "--queries-per-task") if shell != "tcsh" else ()):  # tcsh: words only
        assert name in script, (shell, name)


@pytest.mark.parametrize("tracker", ["https://example.org/ra/issues", None])
def test_an_internal_error_names_the_tracker(monkeypatch, capsys, tracker) -> None:
    import reasonaudio.commands.env as env

    def boom(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(env, "run", boom)
    monkeypatch.setattr("reasonaudio.cli.issues_url", lambda: tracker)
    assert main(["env"]) == 70
    err = capsys.readouterr().err
    assert "internal error (a bug; please report it" in err and "`reasonaudio env`" in err
    assert (f"please report it at {tracker} with" in err) if tracker else "please report it with the traceback" in err


def test_the_library_prints_nothing_and_logs_through_reasonaudio(tmp_path: Path, capsys, caplog) -> None:
    import logging

    import reasonaudio as ra

    with caplog.at_level(logging.INFO, logger="reasonaudio"):
        ra.build(tmp_path / "b", ra.BuildConfig(clips=40, queries_per_task=2, seed=1))
    assert capsys.readouterr() == ("", "")  # progress bars too: no terminal here
    assert any("rendered audio in" in r.getMessage() and r.name.startswith("reasonaudio.") for r in caplog.records)


def test_the_cli_prints_info_lines_and_quiet_hides_them(tmp_path: Path, capsys) -> None:
    assert main(["build", "--out", str(tmp_path / "a"), "--clips", "40", "--queries-per-task", "2"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("built ") and "rendered audio in" in err
    assert main(["build", "--out", str(tmp_path / "b"), "--clips", "40", "--queries-per-task", "2", "-q"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("built ") and err == ""
    assert main(["build", "--out", str(tmp_path / "c"), "--clips", "40", "--queries-per-task", "2", "-v"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("built ") and "rendered audio in" in err
    assert "Python " in err and ": 40 clips, 10 queries, seed 0" in err  # the debug lines


def test_validate_json_dash_is_stdout(tmp_path: Path, capsys) -> None:
    assert main(["build", "--out", str(tmp_path / "b"), "--clips", "40", "--queries-per-task", "2", "-q"]) == 0
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "b"), "--no-audio", "--json", "-", "-q"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["ok"] is True
    assert "OK" in err and not (Path.cwd() / "-").exists()


def test_a_missing_extra_is_one_line_naming_it(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what the base install lacks
    assert main(["atoms", "show", "procedural", "--out", str(tmp_path / "sheet.png")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1 and "pip install 'reasonaudio[figures]'" in errors[0], errors
    assert not (tmp_path / "sheet.png").exists()
