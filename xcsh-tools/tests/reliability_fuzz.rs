//! The cargo-fuzz entry points (`fuzz/src/entry.rs`), run on stable as property tests, and
//! every saved input under `fuzz/regressions/<target>/` (crashes found by fuzzing, and seeds)
//! replayed as a regression test. See `docs/RELIABILITY.md` for running the real fuzzers.

#[path = "../../fuzz/src/entry.rs"]
#[allow(dead_code)]
mod entry;

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}

/// Arbitrary JSON, biased toward the shapes the tools take: objects with their field names.
fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("ops".to_owned()),
        Just("pat".to_owned()),
        Just("out".to_owned()),
        Just("lang".to_owned()),
        Just("path".to_owned()),
        Just("glob".to_owned()),
        Just("limit".to_owned()),
        Just("action".to_owned()),
        Just("reason".to_owned()),
        "[a-z]{0,6}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        prop_oneof![
            Just("$X.unwrap()".to_owned()),
            Just("$X?".to_owned()),
            Just("print($$$A)".to_owned()),
            Just("foo($A, $B)".to_owned()),
            Just("rust".to_owned()),
            Just("python".to_owned()),
            Just("apply".to_owned()),
            Just("discard".to_owned()),
            Just("src".to_owned()),
            Just("../**".to_owned()),
            Just("**/*.rs".to_owned()),
            Just("$".to_owned()),
            Just("$$$".to_owned()),
            ".{0,12}",
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(key.clone(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn session_call_on_json(tool in 0u8..4, args in json_value()) {
        let mut data = vec![tool];
        data.extend(serde_json::to_vec(&args).expect("serialises"));
        entry::session_call(&data);
    }

    #[test]
    fn session_call_on_bytes(data in prop::collection::vec(any::<u8>(), 0..200)) {
        entry::session_call(&data);
    }

    #[test]
    fn pattern_compile_on_code_like_text(
        lang in any::<u8>(),
        ops in prop::collection::vec(
            ("[$a-zA-Z_(){}\\[\\].,:;=<>!?&|+*/\"' \n-]{0,24}", "[$a-zA-Z_(){}\\[\\].,: \n-]{0,16}"),
            1..4,
        ),
        limit in any::<u8>(),
    ) {
        let mut data = vec![lang, (ops.len() - 1) as u8];
        for (pat, out) in &ops {
            data.extend(pat.bytes());
            data.push(0xFE);
            data.extend(out.bytes());
            data.push(0xFF);
        }
        data.push(limit);
        entry::pattern_compile(&data);
    }

    #[test]
    fn pattern_compile_on_bytes(data in prop::collection::vec(any::<u8>(), 0..96)) {
        entry::pattern_compile(&data);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn changeset_ops_on_bytes(data in prop::collection::vec(any::<u8>(), 0..64)) {
        entry::changeset_ops(&data);
    }
}

/// Every saved input of a target, replayed.
fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        let data = std::fs::read(&path).expect("read");
        eprintln!("replaying {}", path.display());
        run(&data);
        count += 1;
    }
    assert!(count > 0, "no saved inputs under {}", dir.display());
}

#[test]
fn saved_session_call_inputs() {
    replay("session_call", entry::session_call);
}

#[test]
fn saved_pattern_compile_inputs() {
    replay("pattern_compile", entry::pattern_compile);
}

#[test]
fn saved_changeset_ops_inputs() {
    replay("changeset_ops", entry::changeset_ops);
}
