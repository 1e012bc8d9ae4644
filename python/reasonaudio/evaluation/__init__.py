"""Measuring models on a benchmark: `run` (rankings, metrics, the two-option test of one model),
`metrics` (Acc@1, nDCG@k, R@k, MRR, bootstrap intervals), `results` (a run's results directory),
`compare` (several runs side by side), `tables` and `figures` (what both draw) and `mteb` (the
benchmark as mteb tasks)."""
