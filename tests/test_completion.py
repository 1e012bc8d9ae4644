"""`reasonaudio completion fish`: the script generated from the parser offers every subcommand at
its level, every option of a command with its choices, and fish itself reads it (where installed)."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess

import pytest

from reasonaudio.cli import build_parser, main

_TOKEN = re.compile(r"'((?:[^'\\]|\\.)*)'|(\S+)")


def _words(line: str) -> list[str]:
    """A fish command line split as fish splits it (single quotes with \\' and \\\\ escapes)."""
    return [re.sub(r"\\(.)", r"\1", m.group(1)) if m.group(1) is not None else m.group(2) for m in _TOKEN.finditer(line)]


def _completions(script: str) -> list[dict]:
    """Each `complete` line of the script as {path, short, long (the option strings), args, exclusive,
    requires, nofiles}."""
    out = []
    for line in script.splitlines():
        if not line.startswith("complete ") or " -n " not in line:
            continue
        words = _words(line)
        entry: dict = {"short": [], "long": [], "args": [], "nofiles": "-f" in words, "exclusive": "-x" in words,
                       "requires": "-r" in words}
        for flag, value in zip(words, words[1:]):
            if flag == "-n":
                entry["path"] = " ".join(value.split()[1:])
            elif flag == "-s":
                entry["short"].append(f"-{value}")
            elif flag == "-l":
                entry["long"].append(f"--{value}")
            elif flag == "-a":
                entry["args"] = _words(value)
        out.append(entry)
    return out


def _tree(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _tree(sub, path + (name,))


@pytest.fixture(scope="module")
def script() -> str:
    from reasonaudio.commands.completion import fish_script

    return fish_script(build_parser())


def test_every_command_and_option_is_offered_at_its_level(script: str) -> None:
    entries = _completions(script)
    by_path: dict[str, list[dict]] = {}
    for entry in entries:
        by_path.setdefault(entry["path"], []).append(entry)
    for path, parser in _tree(build_parser()):
        here = by_path[" ".join(path)]
        offered = {a for e in here if not e["short"] + e["long"] for a in e["args"]}
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:  # hidden from --help, so from completion too
                assert not any(o in e["long"] + e["short"] for e in here for o in action.option_strings), (path, action.dest)
                continue
            if isinstance(action, argparse._SubParsersAction):
                assert set(action.choices) <= offered, path
                assert any(e["nofiles"] and not e["args"] + e["long"] + e["short"] for e in here), path
            elif not action.option_strings and action.choices:
                assert {str(c) for c in action.choices} <= offered, (path, action.dest)
            for option in action.option_strings:
                entry = next((e for e in here if option in e["long"] + e["short"]), None)
                assert entry is not None, (path, option)
                if action.nargs != 0 and action.choices:
                    assert entry["exclusive"] and entry["args"] == [str(c) for c in action.choices], (path, option)
                elif action.nargs != 0:
                    assert entry["requires"], (path, option)
    # the build's --format offers exactly its choices
    fmt = next(e for e in by_path["build"] if e["long"] == ["--format"])
    assert fmt["args"] == ["flac16", "wav16", "wav_f32"]
    assert "fish" in {a for e in by_path["completion"] for a in e["args"]}


def test_the_command_prints_the_script(capsys, script: str) -> None:
    assert main(["completion", "fish"]) == 0
    assert capsys.readouterr().out == script


def test_descriptions_are_quoted_for_fish() -> None:
    from reasonaudio.commands.completion import _description, _quote

    assert _words(_quote("it's a \\ path")) == ["it's a \\ path"]
    action = argparse.Action(["--x"], "x", default=3, help="rate (default %(default)s); more. Rest")
    assert _words(_description(action.help, action)) == ["-d", "rate (default 3)"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_reads_the_script_and_completes_with_it(tmp_path, script: str) -> None:
    path = tmp_path / "reasonaudio.fish"
    path.write_text(script)
    subprocess.run(["fish", "--no-config", "-n", str(path)], check=True, capture_output=True, text=True)

    def complete(line: str) -> list[str]:
        done = subprocess.run(["fish", "--no-config", "-c", f"source {path}; complete -C {line!r}"], cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        assert done.stderr == "", done.stderr
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert complete("reasonaudio atoms ") == ["import", "list", "pack", "show"]
    assert complete("reasonaudio build --format ") == ["flac16", "wav16", "wav_f32"]
    assert "--clips" in complete("reasonaudio -q build --out atoms --c")
    assert complete("reasonaudio compose r") == ["run"]
    assert "fish" in complete("reasonaudio completion ")
    (tmp_path / "plan.npz").write_bytes(b"")
    assert complete("reasonaudio build --from-plan pl") == ["plan.npz"]
