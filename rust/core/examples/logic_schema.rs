//! Prints the JSON Schema of the query logic format, as committed in `docs/logic.schema.json`:
//!
//!     cargo run -p reasonaudio-core --features schema --example logic_schema > docs/logic.schema.json
use reasonaudio_core::logic::Logic;

fn main() {
    let schema = schemars::schema_for!(Logic);
    println!("{}", serde_json::to_string_pretty(&schema).expect("a schema serializes"));
}
