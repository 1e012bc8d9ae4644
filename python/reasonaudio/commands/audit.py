"""`reasonaudio audit`: a blind listening page for a benchmark, and the scoring of its answers.

  reasonaudio audit BENCH --out SITE [--per-task 50] [--seed S] [--extra K] [--hardlink]
      write a static site (open SITE/index.html, no server needed) with one card per sampled query:
      its text, its logic in plain words, and its two-option pair (plus K more clips that contain
      the query's sounds) in random order, each with a player, a spectrogram and the answers
      satisfies / does not / unsure. The site holds no key. Answers download as judgments.json.

  reasonaudio audit score JUDGMENTS.json [MORE.json ...] --bench BENCH [--out DIR] [--seed S]
      agreement of each listener with BENCH's relevance per task (bootstrap 95% intervals),
      Cohen's kappa between listeners, and the disputed (query, clip) pairs with the
      `reasonaudio inspect` command for each; --out writes score.json and disputed.csv.

(A benchmark directory literally named `score` is given as `./score`.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from reasonaudio.commands.bounds import SEED, int_in
from reasonaudio.errors import UserError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "audit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="reasonaudio audit BENCH --out SITE [options]\n       reasonaudio audit score JUDGMENTS.json [MORE.json ...] --bench BENCH [options]",
    )
    parser.add_argument("paths", nargs="+", metavar="ARG", help="a benchmark directory, or `score` followed by judgments files")
    parser.add_argument("--out", type=Path, default=None, help="site directory (audit), or a directory for score.json and disputed.csv (score)")
    parser.add_argument("--per-task", type=int_in(1), default=None, metavar="N", help="queries sampled per task (default 50; all where a task has fewer)")
    parser.add_argument("--seed", type=SEED, default=0, help="sampling and clip-order seed (audit) or bootstrap seed (score), 0..2^32-1; default 0")
    parser.add_argument("--extra", type=int_in(0), default=None, metavar="K", help="clips shown beyond the two-option pair, drawn from clips with the query's sounds (default 0)")
    parser.add_argument("--force", action="store_true", help="replace an earlier SITE (audit), or an earlier score.json and disputed.csv in --out (score)")
    parser.add_argument("--hardlink", action="store_true", help="hard-link the audio into SITE instead of copying it (falls back to a copy across file systems)")
    parser.add_argument("--bench", type=Path, default=None, metavar="BENCH", help="(score) the benchmark the site was built from")
    parser.add_argument("--bootstrap", type=int_in(1, 20_000), default=None, metavar="B", help="(score) bootstrap resamples, 1..20,000 (each holds an index per card; default 2000)")
    parser.add_argument("--json", action="store_true", help="(score) print the full result as JSON instead of text")
    parser.set_defaults(func=run)


SCORE_FORMAT = "reasonaudio-audit-score/1"


def _score_outputs(out: Path):
    """score.json (a JSON object with its "format") and disputed.csv (its header) in `out`."""
    from reasonaudio.io.outputs import FileOutput, header_kind, json_kind

    return [
        FileOutput(out / "score.json", json_kind("audit score", SCORE_FORMAT)),
        FileOutput(out / "disputed.csv", header_kind("disputed-pairs table", "query_id,clip_id,task,text,benchmark,reason", prefix=True)),
    ]


def _refuse(options: dict[str, object], mode: str) -> None:
    """Options of the other form are refused rather than silently ignored."""
    given = [flag for flag, value in options.items() if value not in (None, False)]
    if given:
        raise UserError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to {mode}")


def _run_score(args: argparse.Namespace) -> int:
    from reasonaudio.audit.score import disputed_frame, score

    _refuse({"--per-task": args.per_task, "--extra": args.extra, "--hardlink": args.hardlink}, "`audit score`")
    if args.bench is None:
        raise UserError("audit score needs --bench BENCH, the benchmark the site was built from")
    files = args.paths[1:]
    if not files:
        raise UserError("audit score needs at least one judgments.json")
    if args.force and args.out is None:
        raise UserError("--force replaces an earlier score.json and disputed.csv in --out: give --out")
    import contextlib

    from reasonaudio.io.outputs import output_files

    with contextlib.ExitStack() as stack:
        if args.out is not None:  # claimed (checked and locked) before the scoring
            if args.out.exists() and not args.out.is_dir():
                raise UserError(f"--out {args.out}: exists and is not a directory")
            inputs = [args.bench, *files]
            json_tmp, csv_tmp = stack.enter_context(output_files(_score_outputs(args.out), inputs=inputs, force=args.force))
        result = score(files, args.bench, seed=args.seed, n_boot=2000 if args.bootstrap is None else args.bootstrap)
        if args.out is not None:
            json_tmp.write_text(json.dumps({"format": SCORE_FORMAT, **result.to_dict()}, indent=1, ensure_ascii=False) + "\n",
                                encoding="utf-8")
            disputed_frame(result).write_csv(csv_tmp)
    print(json.dumps(result.to_dict(), indent=1, ensure_ascii=False) if args.json else result.format_text())
    if args.out is not None and not args.json:
        print(f"wrote {args.out / 'score.json'} and {args.out / 'disputed.csv'}")
    return 0


def _run_site(args: argparse.Namespace) -> int:
    from reasonaudio.audit.site import build_site

    if len(args.paths) != 1:
        raise UserError(f"audit takes one benchmark directory, got {len(args.paths)} paths (to score judgments: audit score FILE... --bench BENCH)")
    if args.out is None:
        raise UserError("audit needs --out SITE, the directory to write the listening page into")
    if args.bench is not None:
        raise UserError("--bench belongs to `audit score`; to build a site give the benchmark as the first argument")
    _refuse({"--bootstrap": args.bootstrap, "--json": args.json}, "building a site (they are for `audit score`)")
    data = build_site(
        Path(args.paths[0]), args.out, per_task=50 if args.per_task is None else args.per_task, seed=args.seed,
        extra=0 if args.extra is None else args.extra, force=args.force, hardlink=args.hardlink,
    )
    n_clips = len({c["clip_id"] for card in data["cards"] for c in card["clips"]})
    from collections import Counter

    from reasonaudio.io.benchmark import TASKS

    tasks = Counter(card["task"] for card in data["cards"])
    per = ", ".join(f"{t} {tasks[t]}" for t in sorted(tasks, key=lambda t: (TASKS.index(t) if t in TASKS else len(TASKS), t)))
    print(f"wrote {args.out}: {len(data['cards'])} cards ({per}), {n_clips} clips, site id {data['site_id']}")
    print(f"open {(args.out / 'index.html').resolve().as_uri()}")
    return 0


def run(args: argparse.Namespace) -> int:
    return _run_score(args) if args.paths[0] == "score" else _run_site(args)
