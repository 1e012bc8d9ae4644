"""Building a benchmark (contract §4): `config` (every parameter), `corpus` (clip plans and hard
negatives), `plan` (everything decided before rendering), `render` (clip ranges through the core),
`tables` (tables, BEIR, manifest), `shard` (a clip range per process, saved plans, merge), `ray`
(ranges on a Ray cluster), and `run`, the one place that decides where rendering happens.

Within the package imports run one way: run → shard / ray → render / tables → plan → corpus →
config."""

from reasonaudio.builder.config import AUDIO_FORMATS, BuildConfig
from reasonaudio.builder.plan import BuildPlan
from reasonaudio.builder.run import Built, build, plan_build
from reasonaudio.builder.shard import load_plan, merge, parse_shard, save_plan, shard_range

__all__ = ["AUDIO_FORMATS", "BuildConfig", "BuildPlan", "Built", "build", "plan_build", "load_plan", "merge", "parse_shard", "save_plan", "shard_range"]
