"""`reasonaudio models`: every model spec, what it needs, whether its packages are importable and its pinned
Hub weights are in the Hugging Face cache; `--download SPEC|PARADIGM|all` fetches weights ahead of time."""

from __future__ import annotations

import argparse
import json

from reasonaudio.retrieval.registry import PARADIGMS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "models",
        description="List every retrieval adapter: the spec to pass to `reasonaudio eval --model`, the study's "
        "model it reproduces, what it needs (GPU memory, sample rate, longest audio it sees) and whether "
        "its Python packages are importable here, with the Hub repositories it loads (pinned revision) and "
        "whether each is in the Hugging Face cache. --download fetches them ahead of time (for machines "
        "whose GPU nodes have no network: run it where there is one, then copy the cache).",
    )
    parser.add_argument("--paradigm", choices=list(PARADIGMS), help="only this paradigm")
    parser.add_argument("--json", action="store_true", help="one JSON list instead of the text listing")
    parser.add_argument("--download", metavar="WHAT",
                        help="fetch into the HF cache: a model spec, an ORG/NAME[@REV] or hf://datasets/ORG/NAME[@REV], "
                             f"a paradigm ({', '.join(PARADIGMS)}) or all; prints each repository's size")
    parser.set_defaults(func=run)


def status(card) -> str:
    if not card.available:
        return "not available (docs/models.md, The study's models, says why)"
    missing = card.missing()
    if not missing:
        return "importable"
    hint = f"pip install 'reasonaudio[{card.extra}]'" if card.extra else "install it in an environment of its own"
    return f"missing {', '.join(missing)} ({hint})"


def cache_status(card) -> list[str]:
    """One phrase per pinned Hub repository of an entry: in the cache (and its size) or not."""
    from reasonaudio.io.hub_cache import HubRef, cached, human_bytes

    out = []
    for pin in card.hub:
        hit = cached(HubRef(pin.repo, pin.revision), allow=pin.files)
        state = f"cached, {human_bytes(hit.bytes)}" if hit else "not cached"
        out.append(f"{pin.repo}@{pin.revision[:12]} ({pin.role}): {state}")
    return out


def download_targets(what: str) -> list[tuple[str, object]]:
    """(label, HubRef with its file patterns) for a spec, a repo id, a dataset URI, a paradigm or all."""
    from reasonaudio.errors import UserError
    from reasonaudio.io.hub_cache import HubRef, parse_dataset, parse_repo
    from reasonaudio.retrieval.catalog import cards
    from reasonaudio.retrieval.registry import entries, lookup, pin
    from reasonaudio.retrieval.spec import split_part, split_two_stage

    def pins_of(metas) -> list[tuple[str, object]]:
        return [(f"{m.name} ({p.role})", (HubRef(p.repo, p.revision), p.files)) for m in metas for p in m.hub]

    dataset = parse_dataset(what)
    if dataset is not None:
        return [(str(dataset), (dataset, None))]
    if what == "all":
        return pins_of(cards())
    if what in PARADIGMS:
        return pins_of(cards(what))
    parsed = parse_repo(what)
    if parsed is not None and ":" not in what:
        known = pin(parsed[0])
        revision = parsed[1] or (known.revision if known else "main")
        return [(parsed[0], (HubRef(parsed[0], revision), known.files if known else None))]
    meta, argument = lookup(what)
    if meta.parts:  # two-stage: each part's value, or its entry's default repository
        targets = []
        for kind, text in zip(meta.parts, split_two_stage(argument) or ()):
            name, value = split_part(text)
            part = next((m for m in entries(kind) if m.name == name), None)
            targets += download_targets(value.split(",")[0]) if value and parse_repo(value.split(",")[0]) else pins_of(
                [part] if part else [])
        return targets
    head = (argument or "").split(",")[0]
    if head and parse_repo(head):
        return download_targets(head)
    if not meta.hub:
        raise UserError(f"--download {what}: {meta.name} loads nothing from the Hugging Face Hub")
    return pins_of([meta])


def download(what: str, offline: bool = False) -> int:
    from reasonaudio.io.hub_cache import human_bytes, resolve, weight_patterns

    total = 0
    for label, (ref, files) in download_targets(what):
        if ref.repo_type == "dataset":
            fetched = resolve(ref, offline=offline)
        else:
            fetched = resolve(ref, allow=files, ignore=weight_patterns(), offline=offline, dedupe_pickles=files is None)
        total += fetched.bytes
        print(f"{ref.repo_id}@{fetched.commit[:12]}  {human_bytes(fetched.bytes):>9}  {label}  {fetched.path}")
    print(f"total {human_bytes(total)} in the Hugging Face cache")
    return 0


def run(args: argparse.Namespace) -> int:
    from reasonaudio.retrieval.catalog import cards

    if args.download:
        return download(args.download)
    entries = cards(args.paradigm)
    if args.json:
        print(json.dumps([{**c.as_dict(), "status": status(c), "cache": cache_status(c)} for c in entries], indent=2))
        return 0
    print("GPU memory figures are estimates from parameter counts (bf16/fp16 weights), not measurements.\n")
    for c in entries:
        title = c.paradigm + (f" · {c.study}" if c.study else "")
        print(c.spec)
        print(f"    {title}")
        print(f"    needs: {c.vram} · audio at {c.sample_rate} · sees {c.max_audio}")
        if c.note:
            print(f"    {c.note}")
        if c.follows:
            print(f"    follows: {c.follows}")
        print(f"    packages: {status(c)}")
        for line in cache_status(c):
            print(f"    hub: {line}")
    return 0
