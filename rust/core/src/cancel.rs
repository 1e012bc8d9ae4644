//! Cooperative cancellation of long calls: the caller holds a flag, the work checks it between
//! units of a few milliseconds (a clip, a query, an atom) and stops with an error. The Python
//! bindings set the flag when Ctrl-C arrives; Rust callers pass [`Cancel::NEVER`].
use std::sync::atomic::{AtomicBool, Ordering};

/// A read-only view of a cancellation flag (or of none).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cancel<'a>(Option<&'a AtomicBool>);

impl<'a> Cancel<'a> {
    /// Never cancelled: what the plain (non-`_cancellable`) functions use.
    pub const NEVER: Cancel<'static> = Cancel(None);

    /// A view of `flag`: storing `true` in it asks every call given this view to stop.
    pub fn new(flag: &'a AtomicBool) -> Self {
        Cancel(Some(flag))
    }

    /// Whether cancellation was asked for (never, for [`Cancel::NEVER`]).
    pub fn is_set(&self) -> bool {
        self.0.is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// The work stopped because its flag was set; whatever it had produced is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_is_seen() {
        let flag = AtomicBool::new(false);
        let c = Cancel::new(&flag);
        assert!(!c.is_set() && !Cancel::NEVER.is_set());
        flag.store(true, Ordering::Relaxed);
        assert!(c.is_set());
    }

    /// The relevance engine refuses to start (or stops) once its flag is set.
    #[test]
    fn set_flag_stops_annotation() {
        use crate::annotate;
        let flag = AtomicBool::new(true);
        let c = Cancel::new(&flag);
        let (clip, label, onset, offset) = ([0u32, 1], [0u32, 1], [0i64, 5], [10i64, 20]);
        let events = annotate::Events { clip: &clip, label: &label, onset: &onset, offset: &offset };
        let logic = [r#"{"all": [{"has": "a"}]}"#];
        let run = |c| {
            annotate::relevance_cancellable(
                &events,
                2,
                10.0,
                &["a", "b"],
                annotate::Queries { ids: &["q"], logic: &logic },
                1,
                c,
            )
        };
        assert_eq!(run(Cancel::NEVER).unwrap().clips_of(0), &[0]);
        assert!(matches!(run(c), Err(annotate::AnnotateError::Cancelled)));
    }

    /// Every long synthesis call refuses to start (or stops) once its flag is set, and writes nothing.
    #[cfg(feature = "scene")]
    #[test]
    fn set_flag_stops_every_synthesis_call() {
        use crate::{atoms, mix, plan, scene::render, wav::AudioFormat};
        let flag = AtomicBool::new(true);
        let c = Cancel::new(&flag);

        assert_eq!(atoms::procedural_library_cancellable(8000, 0, c), Err(Cancelled));

        let params = plan::PlanParams::default();
        let natives = vec![8000i64; 40];
        assert!(plan::plan_corpus_cancellable(&params, &natives, 1, 20, 0.5, Cancel::NEVER).is_ok());
        assert_eq!(plan::plan_corpus_cancellable(&params, &natives, 1, 20, 0.5, c), Err(plan::PlanError::Cancelled));

        let audio = vec![0.1f32; 100];
        let offsets = [0u64, 100];
        let bank = mix::AtomBank::new(&audio, &offsets).unwrap();
        let (ev_clip, ev_atom, ev_onset, ev_length, ev_gain) =
            ([0u32, 1], [0u32, 0], [0i64, 0], [100i64, 100], [0f32, 0.0]);
        let cols = mix::EventColumns {
            clip: &ev_clip,
            atom: &ev_atom,
            onset: &ev_onset,
            length: &ev_length,
            gain_db: &ev_gain,
        };
        let dir = std::env::temp_dir().join(format!("reasonaudio-cancel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = mix::numbered_paths(&dir, "c", 2, AudioFormat::Flac16);
        let opts = mix::MixOptions::from_ms(8000, 1.0, 1.0, 0.98).unwrap();
        let corpus = render::Corpus::clean(bank, cols, &[200, 200]);
        let out_opts = render::CorpusOptions { format: AudioFormat::Flac16, threads: 1, ..Default::default() };
        let out = render::render_corpus(&corpus, &paths, &opts, &out_opts, c);
        assert!(matches!(out, Err(mix::MixError::Cancelled)));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written after cancellation");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
