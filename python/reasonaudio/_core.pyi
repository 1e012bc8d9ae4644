__version__: str

# --- resample (owner: atoms) ---
import numpy as np
import numpy.typing as npt

def resample(x: npt.NDArray[np.float32], sr_in: int, sr_out: int) -> npt.NDArray[np.float32]:
    """Band-limited, delay-compensated resampling; returns round(len(x) * sr_out / sr_in) samples."""
