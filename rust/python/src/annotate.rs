//! Binding of the relevance engine: an [`EventLabels`] table built once, JSON logic in, CSR out.
use numpy::{IntoPyArray, PyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;

use reasonaudio_core::annotate::{relevance_cancellable, AnnotateError, Events, Queries};
use reasonaudio_core::cancel::Cancel;

use crate::columns::{keep, view};
use crate::errors::{self, interruptible};

fn annotate_error(e: AnnotateError) -> PyErr {
    match e {
        AnnotateError::Logic(_) => errors::LogicError::new_err(e.to_string()),
        AnnotateError::Events(_) => errors::EventError::new_err(e.to_string()),
        _ => errors::AnnotateError::new_err(e.to_string()),
    }
}

/// Labelled events of a corpus: per event its clip, label (an index into `labels`), onset and
/// offset in ticks (`rate` ticks per second), over `n_clips` clips. Columns are kept without
/// copies, keyword-only, and checked for dtype and length when the table is made.
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct EventLabels {
    clip: Py<PyArray1<u32>>,
    label: Py<PyArray1<u32>>,
    onset: Py<PyArray1<i64>>,
    offset: Py<PyArray1<i64>>,
    n_clips: usize,
    rate: f64,
    labels: Vec<String>,
}

#[pymethods]
impl EventLabels {
    #[new]
    #[pyo3(signature = (*, clip, label, onset, offset, n_clips, rate, labels))]
    fn new(
        clip: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        onset: &Bound<'_, PyAny>,
        offset: &Bound<'_, PyAny>,
        n_clips: usize,
        rate: f64,
        labels: Vec<String>,
    ) -> PyResult<Self> {
        let table = EventLabels {
            clip: keep(clip, "clip", "uint32")?,
            label: keep(label, "label", "uint32")?,
            onset: keep(onset, "onset", "int64")?,
            offset: keep(offset, "offset", "int64")?,
            n_clips,
            rate,
            labels,
        };
        let py = clip.py();
        let lens = [&table.label, &table.clip].map(|a| a.bind(py).len());
        let times = [&table.onset, &table.offset].map(|a| a.bind(py).len());
        if lens[0] != lens[1] || times.iter().any(|&n| n != lens[1]) {
            return Err(errors::EventError::new_err(format!(
                "event columns have different lengths: clip {}, label {}, onset {}, offset {}",
                lens[1], lens[0], times[0], times[1]
            )));
        }
        Ok(table)
    }
}

/// (indptr, clip_indices).
type Csr<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u32>>);

/// Relevant (query, clip) pairs as CSR: query q's clips are
/// `clip_indices[indptr[q]:indptr[q+1]]`, ascending. Raises LogicError naming the query and
/// constraint for malformed logic, EventError naming the event row for bad events (both
/// ValueErrors); Ctrl-C stops it with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (events, logic_json, query_ids = None, threads = 0))]
fn annotate_csr<'py>(
    events: &Bound<'py, EventLabels>,
    logic_json: Vec<String>,
    query_ids: Option<Vec<String>>,
    threads: usize,
) -> PyResult<Csr<'py>> {
    let py = events.py();
    let table = events.get();
    let ids: Vec<String> = match query_ids {
        Some(ids) => ids,
        None => (0..logic_json.len()).map(|i| format!("#{i}")).collect(),
    };
    let (clip, label, onset, offset) =
        (view(py, &table.clip)?, view(py, &table.label)?, view(py, &table.onset)?, view(py, &table.offset)?);
    let columns = Events {
        clip: clip.as_slice()?,
        label: label.as_slice()?,
        onset: onset.as_slice()?,
        offset: offset.as_slice()?,
    };
    let rel = interruptible(py, |flag| {
        let queries = Queries { ids: &ids, logic: &logic_json };
        relevance_cancellable(&columns, table.n_clips, table.rate, &table.labels, queries, threads, Cancel::new(flag))
    })?
    .map_err(annotate_error)?;
    Ok((rel.indptr.into_pyarray(py), rel.clip_indices.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EventLabels>()?;
    m.add_function(wrap_pyfunction!(annotate_csr, m)?)?;
    Ok(())
}
