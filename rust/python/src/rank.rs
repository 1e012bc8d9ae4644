//! Bindings of `reasonaudio_core::rank`: canonical scores and rankings over float32 rows.
//!
//! Arrays are borrowed read-only (C-contiguous float32 rows, float64 norms from `unit_norms`);
//! the work runs with the GIL released on all cores (or `threads`), and Ctrl-C stops a ranking
//! between blocks of clips with `KeyboardInterrupt`. Bad shapes raise `ValueError`.
use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use reasonaudio_core::cancel::Cancel;
use reasonaudio_core::rank::{self, RankError, RankRequest, Vectors};

use crate::errors::interruptible;

fn rank_error(e: RankError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn rows<'a>(x: &'a PyReadonlyArray2<'_, f32>, what: &str) -> PyResult<(&'a [f32], usize, usize)> {
    let (n, d) = (x.shape()[0], x.shape()[1]);
    let s = x
        .as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be C-contiguous (use np.ascontiguousarray)")))?;
    Ok((s, n, d))
}

fn vectors<'a>(
    x: &'a PyReadonlyArray2<'_, f32>,
    norms: &'a PyReadonlyArray1<'_, f64>,
    what: &str,
) -> PyResult<Vectors<'a>> {
    let (s, n, d) = rows(x, what)?;
    let norms = norms.as_slice()?;
    if norms.len() != n {
        return Err(PyValueError::new_err(format!("{what}: {} norms for {n} rows", norms.len())));
    }
    Vectors::new(s, d, norms).map_err(rank_error)
}

fn in_pool<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    if threads == 0 {
        return Ok(work());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyValueError::new_err(format!("cannot start {threads} threads: {e}")))?;
    Ok(pool.install(work))
}

/// Canonical norms of float32 rows [n, d]: sqrt of the squares summed in dimension order.
/// Raises ValueError naming the first row with a NaN or infinite value.
#[pyfunction]
fn unit_norms<'py>(py: Python<'py>, x: PyReadonlyArray2<'py, f32>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (s, _, d) = rows(&x, "vectors")?;
    let out = py.detach(|| rank::norms(s, d)).map_err(rank_error)?;
    Ok(out.into_pyarray(py))
}

/// The canonical unit rows rounded once to float32 (zero rows stay zero).
#[pyfunction]
fn unit_rows_f32<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f32>,
    norms: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let v = vectors(&x, &norms, "vectors")?;
    let (n, d) = (v.len(), v.dim);
    let out = py.detach(|| rank::unit_rows_f32(&v));
    let arr = Array2::from_shape_vec((n, d), out).expect("n * d values");
    Ok(arr.into_pyarray(py))
}

/// Float32 rows [n, d] (C-contiguous) with their canonical norms (`unit_norms`): the queries or
/// the clips of a ranking, kept without copies and checked (contiguity, one norm per row) when made.
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct UnitRows {
    rows: Py<PyArray2<f32>>,
    norms: Py<PyArray1<f64>>,
}

/// A [`UnitRows`]'s arrays borrowed for one call.
struct Held<'py> {
    rows: PyReadonlyArray2<'py, f32>,
    norms: PyReadonlyArray1<'py, f64>,
}

impl UnitRows {
    fn held<'py>(&self, py: Python<'py>) -> PyResult<Held<'py>> {
        let busy = |e: numpy::BorrowError| PyValueError::new_err(format!("rows or norms: {e}"));
        let rows = self.rows.bind(py).try_readonly().map_err(busy)?;
        Ok(Held { rows, norms: self.norms.bind(py).try_readonly().map_err(busy)? })
    }
}

#[pymethods]
impl UnitRows {
    #[new]
    fn new(py: Python<'_>, rows: Bound<'_, PyArray2<f32>>, norms: Bound<'_, PyArray1<f64>>) -> PyResult<Self> {
        let kept = UnitRows { rows: rows.unbind(), norms: norms.unbind() };
        let held = kept.held(py)?;
        vectors(&held.rows, &held.norms, "rows")?;
        drop(held);
        Ok(kept)
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        PyUntypedArrayMethods::len(self.norms.bind(py))
    }
}

/// Canonical scores of the pairs (query_rows[i], clip_rows[i]) as float64.
#[pyfunction]
#[pyo3(signature = (queries, clips, query_rows, clip_rows, threads = 0))]
fn canonical_pair_scores<'py>(
    queries: &Bound<'py, UnitRows>,
    clips: &Bound<'py, UnitRows>,
    query_rows: PyReadonlyArray1<'py, i64>,
    clip_rows: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let py = queries.py();
    let (hq, hc) = (queries.get().held(py)?, clips.get().held(py)?);
    let q = vectors(&hq.rows, &hq.norms, "queries")?;
    let c = vectors(&hc.rows, &hc.norms, "clips")?;
    let (qi, ci) = (query_rows.as_slice()?, clip_rows.as_slice()?);
    let out = py.detach(|| in_pool(threads, || rank::pair_scores(&q, &c, qi, ci)))?.map_err(rank_error)?;
    Ok(out.into_pyarray(py))
}

/// (scores float64 [nq, k], clips int64 [nq, k], outranking int64 [nq]).
type Ranked<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<i64>>, Bound<'py, PyArray1<i64>>);

/// The canonical ranking of every query against every clip: the first `k` positions (k >= the
/// corpus size gives complete rankings), ordered by score descending then clip index ascending.
/// With `target_scores`/`target_clips` (one per query), `outranking[i]` counts the clips that
/// outrank that (score, clip) in query i's complete ranking; otherwise it is 0.
#[pyfunction]
#[pyo3(signature = (queries, clips, k, target_scores = None, target_clips = None, threads = 0))]
fn canonical_rank<'py>(
    queries: &Bound<'py, UnitRows>,
    clips: &Bound<'py, UnitRows>,
    k: usize,
    target_scores: Option<PyReadonlyArray1<'py, f64>>,
    target_clips: Option<PyReadonlyArray1<'py, i64>>,
    threads: usize,
) -> PyResult<Ranked<'py>> {
    let py = queries.py();
    let (hq, hc) = (queries.get().held(py)?, clips.get().held(py)?);
    let q = vectors(&hq.rows, &hq.norms, "queries")?;
    let c = vectors(&hc.rows, &hc.norms, "clips")?;
    let targets = match (&target_scores, &target_clips) {
        (Some(s), Some(c)) => Some((s.as_slice()?, c.as_slice()?)),
        (None, None) => None,
        _ => return Err(PyValueError::new_err("target_scores and target_clips go together")),
    };
    let req = RankRequest { k, targets };
    let nq = q.len();
    let out = interruptible(py, |flag| in_pool(threads, || rank::rank(&q, &c, req, Cancel::new(flag))))??
        .map_err(rank_error)?;
    let k = out.k;
    let scores = Array2::from_shape_vec((nq, k), out.scores).expect("nq * k scores");
    let clips = Array2::from_shape_vec((nq, k), out.clips).expect("nq * k clips");
    Ok((scores.into_pyarray(py), clips.into_pyarray(py), out.outranking.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<UnitRows>()?;
    m.add_function(wrap_pyfunction!(unit_norms, m)?)?;
    m.add_function(wrap_pyfunction!(unit_rows_f32, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_pair_scores, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_rank, m)?)?;
    Ok(())
}
