//! numpy columns at the boundary: every column is a contiguous 1-D array of one exact dtype,
//! borrowed without copies. A wrong dtype or shape raises `ColumnTypeError` (a `TypeError`), a
//! strided array `MixError`, each naming the column.
use numpy::{Element, PyArray1, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::errors::{ColumnTypeError, MixError};

/// `obj` as a contiguous 1-D numpy array of `T`, or the error that explains what was expected.
fn array<'a, 'py, T: Element>(
    obj: &'a Bound<'py, PyAny>,
    name: &str,
    dtype: &str,
) -> PyResult<&'a Bound<'py, PyArray1<T>>> {
    match obj.cast::<PyArray1<T>>() {
        Ok(a) if a.is_contiguous() => Ok(a),
        Ok(_) => Err(MixError::new_err(format!("{name} must be a contiguous array (use np.ascontiguousarray)"))),
        Err(_) => {
            let got = match (obj.getattr("dtype"), obj.getattr("ndim")) {
                (Ok(dt), Ok(nd)) => format!("a {nd}-D array of {dt}"),
                _ => format!("a {}", obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())),
            };
            Err(ColumnTypeError::new_err(format!("{name} must be a 1-D numpy array of {dtype}, got {got}")))
        }
    }
}

/// Borrows `obj` read-only for the length of one call.
pub(crate) fn column<'py, T: Element>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    dtype: &str,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    let a = array::<T>(obj, name, dtype)?;
    a.try_readonly().map_err(|e| MixError::new_err(format!("{name}: {e}")))
}

/// Keeps `obj` for a value object that lends it to later calls (see [`view`]).
pub(crate) fn keep<T: Element>(obj: &Bound<'_, PyAny>, name: &str, dtype: &str) -> PyResult<Py<PyArray1<T>>> {
    Ok(array::<T>(obj, name, dtype)?.clone().unbind())
}

/// [`keep`] for an optional column.
pub(crate) fn keep_optional<T: Element>(
    obj: Option<&Bound<'_, PyAny>>,
    name: &str,
    dtype: &str,
) -> PyResult<Option<Py<PyArray1<T>>>> {
    obj.map(|o| keep::<T>(o, name, dtype)).transpose()
}

/// Borrows a kept column read-only for the length of one call.
pub(crate) fn view<'py, T: Element>(py: Python<'py>, a: &Py<PyArray1<T>>) -> PyResult<PyReadonlyArray1<'py, T>> {
    a.bind(py).try_readonly().map_err(|e| MixError::new_err(format!("a column of the corpus: {e}")))
}

/// [`view`] for an optional column.
pub(crate) fn view_optional<'py, T: Element>(
    py: Python<'py>,
    a: &Option<Py<PyArray1<T>>>,
) -> PyResult<Option<PyReadonlyArray1<'py, T>>> {
    a.as_ref().map(|a| view(py, a)).transpose()
}

/// The slice of an optional borrowed column; empty where there is none.
pub(crate) fn slice_or_empty<'a, T: Element>(a: &'a Option<PyReadonlyArray1<'_, T>>) -> PyResult<&'a [T]> {
    match a {
        Some(a) => Ok(a.as_slice()?),
        None => Ok(&[]),
    }
}
