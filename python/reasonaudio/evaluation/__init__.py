"""Measuring models on a benchmark: `run` (rankings, metrics, the two-option test of one model),
`metrics` (Acc@1, nDCG@k, R@k, MRR, bootstrap intervals), `report` (markdown, JSON, figures) and
`mteb` (the benchmark as mteb tasks)."""
