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

fn columns<'py>(py: Python<'py>, plans: &[ClipPlan]) -> PyResult<Bound<'py, PyDict>> {
    let n_events: usize = plans.iter().map(|p| p.events.len()).sum();
    let mut ptr = Vec::with_capacity(plans.len() + 1);
    let (mut clip, mut atom, mut onset, mut length, mut gain, mut mode) = (
        Vec::with_capacity(n_events),
        Vec::with_capacity(n_events),
        Vec::with_capacity(n_events),
        Vec::with_capacity(n_events),
        Vec::with_capacity(n_events),
        Vec::with_capacity(n_events),
    );
    ptr.push(0u64);
    for (i, p) in plans.iter().enumerate() {
        for e in &p.events {
            clip.push(i as u32);
            atom.push(e.atom);
            onset.push(e.onset);
            length.push(e.length);
            gain.push(e.gain_db);
            mode.push(e.mode as u8);
        }
        ptr.push(clip.len() as u64);
    }
    let clip_length: Vec<i64> = plans.iter().map(|p| p.length).collect();
    let pattern: Vec<u8> = plans.iter().map(|p| (p.pattern == Pattern::Overlap) as u8).collect();
    let out = PyDict::new(py);
    out.set_item("clip_event_ptr", ptr.into_pyarray(py))?;
    out.set_item("ev_clip", clip.into_pyarray(py))?;
    out.set_item("ev_atom", atom.into_pyarray(py))?;
    out.set_item("ev_onset", onset.into_pyarray(py))?;
    out.set_item("ev_length", length.into_pyarray(py))?;
    out.set_item("ev_gain_db", gain.into_pyarray(py))?;
    out.set_item("ev_mode", mode.into_pyarray(py))?;
    out.set_item("clip_length", clip_length.into_pyarray(py))?;
    out.set_item("clip_overlap", pattern.into_pyarray(py))?;
    Ok(out)
}

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
#[pyo3(signature = (native_lengths, n_clips, overlap_fraction, seed, params_json, threads=0))]
fn plan_corpus<'py>(
    py: Python<'py>,
    native_lengths: PyReadonlyArray1<'py, i64>,
    n_clips: u64,
    overlap_fraction: f64,
    seed: u64,
    params_json: &str,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let params = parse_params(params_json)?;
    let natives = native_lengths.as_slice()?.to_vec();
    let plans = interruptible(py, |flag| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| e.to_string())?;
        pool.install(|| {
            plan::plan_corpus_cancellable(&params, &natives, seed, n_clips, overlap_fraction, Cancel::new(flag))
        })
        .map_err(|e| e.to_string())
    })?
    .map_err(PlanError::new_err)?;
    columns(py, &plans)
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
