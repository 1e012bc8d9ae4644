"""The detector on real recordings from a source none of its training or model selection used.

    python benches/bench_detect_unheard.py --dir DIR --model detect:PACK [--clips 1000] [--queries-per-task 40]

The recordings are Tux Paint's stamp sounds (`sudo apt-get install tuxpaint-stamps-default`,
GPL-2+, Bill Kendrick and the Tux Paint contributors): animals, a few instruments and a camera,
recorded by other people with other microphones than any recording of `atoms pack debian` or
`atoms pack debian-extra` (the tuxpaint packages are among the packages those libraries reserve for
such a test, RESERVED_PACKAGES). UNHEARD below maps each file to a label of the pack's vocabulary,
only where the stamp's animal or object makes that sound; the phrase is the pack's own, so every
query parses over a pack-trained detector's vocabulary. Each stage runs the CLI and is skipped when
its output exists:

    DIR/labels.csv      the table below, as `atoms import --labels` reads it
    DIR/lib             atoms import /usr/share/tuxpaint/stamps --labels DIR/labels.csv
    DIR/bench           build --atoms DIR/lib (every recording a test exemplar)
    DIR/eval/{NAME}     eval DIR/bench --model random | structured | MODEL

and prints Acc@1 per task, Avg with its 95 % interval (bootstrap over queries) and two-option
accuracy per model. MODEL is what a user calls: `detect:PACK` trains (or reads from the cache) what
`detect train PACK` trains, the `auto` recipe.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from bench_detect_pack import TASKS, Stages, summary

from reasonaudio.atoms.sources.debian import read_pack_table
from reasonaudio.io.outputs import write_atomic

ROOT = Path("/usr/share/tuxpaint/stamps")
PACKAGE = "tuxpaint-stamps-default"
LICENSE = "GPL-2.0-or-later"
ATTRIBUTION = "Tux Paint stamps (tuxpaint-stamps-default), Bill Kendrick and contributors"
#: file under ROOT -> label of the pack's vocabulary (the stamp's own voice or sound)
UNHEARD = {
    "animals/birds/crow.ogg": "crow_caw",
    "animals/birds/duck.ogg": "duck_quack",
    "animals/birds/drake.ogg": "duck_quack",
    "animals/birds/gander.ogg": "goose_honk",
    "animals/birds/owl.ogg": "owl_hoot",
    "animals/birds/rooster.ogg": "rooster_crow",
    "animals/birds/blackbird.ogg": "bird_call",
    "animals/birds/lark.ogg": "bird_call",
    "animals/birds/cuckoo.ogg": "bird_call",
    "animals/mammals/bovines/cow.ogg": "cow_moo",
    "animals/mammals/bovines/cow_white.ogg": "cow_moo",
    "animals/mammals/bovines/sheep.ogg": "sheep_bleat",
    "animals/mammals/bovines/sheep_lamb.ogg": "sheep_bleat",
    "animals/mammals/bovines/ram.ogg": "sheep_bleat",
    "animals/mammals/dogs/dog.ogg": "dog_bark",
    "animals/mammals/equines/horse.ogg": "horse_neigh",
    "animals/mammals/apes/chimp.ogg": "monkeys_screeching",
    "seasonal/halloween/blackcat.ogg": "cat_meow",
    "animals/mammals/cats/lion.ogg": "growl",
    "animals/mammals/cats/tiger.ogg": "growl",
    "animals/mammals/bears/bear.ogg": "growl",
    "hobbies/music/percussion/cymbal_crash.ogg": "cymbal_crash",
    "hobbies/music/percussion/drum_tomtom_floor.ogg": "tom_drum",
    "hobbies/camera_35mm.ogg": "camera_shutter",
}


def labels_table() -> str:
    """UNHEARD as `atoms import --labels` reads it, with the pack's phrase of each label."""
    phrases: dict[str, str] = {}
    for row in read_pack_table():
        phrases.setdefault(row["label"], row["phrase"])
    missing = sorted({label for label in UNHEARD.values() if label not in phrases})
    if missing:
        raise SystemExit(f"labels outside the pack's vocabulary: {missing}")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["file", "label", "phrase", "license", "attribution", "split"])
    for file, label in sorted(UNHEARD.items()):
        w.writerow([file, label, phrases[label], LICENSE, ATTRIBUTION, "test"])
    return out.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--model", action="append", required=True, help="a --model spec to evaluate (repeatable), e.g. detect:PACK")
    ap.add_argument("--clips", type=int, default=1000)
    ap.add_argument("--queries-per-task", type=int, default=40)
    args = ap.parse_args()
    missing = [f for f in UNHEARD if not (ROOT / f).is_file()]
    if missing:
        raise SystemExit(f"{ROOT / missing[0]} is missing: sudo apt-get install {PACKAGE}")
    root = args.dir
    root.mkdir(parents=True, exist_ok=True)
    stages = Stages(root)
    table = root / "labels.csv"
    if not table.exists():
        write_atomic(table, labels_table())
    lib = stages.run("import", root / "lib", ["atoms", "import", str(ROOT), "--labels", str(table), "--out", str(root / "lib"), "--quiet"])
    bench = stages.run("build", root / "bench", ["build", "--atoms", str(lib), "--out", str(root / "bench"), "--clips", str(args.clips),
                                                  "--queries-per-task", str(args.queries_per_task), "--exemplar-split", "test", "--quiet"])
    rows = {}
    for spec in ["random", "structured", *args.model]:
        name = spec.replace("/", "_").replace(":", "_")
        out = root / "eval" / name
        rows[spec] = summary(stages.run(f"eval_{name}", out, ["eval", str(bench), "--model", spec, "--out", str(out), "--quiet"]))
    print(f"\n{len(UNHEARD)} recordings of {len(set(UNHEARD.values()))} labels from {PACKAGE}; {args.clips} clips, "
          f"{len(TASKS) * args.queries_per_task} queries")
    print(f"{'model':40s} " + " / ".join(TASKS) + " | Avg Acc@1 [95 %] | two-option")
    for spec, r in rows.items():
        a = r["acc@1"]
        print(f"{spec:40s} " + " / ".join(f"{100 * a[t]:.1f}" for t in TASKS)
              + f" | {100 * a['Avg']:.1f} [{100 * r['acc@1_ci'][0]:.1f}, {100 * r['acc@1_ci'][1]:.1f}] | {100 * r['two_option']:.1f}")
    write_atomic(root / "summary.json", json.dumps({"recordings": len(UNHEARD), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
