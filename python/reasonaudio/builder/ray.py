"""Rendering on a Ray cluster (`build --ray ADDRESS|local`): the driver plans once, Ray tasks render
contiguous clip ranges on the workers and write the audio straight to the output's staging location,
the driver gathers each range's limiter statistics and writes the tables and the manifest.

Output stays byte-identical to one machine because a clip's bytes depend on its plan alone (not on
the task, the worker or the chunking) and the WAV/FLAC writer replaces files atomically, so a task
that Ray retries after its worker died rewrites the same bytes over any partial work.

The staging location must be reachable from every worker: a local path on one machine or a shared
filesystem, or a URI (s3://, gs://, file://) that fsspec opens on the workers.
"""

from __future__ import annotations

import math
import os

import numpy as np
from reasonaudio.console import progress_bar as tqdm

from reasonaudio.builder.plan import BuildPlan
from reasonaudio.builder.render import SCENE_REPORT, render_bank, render_range, scene_slice
from reasonaudio.errors import UserError
from reasonaudio.io import storage

# A test hook: the task rendering the middle range kills its own worker process once (when this
# marker file does not exist yet), so tests can check that Ray's retry yields the same output.
FAULT_ENV = "REASONAUDIO_RAY_FAULT_MARKER"
MAX_RETRIES = 3


def _ray():
    from reasonaudio.errors import require

    return require("ray", "ray", "--ray")


def _render_task(bank, sl, draws, rel_paths, audio_url, sample_rate, audio_format, fault_marker):
    report = render_range(bank, sl, draws, rel_paths, audio_url, sample_rate, audio_format, 1)
    if fault_marker and not os.path.exists(fault_marker):
        open(fault_marker, "w").close()
        os._exit(1)  # dies like a killed worker: after writing its files, before reporting back
    return report


def _check_written(audio_url: str, rel_paths: list[str]) -> None:
    """Every clip reached the staging location: a plain local path that some workers do not share
    would otherwise lose their clips silently."""
    fs, path = storage.location(audio_url)
    found = {p.rpartition("/")[2] for p in fs.find(path)}
    missing = [p for p in rel_paths if p.rpartition("/")[2] not in found]
    if missing:
        raise UserError(
            f"{len(missing)} of {len(rel_paths)} clips did not reach {audio_url} (first: {missing[0]}): with a "
            "multi-machine cluster, write to a shared filesystem or a URI every worker opens (s3://, gs://)"
        )


def task_chunk(n_clips: int, cpus: int) -> int:
    """Clips per task: about four tasks per CPU (load balance, retries cost little), at least 16
    clips so scheduling stays small next to rendering, at most 2,048 so a task's plan slice and
    results stay small."""
    return max(16, min(2048, math.ceil(n_clips / max(1, 4 * cpus))))


def render_on_ray(plan: BuildPlan, audio_url: str, address: str, progress: bool) -> tuple[np.ndarray, np.ndarray]:
    """Renders every clip of `plan` with Ray tasks into `audio_url`; returns peaks and gains (with a
    scene, the bed gains and event SNRs go to `plan.scene_report`, as `render_audio` leaves them)."""
    if audio_url.startswith("memory://"):
        raise UserError("--ray cannot write to memory://: that filesystem lives in one process, the workers cannot see it")
    ray = _ray()
    started_here = False
    if not ray.is_initialized():
        try:
            if address == "local":
                ray.init(num_cpus=plan.config.worker_threads, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as err:
            raise UserError(f"--ray {address}: cannot connect to a Ray cluster ({err})") from None
        started_here = True
    try:
        n = plan.n_clips
        cpus = int(ray.cluster_resources().get("CPU", 1))
        chunk = task_chunk(n, cpus)
        cfg = plan.config
        paths = plan.rel_paths
        bank = ray.put(render_bank(plan))
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_render_task)
        ranges = [(lo, min(n, lo + chunk)) for lo in range(0, n, chunk)]
        marker = os.environ.get(FAULT_ENV)
        faulty = len(ranges) // 2
        pending = {
            task.remote(bank, plan.slice(lo, hi), scene_slice(plan, lo, hi), paths[lo:hi], audio_url, cfg.sample_rate,
                        cfg.audio_format, marker if i == faulty else None): (lo, hi)
            for i, (lo, hi) in enumerate(ranges)
        }
        peaks = np.zeros(n, np.float64)
        gains = np.zeros(n, np.float64)
        ptr = plan.final["clip_event_ptr"]
        scene = {"bed_gain": np.zeros(n, np.float32), "ev_snr_db": np.zeros(int(ptr[n]), np.float32)} if plan.scene is not None else None
        try:
            with tqdm(total=n, desc=f"render ({cpus} Ray CPUs)", unit="clip", disable=not progress) as bar:
                while pending:
                    done, _ = ray.wait(list(pending), num_returns=1)
                    for ref in done:
                        lo, hi = pending.pop(ref)
                        report = ray.get(ref)
                        peaks[lo:hi] = report["peak"]
                        gains[lo:hi] = report["gain"]
                        if scene is not None:
                            scene["bed_gain"][lo:hi] = report["bed_gain"]
                            scene["ev_snr_db"][int(ptr[lo]) : int(ptr[hi])] = report["ev_snr_db"]
                        bar.update(hi - lo)
        except BaseException:
            # the staging area is about to be removed: tasks still running must not write into it
            for ref in pending:
                ray.cancel(ref, force=True)
            # and wait until they are gone: a task still writing after the clean-up would
            # recreate the staging directory
            if pending:
                ray.wait(list(pending), num_returns=len(pending), timeout=60)
            raise
        _check_written(audio_url, paths)
        if scene is not None:
            assert tuple(scene) == SCENE_REPORT
            plan.scene_report = scene  # type: ignore[attr-defined]
        return peaks, gains
    finally:
        if started_here:
            ray.shutdown()
