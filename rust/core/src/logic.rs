//! Query logic: the contract's JSON (spec §2) parsed into a small IR, validated, and compiled
//! against a label vocabulary.
//!
//! Grammar accepted (v1), decided where the contract is silent:
//! - The top level must be `{"all": [c, ...]}` with at least one constraint. A bare constraint
//!   such as `{"has": "x"}` is rejected: the contract defines `logic` as a conjunction and every
//!   example wraps constraints in `all`; accepting two spellings would let files drift apart.
//!   Nested `all` is rejected for the same reason (flatten it).
//! - An empty `all` is rejected: it would make every clip relevant, which no task shape produces,
//!   so it is almost certainly a bug upstream.
//! - Each constraint is an object with exactly one key among `has`, `not`, `before`, `overlap`,
//!   `duration`. Labels are non-empty strings. `before` / `overlap` take a list of exactly two
//!   labels (they may be equal: with repeated events that is meaningful).
//! - `duration` takes `{"label": L, "min_s": x, "max_s": y}`; at least one bound, each a finite
//!   number >= 0 (JSON `null` means absent), and min_s <= max_s. Other keys are rejected.
//!
//! Errors name the query, the constraint index within `all` (0-based) and its JSON, and say
//! what was expected.
//!
//! With the `serde` feature, [`Logic`] and [`Constraint`] serialize to exactly this JSON and
//! deserialize through the same validation as [`Logic::parse`]; with the `schema` feature they
//! implement `schemars::JsonSchema`, whose output is committed as `docs/logic.schema.json`.
use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

/// One constraint of a conjunction, generic over how labels are represented
/// (`String` after parsing, `u32` label ids after compiling).
///
/// New kinds of constraint may join the grammar.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Constraint<L> {
    /// The clip has at least one event with this label.
    Has(L),
    /// The clip has no event with this label.
    Not(L),
    /// Some event of the first label ends no later than some event of the second starts.
    Before(L, L),
    /// Some event of the first label and some event of the second share a positive-length span.
    Overlap(L, L),
    /// Some event of `label` lasts at least `min_s` and at most `max_s` seconds (bounds inclusive).
    /// At least one bound is given, and `min_s <= max_s` when both are.
    Duration {
        /// The label whose events are measured.
        label: L,
        /// Shortest accepted length in seconds (finite, `>= 0`); `None`: no lower bound.
        #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
        min_s: Option<f64>,
        /// Longest accepted length in seconds (finite, `>= 0`); `None`: no upper bound.
        #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
        max_s: Option<f64>,
    },
}

impl<L> Constraint<L> {
    /// Labels the constraint needs present in a clip for it to hold (all but `not`).
    pub fn positive_labels(&self) -> Vec<&L> {
        match self {
            Constraint::Has(l) => vec![l],
            Constraint::Not(_) => vec![],
            Constraint::Before(a, b) | Constraint::Overlap(a, b) => vec![a, b],
            Constraint::Duration { label, .. } => vec![label],
        }
    }

    fn map_labels<M, F: FnMut(&L) -> M>(&self, mut f: F) -> Constraint<M> {
        match self {
            Constraint::Has(l) => Constraint::Has(f(l)),
            Constraint::Not(l) => Constraint::Not(f(l)),
            Constraint::Before(a, b) => Constraint::Before(f(a), f(b)),
            Constraint::Overlap(a, b) => Constraint::Overlap(f(a), f(b)),
            Constraint::Duration { label, min_s, max_s } => {
                Constraint::Duration { label: f(label), min_s: *min_s, max_s: *max_s }
            }
        }
    }
}

/// A parsed query: the conjunction of its constraints.
///
/// Its JSON form (contract §2, and its `serde` form) is `{"all": [constraint, ...]}`; the query
/// id is not part of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Logic {
    /// The query's id, used in error messages (empty when the logic was deserialized).
    pub query_id: String,
    /// The constraints, all of which a relevant clip satisfies (at least one).
    pub constraints: Vec<Constraint<String>>,
}

/// Malformed logic: which query, which constraint, what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct LogicError {
    /// The query whose logic is malformed.
    pub query_id: String,
    /// Index within `all` and the constraint's JSON, when the error is inside one constraint.
    pub constraint: Option<(usize, String)>,
    /// What was wrong and what was expected.
    pub message: String,
}

impl LogicError {
    /// The error without the query: `constraint 1 {...}: message`, or the message alone.
    fn detail(&self) -> String {
        match &self.constraint {
            Some((i, json)) => format!("constraint {i} {json}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for LogicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.constraint {
            Some(_) => write!(f, "query {}, {}", self.query_id, self.detail()),
            None => write!(f, "query {}: {}", self.query_id, self.message),
        }
    }
}

impl std::error::Error for LogicError {}

const KINDS: &str = "one of \"has\", \"not\", \"before\", \"overlap\", \"duration\"";

/// Shortens a constraint's JSON for error messages so one huge value cannot flood a terminal.
fn excerpt(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        let head: String = s.chars().take(117).collect();
        format!("{head}...")
    } else {
        s
    }
}

fn label_of(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        Value::String(_) => Err("expected a non-empty label string, got \"\"".into()),
        other => Err(format!("expected a label string, got {}", excerpt(other))),
    }
}

fn label_pair(v: &Value) -> Result<(String, String), String> {
    match v {
        Value::Array(items) if items.len() == 2 => Ok((label_of(&items[0])?, label_of(&items[1])?)),
        Value::Array(items) => Err(format!("expected a list of two labels, got a list of {}", items.len())),
        other => Err(format!("expected a list of two labels, got {}", excerpt(other))),
    }
}

fn bound(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<f64>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let x = n.as_f64().ok_or_else(|| format!("{key} is not representable as a float"))?;
            if !x.is_finite() {
                Err(format!("expected {key} to be a finite number of seconds, got {n}"))
            } else if x < 0.0 {
                Err(format!("expected {key} >= 0 seconds, got {n}"))
            } else {
                Ok(Some(x))
            }
        }
        Some(other) => Err(format!("expected {key} to be a number of seconds, got {}", excerpt(other))),
    }
}

fn duration_of(v: &Value) -> Result<Constraint<String>, String> {
    let obj = match v {
        Value::Object(obj) => obj,
        other => {
            return Err(format!(
                "expected an object {{\"label\": ..., \"min_s\": ..., \"max_s\": ...}}, got {}",
                excerpt(other)
            ))
        }
    };
    if let Some(key) = obj.keys().find(|k| !matches!(k.as_str(), "label" | "min_s" | "max_s")) {
        return Err(format!("unknown key \"{key}\" in duration (expected \"label\", \"min_s\", \"max_s\")"));
    }
    let label = match obj.get("label") {
        Some(l) => label_of(l)?,
        None => return Err("duration needs a \"label\"".into()),
    };
    let min_s = bound(obj, "min_s")?;
    let max_s = bound(obj, "max_s")?;
    match (min_s, max_s) {
        (None, None) => Err("duration needs min_s or max_s (or both)".into()),
        (Some(lo), Some(hi)) if lo > hi => Err(format!("duration min_s ({lo}) is greater than max_s ({hi})")),
        _ => Ok(Constraint::Duration { label, min_s, max_s }),
    }
}

fn constraint_of(v: &Value) -> Result<Constraint<String>, String> {
    let obj = match v {
        Value::Object(obj) => obj,
        other => return Err(format!("expected an object with one key, {KINDS}; got {}", excerpt(other))),
    };
    if obj.len() != 1 {
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        return Err(format!("expected exactly one key, {KINDS}; got keys {keys:?}"));
    }
    let (kind, arg) = obj.iter().next().expect("one key");
    match kind.as_str() {
        "has" => Ok(Constraint::Has(label_of(arg)?)),
        "not" => Ok(Constraint::Not(label_of(arg)?)),
        "before" => label_pair(arg).map(|(a, b)| Constraint::Before(a, b)),
        "overlap" => label_pair(arg).map(|(a, b)| Constraint::Overlap(a, b)),
        "duration" => duration_of(arg),
        "all" => Err("nested \"all\" is not part of the v1 grammar; list its constraints directly".into()),
        other => Err(format!("unknown constraint \"{other}\", expected {KINDS}")),
    }
}

impl Logic {
    /// Parses and validates one query's logic JSON (contract §2).
    ///
    /// ```
    /// use reasonaudio_core::logic::{Constraint, Logic};
    /// let q = Logic::parse("q1", r#"{"all": [{"has": "dog_bark"}, {"not": "siren"}]}"#).unwrap();
    /// assert_eq!(q.constraints[1], Constraint::Not("siren".to_string()));
    /// let err = Logic::parse("q12", r#"{"all": [{"has": "a"}, {"before": "a"}]}"#).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     r#"query q12, constraint 1 {"before":"a"}: expected a list of two labels, got "a""#
    /// );
    /// ```
    pub fn parse(query_id: &str, json: &str) -> Result<Logic, LogicError> {
        let top_err = |message: String| LogicError { query_id: query_id.to_string(), constraint: None, message };
        let value: Value = serde_json::from_str(json).map_err(|e| top_err(format!("logic is not valid JSON ({e})")))?;
        Self::from_value(query_id, &value)
    }

    /// Same as [`Logic::parse`] for an already decoded JSON value.
    pub fn from_value(query_id: &str, value: &Value) -> Result<Logic, LogicError> {
        let top_err = |message: String| LogicError { query_id: query_id.to_string(), constraint: None, message };
        let obj = match value {
            Value::Object(obj) => obj,
            other => return Err(top_err(format!("expected an object {{\"all\": [...]}}, got {}", excerpt(other)))),
        };
        let items = match (obj.get("all"), obj.len()) {
            (Some(Value::Array(items)), 1) => items,
            (Some(other), 1) => {
                return Err(top_err(format!("expected \"all\" to be a list of constraints, got {}", excerpt(other))))
            }
            _ => {
                let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
                return Err(top_err(format!(
                    "expected exactly one top-level key \"all\" (wrap a single constraint as \
                     {{\"all\": [{{...}}]}}), got keys {keys:?}"
                )));
            }
        };
        if items.is_empty() {
            return Err(top_err("\"all\" is empty: a query needs at least one constraint".into()));
        }
        let constraints = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                constraint_of(item).map_err(|message| LogicError {
                    query_id: query_id.to_string(),
                    constraint: Some((i, excerpt(item))),
                    message,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Logic { query_id: query_id.to_string(), constraints })
    }

    /// Distinct labels the query mentions positively (`has`, `before`, `overlap`, `duration`),
    /// in order of first mention.
    pub fn positive_labels(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in &self.constraints {
            for l in c.positive_labels() {
                if !out.contains(&l.as_str()) {
                    out.push(l.as_str());
                }
            }
        }
        out
    }

    /// Resolves labels to ids. Labels the vocabulary lacks get [`Vocabulary::ABSENT`], an id
    /// no event carries: `has` on it is false and `not` true, as the contract's table says for
    /// a label with no events.
    pub fn compile(&self, vocab: &Vocabulary) -> CompiledQuery {
        let constraints: Vec<Constraint<u32>> =
            self.constraints.iter().map(|c| c.map_labels(|l| vocab.id(l).unwrap_or(Vocabulary::ABSENT))).collect();
        CompiledQuery::new(constraints)
    }
}

/// Label string -> dense id, as used by the events table.
///
/// ```
/// use reasonaudio_core::logic::Vocabulary;
/// let vocab = Vocabulary::new(&["dog_bark", "siren"]).unwrap();
/// assert_eq!(vocab.id("siren"), Some(1));
/// assert_eq!(vocab.id("rain"), None);
/// assert_eq!(vocab.label(0), Some("dog_bark"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    labels: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Vocabulary {
    /// Id that [`Logic::compile`] gives labels the vocabulary lacks: no event carries it, and no
    /// vocabulary is large enough to give it to a label.
    pub const ABSENT: u32 = u32::MAX;

    /// Builds a vocabulary where `labels[i]` has id `i`. Duplicate labels are an error: two ids
    /// for one label would split its events.
    pub fn new<S: AsRef<str>>(labels: &[S]) -> Result<Vocabulary, String> {
        if labels.len() >= Self::ABSENT as usize {
            return Err(format!("too many labels ({})", labels.len()));
        }
        let mut ids = HashMap::with_capacity(labels.len());
        for (i, l) in labels.iter().enumerate() {
            if let Some(prev) = ids.insert(l.as_ref().to_string(), i as u32) {
                return Err(format!("label vocabulary lists \"{}\" twice (ids {prev} and {i})", l.as_ref()));
            }
        }
        Ok(Vocabulary { labels: labels.iter().map(|l| l.as_ref().to_string()).collect(), ids })
    }

    /// The id of `label`, or `None` when the vocabulary lacks it.
    pub fn id(&self, label: &str) -> Option<u32> {
        self.ids.get(label).copied()
    }

    /// The label with id `id`, or `None` when `id` is out of range.
    pub fn label(&self, id: u32) -> Option<&str> {
        self.labels.get(id as usize).map(String::as_str)
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether the vocabulary has no label.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The labels in id order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }
}

/// A query ready for the engine: constraints over label ids, split by how they are evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledQuery {
    /// Distinct labels that must be present (sorted); their clip lists are intersected.
    pub required: Vec<u32>,
    /// Distinct labels that must be absent (sorted); their clip lists are subtracted.
    pub forbidden: Vec<u32>,
    /// Constraints that need the events themselves (`before`, `overlap`, `duration`).
    pub event_checks: Vec<Constraint<u32>>,
}

impl CompiledQuery {
    /// Splits compiled constraints into required labels, forbidden labels and event checks.
    pub fn new(constraints: Vec<Constraint<u32>>) -> CompiledQuery {
        let mut required = Vec::new();
        let mut forbidden = Vec::new();
        let mut event_checks = Vec::new();
        for c in constraints {
            required.extend(c.positive_labels().into_iter().copied());
            match c {
                Constraint::Has(_) => {}
                Constraint::Not(l) => forbidden.push(l),
                other => event_checks.push(other),
            }
        }
        required.sort_unstable();
        required.dedup();
        forbidden.sort_unstable();
        forbidden.dedup();
        CompiledQuery { required, forbidden, event_checks }
    }
}

/// The logic's JSON through serde: serializing writes the contract's form, deserializing goes
/// through the same validation (and error messages) as [`Logic::parse`].
#[cfg(feature = "serde")]
mod serde_impls {
    use serde::de::Error as _;
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    use super::{constraint_of, excerpt, Constraint, Logic};

    impl Serialize for Logic {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry("all", &self.constraints)?;
            map.end()
        }
    }

    /// The query id is not part of the JSON: it is left empty.
    impl<'de> Deserialize<'de> for Logic {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let value = Value::deserialize(deserializer)?;
            Logic::from_value("", &value).map_err(|e| D::Error::custom(e.detail()))
        }
    }

    impl<'de> Deserialize<'de> for Constraint<String> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let value = Value::deserialize(deserializer)?;
            constraint_of(&value).map_err(|m| D::Error::custom(format!("constraint {}: {m}", excerpt(&value))))
        }
    }
}

/// The JSON Schema of the logic format (`docs/logic.schema.json`). What a schema cannot say
/// (`min_s <= max_s`, finite numbers) [`Logic::parse`] still checks.
#[cfg(feature = "schema")]
mod schema_impls {
    use std::borrow::Cow;

    use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
    use serde_json::{json, Value};

    use super::{Constraint, Logic};

    impl JsonSchema for Logic {
        fn schema_name() -> Cow<'static, str> {
            "Logic".into()
        }

        fn json_schema(generator: &mut SchemaGenerator) -> Schema {
            json_schema!({
                "description": "A query's logic (reasonaudio benchmark contract, section 2): the conjunction of its constraints; a clip is relevant when it satisfies all of them.",
                "type": "object",
                "properties": {
                    "all": {
                        "type": "array",
                        "minItems": 1,
                        "items": generator.subschema_for::<Constraint<String>>(),
                    }
                },
                "required": ["all"],
                "additionalProperties": false,
            })
        }
    }

    /// `{kind: argument}`, the only key.
    fn variant(kind: &str, description: &str, argument: Value) -> Value {
        json!({
            "description": description,
            "type": "object",
            "properties": { kind: argument },
            "required": [kind],
            "additionalProperties": false,
        })
    }

    impl JsonSchema for Constraint<String> {
        fn schema_name() -> Cow<'static, str> {
            "Constraint".into()
        }

        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            let label = json!({"type": "string", "minLength": 1});
            let pair = json!({"type": "array", "prefixItems": [label, label], "minItems": 2, "maxItems": 2});
            let bound =
                |description: &str| json!({"description": description, "type": ["number", "null"], "minimum": 0});
            let duration = json!({
                "type": "object",
                "properties": {
                    "label": label,
                    "min_s": bound("Shortest accepted length in seconds (inclusive); null or absent: no lower bound."),
                    "max_s": bound("Longest accepted length in seconds (inclusive); null or absent: no upper bound; at least min_s."),
                },
                "required": ["label"],
                "anyOf": [{"required": ["min_s"]}, {"required": ["max_s"]}],
                "additionalProperties": false,
            });
            json_schema!({
                "description": "One constraint: an object with exactly one key naming its kind.",
                "oneOf": [
                    variant("has", "The clip has at least one event with this label.", label.clone()),
                    variant("not", "The clip has no event with this label.", label.clone()),
                    variant("before", "Some event of the first label ends no later than some event of the second starts.", pair.clone()),
                    variant("overlap", "Some event of the first label and some event of the second share a positive-length span.", pair),
                    variant("duration", "Some event of the label lasts at least min_s and at most max_s seconds.", duration),
                ],
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        Logic::parse("q12", json).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_kind() {
        let q = Logic::parse(
            "q",
            r#"{"all": [{"has": "a"}, {"not": "b"}, {"before": ["a", "c"]}, {"overlap": ["c", "a"]},
                {"duration": {"label": "a", "min_s": 4}}, {"duration": {"label": "a", "max_s": 2.5, "min_s": null}}]}"#,
        )
        .unwrap();
        assert_eq!(
            q.constraints,
            vec![
                Constraint::Has("a".into()),
                Constraint::Not("b".into()),
                Constraint::Before("a".into(), "c".into()),
                Constraint::Overlap("c".into(), "a".into()),
                Constraint::Duration { label: "a".into(), min_s: Some(4.0), max_s: None },
                Constraint::Duration { label: "a".into(), min_s: None, max_s: Some(2.5) },
            ]
        );
        assert_eq!(q.positive_labels(), vec!["a", "c"]);
    }

    #[test]
    fn precise_errors() {
        assert_eq!(
            err(r#"{"all": [{"has": "a"}, {"has": "b"}, {"before": ["a"]}]}"#),
            r#"query q12, constraint 2 {"before":["a"]}: expected a list of two labels, got a list of 1"#
        );
        assert!(err(r#"{"has": "a"}"#).contains("expected exactly one top-level key \"all\""));
        assert!(err(r#"{"all": []}"#).contains("\"all\" is empty"));
        assert!(err(r#"{"all": [{"has": "a"}], "any": []}"#).contains("got keys"));
        assert!(err("{\"all\": [").starts_with("query q12: logic is not valid JSON"));
        assert!(err(r#"{"all": [{"duration": {"label": "a"}}]}"#).ends_with("duration needs min_s or max_s (or both)"));
        assert!(err(r#"{"all": [{"duration": {"label": "a", "min_s": 3, "max_s": 2}}]}"#)
            .ends_with("duration min_s (3) is greater than max_s (2)"));
        assert!(err(r#"{"all": [{"duration": {"label": "a", "min_s": -1}}]}"#)
            .ends_with("expected min_s >= 0 seconds, got -1"));
        assert!(err(r#"{"all": [{"duration": {"label": "a", "max_s": "2"}}]}"#)
            .ends_with("expected max_s to be a number of seconds, got \"2\""));
        assert!(err(r#"{"all": [{"duration": {"label": "a", "max_s": 2, "mx": 1}}]}"#).contains("unknown key \"mx\""));
        assert!(err(r#"{"all": [{"sometimes": "a"}]}"#).contains("unknown constraint \"sometimes\""));
        assert!(err(r#"{"all": [{"has": "a", "not": "b"}]}"#).contains("expected exactly one key"));
        assert!(err(r#"{"all": [{"has": ""}]}"#).contains("non-empty label"));
        assert!(err(r#"{"all": [{"has": 3}]}"#).ends_with("expected a label string, got 3"));
        assert!(err(r#"{"all": [{"all": [{"has": "a"}]}]}"#).contains("nested \"all\""));
        // serde_json refuses NaN / Infinity, so non-finite bounds cannot get through.
        assert!(err(r#"{"all": [{"duration": {"label": "a", "min_s": NaN}}]}"#).contains("not valid JSON"));
        assert!(err(r#"{"all": [{"duration": {"label": "a", "min_s": 1e999}}]}"#).contains("out of range"));
    }

    #[test]
    fn compile_splits_and_marks_absent_labels() {
        let vocab = Vocabulary::new(&["a", "b"]).unwrap();
        let q = Logic::parse("q", r#"{"all": [{"has": "b"}, {"not": "zzz"}, {"before": ["a", "b"]}]}"#)
            .unwrap()
            .compile(&vocab);
        assert_eq!(q.required, vec![0, 1]);
        assert_eq!(q.forbidden, vec![Vocabulary::ABSENT]);
        assert_eq!(q.event_checks, vec![Constraint::Before(0, 1)]);
        assert!(Vocabulary::new(&["a", "a"]).is_err());
        assert_eq!((vocab.id("b"), vocab.id("zzz"), vocab.id("")), (Some(1), None, None));
        assert_eq!((vocab.label(1), vocab.label(2), vocab.label(Vocabulary::ABSENT)), (Some("b"), None, None));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_writes_the_contract_json_and_validates_on_read() {
        let json = r#"{"all":[{"has":"a"},{"not":"b"},{"before":["a","c"]},{"overlap":["c","a"]},{"duration":{"label":"a","min_s":4.0}},{"duration":{"label":"a","min_s":0.5,"max_s":2.5}}]}"#;
        let q = Logic::parse("q", json).unwrap();
        assert_eq!(serde_json::to_string(&q).unwrap(), json);
        let back: Logic = serde_json::from_str(json).unwrap();
        assert_eq!(back.constraints, q.constraints);
        assert_eq!(back.query_id, "");
        let one: Constraint<String> = serde_json::from_str(r#"{"before": ["a", "c"]}"#).unwrap();
        assert_eq!(one, Constraint::Before("a".into(), "c".into()));

        let err = |json: &str| serde_json::from_str::<Logic>(json).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"all": [{"has": "a"}, {"before": "a"}]}"#),
            r#"constraint 1 {"before":"a"}: expected a list of two labels, got "a""#
        );
        assert!(err(r#"{"all": []}"#).starts_with("\"all\" is empty"));
        assert!(serde_json::from_str::<Constraint<String>>(r#"{"duration": {"label": "a"}}"#)
            .unwrap_err()
            .to_string()
            .contains("duration needs min_s or max_s"));
    }

    /// `docs/logic.schema.json` is the schema the types generate; after changing the grammar,
    /// write it again with `cargo run -p reasonaudio-core --features schema --example logic_schema > docs/logic.schema.json`.
    #[cfg(feature = "schema")]
    #[test]
    fn committed_schema_is_current() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        if !root.join("docs/contract.md").exists() {
            return; // a packaged crate, outside the repository: no docs/ to compare with
        }
        let path = root.join("docs/logic.schema.json");
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let generated = serde_json::to_string_pretty(&schemars::schema_for!(Logic)).unwrap() + "\n";
        assert!(
            committed == generated,
            "{} is out of date; write it again with \
             `cargo run -p reasonaudio-core --features schema --example logic_schema > docs/logic.schema.json`",
            path.display()
        );
    }
}
