"""Run an audio language model over the prompts of a compose set.

Protocol: any object with `generate(audio_path: str, prompt: str) -> str`. Built-in specs:
- `cmd:<program and fixed args>`: runs the program with the audio path and the prompt appended as two
  arguments; its stdout is the output (a non-zero exit is an error naming the sample);
- `qwen2audio[:LOCATION][,max_new_tokens=N]`: a Qwen2-Audio-class model, greedy (LOCATION a local directory
  or a Hub id `ORG/NAME[@REV]`; the grammar and loader two-stage captioning uses, `retrieval.adapters.audio_lm`);
- `py:<module>:<attribute>`: a Python object or zero-argument factory with `generate`.
"""

from __future__ import annotations

import importlib
import shlex
import subprocess
from pathlib import Path
from typing import Any, Protocol

from reasonaudio.compose.build import check_fingerprint, read_dataset, set_fingerprint
from reasonaudio.compose.io import FINGERPRINT, read_jsonl, write_jsonl_atomic
from reasonaudio.compose.prompts import LAYERS, PROMPT_STYLES, make_prompts
from reasonaudio.errors import UserError


class AudioLM(Protocol):
    def generate(self, audio_path: str, prompt: str) -> str: ...


class CommandModel:
    def __init__(self, command: str, timeout_s: float = 600.0) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as err:  # "No closing quotation", "No escaped character"
            raise UserError(f"--model cmd:{command}: {err} (the program and its arguments are split as a shell would)") from None
        if not self.argv:
            raise UserError("cmd: model spec needs a program, e.g. cmd:'python my_model.py'")
        self.timeout_s = timeout_s

    def generate(self, audio_path: str, prompt: str) -> str:
        try:
            proc = subprocess.run(self.argv + [audio_path, prompt], capture_output=True, timeout=self.timeout_s)
        except FileNotFoundError:
            raise UserError(f"model program {self.argv[0]!r} not found") from None
        except subprocess.TimeoutExpired:
            raise UserError(f"model program timed out after {self.timeout_s:g} s on {audio_path}") from None
        if proc.returncode != 0:
            stderr = proc.stderr.decode("utf-8", errors="replace")  # only shown: a stray byte must not hide it
            raise UserError(f"model program exited with status {proc.returncode} on {audio_path}: "
                            f"{stderr.strip()[-500:]}")
        try:
            return proc.stdout.decode("utf-8").strip()
        except UnicodeDecodeError as err:  # an answer is scored as text: refuse rather than guess an encoding
            raise UserError(f"model program {self.argv[0]!r} wrote an answer that is not UTF-8 on {audio_path} "
                            f"(byte {err.start}: {proc.stdout[err.start:err.start + 1]!r})") from None


class Qwen2AudioModel:
    """A Qwen2-Audio-class model (the one audio-LM home, `retrieval.adapters.audio_lm`), one prompt at a time."""

    MAX_NEW_TOKENS = 256

    def __init__(self, argument: str | None, max_new_tokens: int | None = None, device: str | None = None,
                 offline: bool = False) -> None:
        from reasonaudio.retrieval.adapters.audio_lm import load_qwen2_audio
        from reasonaudio.retrieval.options import ModelOptions

        options = ModelOptions(batch_size=1, device=device, progress=False, offline=offline,
                               extra={} if max_new_tokens is None else {"max_new_tokens": max_new_tokens})
        self.lm = load_qwen2_audio(argument, options, "qwen2audio:", self.MAX_NEW_TOKENS)
        self.loaded = options.loaded

    def generate(self, audio_path: str, prompt: str) -> str:
        return self.lm.generate([Path(audio_path)], [prompt])[0]


def load_model(spec: str, **kwargs: Any) -> AudioLM:
    kind, _, rest = spec.partition(":")
    if kind == "qwen2audio":
        return Qwen2AudioModel(rest or None, **kwargs)
    if not rest:
        raise UserError(f"model spec {spec!r}: expected cmd:<program>, qwen2audio[:LOCATION] or py:<module>:<attr>")
    if kind == "cmd":
        return CommandModel(rest)
    if kind == "py":
        module, _, attr = rest.partition(":")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as err:
            raise UserError(f"model spec {spec!r}: {err}") from None
        model = obj if hasattr(obj, "generate") else obj()
        if not hasattr(model, "generate"):
            raise UserError(f"model spec {spec!r}: object has no generate(audio_path, prompt)")
        return model
    raise UserError(f"model spec {spec!r}: unknown kind {kind!r}; expected cmd, qwen2audio or py")


def run(directory: str | Path, model: AudioLM, out: str | Path, layers: tuple[str, ...] = LAYERS,
        prompts: str | Path | None = None, limit: int | None = None, progress: bool = False) -> int:
    """Generate one output per (sample, layer) and write {id, layer, output, set_fingerprint} rows to
    `out`. `prompts`: a prompts JSONL (refused when made from another set), or a prompt style
    ('project' or 'study') to generate them."""
    directory = Path(directory)
    manifest, rows = read_dataset(directory)
    fingerprint = set_fingerprint(directory)
    if prompts is not None and str(prompts) not in PROMPT_STYLES:
        read = read_jsonl(prompts, ("id", "layer", "audio", "prompt"))
        check_fingerprint(read, prompts, directory, "prompts",
                          f"write this set's prompts with `reasonaudio compose prompts {directory} --out FILE`")
        ids = {r["id"] for r in rows}
        stray = next((i for i, p in enumerate(read, 1) if p["id"] not in ids), None)
        if stray is not None:
            raise UserError(f"{prompts}, row {stray}: id {read[stray - 1]['id']!r} is not a sample of {directory}")
        prompt_rows = [p for p in read if p["layer"] in layers]
    else:
        style = str(prompts) if prompts is not None else "project"
        prompt_rows = [p for row in rows for p in make_prompts(manifest, row, layers, style)]
    if limit is not None:
        keep = {r["id"] for r in rows[:limit]}
        prompt_rows = [p for p in prompt_rows if p["id"] in keep]
    iterator = prompt_rows
    if progress:
        from reasonaudio.console import progress_bar as tqdm
        iterator = tqdm(prompt_rows, desc="compose run", unit="prompt")
    results = []
    for p in iterator:
        audio_path = str((directory / p["audio"]).resolve())
        output = model.generate(audio_path, p["prompt"])
        if not isinstance(output, str):
            raise UserError(f"model returned {type(output).__name__} for {p['id']} {p['layer']}; expected str")
        results.append({"id": p["id"], "layer": p["layer"], "output": output, FINGERPRINT: fingerprint})
    write_jsonl_atomic(out, results)
    return len(results)
