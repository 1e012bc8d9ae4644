//! The value objects a render is given, built once on the Python side: an [`AudioBank`] (atoms,
//! beds or rooms), an [`EventTable`] (a plan's event and clip columns), a [`Scene`] (its [`Beds`],
//! [`Rooms`] and per-event changes), the [`Corpus`] that ties them together, and a [`Mixer`]
//! (sample rate, fades, ceiling).
//!
//! Each keeps its numpy arrays (no copies) and checks them once, when it is made: dtypes and
//! contiguity (`ColumnTypeError` / `MixError` naming the column), then what the columns say about
//! each other (`MixError` naming the column, row or clip). Keyword-only columns keep two `int64`
//! columns from trading places unnoticed. A render borrows the arrays read-only for its length;
//! the core checks every event and every clip's scene again as it renders.
use numpy::{Element, PyArray1, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;
use reasonaudio_core::mix::{AtomBank, EventColumns, MixOptions};
use reasonaudio_core::scene::render::{Corpus as CoreCorpus, SceneColumns};

use crate::columns::{keep, keep_optional, slice_or_empty, view, view_optional};
use crate::errors::{value_error, MixError};

type Ro<'py, T> = PyReadonlyArray1<'py, T>;

/// The length of a kept column.
fn rows<T: Element>(py: Python<'_>, a: &Py<PyArray1<T>>) -> usize {
    PyUntypedArrayMethods::len(a.bind(py))
}

/// Flat float32 audio of n sources and their offsets[n + 1] (source i is
/// `audio[offsets[i]:offsets[i + 1]]`).
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct AudioBank {
    audio: Py<PyArray1<f32>>,
    offsets: Py<PyArray1<u64>>,
    len: usize,
}

#[pymethods]
impl AudioBank {
    #[new]
    fn new(py: Python<'_>, audio: &Bound<'_, PyAny>, offsets: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bank =
            AudioBank { audio: keep(audio, "audio", "float32")?, offsets: keep(offsets, "offsets", "uint64")?, len: 0 };
        let len = BankView::of(py, &bank)?.bank()?.len();
        Ok(AudioBank { len, ..bank })
    }

    fn __len__(&self) -> usize {
        self.len
    }
}

/// A plan's events, sorted by clip (then onset), and every clip's length in samples.
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct EventTable {
    ev_clip: Py<PyArray1<u32>>,
    ev_atom: Py<PyArray1<u32>>,
    ev_onset: Py<PyArray1<i64>>,
    ev_length: Py<PyArray1<i64>>,
    ev_gain_db: Py<PyArray1<f32>>,
    clip_length: Py<PyArray1<i64>>,
}

#[pymethods]
impl EventTable {
    /// `ev_clip=None`: every event belongs to clip 0 (one clip).
    #[new]
    #[pyo3(signature = (*, ev_atom, ev_onset, ev_length, ev_gain_db, clip_length, ev_clip = None))]
    fn new(
        py: Python<'_>,
        ev_atom: &Bound<'_, PyAny>,
        ev_onset: &Bound<'_, PyAny>,
        ev_length: &Bound<'_, PyAny>,
        ev_gain_db: &Bound<'_, PyAny>,
        clip_length: &Bound<'_, PyAny>,
        ev_clip: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let ev_atom = keep::<u32>(ev_atom, "ev_atom", "uint32")?;
        let ev_clip = match ev_clip {
            Some(c) => keep(c, "ev_clip", "uint32")?,
            None => PyArray1::<u32>::zeros(py, rows(py, &ev_atom), false).unbind(),
        };
        let table = EventTable {
            ev_clip,
            ev_atom,
            ev_onset: keep(ev_onset, "ev_onset", "int64")?,
            ev_length: keep(ev_length, "ev_length", "int64")?,
            ev_gain_db: keep(ev_gain_db, "ev_gain_db", "float32")?,
            clip_length: keep(clip_length, "clip_length", "int64")?,
        };
        let v = EventView::of(py, &table)?;
        v.columns()?.clip_bounds(v.clip_length.as_slice()?.len()).map_err(value_error)?;
        Ok(table)
    }

    /// Number of clips.
    #[getter]
    fn n_clips(&self, py: Python<'_>) -> usize {
        rows(py, &self.clip_length)
    }

    /// Number of events.
    #[getter]
    fn n_events(&self, py: Python<'_>) -> usize {
        rows(py, &self.ev_atom)
    }
}

/// The background beds of a corpus: the sources (unit level) and, per clip, the bed index (-1:
/// none), the sample of the bed's loop the clip starts at, and the target SNR in dB.
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct Beds {
    bank: Py<AudioBank>,
    clip_bed: Py<PyArray1<i32>>,
    clip_bed_start: Py<PyArray1<i64>>,
    clip_snr_db: Py<PyArray1<f32>>,
}

#[pymethods]
impl Beds {
    #[new]
    #[pyo3(signature = (bank, *, clip_bed, clip_bed_start, clip_snr_db))]
    fn new(
        py: Python<'_>,
        bank: Py<AudioBank>,
        clip_bed: &Bound<'_, PyAny>,
        clip_bed_start: &Bound<'_, PyAny>,
        clip_snr_db: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let beds = Beds {
            bank,
            clip_bed: keep(clip_bed, "clip_bed", "int32")?,
            clip_bed_start: keep(clip_bed_start, "clip_bed_start", "int64")?,
            clip_snr_db: keep(clip_snr_db, "clip_snr_db", "float32")?,
        };
        let n = rows(py, &beds.clip_bed);
        let (starts, snrs) = (rows(py, &beds.clip_bed_start), rows(py, &beds.clip_snr_db));
        if starts != n || snrs != n {
            return Err(MixError::new_err(format!(
                "bed columns have different lengths: clip_bed {n}, clip_bed_start {starts}, clip_snr_db {snrs}"
            )));
        }
        Ok(beds)
    }
}

/// The rooms of a corpus: prepared responses (`room_prepare`) and, per clip, the room index (-1:
/// dry).
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct Rooms {
    bank: Py<AudioBank>,
    clip_room: Py<PyArray1<i32>>,
}

#[pymethods]
impl Rooms {
    #[new]
    #[pyo3(signature = (bank, *, clip_room))]
    fn new(bank: Py<AudioBank>, clip_room: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Rooms { bank, clip_room: keep(clip_room, "clip_room", "int32")? })
    }
}

/// What the clips are rendered in: beds, rooms and per-event speed (uint32 over SPEED_DEN), pitch
/// shift (int32 cents) and stretch (uint32 over STRETCH_DEN); each absent part is "none".
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct Scene {
    beds: Option<Py<Beds>>,
    rooms: Option<Py<Rooms>>,
    ev_speed: Option<Py<PyArray1<u32>>>,
    ev_pitch_cents: Option<Py<PyArray1<i32>>>,
    ev_stretch: Option<Py<PyArray1<u32>>>,
}

#[pymethods]
impl Scene {
    #[new]
    #[pyo3(signature = (*, beds = None, rooms = None, ev_speed = None, ev_pitch_cents = None, ev_stretch = None))]
    fn new(
        beds: Option<Py<Beds>>,
        rooms: Option<Py<Rooms>>,
        ev_speed: Option<&Bound<'_, PyAny>>,
        ev_pitch_cents: Option<&Bound<'_, PyAny>>,
        ev_stretch: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Scene {
            beds,
            rooms,
            ev_speed: keep_optional(ev_speed, "ev_speed", "uint32")?,
            ev_pitch_cents: keep_optional(ev_pitch_cents, "ev_pitch_cents", "int32")?,
            ev_stretch: keep_optional(ev_stretch, "ev_stretch", "uint32")?,
        })
    }
}

/// Everything a render reads: the atoms, the events and the scene (None: the clean mixer's).
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct Corpus {
    atoms: Py<AudioBank>,
    events: Py<EventTable>,
    scene: Option<Py<Scene>>,
}

#[pymethods]
impl Corpus {
    #[new]
    #[pyo3(signature = (atoms, events, scene = None))]
    fn new(py: Python<'_>, atoms: Py<AudioBank>, events: Py<EventTable>, scene: Option<Py<Scene>>) -> PyResult<Self> {
        let corpus = Corpus { atoms, events, scene };
        CorpusView::of(py, &corpus)?.corpus()?.check_columns().map_err(value_error)?;
        Ok(corpus)
    }

    /// Number of clips.
    #[getter]
    fn n_clips(&self, py: Python<'_>) -> usize {
        self.events.get().n_clips(py)
    }
}

/// How clips are mixed: the sample rate, the fade at each event's edges, the crossfade at a
/// loop's seam and the limiter's ceiling.
#[pyclass(frozen, module = "reasonaudio._core")]
pub struct Mixer {
    pub(crate) options: MixOptions,
}

#[pymethods]
impl Mixer {
    #[new]
    #[pyo3(signature = (sample_rate, *, fade_ms = 5.0, crossfade_ms = 50.0, ceiling = 0.98))]
    fn new(sample_rate: i64, fade_ms: f64, crossfade_ms: f64, ceiling: f32) -> PyResult<Self> {
        let sr = u32::try_from(sample_rate)
            .ok()
            .filter(|&s| s > 0)
            .ok_or_else(|| MixError::new_err(format!("sample_rate must be a positive integer, got {sample_rate}")))?;
        Ok(Mixer { options: MixOptions::from_ms(sr, fade_ms, crossfade_ms, ceiling).map_err(value_error)? })
    }

    /// Samples per second.
    #[getter]
    fn sample_rate(&self) -> u32 {
        self.options.sample_rate
    }
}

/// A bank's arrays borrowed for one call.
struct BankView<'py> {
    audio: Ro<'py, f32>,
    offsets: Ro<'py, u64>,
}

impl<'py> BankView<'py> {
    fn of(py: Python<'py>, b: &AudioBank) -> PyResult<Self> {
        Ok(BankView { audio: view(py, &b.audio)?, offsets: view(py, &b.offsets)? })
    }

    fn bank(&self) -> PyResult<AtomBank<'_>> {
        AtomBank::new(self.audio.as_slice()?, self.offsets.as_slice()?).map_err(value_error)
    }
}

/// An event table's arrays borrowed for one call.
struct EventView<'py> {
    clip: Ro<'py, u32>,
    atom: Ro<'py, u32>,
    onset: Ro<'py, i64>,
    length: Ro<'py, i64>,
    gain_db: Ro<'py, f32>,
    clip_length: Ro<'py, i64>,
}

impl<'py> EventView<'py> {
    fn of(py: Python<'py>, e: &EventTable) -> PyResult<Self> {
        Ok(EventView {
            clip: view(py, &e.ev_clip)?,
            atom: view(py, &e.ev_atom)?,
            onset: view(py, &e.ev_onset)?,
            length: view(py, &e.ev_length)?,
            gain_db: view(py, &e.ev_gain_db)?,
            clip_length: view(py, &e.clip_length)?,
        })
    }

    fn columns(&self) -> PyResult<EventColumns<'_>> {
        Ok(EventColumns {
            clip: self.clip.as_slice()?,
            atom: self.atom.as_slice()?,
            onset: self.onset.as_slice()?,
            length: self.length.as_slice()?,
            gain_db: self.gain_db.as_slice()?,
        })
    }
}

/// The beds' arrays borrowed for one call: the bank, then bed index, start and SNR per clip.
type BedsView<'py> = (BankView<'py>, Ro<'py, i32>, Ro<'py, i64>, Ro<'py, f32>);

/// A scene's arrays borrowed for one call.
struct SceneView<'py> {
    beds: Option<BedsView<'py>>,
    rooms: Option<(BankView<'py>, Ro<'py, i32>)>,
    ev_speed: Option<Ro<'py, u32>>,
    ev_pitch_cents: Option<Ro<'py, i32>>,
    ev_stretch: Option<Ro<'py, u32>>,
}

impl<'py> SceneView<'py> {
    fn of(py: Python<'py>, s: &Scene) -> PyResult<Self> {
        let beds = match &s.beds {
            Some(b) => {
                let b = b.get();
                Some((
                    BankView::of(py, b.bank.get())?,
                    view(py, &b.clip_bed)?,
                    view(py, &b.clip_bed_start)?,
                    view(py, &b.clip_snr_db)?,
                ))
            }
            None => None,
        };
        let rooms = match &s.rooms {
            Some(r) => Some((BankView::of(py, r.get().bank.get())?, view(py, &r.get().clip_room)?)),
            None => None,
        };
        Ok(SceneView {
            beds,
            rooms,
            ev_speed: view_optional(py, &s.ev_speed)?,
            ev_pitch_cents: view_optional(py, &s.ev_pitch_cents)?,
            ev_stretch: view_optional(py, &s.ev_stretch)?,
        })
    }

    fn columns(&self) -> PyResult<SceneColumns<'_>> {
        let mut scene = SceneColumns {
            ev_speed: slice_or_empty(&self.ev_speed)?,
            ev_pitch_cents: slice_or_empty(&self.ev_pitch_cents)?,
            ev_stretch: slice_or_empty(&self.ev_stretch)?,
            ..SceneColumns::EMPTY
        };
        if let Some((bank, bed, start, snr)) = &self.beds {
            scene.beds = bank.bank()?;
            scene.clip_bed = bed.as_slice()?;
            scene.clip_bed_start = start.as_slice()?;
            scene.clip_snr_db = snr.as_slice()?;
        }
        if let Some((bank, room)) = &self.rooms {
            scene.rooms = bank.bank()?;
            scene.clip_room = room.as_slice()?;
        }
        Ok(scene)
    }
}

/// A corpus's arrays borrowed for one call: [`CorpusView::corpus`] is what the core renders.
pub(crate) struct CorpusView<'py> {
    atoms: BankView<'py>,
    events: EventView<'py>,
    scene: Option<SceneView<'py>>,
}

impl<'py> CorpusView<'py> {
    pub(crate) fn of(py: Python<'py>, c: &Corpus) -> PyResult<Self> {
        Ok(CorpusView {
            atoms: BankView::of(py, c.atoms.get())?,
            events: EventView::of(py, c.events.get())?,
            scene: c.scene.as_ref().map(|s| SceneView::of(py, s.get())).transpose()?,
        })
    }

    pub(crate) fn corpus(&self) -> PyResult<CoreCorpus<'_>> {
        let clean = CoreCorpus::clean(self.atoms.bank()?, self.events.columns()?, self.events.clip_length.as_slice()?);
        Ok(match &self.scene {
            Some(s) => clean.in_scene(s.columns()?),
            None => clean,
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AudioBank>()?;
    m.add_class::<EventTable>()?;
    m.add_class::<Beds>()?;
    m.add_class::<Rooms>()?;
    m.add_class::<Scene>()?;
    m.add_class::<Corpus>()?;
    m.add_class::<Mixer>()?;
    Ok(())
}
