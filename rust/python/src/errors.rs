//! The boundary's two disciplines: core errors become the exception classes of
//! `reasonaudio.errors` by kind, and long calls run where Ctrl-C can stop them.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::prelude::*;

// The classes live in Python (python/reasonaudio/errors.py) so that Python code can raise and
// subclass them too; `init` below imports them once, at module import.
pyo3::import_exception!(reasonaudio.errors, PlanError);
pyo3::import_exception!(reasonaudio.errors, AnnotateError);
pyo3::import_exception!(reasonaudio.errors, LogicError);
pyo3::import_exception!(reasonaudio.errors, EventError);
pyo3::import_exception!(reasonaudio.errors, MixError);
pyo3::import_exception!(reasonaudio.errors, ColumnTypeError);
pyo3::import_exception!(reasonaudio.errors, AudioWriteError);
pyo3::import_exception!(reasonaudio.errors, ResampleError);
pyo3::import_exception!(reasonaudio.errors, AtomError);

/// Resolves, at module import, everything the bindings would otherwise look up lazily through
/// Python on first use. A lazy lookup runs Python code, where a pending Ctrl-C is raised; rust-numpy
/// and pyo3 treat a failure there as a panic ("Failed to access NumPy array API capsule"), so a
/// Ctrl-C that landed before the first numpy call of a process became a `PanicException`. Done
/// here, a failure is an ordinary exception of `import reasonaudio._core`.
pub fn init(py: Python<'_>) -> PyResult<()> {
    py.import("numpy")?;
    // The first array call loads numpy's C-API capsule (cached for the life of the process).
    numpy::PyArray1::<f32>::zeros(py, 0, false);
    py.import("reasonaudio.errors")?;
    let _ = (
        py.get_type::<PlanError>(),
        py.get_type::<AnnotateError>(),
        py.get_type::<LogicError>(),
        py.get_type::<EventError>(),
        py.get_type::<MixError>(),
        py.get_type::<ColumnTypeError>(),
        py.get_type::<AudioWriteError>(),
        py.get_type::<ResampleError>(),
        py.get_type::<AtomError>(),
    );
    Ok(())
}

/// A problem with what a render was given (columns, plan, scene, options): `MixError`.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    MixError::new_err(e.to_string())
}

/// A core render error by kind: a failed write is an `AudioWriteError`, the rest `MixError`.
pub fn mix_error(e: reasonaudio_core::mix::MixError) -> PyErr {
    match e {
        reasonaudio_core::mix::MixError::Write { .. } => AudioWriteError::new_err(e.to_string()),
        other => value_error(other),
    }
}

/// How often the calling thread looks for signals while the work runs.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `work` with the GIL released on a worker thread while the calling thread (Python's main
/// thread, where signal handlers run) checks for signals every `SIGNAL_POLL`. A signal whose
/// handler raises (Ctrl-C: `KeyboardInterrupt`) sets the flag `work` is given, waits for `work`
/// to notice it and return, and raises that exception. `work` should check the flag between
/// units of a few milliseconds; what it returns after the flag is set is discarded.
pub fn interruptible<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&AtomicBool) -> T + Send,
{
    let cancel = AtomicBool::new(false);
    py.detach(|| {
        std::thread::scope(|scope| {
            let (done, result) = mpsc::channel();
            let cancel = &cancel;
            let worker = scope.spawn(move || {
                // A closed channel means the caller already gave up on the result.
                let _ = done.send(work(cancel));
            });
            let mut interrupt = None;
            let out = loop {
                match result.recv_timeout(SIGNAL_POLL) {
                    Ok(out) => break Some(out),
                    // The worker panicked: `join` below hands the panic on.
                    Err(RecvTimeoutError::Disconnected) => break None,
                    Err(RecvTimeoutError::Timeout) if interrupt.is_none() => {
                        if let Err(err) = Python::attach(|py| py.check_signals()) {
                            cancel.store(true, Ordering::Relaxed);
                            interrupt = Some(err);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                }
            };
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
            match (interrupt, out) {
                (Some(err), _) => Err(err),
                (None, Some(out)) => Ok(out),
                (None, None) => unreachable!("the worker either sends its result or panics"),
            }
        })
    })
}
