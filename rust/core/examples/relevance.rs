//! The relevance engine on its own, as a program that embeds it would use it (it builds with
//! `default-features = false`: no synthesis, no C++ compiler). An events table of four clips is
//! indexed once; queries are compiled against its label vocabulary and evaluated; the relevant
//! clips of each query are printed, then one query built in Rust and one malformed query.
//!
//!     cargo run -p reasonaudio-core --no-default-features --example relevance
use reasonaudio_core::annotate::{compile_queries, EventIndex, Events};
use reasonaudio_core::logic::{Constraint, Logic, Vocabulary};

/// Ticks per second of `onset` / `offset` (a sample rate would do as well).
const RATE: f64 = 100.0;

fn main() {
    let vocab = Vocabulary::new(&["dog_bark", "siren", "rain", "door_knock"]).expect("distinct labels");
    // (clip, label, onset s, offset s)
    let rows: [(u32, &str, f64, f64); 9] = [
        (0, "dog_bark", 0.0, 2.0),
        (0, "siren", 3.0, 8.0),
        (1, "siren", 0.0, 4.0),
        (1, "dog_bark", 1.0, 2.5),
        (2, "rain", 0.0, 10.0),
        (2, "door_knock", 4.0, 4.6),
        (3, "door_knock", 0.5, 1.0),
        (3, "door_knock", 6.0, 6.5),
        (3, "dog_bark", 2.0, 3.0),
    ];
    let clip: Vec<u32> = rows.iter().map(|r| r.0).collect();
    let label: Vec<u32> = rows.iter().map(|r| vocab.id(r.1).expect("label in the vocabulary")).collect();
    let ticks = |s: f64| (s * RATE).round() as i64;
    let onset: Vec<i64> = rows.iter().map(|r| ticks(r.2)).collect();
    let offset: Vec<i64> = rows.iter().map(|r| ticks(r.3)).collect();
    let events = Events { clip: &clip, label: &label, onset: &onset, offset: &offset };
    let index = EventIndex::build(&events, 4, vocab.len(), RATE).expect("a valid events table");

    let queries = [
        ("bark_then_siren", r#"{"all": [{"before": ["dog_bark", "siren"]}]}"#),
        ("bark_during_siren", r#"{"all": [{"overlap": ["siren", "dog_bark"]}]}"#),
        ("knock_without_rain", r#"{"all": [{"has": "door_knock"}, {"not": "rain"}]}"#),
        ("long_siren", r#"{"all": [{"duration": {"label": "siren", "min_s": 4.5}}]}"#),
        ("thunder", r#"{"all": [{"has": "thunder"}]}"#),
    ];
    let ids: Vec<&str> = queries.iter().map(|q| q.0).collect();
    let logic: Vec<&str> = queries.iter().map(|q| q.1).collect();
    let compiled = compile_queries(&vocab, &ids, &logic).expect("valid logic");
    let relevance = index.annotate(&compiled, 0).expect("evaluated");
    println!("{} clips, {} events, {} relevant pairs", index.n_clips(), index.n_events(), relevance.n_pairs());
    for (q, id) in ids.iter().enumerate() {
        println!("{id:>20}: clips {:?}", relevance.clips_of(q));
    }

    // Logic built in Rust instead of parsed: a knock that is followed by a bark.
    let built = Logic {
        query_id: "knock_then_bark".into(),
        constraints: vec![Constraint::Before("door_knock".into(), "dog_bark".into())],
    };
    println!("{:>20}: clips {:?}", built.query_id, index.relevant_clips(&built.compile(&vocab)));

    // Malformed logic is refused with the query, the constraint and what was expected.
    let err = Logic::parse("typo", r#"{"all": [{"has": "rain"}, {"befor": ["rain", "siren"]}]}"#).unwrap_err();
    println!("error: {err}");
}
