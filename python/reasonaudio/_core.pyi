__version__: str

# --- resample (owner: atoms) ---
import numpy as np
import numpy.typing as npt

def resample(x: npt.NDArray[np.float32], sr_in: int, sr_out: int) -> npt.NDArray[np.float32]:
    """Band-limited, delay-compensated resampling; returns round(len(x) * sr_out / sr_in) samples."""

# --- procedural atoms (owner: atoms) ---
def procedural_atoms(
    sample_rate: int, seed: int = 0
) -> tuple[list[str], list[str], list[str], npt.NDArray[np.float32], npt.NDArray[np.uint64]]:
    """The embedded 200-atom library: (labels, phrases, families, flat audio, offsets[n+1]).

    Seed 0 is the default library; other seeds re-render random details (noise, hit timing)."""

def finish_atom(x: npt.NDArray[np.float32], sample_rate: int) -> npt.NDArray[np.float32]:
    """DC removal, 5 ms edge fades, RMS normalised to -20 dBFS, peaks limited to 0.9."""
