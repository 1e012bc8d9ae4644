//! Binding of the relevance engine: numpy event columns + JSON logic in, CSR out.
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use reasonaudio_core::annotate::{relevance_cancellable, AnnotateError, Events, Queries};
use reasonaudio_core::cancel::Cancel;

use crate::errors::{self, interruptible};

fn annotate_error(e: AnnotateError) -> PyErr {
    match e {
        AnnotateError::Logic(_) => errors::LogicError::new_err(e.to_string()),
        AnnotateError::Events(_) => errors::EventError::new_err(e.to_string()),
        _ => errors::AnnotateError::new_err(e.to_string()),
    }
}

/// (indptr, clip_indices).
type Csr<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u32>>);

/// Relevant (query, clip) pairs as CSR: query q's clips are
/// `clip_indices[indptr[q]:indptr[q+1]]`, ascending. Raises LogicError naming the query and
/// constraint for malformed logic, EventError naming the event row for bad events (both
/// ValueErrors); Ctrl-C stops it with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (ev_clip, ev_label, ev_onset, ev_offset, n_clips, rate, labels, logic_json, query_ids=None, threads=0))]
#[allow(clippy::too_many_arguments)]
fn annotate_csr<'py>(
    py: Python<'py>,
    ev_clip: PyReadonlyArray1<'py, u32>,
    ev_label: PyReadonlyArray1<'py, u32>,
    ev_onset: PyReadonlyArray1<'py, i64>,
    ev_offset: PyReadonlyArray1<'py, i64>,
    n_clips: usize,
    rate: f64,
    labels: Vec<String>,
    logic_json: Vec<String>,
    query_ids: Option<Vec<String>>,
    threads: usize,
) -> PyResult<Csr<'py>> {
    let ids: Vec<String> = match query_ids {
        Some(ids) => ids,
        None => (0..logic_json.len()).map(|i| format!("#{i}")).collect(),
    };
    let events = Events {
        clip: ev_clip.as_slice()?,
        label: ev_label.as_slice()?,
        onset: ev_onset.as_slice()?,
        offset: ev_offset.as_slice()?,
    };
    let rel = interruptible(py, |flag| {
        let queries = Queries { ids: &ids, logic: &logic_json };
        relevance_cancellable(&events, n_clips, rate, &labels, queries, threads, Cancel::new(flag))
    })?
    .map_err(annotate_error)?;
    Ok((rel.indptr.into_pyarray_bound(py), rel.clip_indices.into_pyarray_bound(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(annotate_csr, m)?)?;
    Ok(())
}
