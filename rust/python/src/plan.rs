//! Bindings of `reasonaudio_core::plan`: plans come back as numpy columns.
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::plan::{self, ClipPlan, Pattern, PlanParams};

use crate::errors::{interruptible, PlanError};

fn plan_error(e: impl std::fmt::Display) -> PyErr {
    PlanError::new_err(e.to_string())
}

fn parse_params(params_json: &str) -> PyResult<PlanParams> {
    serde_json::from_str(params_json).map_err(|e| PlanError::new_err(format!("plan parameters: {e}")))
}

fn parse_pattern(pattern: &str) -> PyResult<Pattern> {
    match pattern {
        "sequential" => Ok(Pattern::Sequential),
        "overlap" => Ok(Pattern::Overlap),
        other => Err(PlanError::new_err(format!("pattern must be 'sequential' or 'overlap', got {other:?}"))),
    }
}

/// Clip plans as columns: per-event columns sorted by clip, per-clip columns.
#[derive(Default)]
struct Columns {
    ptr: Vec<u64>,
    clip: Vec<u32>,
    atom: Vec<u32>,
    onset: Vec<i64>,
    length: Vec<i64>,
    gain: Vec<f32>,
    mode: Vec<u8>,
    clip_length: Vec<i64>,
    pattern: Vec<u8>,
}

impl Columns {
    fn with_capacity(n_clips: usize, n_events: usize) -> Self {
        let mut ptr = Vec::with_capacity(n_clips + 1);
        ptr.push(0u64);
        Columns {
            ptr,
            clip: Vec::with_capacity(n_events),
            atom: Vec::with_capacity(n_events),
            onset: Vec::with_capacity(n_events),
            length: Vec::with_capacity(n_events),
            gain: Vec::with_capacity(n_events),
            mode: Vec::with_capacity(n_events),
            clip_length: Vec::with_capacity(n_clips),
            pattern: Vec::with_capacity(n_clips),
        }
    }

    fn push(&mut self, plan: &ClipPlan) {
        let i = self.clip_length.len() as u32;
        for e in &plan.events {
            self.clip.push(i);
            self.atom.push(e.atom);
            self.onset.push(e.onset);
            self.length.push(e.length);
            self.gain.push(e.gain_db);
            self.mode.push(e.mode as u8);
        }
        self.ptr.push(self.clip.len() as u64);
        self.clip_length.push(plan.length);
        self.pattern.push((plan.pattern == Pattern::Overlap) as u8);
    }

    fn into_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let out = PyDict::new(py);
        // shrinking first: the event columns were reserved for the most events a clip may have
        out.set_item("clip_event_ptr", shrunk(self.ptr).into_pyarray(py))?;
        out.set_item("ev_clip", shrunk(self.clip).into_pyarray(py))?;
        out.set_item("ev_atom", shrunk(self.atom).into_pyarray(py))?;
        out.set_item("ev_onset", shrunk(self.onset).into_pyarray(py))?;
        out.set_item("ev_length", shrunk(self.length).into_pyarray(py))?;
        out.set_item("ev_gain_db", shrunk(self.gain).into_pyarray(py))?;
        out.set_item("ev_mode", shrunk(self.mode).into_pyarray(py))?;
        out.set_item("clip_length", shrunk(self.clip_length).into_pyarray(py))?;
        out.set_item("clip_overlap", shrunk(self.pattern).into_pyarray(py))?;
        Ok(out)
    }
}

fn shrunk<T>(mut v: Vec<T>) -> Vec<T> {
    v.shrink_to_fit();
    v
}

fn columns<'py>(py: Python<'py>, plans: &[ClipPlan]) -> PyResult<Bound<'py, PyDict>> {
    let mut cols = Columns::with_capacity(plans.len(), plans.iter().map(|p| p.events.len()).sum());
    for plan in plans {
        cols.push(plan);
    }
    cols.into_dict(py)
}

/// Clips planned per block: a block's plans (a few hundred bytes a clip) are the only per-clip
/// structures alive besides the columns, whatever the corpus size.
const PLAN_BLOCK: u64 = 65_536;

/// Default planner parameters as JSON (the manifest records the JSON actually used).
#[pyfunction]
fn plan_params_default() -> String {
    serde_json::to_string(&PlanParams::default()).expect("serialisable")
}

/// Validate parameters and return them normalised (defaults filled in) together with the duration thresholds.
#[pyfunction]
fn plan_params_check(params_json: &str, n_atoms: usize) -> PyResult<(String, Vec<f64>)> {
    let params = parse_params(params_json)?;
    params.validate(n_atoms).map_err(plan_error)?;
    Ok((serde_json::to_string(&params).expect("serialisable"), params.duration_thresholds()))
}

#[pyfunction]
#[pyo3(signature = (native_lengths, n_clips, overlap_fraction, seed, params_json, threads=0, start=0, stop=None))]
#[allow(clippy::too_many_arguments)]
fn plan_corpus<'py>(
    py: Python<'py>,
    native_lengths: PyReadonlyArray1<'py, i64>,
    n_clips: u64,
    overlap_fraction: f64,
    seed: u64,
    params_json: &str,
    threads: usize,
    start: u64,
    stop: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let params = parse_params(params_json)?;
    let natives = native_lengths.as_slice()?.to_vec();
    let stop = stop.unwrap_or(n_clips);
    if start > stop || stop > n_clips {
        return Err(PlanError::new_err(format!("clips {start}..{stop} are not within a corpus of {n_clips}")));
    }
    let cols = interruptible(py, |flag| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| e.to_string())?;
        pool.install(|| {
            let n = usize::try_from(stop - start).map_err(|e| e.to_string())?;
            let mut cols = Columns::with_capacity(n, n.saturating_mul(params.max_events as usize));
            for lo in (start..stop).step_by(PLAN_BLOCK as usize) {
                let range = lo..(lo + PLAN_BLOCK).min(stop);
                let block = plan::plan_corpus_range(
                    &params,
                    &natives,
                    seed,
                    n_clips,
                    overlap_fraction,
                    range,
                    Cancel::new(flag),
                )
                .map_err(|e| e.to_string())?;
                block.iter().for_each(|p| cols.push(p));
            }
            Ok::<_, String>(cols)
        })
    })?
    .map_err(PlanError::new_err)?;
    cols.into_dict(py)
}

/// What one clip planned on purpose must hold, checked when made (an atom required twice, one both
/// required and excluded, bins not matching `required`: `PlanError`); `plan_clip` checks the rest
/// against the parameters and the library. Keyword-only: `required` and `excluded` are both lists
/// of atom indices.
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct ClipRequest {
    request: plan::ClipRequest,
}

#[pymethods]
impl ClipRequest {
    #[new]
    #[pyo3(signature = (*, required = vec![], ordered = false, excluded = vec![], required_bins = vec![], overlap_first_pair = false, n_events = None))]
    fn new(
        required: Vec<u32>,
        ordered: bool,
        excluded: Vec<u32>,
        required_bins: Vec<Option<usize>>,
        overlap_first_pair: bool,
        n_events: Option<u32>,
    ) -> PyResult<Self> {
        let request = plan::ClipRequest { required, ordered, excluded, required_bins, overlap_first_pair, n_events };
        request.check().map_err(plan_error)?;
        Ok(ClipRequest { request })
    }

    /// Atoms that must appear, in this temporal order when `ordered`.
    #[getter]
    fn required(&self) -> Vec<u32> {
        self.request.required.clone()
    }

    /// Whether the required atoms must appear in the order given.
    #[getter]
    fn ordered(&self) -> bool {
        self.request.ordered
    }

    /// Atoms that must not appear.
    #[getter]
    fn excluded(&self) -> Vec<u32> {
        self.request.excluded.clone()
    }

    /// Duration bin per required atom (None: any), or empty.
    #[getter]
    fn required_bins(&self) -> Vec<Option<usize>> {
        self.request.required_bins.clone()
    }

    /// In overlap clips: the first two required atoms overlap each other.
    #[getter]
    fn overlap_first_pair(&self) -> bool {
        self.request.overlap_first_pair
    }

    /// Number of events; drawn when None.
    #[getter]
    fn n_events(&self) -> Option<u32> {
        self.request.n_events
    }
}

/// Plans one clip from `(seed, key)` in `pattern` under `request` (same columns as `plan_corpus`).
#[pyfunction]
#[pyo3(signature = (native_lengths, params_json, request, *, pattern, seed, key))]
fn plan_clip<'py>(
    py: Python<'py>,
    native_lengths: PyReadonlyArray1<'py, i64>,
    params_json: &str,
    request: &Bound<'py, ClipRequest>,
    pattern: &str,
    seed: u64,
    key: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let params = parse_params(params_json)?;
    let pattern = parse_pattern(pattern)?;
    let plan = plan::plan_clip(&params, native_lengths.as_slice()?, seed, key, pattern, &request.get().request)
        .map_err(plan_error)?;
    columns(py, std::slice::from_ref(&plan))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(plan_params_default, m)?)?;
    m.add_function(wrap_pyfunction!(plan_params_check, m)?)?;
    m.add_function(wrap_pyfunction!(plan_corpus, m)?)?;
    m.add_class::<ClipRequest>()?;
    m.add_function(wrap_pyfunction!(plan_clip, m)?)?;
    Ok(())
}
