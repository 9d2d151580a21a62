//! Behaviour of the structural engine as the tools will use it: errors a model can act on,
//! skip notes, the limit, multi-op merging, search captures, previews.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use xcsh_tools::engine::{
    self, CancelFlag, CompiledOps, Control, EditPlan, EditRequest, EngineError, Lang, Op, Progress,
    Scope, SearchRequest, WalkOptions,
};
use xcsh_tools::workspace::Workspace;

/// A workspace holding `files` (path, contents).
fn workspace(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, contents) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, contents).expect("write");
    }
    let ws = Workspace::new(dir.path()).expect("workspace");
    (dir, ws)
}

fn ops(list: &[(&str, &str)]) -> Vec<Op> {
    list.iter().map(|(p, o)| Op::new(*p, *o)).collect()
}

fn plan(ws: &Workspace, request: &EditRequest) -> Result<EditPlan, EngineError> {
    engine::plan_edits(&Scope::root(ws), request, &Control::default())
}

fn edit(list: &[(&str, &str)], lang: Option<Lang>) -> EditRequest {
    EditRequest {
        ops: ops(list),
        lang,
        ..EditRequest::default()
    }
}

fn error(ws: &Workspace, request: &EditRequest) -> String {
    match plan(ws, request) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Errors

#[test]
fn request_errors_name_the_field_and_say_what_to_do() {
    let (_d, ws) = workspace(&[("a.rs", b"fn f() { g(1); }\n")]);
    let rust = Some(Lang::Rust);

    let msg = error(&ws, &edit(&[], rust));
    assert!(msg.starts_with("ops: at least one op is required"), "{msg}");

    let msg = error(&ws, &edit(&[("g($A)", "h($A)"), ("", "x")], rust));
    assert!(msg.starts_with("ops[1].pat: the pattern is empty"), "{msg}");

    let msg = error(&ws, &edit(&[("g($A", "h($A)")], rust));
    assert!(
        msg.starts_with("ops[0].pat: `g($A` is not a valid rust pattern"),
        "{msg}"
    );

    let msg = error(&ws, &edit(&[("g($A)", "h($A)"), ("g($A)", "i($A)")], rust));
    assert!(
        msg.starts_with("ops[1].pat: the same pattern as ops[0].pat"),
        "{msg}"
    );

    let msg = error(&ws, &edit(&[("g($A)", "h($B)")], rust));
    assert!(
        msg.starts_with("ops[0].out: uses $B, which ops[0].pat does not capture (it captures $A)"),
        "{msg}"
    );

    let mut limited = edit(&[("g($A)", "h($A)")], rust);
    limited.limit = Some(0);
    let msg = error(&ws, &limited);
    assert!(msg.starts_with("limit: must be at least 1"), "{msg}");
}

#[test]
fn unsupported_languages_list_the_supported_ones() {
    let list = Lang::supported_list();
    for name in ["cobol", "c-sharp", "rustt", ""] {
        let msg = name.parse::<Lang>().unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "lang: `{name}` is not a supported language; use one of: {list} (or omit lang to infer it from each file's extension)"
            )
        );
    }
    if Lang::ALL == Lang::DEFAULT {
        assert_eq!(list, "rust, python, typescript, tsx, javascript, go");
    }
    // Languages ast-grep knows but this build does not compile name the feature to enable.
    for (name, lang, feature) in [
        ("java", Lang::Java, "lang-java"),
        ("kotlin", Lang::Kotlin, "lang-kotlin"),
        ("c++", Lang::Cpp, "lang-cpp"),
        ("html", Lang::Html, "lang-html"),
    ] {
        match name.parse::<Lang>() {
            Ok(parsed) => assert_eq!(parsed, lang),
            Err(e) => assert_eq!(
                e.to_string(),
                format!(
                    "lang: `{name}` ({lang}) is not compiled into this build: enable the cargo feature `{feature}` of xcsh-tools (or `all-languages`); use one of: {list} (or omit lang to infer it from each file's extension)"
                )
            ),
        }
    }
    for (name, lang) in [
        ("rs", Lang::Rust),
        ("PY", Lang::Python),
        ("ts", Lang::TypeScript),
        ("Tsx", Lang::Tsx),
        ("js", Lang::JavaScript),
        ("jsx", Lang::JavaScript),
        ("golang", Lang::Go),
    ] {
        assert_eq!(name.parse::<Lang>().ok(), Some(lang), "{name}");
    }
}

#[test]
fn overlapping_edits_of_two_ops_are_refused_at_preview_time() {
    let (_d, ws) = workspace(&[
        ("a.rs", b"fn f() {\n    let v = g(h(1));\n}\n"),
        ("b.rs", b"fn f() {\n    g(2);\n}\n"),
    ]);
    let msg = error(
        &ws,
        &edit(
            &[("g($A)", "gg($A)"), ("h($A)", "hh($A)")],
            Some(Lang::Rust),
        ),
    );
    assert_eq!(
        msg,
        "a.rs:2: ops[0] and ops[1] both match overlapping code (`h(1));`); make their patterns match disjoint code, or run them in separate calls"
    );
}

#[test]
fn paths_outside_the_root_and_bad_globs_are_refused() {
    let (_d, ws) = workspace(&[("src/a.rs", b"fn f() {}\n")]);
    let request = edit(&[("f()", "g()")], None);
    let run = |scope: Scope<'_>| {
        engine::plan_edits(&scope, &request, &Control::default())
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let msg = run(Scope::root(&ws).with_path("../etc"));
    assert!(
        msg.starts_with("path: path `../etc` leaves the workspace root"),
        "{msg}"
    );
    let msg = run(Scope::root(&ws).with_path("nope/missing.rs"));
    assert!(
        msg.starts_with("path: path `nope/missing.rs` does not exist"),
        "{msg}"
    );
    let msg = run(Scope::root(&ws).with_glob("src/{a"));
    assert!(
        msg.starts_with("glob: `src/{a` is not a valid glob"),
        "{msg}"
    );
    let msg = run(Scope::root(&ws).with_path("../**/*.rs"));
    assert!(
        msg.starts_with("path: `../**/*.rs` is not a valid glob"),
        "{msg}"
    );
}

#[test]
fn an_explicit_file_without_a_known_extension_needs_lang() {
    let (_d, ws) = workspace(&[("script", b"print(1)\n")]);
    let request = edit(&[("print($A)", "log($A)")], None);
    let err = engine::plan_edits(
        &Scope::root(&ws).with_path("script"),
        &request,
        &Control::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("path: cannot tell the language of `script`"),
        "{err}"
    );
    // With lang, any file named explicitly is parsed as that language (as the CLI does).
    let request = edit(&[("print($A)", "log($A)")], Some(Lang::Python));
    let plan = engine::plan_edits(
        &Scope::root(&ws).with_path("script"),
        &request,
        &Control::default(),
    )
    .expect("plan");
    let file = &plan.files[0];
    let original = file.read_original().expect("unchanged");
    assert_eq!(file.new_contents(&original).expect("same"), "log(1)\n");
}

#[test]
fn too_many_files_is_an_error_and_cancellation_stops() {
    let files: Vec<(String, Vec<u8>)> = (0..20)
        .map(|i| (format!("f{i:02}.py"), b"print(1)\n".to_vec()))
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let (_d, ws) = workspace(&refs);
    let mut request = edit(&[("print($A)", "log($A)")], None);
    request.walk = WalkOptions {
        max_files: 10,
        ..WalkOptions::default()
    };
    let msg = error(&ws, &request);
    assert!(
        msg.starts_with("more than 10 files to scan under `.`"),
        "{msg}"
    );

    let cancel = CancelFlag::default();
    cancel.cancel();
    let err = engine::plan_edits(
        &Scope::root(&ws),
        &edit(&[("print($A)", "log($A)")], None),
        &Control {
            cancel: Some(&cancel),
            progress: None,
        },
    )
    .unwrap_err();
    assert!(matches!(err, EngineError::Cancelled), "{err}");
}

// ---------------------------------------------------------------------------------------
// Walking and skipping

#[test]
fn binary_non_utf8_large_and_temp_files_are_skipped_with_a_note() {
    let mut big = b"print(1)\n".repeat(200);
    big.extend_from_slice(b"# end\n");
    let (_d, ws) = workspace(&[
        ("ok.py", b"print(1)\n"),
        ("bin.py", b"print(1)\n\0\0\0binary"),
        ("latin1.py", b"print('caf\xe9')\n"),
        ("big.py", &big),
        ("empty.py", b""),
        (".ok.py.xcsh-tmp.0123456789abcdef", b"print(1)\n"),
        ("notes.txt", b"print(1)\n"),
    ]);
    let mut request = edit(&[("print($A)", "log($A)")], None);
    request.walk.max_file_bytes = 1000;
    let plan = plan(&ws, &request).expect("plan");
    assert_eq!(
        plan.files
            .iter()
            .map(|f| f.display.as_str())
            .collect::<Vec<_>>(),
        ["ok.py"]
    );
    assert_eq!(plan.skipped.binary, ["bin.py"]);
    assert_eq!(plan.skipped.non_utf8, ["latin1.py"]);
    assert_eq!(plan.skipped.too_large, ["big.py"]);
    assert!(plan.skipped.unreadable.is_empty());
    // ok, bin, latin1, big and empty are Python files; notes.txt and the leftover are not.
    assert_eq!(plan.totals.files_scanned, 5);
    // ChangeSet leftovers are hidden files, so the walk never reaches them; named
    // explicitly, they are skipped with a note.
    assert!(plan.skipped.temp_artifacts.is_empty());
    let leftover = ".ok.py.xcsh-tmp.0123456789abcdef";
    let request = edit(&[("print($A)", "log($A)")], Some(Lang::Python));
    let plan = engine::plan_edits(
        &Scope::root(&ws).with_path(leftover),
        &request,
        &Control::default(),
    )
    .expect("plan");
    assert_eq!(plan.skipped.temp_artifacts, [leftover]);
    assert!(plan.files.is_empty());
}

#[test]
fn gitignore_hidden_files_globs_and_paths() {
    let (_d, ws) = workspace(&[
        (".gitignore", b"gen/\n"),
        ("gen/a.py", b"print(1)\n"),
        ("src/a.py", b"print(1)\n"),
        ("src/b.py", b"print(2)\n"),
        ("src/sub/c.py", b"print(3)\n"),
        ("src/.hidden.py", b"print(4)\n"),
        (".dot/d.py", b"print(5)\n"),
        ("tests/t.py", b"print(6)\n"),
    ]);
    std::fs::create_dir(ws.root().join(".git")).expect("git dir");
    let request = |lang| edit(&[("print($A)", "log($A)")], lang);
    let changed = |scope: Scope<'_>, lang| {
        engine::plan_edits(&scope, &request(lang), &Control::default())
            .expect("plan")
            .files
            .into_iter()
            .map(|f| f.display)
            .collect::<Vec<_>>()
    };
    // Inferred language: hidden files and ignored directories are skipped.
    assert_eq!(
        changed(Scope::root(&ws), None),
        ["src/a.py", "src/b.py", "src/sub/c.py", "tests/t.py"]
    );
    // An explicit language lets a hidden *file* of that language through, as the CLI does.
    assert_eq!(
        changed(Scope::root(&ws), Some(Lang::Python)),
        [
            "src/.hidden.py",
            "src/a.py",
            "src/b.py",
            "src/sub/c.py",
            "tests/t.py"
        ]
    );
    assert_eq!(
        changed(
            Scope::root(&ws).with_path("src").with_glob("sub/*.py"),
            None
        ),
        ["src/sub/c.py"]
    );
    assert_eq!(
        changed(Scope::root(&ws).with_path("src/**/c.py"), None),
        ["src/sub/c.py"]
    );
    assert_eq!(
        changed(Scope::root(&ws).with_glob("!tests/"), None),
        ["src/a.py", "src/b.py", "src/sub/c.py"]
    );
    // A glob does not re-include ignored files.
    assert!(changed(Scope::root(&ws).with_glob("gen/*.py"), None).is_empty());
    // A file named explicitly is searched even when ignored.
    assert_eq!(
        changed(Scope::root(&ws).with_path("gen/a.py"), None),
        ["gen/a.py"]
    );
}

#[test]
fn progress_reports_scanned_and_matched_files() {
    let (_d, ws) = workspace(&[
        ("a.py", b"print(1)\n"),
        ("b.py", b"x = 1\n"),
        ("c.py", b"print(2)\n"),
    ]);
    let last = std::sync::Mutex::new(Progress::default());
    let calls = AtomicUsize::new(0);
    let report = |p: Progress| {
        calls.fetch_add(1, Ordering::Relaxed);
        let mut last = last.lock().unwrap();
        if p.files_scanned > last.files_scanned {
            *last = p;
        }
    };
    let control = Control {
        cancel: None,
        progress: Some(&report),
    };
    engine::plan_edits(
        &Scope::root(&ws),
        &edit(&[("print($A)", "log($A)")], None),
        &control,
    )
    .expect("plan");
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert_eq!(last.lock().unwrap().files_scanned, 3);
}

// ---------------------------------------------------------------------------------------
// Rewriting

#[test]
fn several_ops_run_on_the_original_tree_and_merge_in_order() {
    let src = "fn f() {\n    let a = x.unwrap();\n    let b = Arc::new(a);\n    y.unwrap()\n}\n";
    let (_d, ws) = workspace(&[("lib.rs", src.as_bytes())]);
    let plan = plan(
        &ws,
        &edit(
            &[("$X.unwrap()", "$X?"), ("Arc::new($A)", "Rc::new($A)")],
            Some(Lang::Rust),
        ),
    )
    .expect("plan");
    let file = &plan.files[0];
    assert_eq!(file.read_original().expect("unchanged"), src);
    assert_eq!(
        file.new_contents(src).expect("the original"),
        "fn f() {\n    let a = x?;\n    let b = Rc::new(a);\n    y?\n}\n"
    );
    let summary: Vec<_> = file
        .replacements
        .iter()
        .map(|r| {
            (
                r.op,
                r.line,
                r.column,
                file.before(r, src),
                file.after(r, src),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (0, 2, 13, "x.unwrap()", "x?".into()),
            (1, 3, 13, "Arc::new(a)", "Rc::new(a)".into()),
            (0, 4, 5, "y.unwrap()", "y?".into()),
        ]
    );
    assert_eq!(
        file.fingerprint,
        xcsh_tools::changeset::Fingerprint::of(src)
    );
}

#[test]
fn files_with_syntax_errors_are_rewritten_and_listed() {
    let (_d, ws) = workspace(&[
        ("bad.js", b"foo(1);\nlet x = (;\n"),
        ("good.js", b"foo(2);\n"),
    ]);
    let plan = plan(&ws, &edit(&[("foo($A)", "bar($A)")], None)).expect("plan");
    assert_eq!(plan.parse_errors, ["bad.js"]);
    assert_eq!(plan.totals.files_changed, 2);
    assert!(
        plan.files[0]
            .new_contents("foo(1);\nlet x = (;\n")
            .expect("the original")
            .starts_with("bar(1);")
    );
}

#[test]
fn a_rewrite_that_changes_nothing_is_not_a_replacement() {
    let (_d, ws) = workspace(&[("a.py", b"print(1)\n")]);
    let plan = plan(&ws, &edit(&[("print($A)", "print($A)")], None)).expect("plan");
    assert!(plan.files.is_empty());
    assert_eq!(plan.totals.identical, 1);
    assert_eq!(plan.totals.replacements, 0);
}

#[test]
fn an_op_invalid_in_an_inferred_language_warns_when_such_files_exist() {
    let (_d, ws) = workspace(&[("a.rs", b"fn f() {}\n"), ("b.py", b"x = 1\n")]);
    let plan = plan(&ws, &edit(&[("fn $F() {}", "fn $F() { todo!() }")], None)).expect("plan");
    assert_eq!(plan.totals.files_changed, 1);
    assert_eq!(
        plan.warnings,
        [
            "ops[0].pat is not valid python code, so python files were not searched for it (pass lang to see the parse error)"
        ]
    );
}

fn limit_tree() -> (tempfile::TempDir, Workspace) {
    // 30 files with 3 matches each, names chosen so path order differs from creation order.
    let files: Vec<(String, Vec<u8>)> = (0..30)
        .map(|i| {
            (
                format!("d{}/f{:02}.py", i % 3, 29 - i),
                b"print(1)\nprint(2)\nprint(3)\n".to_vec(),
            )
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    workspace(&refs)
}

#[test]
fn the_limit_keeps_the_first_replacements_in_path_order() {
    let (_d, ws) = limit_tree();
    let mut results = Vec::new();
    for threads in [1, 2, 4] {
        for _ in 0..3 {
            let mut request = edit(&[("print($A)", "log($A)")], None);
            request.limit = Some(7);
            request.walk.threads = threads;
            let plan = plan(&ws, &request).expect("plan");
            let summary: Vec<(String, usize, String)> = plan
                .files
                .iter()
                .map(|f| {
                    (
                        f.display.clone(),
                        f.replacements.len(),
                        f.new_contents(&f.read_original().expect("unchanged"))
                            .expect("the original"),
                    )
                })
                .collect();
            assert_eq!(plan.totals.replacements, 7);
            assert_eq!(plan.totals.replacements_found, 90);
            assert_eq!(plan.limit.map(|l| (l.limit, l.found)), Some((7, 90)));
            results.push(summary);
        }
    }
    let expected = vec![
        (
            "d0/f02.py".to_owned(),
            3,
            "log(1)\nlog(2)\nlog(3)\n".to_owned(),
        ),
        (
            "d0/f05.py".to_owned(),
            3,
            "log(1)\nlog(2)\nlog(3)\n".to_owned(),
        ),
        (
            "d0/f08.py".to_owned(),
            1,
            "log(1)\nprint(2)\nprint(3)\n".to_owned(),
        ),
    ];
    for summary in results {
        assert_eq!(summary, expected);
    }
}

#[test]
fn a_limit_above_the_total_reports_nothing() {
    let (_d, ws) = limit_tree();
    let mut request = edit(&[("print($A)", "log($A)")], None);
    request.limit = Some(1000);
    let plan = plan(&ws, &request).expect("plan");
    assert!(plan.limit.is_none());
    assert_eq!(plan.totals.replacements, 90);
    assert_eq!(plan.files.len(), 30);
}

// ---------------------------------------------------------------------------------------
// Prefilter

/// For tricky sources, whenever ast-grep itself finds a match the prefilter must let the file
/// through; and it must reject the files that obviously cannot match.
#[test]
fn the_prefilter_never_rejects_a_file_ast_grep_matches() {
    use ast_grep_core::Pattern;
    use ast_grep_core::tree_sitter::LanguageExt;
    use ast_grep_language::SupportLang;

    let cases: &[(Lang, SupportLang, &str, &[&str])] = &[
        (
            Lang::Rust,
            SupportLang::Rust,
            "$X.unwrap()",
            &[
                "fn f() { a.unwrap(); }",
                "fn f() { a . unwrap ( ) ; }",
                "fn f() { a.\n  unwrap(/* c */); }",
                "fn f() { a.r#unwrap(); }",
                "fn f() { a.unwrap_or(1); }",
                "fn f() { let s = \"x.unwrap()\"; }",
                "fn f() { a.unwrap(; }",
            ],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "match $E { $$$A }",
            &[
                "fn f() { match x { _ => 1 } }",
                "fn f() { is_match(x); }",
                "fn f() { r#match(x); }",
                "fn f() { let y = 1; match(y){_=>()} }",
                "fn f() { match x { _ => match y { _ => 2 } } }",
            ],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "$A + $B",
            &[
                "fn f() { x += 1; }",
                "fn f() { let y = a +b; }",
                "fn f() { let y = a+\n'c'; }",
                "fn f() { let y = a + 'b: { break 'b 1 }; }",
                "fn f() { let y = a + /* c */ b; }",
                "fn f() { let y = a + r#b; }",
                "fn f() -> Option<u8> { Some(a + b?) }",
                "fn f<T: A + ?Sized + 'a>() {} // a + b",
                "fn f() { let s = \"//\"; let y = a + b; }",
                "fn f() { let y = [1; N + 1]; }",
                "fn f() { let y = 1 + 'a /* c */ : loop { break 'a 2 }; }",
                "fn f() { let y = 1 + 'a // c\n : loop { break 'a 2 }; }",
                "fn f() { let y = 1 + 'a\x0b: loop { break 'a 2 }; }",
            ],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "impl<'a> Tr<'a> for $T { $$$B }",
            &[
                "impl<'a> Tr<'a> for X {}",
                "impl<'a>Tr<'a>for X {}",
                "impl<'a> Tr<'a> for X<'a> { fn f() -> char { 'a' } }",
            ],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "foo(\"bar\", $A)",
            &[
                "fn f() { foo(\"bar\", 1); }",
                "fn f() { foo(\"bar\",\"baz\"); }",
            ],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "impl Default for $T { $$$B }",
            &[
                "impl Default for X {}",
                "impl Default for X<'a> { fn default() -> Self { 'a' } }",
                "unsafe impl Default for X {}",
                "impl !Default for X {}",
            ],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "$A - $B",
            &[
                "fn f() { x -= 1; }",
                "fn f() { x - 'a'; }",
                "fn f() -> u8 { x -1 }",
            ],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "m!(a b)",
            &["fn f() { m!(a 'static b); }", "fn f() { m!(a '_ b); }"],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "m!(impl Tr for X)",
            &["m!(impl<'static> Tr for X);"],
        ),
        (
            Lang::Rust,
            SupportLang::Rust,
            "#[foo(a b)]",
            &["#[foo(a '_ b)]\nfn f() {}"],
        ),
        (
            Lang::Python,
            SupportLang::Python,
            "$A or $B",
            &[
                "x = a or b",
                "x = 0xfor b",
                "x = 1if c else 2",
                "x = a_or(b)",
            ],
        ),
        (
            Lang::Python,
            SupportLang::Python,
            "print($$$A)",
            &["print(1)", "x = 0xfprint(1)", "reprint(1)", "print\t(\n1)"],
        ),
        (
            Lang::TypeScript,
            SupportLang::TypeScript,
            "$A as any",
            &[
                "const x = y as any;",
                "const x = y as  any;",
                "const x = y as anything;",
            ],
        ),
        (
            Lang::Go,
            SupportLang::Go,
            "if err != nil { return $$$R }",
            &[
                "package a\nfunc f() error { if err != nil { return err } ; return nil }",
                "package a\nfunc f() error { if err!=nil{return} }",
                "package a\nfunc f() error { if myerr != nil { return nil } }",
            ],
        ),
        (
            Lang::JavaScript,
            SupportLang::JavaScript,
            "\"use strict\"",
            &["\"use strict\";", "'use strict';", "x = \"use  strict\""],
        ),
    ];
    for (lang, sg, pat, sources) in cases {
        let ops = CompiledOps::for_search(&[pat.to_string()], Some(*lang)).expect("compiles");
        let pattern = Pattern::try_new(pat, *sg).expect("pattern");
        for src in *sources {
            let matched = sg.ast_grep(src).root().find(&pattern).is_some();
            let admitted = ops.may_match(*lang, src.as_bytes());
            assert!(
                admitted || !matched,
                "{lang} `{pat}`: the prefilter rejects `{src}`, which ast-grep matches"
            );
        }
    }
    let ops = CompiledOps::for_search(&["$X.unwrap()".to_owned()], Some(Lang::Rust)).unwrap();
    assert!(!ops.may_match(Lang::Rust, b"fn f() { a.unwrap_or(1); try_unwrap(); }"));
    let ops = CompiledOps::for_search(&["match $E { $$$A }".to_owned()], Some(Lang::Rust)).unwrap();
    assert!(!ops.may_match(Lang::Rust, b"fn f() { is_match(x); matches!(y, _); }"));
    let ops = CompiledOps::for_search(&["$A + $B".to_owned()], Some(Lang::Rust)).unwrap();
    assert!(!ops.may_match(
        Lang::Rust,
        b"fn f<T: A + ?Sized + 'a>() { x += 1; } // a + b"
    ));
}

/// A cold run parses a Rust file only around the anchors of its patterns (the top-level items
/// that hold them); it must find exactly what ast-grep finds in the whole file, at the same
/// lines and columns, with or without a parse cache (which keeps whole trees, and only those).
#[test]
fn parsing_only_the_anchored_items_finds_what_a_whole_parse_finds() {
    use ast_grep_core::Pattern;
    use ast_grep_core::tree_sitter::{LanguageExt, Visitor};
    use ast_grep_language::SupportLang;
    use xcsh_tools::engine::ParseCache;

    let mut src =
        String::from("//! Items around the matches.\n#![allow(dead_code)]\nuse std::fmt;\n");
    for i in 0..40 {
        src.push_str(&format!(
            "/// Item {i}: {{ not code }}\n#[derive(Clone, Default)]\npub struct S{i}<'a> {{ x: &'a str, y: [u8; {i}] }}\n\
             impl<'a> S{i}<'a> {{\n    pub fn f(&self) -> usize {{ let s = \"}}; impl Default\"; s.len() {plus} 1 }}\n}}\n\
             const C{i}: u8 = if true {{ {i} }} else {{ 0 }};\n",
            plus = if i % 7 == 0 { "+" } else { "-" },
        ));
        if i % 9 == 0 {
            src.push_str(&format!(
                "impl Default for S{i}<'_> {{\n    fn default() -> Self {{ Self {{ x: \"'\", y: [0; {i}] }} }}\n}}\n\
                 macro_rules! m{i} {{ ($a:expr) => {{ $a + {i} }}; }}\n"
            ));
        }
    }
    src.push_str("fn main() { let t = (1 + 2) * m0!(3); match t { _ => {} } }\n");
    assert!(src.len() > 8 * 1024, "large enough to be cut");
    let (_d, ws) = workspace(&[("lib.rs", src.as_bytes())]);
    let patterns = [
        "impl Default for $T { $$$B }",
        "$A + $B",
        "match $E { $$$A }",
        "Self { $$$F }",
        "fn default() -> Self { $$$B }",
        "let s = $S;",
    ];
    let root = SupportLang::Rust.ast_grep(&src);
    assert!(!root.root().get_inner_node().has_error());
    for pat in patterns {
        let pattern = Pattern::try_new(pat, SupportLang::Rust).expect("pattern");
        let theirs: Vec<_> = Visitor::new(&pattern)
            .reentrant(true)
            .visit(root.root())
            .map(|m| (m.range(), m.start_pos().line() + 1, m.text().to_string()))
            .collect();
        assert!(!theirs.is_empty(), "`{pat}` matches somewhere");
        // No cache; one that keeps whole trees; one that keeps the text only (too small for
        // the tree), asked twice.
        let text_only = ParseCache::new(4 * src.len());
        for cache in [
            None,
            Some(ParseCache::new(64 << 20)),
            Some(text_only.clone()),
            Some(text_only.clone()),
        ] {
            let cached = cache.as_ref().map(ParseCache::budget);
            let request = SearchRequest {
                patterns: vec![pat.to_owned()],
                lang: Some(Lang::Rust),
                cache,
                ..SearchRequest::default()
            };
            let found = engine::search(&Scope::root(&ws), &request, &Control::default()).unwrap();
            let ours: Vec<_> = found
                .matches
                .iter()
                .map(|m| (m.range.clone(), m.line, m.text.clone()))
                .collect();
            assert_eq!(ours, theirs, "`{pat}`, cache: {cached:?}");
        }
        // The text is kept, a tree never (the file was just written, so it is read again).
        let kept = text_only.stats();
        assert_eq!((kept.entries, kept.parsed_hits), (1, 0), "{kept:?}");
        assert!(kept.bytes < 2 * src.len(), "{kept:?}");
    }
}

/// Where tree-sitter-rust lexes valid Rust differently from rustc, the cut into items follows
/// tree-sitter, as the CLI's whole-file parse does (a reviewer's reproducers, each padded past
/// the size under which files are parsed whole).
#[test]
fn items_are_cut_where_tree_sitter_sees_them() {
    use ast_grep_core::Pattern;
    use ast_grep_core::tree_sitter::{LanguageExt, Visitor};
    use ast_grep_language::SupportLang;

    let filler: String = (0..80)
        .map(|i| format!("fn filler{i}() -> u32 {{ let a = 1; let b = 2; a * b + 1000000 }}\n"))
        .collect();
    let cases = [
        // `//*` does not nest in tree-sitter's comment scanner: the string runs to line 3.
        (
            "/* //* */ const S: &str = \" */\nstruct Z;\nfn g(x: Option<u8>) -> u8 { x.unwrap() } // \";\n",
            "$X.unwrap()",
        ),
        // The same, the other way: `fn g` holds both structs.
        (
            "/* //* */ fn g() { // */\nstruct Z;\nstruct MarkerType;\n/* //* */ } // */\n",
            "fn $F() { $$$A struct MarkerType; $$$B }",
        ),
        // A shebang behind a byte order mark takes the whole line.
        (
            "\u{feff}#!/usr/bin/env x; fn g(x: Option<u8>) -> u8 { x.unwrap() }\n",
            "$X.unwrap()",
        ),
        // rustc takes `\u{1_F600}`, tree-sitter does not, and its recovery spans items.
        (
            "const S: &str = \"\\u{1_F600}\";\nfn g(x: Option<u8>) -> u8 { x.unwrap() }\nconst T: &str = \"\";\n",
            "$X.unwrap()",
        ),
    ];
    for (head, pat) in cases {
        let src = format!("{head}{filler}");
        assert!(src.len() > 4096);
        let (_d, ws) = workspace(&[("t.rs", src.as_bytes())]);
        let pattern = Pattern::try_new(pat, SupportLang::Rust).expect("pattern");
        let root = SupportLang::Rust.ast_grep(&src);
        let theirs: Vec<_> = Visitor::new(&pattern)
            .reentrant(true)
            .visit(root.root())
            .map(|m| m.range())
            .collect();
        let request = SearchRequest {
            patterns: vec![pat.to_owned()],
            lang: Some(Lang::Rust),
            ..SearchRequest::default()
        };
        let found = engine::search(&Scope::root(&ws), &request, &Control::default()).unwrap();
        let ours: Vec<_> = found.matches.iter().map(|m| m.range.clone()).collect();
        assert_eq!(ours, theirs, "`{pat}` in {head:?}");
    }
}

/// A small file is parsed whole, so a syntax error anywhere in it is reported, even one far
/// from the match.
#[test]
fn a_small_file_reports_a_syntax_error_away_from_the_match() {
    let src = "fn a() { x.unwrap(); }\nfn b() {}\nfn c() { let = ; }\nfn d() {}\n";
    let (_d, ws) = workspace(&[("small.rs", src.as_bytes())]);
    let request = EditRequest {
        ops: vec![Op::new("$X.unwrap()", "$X?")],
        lang: Some(Lang::Rust),
        ..EditRequest::default()
    };
    let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default()).unwrap();
    assert_eq!(plan.totals.replacements, 1);
    assert_eq!(plan.parse_errors, ["small.rs"]);
}

// ---------------------------------------------------------------------------------------
// Search

#[test]
fn search_reports_nested_matches_with_captures() {
    let (_d, ws) = workspace(&[(
        "a.ts",
        "const v = wrap(wrap(1, 2), \"é\");\nlog(a, b, c);\n".as_bytes(),
    )]);
    let request = SearchRequest {
        patterns: vec!["wrap($A, $$$REST)".into(), "log($$$ARGS)".into()],
        ..SearchRequest::default()
    };
    let found = engine::search(&Scope::root(&ws), &request, &Control::default()).expect("search");
    let summary: Vec<_> = found
        .matches
        .iter()
        .map(|m| {
            (
                m.pattern,
                m.line,
                m.column,
                m.text.as_str(),
                m.captures
                    .iter()
                    .map(|c| format!("{}={}", c.name, c.text))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                0,
                1,
                11,
                "wrap(wrap(1, 2), \"é\")",
                vec!["$A=wrap(1, 2)".to_owned(), "$$$REST=\"é\"".to_owned()]
            ),
            (
                0,
                1,
                16,
                "wrap(1, 2)",
                vec!["$A=1".to_owned(), "$$$REST=2".to_owned()]
            ),
            (1, 2, 1, "log(a, b, c)", vec!["$$$ARGS=a, b, c".to_owned()]),
        ]
    );
    assert_eq!(found.matches[0].end_column, 32);
    assert_eq!(found.totals.files_matched, 1);
}

#[test]
fn search_limit_keeps_the_first_matches_in_path_order() {
    let (_d, ws) = limit_tree();
    let request = SearchRequest {
        patterns: vec!["print($A)".into()],
        limit: Some(4),
        ..SearchRequest::default()
    };
    let found = engine::search(&Scope::root(&ws), &request, &Control::default()).expect("search");
    let got: Vec<_> = found
        .matches
        .iter()
        .map(|m| (m.file.as_str(), m.line))
        .collect();
    assert_eq!(
        got,
        [
            ("d0/f02.py", 1),
            ("d0/f02.py", 2),
            ("d0/f02.py", 3),
            ("d0/f05.py", 1)
        ]
    );
    assert_eq!(found.limit.map(|l| l.found), Some(90));
}

// ---------------------------------------------------------------------------------------
// Preview

#[test]
fn previews_are_unified_diffs_with_details() {
    let src = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nprint(a)\nf = 6\ng = 7\nh = 8\ni = 9\nj = 10\nprint(j)\n";
    let (_d, ws) = workspace(&[("z.py", src.as_bytes()), ("a.py", b"print(0)\r\n")]);
    let plan = plan(&ws, &edit(&[("print($A)", "log($A)")], None)).expect("plan");
    let previews = engine::preview::file_previews(&plan);
    assert_eq!(
        previews
            .iter()
            .map(|p| (p.file.as_str(), p.replacements))
            .collect::<Vec<_>>(),
        [("a.py", 1), ("z.py", 2)]
    );
    assert_eq!(
        previews[0].diff,
        "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-print(0)\r\n+log(0)\r\n"
    );
    assert_eq!(
        previews[1].diff,
        "--- a/z.py\n+++ b/z.py\n@@ -3,10 +3,10 @@\n c = 3\n d = 4\n e = 5\n-print(a)\n+log(a)\n f = 6\n g = 7\n h = 8\n i = 9\n j = 10\n-print(j)\n+log(j)\n"
    );
    let details = serde_json::to_value(engine::preview::details(&plan, Some(4))).expect("json");
    assert_eq!(details["files"][1]["file"], "z.py");
    assert_eq!(
        details["files"][1]["replacements"][1],
        serde_json::json!({"op": 0, "line": 12, "column": 1, "before": "prin…", "after": "log(…"})
    );
    assert_eq!(details["totals"]["replacements"], 3);
    assert_eq!(details["totals"]["filesChanged"], 2);
}

#[test]
fn a_file_changed_before_its_diff_is_rendered_is_named_instead() {
    let (dir, ws) = workspace(&[("a.py", b"print(1)\n"), ("b.py", b"print(2)\n")]);
    let plan = plan(&ws, &edit(&[("print($A)", "log($A)")], None)).expect("plan");
    let rendered_before = xcsh_tools::render_preview(&plan, 10_000);
    assert!(
        rendered_before.contains(
            "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-print(1)\n+log(1)\n\
             --- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-print(2)\n+log(2)\n"
        ),
        "{rendered_before}"
    );

    // Same length: only the fingerprint tells.
    std::fs::write(dir.path().join("a.py"), "print(3)\n").expect("write");
    let (a, b) = (&plan.files[0], &plan.files[1]);
    let stale = engine::preview::try_unified_diff(a).expect_err("stale");
    assert_eq!(stale.to_string(), "`a.py` (modified since it was read)");
    let note = "--- a/a.py\n+++ b/a.py\n# note: `a.py` (modified since it was read) is no longer \
                what this preview read, so its diff cannot be shown and apply will refuse it; \
                preview again\n";
    assert_eq!(engine::preview::unified_diff(a), note);
    assert_eq!(
        engine::preview::unified_diff(b),
        "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-print(2)\n+log(2)\n"
    );
    // The tool's preview: the changed file's part says so, everything else is as before.
    let rendered = xcsh_tools::render_preview(&plan, 10_000);
    assert_eq!(
        rendered,
        rendered_before.replace(
            "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-print(1)\n+log(1)\n",
            note
        )
    );
    // The details name it too; its replaced texts, read from the file, are not shown.
    let details = serde_json::to_value(engine::preview::details(&plan, None)).expect("json");
    assert_eq!(details["files"][0]["replacements"][0]["before"], "");
    assert_eq!(details["files"][0]["replacements"][0]["after"], "log(1)");
    assert_eq!(details["files"][1]["replacements"][0]["before"], "print(2)");
    assert_eq!(
        details["warnings"],
        serde_json::json!([
            "`a.py` (modified since it was read): the text its replacements replace is not shown, nor the new text of those that keep part of it; apply will refuse it: preview again"
        ])
    );

    std::fs::remove_file(dir.path().join("a.py")).expect("rm");
    let stale = engine::preview::try_unified_diff(a).expect_err("stale");
    assert_eq!(stale.to_string(), "`a.py` (deleted)");
    #[cfg(unix)]
    {
        // A link in its place is not followed, even to identical content.
        std::fs::write(dir.path().join("c.py"), "print(1)\n").expect("write");
        std::os::unix::fs::symlink("c.py", dir.path().join("a.py")).expect("symlink");
        let stale = engine::preview::try_unified_diff(a).expect_err("stale");
        assert_eq!(stale.to_string(), "`a.py` (became a symbolic link)");
    }
    // Restored as it was, it renders as it did.
    std::fs::remove_file(dir.path().join("a.py")).expect("rm");
    std::fs::write(dir.path().join("a.py"), "print(1)\n").expect("write");
    assert_eq!(xcsh_tools::render_preview(&plan, 10_000), rendered_before);
}

#[test]
fn plans_feed_a_change_set() {
    let (dir, ws) = workspace(&[("a.go", b"package a\n\nfunc f() { g(1) }\n")]);
    let plan = plan(&ws, &edit(&[("g($A)", "h($A)")], Some(Lang::Go))).expect("plan");
    let mut changes = xcsh_tools::changeset::ChangeSet::new(ws);
    for file in &plan.files {
        changes
            .modify_splicing(&file.path, file.fingerprint, file.splices())
            .expect("queue");
    }
    changes.apply().expect("apply");
    assert_eq!(
        std::fs::read_to_string(Path::new(dir.path()).join("a.go")).unwrap(),
        "package a\n\nfunc f() { h(1) }\n"
    );
}

#[test]
fn a_go_call_pattern_read_as_a_conversion_gets_a_hint_when_it_matches_nothing() {
    let (_d, ws) = workspace(&[(
        "main.go",
        b"package main\n\nfunc main() {\n\tfmt.Println(\"a\")\n\tfmt.Println(\"a\", 1)\n}\n",
    )]);
    let first = plan(
        &ws,
        &edit(
            &[("fmt.Println($$$ARGS)", "log.Println($$$ARGS)")],
            Some(Lang::Go),
        ),
    )
    .expect("plan");
    assert_eq!(first.matches_per_op, [0]);
    assert_eq!(first.warnings.len(), 1);
    assert!(
        first.warnings[0]
            .starts_with("ops[0].pat matched nothing: Go parses a call with one argument"),
        "{:?}",
        first.warnings
    );
    // The suggested shape works.
    let second = plan(
        &ws,
        &edit(
            &[("fmt.Println($A, $$$REST)", "log.Println($A, $$$REST)")],
            Some(Lang::Go),
        ),
    )
    .expect("plan");
    assert_eq!(second.matches_per_op, [1]);
    assert!(second.warnings.is_empty());
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    /// Code-like text: brackets, quotes, metavariables, keywords, the expando char, newlines.
    fn code() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("$A"),
                Just("$$$B"),
                Just("$_"),
                Just("$"),
                Just("("),
                Just(")"),
                Just("{"),
                Just("}"),
                Just("["),
                Just("]"),
                Just("<"),
                Just(">"),
                Just(";"),
                Just(","),
                Just("."),
                Just(":"),
                Just("\""),
                Just("'"),
                Just("`"),
                Just("\n"),
                Just(" "),
                Just("µ"),
                Just("é"),
                Just("fn"),
                Just("def"),
                Just("if"),
                Just("match"),
                Just("x"),
                Just("1"),
                Just("+"),
                Just("="),
                Just("//"),
                Just("#"),
            ],
            0..16,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Whatever a model sends as a pattern or a rewrite, compiling gives Ok or an error
        /// message naming the field: never a panic.
        #[test]
        fn compiling_any_pattern_and_rewrite(pat in code(), out in code()) {
            for &lang in Lang::ALL {
                match CompiledOps::for_edit(&[Op::new(pat.clone(), out.clone())], Some(lang)) {
                    Ok(_) => {}
                    Err(e) => prop_assert!(e.to_string().starts_with("ops[0]."), "{e}"),
                }
            }
        }

        /// And running a compiled pattern over code-like files never panics either.
        #[test]
        fn searching_any_file_with_any_pattern(pat in code(), src in code()) {
            let (_d, ws) = workspace(&[
                ("a.rs", src.as_bytes()),
                ("a.py", src.as_bytes()),
                ("a.tsx", src.as_bytes()),
                ("a.go", src.as_bytes()),
            ]);
            let request = SearchRequest { patterns: vec![pat], ..SearchRequest::default() };
            let _ = engine::search(&Scope::root(&ws), &request, &Control::default());
        }
    }
}
