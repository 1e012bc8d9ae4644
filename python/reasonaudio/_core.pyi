__version__: str

# --- annotate (owner: annotate.rs) ---
import numpy as _np
import numpy.typing as _npt

def annotate_csr(
    ev_clip: _npt.NDArray[_np.uint32],
    ev_label: _npt.NDArray[_np.uint32],
    ev_onset: _npt.NDArray[_np.int64],
    ev_offset: _npt.NDArray[_np.int64],
    n_clips: int,
    rate: float,
    labels: list[str],
    logic_json: list[str],
    query_ids: list[str] | None = None,
    threads: int = 0,
) -> tuple[_npt.NDArray[_np.uint64], _npt.NDArray[_np.uint32]]:
    """Relevant (query, clip) pairs as CSR: query q's clips are clip_indices[indptr[q]:indptr[q+1]],
    ascending. ev_label[i] indexes `labels`; onsets/offsets are ticks, `rate` ticks per second.
    Raises ValueError naming the query and constraint (malformed logic) or event row (bad events)."""
