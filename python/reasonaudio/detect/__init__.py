"""Sound-event detection for detect-then-reason retrieval (`--model detect:LIB_OR_MODEL`).

features (log-mel) [+ pretrained (optional aiSFX CNN embeddings)] -> model (frame tagger, model
file) -> data (training mixtures from the Rust planner and mixer) [+ augment (recording variants,
beds, rooms; opt-in)] -> train (reproducible by steps/batch/seed, validated on held-out
recordings, cached by library hash) -> enrol (few-shot labels as prototypes, no retraining) ->
infer (event index of a corpus) -> postprocess (median filter, thresholds, gaps) -> rank
(template grammar + Rust engine, graded score) -> metrics (SED metrics via sed_scores_eval) ->
errors (which perception error costs which task). torch is imported only inside the functions
that need it.
"""
