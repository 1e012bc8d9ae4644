"""The package as a packager and a user meet it: the wheel, its install, the embeddable crate's
compile and the CLI's start, each against a baseline measured in the same run.

  wheel    file name, size, tags, the extension's size, the shared libraries it needs and its newest
           glibc symbol (`readelf`/`objdump` where installed), the license files it carries
  install  a fresh venv each: `pip install WHEEL` timed, venv size and package count, against the
           same with pyarrow and matplotlib added (what the base install held before they became
           the `arrow` and `figures` extras); downloads from the package index, no pip cache
  crate    `cargo build --release -p reasonaudio-core` in an empty target directory: the relevance
           engine alone (`--no-default-features`, CC/CXX set to /bin/false) against every default
           feature; crates compiled, CPU (user + system of cargo and everything it ran), wall, peak RSS
  cli      `reasonaudio --help` and `--version`, median wall and CPU of `--repeats` interleaved runs,
           against building the whole parser (every command module imported) and a bare `python -c pass`;
           with the install part, also in the venv the wheel went into

    python benches/bench_package.py --wheel dist/reasonaudio-*.whl [--parts wheel,install,crate,cli] [--repeats 10]

The wheel comes from `scripts/build-wheel.sh` (not built here: it takes minutes). The CLI runs from
this interpreter and its PYTHONPATH unless the install part gives it an installed wheel too.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a venv sees only what is installed in it


def timed(cmd: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float, int]:
    """(result, wall s, CPU s of the command and every process it waited for, peak RSS in KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return done, wall, cpu, after.ru_maxrss


def du_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def part_wheel(wheel: Path) -> None:
    print(f"\n== wheel ({load()})")
    print(f"file        {wheel.name}")
    print(f"size        {wheel.stat().st_size:,} bytes ({wheel.stat().st_size / 2**20:.2f} MiB)")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/WHEEL"))
        tags = [line.split(":", 1)[1].strip() for line in z.read(meta).decode().splitlines() if line.startswith("Tag:")]
        print(f"tags        {', '.join(tags)}")
        print(f"licenses    {', '.join(n for n in names if '/licenses/' in n)}")
        ext = next(n for n in names if re.search(r"_core\.[^/]*\.so$", n))
        with tempfile.TemporaryDirectory() as tmp:
            so = Path(z.extract(ext, tmp))
            print(f"extension   {ext}: {so.stat().st_size:,} bytes")
            if shutil.which("readelf"):
                needed = re.findall(r"\(NEEDED\).*\[(.*)\]", subprocess.run(["readelf", "-d", so], capture_output=True, text=True).stdout)
                print(f"needs       {', '.join(needed)}")
            if shutil.which("objdump"):
                versions = set(re.findall(r"GLIBC_(\d+(?:\.\d+)*)", subprocess.run(["objdump", "-T", so], capture_output=True, text=True).stdout))
                newest = max(versions, key=lambda v: tuple(int(x) for x in v.split(".")), default="none")
                print(f"newest glibc symbol  GLIBC_{newest}")


def part_install(wheel: Path, work: Path) -> Path:
    print(f"\n== install into a fresh venv, no pip cache ({load()})")
    rows = []
    base_venv = work / "base"
    for label, venv, extra in (("the wheel (base install)", base_venv, []),
                               ("the wheel + pyarrow + matplotlib", work / "with-extras", ["pyarrow", "matplotlib"])):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        py = str(venv / "bin" / "python")
        empty = du_mb(venv)
        subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True, capture_output=True, env=CLEAN_ENV)
        _, wall, cpu, _ = timed([py, "-m", "pip", "install", "-q", "--no-cache-dir", str(wheel), *extra], env=CLEAN_ENV)
        listed = subprocess.run([py, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True, check=True,
                                env=CLEAN_ENV).stdout
        rows.append((label, wall, cpu, du_mb(venv), empty, len(listed.split())))
    for label, wall, cpu, size, empty, n in rows:
        print(f"{label:<34} install {wall:6.1f} s wall, {cpu:5.1f} s CPU   venv {size:6.0f} MB (empty {empty:.0f})   {n} packages")
    print(f"base install / with pyarrow+matplotlib: install time {rows[0][1] / rows[1][1]:.2f}, size {rows[0][3] / rows[1][3]:.2f}")
    return base_venv


def part_crate(work: Path) -> None:
    print(f"\n== reasonaudio-core, release, empty target directory each ({load()})")
    cargo = shutil.which("cargo")
    if cargo is None:
        print("cargo is not installed: skipped")
        return
    runs = (("relevance engine alone", ["--no-default-features"], {"CC": "/bin/false", "CXX": "/bin/false"}),
            ("default features (synthesis, scenes)", [], {}))
    results = []
    for label, flags, env in runs:
        target = work / f"target-{len(results)}"
        done, wall, cpu, rss = timed([cargo, "build", "--release", "--offline", "-p", "reasonaudio-core", *flags], cwd=ROOT,
                                     env={**os.environ, "CARGO_TARGET_DIR": str(target), **env})
        crates = len(re.findall(r"^\s*Compiling ", done.stderr, re.M))
        results.append((label, crates, cpu, wall, rss))
        shutil.rmtree(target, ignore_errors=True)
    for label, crates, cpu, wall, rss in results:
        print(f"{label:<38} {crates:3d} crates  CPU {cpu:6.1f} s  wall {wall:6.1f} s  peak RSS {rss / 2**20:.2f} GiB")
    print(f"engine alone / default: CPU {results[0][2] / results[1][2]:.2f}, crates {results[0][1]}/{results[1][1]}")


def part_cli(repeats: int, venv: Path | None) -> None:
    print(f"\n== CLI start, median of {repeats} interleaved runs ({load()})")
    pythons = [("this interpreter" + (" + PYTHONPATH" if os.environ.get("PYTHONPATH") else ""), sys.executable, dict(os.environ))]
    if venv is not None:
        pythons.append(("the installed wheel", str(venv / "bin" / "python"), CLEAN_ENV))
    for where, py, env in pythons:
        cases = {
            "reasonaudio --help": [py, "-m", "reasonaudio", "--help"],
            "reasonaudio --version": [py, "-m", "reasonaudio", "--version"],
            "whole parser (every command imported)": [py, "-c", "from reasonaudio.cli import build_parser; build_parser()"],
            "python -c pass": [py, "-c", "pass"],
        }
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        for _ in range(repeats):
            for name, cmd in cases.items():
                _, wall, cpu, _ = timed(cmd, cwd=tempfile.gettempdir(), env=env)
                times[name].append((wall, cpu))
        print(f"-- {where}")
        whole = statistics.median(w for w, _ in times["whole parser (every command imported)"])
        for name, samples in times.items():
            wall = statistics.median(w for w, _ in samples)
            cpu = statistics.median(c for _, c in samples)
            print(f"   {name:<40} wall {wall:6.3f} s  CPU {cpu:6.3f} s   / whole parser {wall / whole:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, help="the wheel of scripts/build-wheel.sh (parts wheel and install)")
    ap.add_argument("--parts", default="wheel,install,crate,cli")
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    if parts & {"wheel", "install"} and (args.wheel is None or not args.wheel.is_file()):
        sys.exit("--wheel WHEEL is needed for the wheel and install parts (scripts/build-wheel.sh builds it)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  commit {commit or '?'}  {os.cpu_count()} CPUs  {load()}")
    print(f"Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="bench-package-") as tmp:
        work = Path(tmp)
        if "wheel" in parts:
            part_wheel(args.wheel)
        venv = part_install(args.wheel, work) if "install" in parts else None
        if "crate" in parts:
            part_crate(work)
        if "cli" in parts:
            part_cli(args.repeats, venv)
    print(f"\n{load()}")


if __name__ == "__main__":
    main()
