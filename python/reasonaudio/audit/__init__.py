"""Listening audit: a static, blind listening page for a benchmark and the scoring of its answers.

`build_site(bench, out, per_task=50, seed=0)` samples queries per task and writes a site that works
from `file://` (plain HTML/JS/CSS, card data embedded as a script, audio and spectrograms copied in).
The site never holds the key: which clip is relevant is recomputed by `score(judgments, bench)`
from the benchmark's own qrels.
"""

from reasonaudio.audit.score import AuditScore, score
from reasonaudio.audit.site import build_site, plain_logic

__all__ = ["AuditScore", "build_site", "plain_logic", "score"]
