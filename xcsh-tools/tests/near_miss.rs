//! Answers that teach: wrong-but-close patterns of the kinds models write, each over a file
//! holding the code the model meant (and code it did not), must be answered with a near miss
//! at the intended code, carrying a pattern that matches it, in at least 8 of 10 cases.
//!
//! The set is recorded here; the score and every miss are printed, so a regression names
//! the case it lost.

use std::time::{Duration, Instant};

use xcsh_tools::engine::{self, Control, Lang, Scope, SearchRequest, WalkOptions, Within};
use xcsh_tools::workspace::Workspace;

struct Case {
    what: &'static str,
    lang: Lang,
    file: &'static str,
    source: &'static str,
    /// The pattern a model wrote; it matches nothing in `source`.
    pat: &'static str,
    /// The line of the code it meant.
    line: usize,
}

const CASES: &[Case] = &[
    Case {
        what: "missing return type in `fn`",
        lang: Lang::Rust,
        file: "config.rs",
        source: "use std::fs;\n\npub fn parse_config(path: &str) -> Config {\n    let text = fs::read_to_string(path).unwrap();\n    Config::from(text)\n}\n\npub fn parse_args() {\n    todo!()\n}\n",
        pat: "fn parse_config($$$A) { $$$B }",
        line: 3,
    },
    Case {
        what: "one argument where there are several",
        lang: Lang::Rust,
        file: "chat.rs",
        source: "fn run(ctx: &Ctx) {\n    let msg = compose();\n    send_message(&ctx.client, msg, Priority::High);\n    log(msg);\n}\n",
        pat: "send_message($MSG)",
        line: 3,
    },
    Case {
        what: "Python 2 `print` statement",
        lang: Lang::Python,
        file: "report.py",
        source: "import sys\n\ndef report(count):\n    total = count * 2\n    print(\"done\", total)\n    return total\n",
        pat: "print $MSG",
        line: 5,
    },
    Case {
        what: "JS `function` where the code has an arrow function",
        lang: Lang::JavaScript,
        file: "button.js",
        source: "import { render } from \"./dom\";\n\nconst handleClick = (event) => {\n  event.preventDefault();\n  render();\n};\n\nfunction setup() {\n  return handleClick;\n}\n",
        pat: "function handleClick($$$ARGS) { $$$BODY }",
        line: 3,
    },
    Case {
        what: "a statement where an expression is",
        lang: Lang::Rust,
        file: "queue.rs",
        source: "fn drain(items: &mut Vec<u8>) {\n    if items.is_empty() {\n        return;\n    }\n    items.clear();\n}\n",
        pat: "$V.is_empty();",
        line: 2,
    },
    Case {
        what: "a name where the code has an expression",
        lang: Lang::Go,
        file: "load.go",
        source: "package main\n\nimport \"fmt\"\n\nfunc load(path string) error {\n\terr := read(path)\n\tif err != nil {\n\t\treturn fmt.Errorf(\"load %s: %w\", path, err)\n\t}\n\treturn nil\n}\n",
        pat: "if err != nil { return err }",
        line: 7,
    },
    Case {
        what: "Go function where the code has a method (receiver)",
        lang: Lang::Go,
        file: "server.go",
        source: "package main\n\ntype Server struct{}\n\nfunc (s *Server) Start(port int) error {\n\treturn nil\n}\n\nfunc main() {}\n",
        pat: "func Start($$$A) error { $$$B }",
        line: 5,
    },
    Case {
        what: "inherent `impl` where the code implements a trait",
        lang: Lang::Rust,
        file: "display.rs",
        source: "use std::fmt;\n\npub struct Config;\n\nimpl fmt::Display for Config {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        write!(f, \"config\")\n    }\n}\n",
        pat: "impl Config { $$$ITEMS }",
        line: 5,
    },
    Case {
        what: "named import where the code also has a default import",
        lang: Lang::TypeScript,
        file: "app.ts",
        source: "import React, { useState } from \"react\";\nimport { api } from \"./api\";\n\nexport function App() {\n  const [n, setN] = useState(0);\n  return api(n);\n}\n",
        pat: "import { $A } from \"react\"",
        line: 1,
    },
    Case {
        what: "`let` where the code has `let mut`",
        lang: Lang::Rust,
        file: "count.rs",
        source: "fn count(xs: &[u8]) -> usize {\n    let mut total = 0;\n    for _ in xs {\n        total += 1;\n    }\n    total\n}\n",
        pat: "let total = $V;",
        line: 2,
    },
];

#[test]
fn near_misses_point_at_the_intended_code_in_8_of_10() {
    let mut hits = 0;
    let mut report = Vec::new();
    for case in CASES {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(case.file), case.source).expect("write");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let scope = Scope::root(&ws);
        let pats = [case.pat.to_owned()];
        // The pattern really matches nothing (else the case tests nothing).
        let found = engine::search(
            &scope,
            &SearchRequest {
                patterns: pats.to_vec(),
                lang: Some(case.lang),
                ..SearchRequest::default()
            },
            &Control::default(),
        )
        .expect("search");
        assert!(
            found.matches.is_empty(),
            "{}: `{}` matched",
            case.what,
            case.pat
        );
        let walk = WalkOptions::default();
        let within = Within {
            scope: &scope,
            lang: Some(case.lang),
            walk: &walk,
            cache: None,
        };
        let misses = engine::near_misses(
            &within,
            &pats,
            &[0],
            Instant::now() + Duration::from_secs(10),
            &Control::default(),
        );
        let first = misses.first();
        let hit = first.is_some_and(|m| m.line == case.line);
        if hit {
            hits += 1;
        }
        report.push(format!(
            "{} {}: `{}` -> {}",
            if hit { "HIT " } else { "MISS" },
            case.what,
            case.pat,
            match first {
                Some(m) => format!(
                    "{}:{} `{}` ({}); suggests `{}`",
                    m.file, m.line, m.text, m.differs, m.suggestion
                ),
                None => "no near miss".to_owned(),
            }
        ));
        // A suggestion is a pattern that finds the code it was made from.
        if let Some(m) = first {
            let again = engine::search(
                &scope,
                &SearchRequest {
                    patterns: vec![m.suggestion.clone()],
                    lang: Some(case.lang),
                    ..SearchRequest::default()
                },
                &Control::default(),
            )
            .expect("search the suggestion");
            assert!(
                again.matches.iter().any(|f| f.line == m.line),
                "{}: the suggestion `{}` does not find line {}",
                case.what,
                m.suggestion,
                m.line
            );
        }
    }
    eprintln!(
        "{}\n{hits}/{} near misses at the intended code",
        report.join("\n"),
        CASES.len()
    );
    assert!(
        hits >= 8,
        "only {hits} of {}:\n{}",
        CASES.len(),
        report.join("\n")
    );
}
