//! The cut, against whole-file parses.

use super::*;

/// The runs of `src`, as text.
fn runs(src: &str) -> Option<Vec<&str>> {
    let b = item_boundaries(src.as_bytes())?;
    Some(b.windows(2).map(|w| &src[w[0]..w[1]]).collect())
}

/// The cut a cold parse takes instead of the whole file.
fn ranges_for(
    text: &str,
    lang: Lang,
    ops: &LangOps,
    may_match: &[usize],
    anchors: &[Option<Anchors>],
) -> Option<Cut> {
    cut_for(text, lang, ops, may_match, anchors).filter(|cut| cut.worth_it(text))
}

#[test]
fn items_are_cut_after_a_semicolon_or_a_closing_brace_before_an_item() {
    let src = "use a::b;\nfn f() { g(); }\n#[derive(Default)]\nstruct S { x: u8 }\nimpl S {}";
    assert_eq!(
        runs(src).unwrap(),
        [
            "use a::b;",
            "\nfn f() { g(); }",
            "\n#[derive(Default)]\nstruct S { x: u8 }",
            "\nimpl S {}"
        ]
    );
}

#[test]
fn a_brace_followed_by_what_continues_an_item_is_no_cut() {
    for src in [
        "const X: u8 = if C { 1 } else { 2 };",
        "const X: S = S { a: 1 }.with(2);",
        "struct A<const N: usize = { 1 }> { a: [u8; N] }",
        "m! { a } n! { b }",
    ] {
        assert_eq!(runs(src).unwrap(), [src], "{src}");
    }
}

#[test]
fn brackets_inside_literals_and_comments_do_not_count() {
    let src = concat!(
        "const A: &str = \"}; fn\\\" {\";\n",
        "const B: &str = r#\"\"}\"; {\"#;\n",
        "const C: char = '}';\nconst D: u8 = b'{';\nconst E: char = '\\'';\n",
        "fn f<'a>(x: &'a str) -> &'a str { 'l: loop { break 'l x; } }\n",
        "/* { /* nested } */ ( */ // }\n",
        "fn r#type() { let r#fn = br\"{\"; let c = c\"}\"; let u = '\\u{7D}'; let e = 'é'; }\n",
    );
    let runs = runs(src).unwrap();
    assert_eq!(runs.len(), 7, "{runs:#?}");
    assert!(runs[6].starts_with("\n/* { /* nested } */ ( */ // }\nfn r#type()"));
}

#[test]
fn block_comments_nest_as_tree_sitter_reads_them() {
    // `//*` opens nothing for tree-sitter-rust (rustc nests there): the comment ends at
    // the first `*/`, and the `;` inside the string is no cut.
    assert_eq!(
        runs("/* //* */ const S: &str = \" */ ; \"; fn f() {}").unwrap(),
        ["/* //* */ const S: &str = \" */ ; \";", " fn f() {}"]
    );
    assert_eq!(
        runs("/* /* */ ; */ fn f() {} /***/ const X: u8 = 1;").unwrap(),
        ["/* /* */ ; */ fn f() {}", " /***/ const X: u8 = 1;"]
    );
    assert_eq!(
        runs("const C: [char; 2] = ['\\u{7D}', ''];").unwrap().len(),
        1
    );
}

#[test]
fn what_does_not_lex_is_not_cut() {
    for src in [
        "fn f() { \"open }",
        "fn f() { /* open }",
        "fn f() { ( }",
        "fn f() } {",
        "#!/usr/bin/env run-cargo-script\nfn main() {}",
        "\u{feff}fn main() {}",
        "const S: &str = \"\\u{1_F600}\"; fn f() {}",
        "const C: char = '\\x4'; fn f() {}",
    ] {
        assert_eq!(item_boundaries(src.as_bytes()), None, "{src}");
    }
    assert!(item_boundaries(b"#![allow(x)]\nfn main() {}").is_some());
}

/// The outermost nodes of `node`'s tree that lie inside `range`, as (range, position, tree).
fn inside(
    node: tree_sitter::Node<'_>,
    range: &Range<usize>,
    out: &mut Vec<(Range<usize>, Point, String)>,
) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if range.start <= child.start_byte() && child.end_byte() <= range.end {
            out.push((child.byte_range(), child.start_position(), child.to_sexp()));
        } else if child.start_byte() < range.end && range.start < child.end_byte() {
            inside(child, range, out);
        }
    }
}

/// Parsing one run alone, or one unit inside a run's body ([`nested_units`]), gives its items
/// the trees a whole-file parse gives them: `(runs, units)` checked.
fn check_runs_parse_alone(path: &str, src: &str) -> (usize, usize) {
    let whole = super::super::matching::parse(src, Lang::Rust).unwrap();
    let whole_root = whole.root();
    let whole_node = whole_root.get_inner_node();
    if whole_node.has_error() {
        return (0, 0);
    }
    let Some(bounds) = item_boundaries(src.as_bytes()) else {
        panic!("{path}: no cut in a file without syntax errors");
    };
    let alone = |range: &Range<usize>, inner: bool| {
        let cut = Cut {
            ranges: vec![range.clone()],
            inner: if inner {
                vec![range.clone()]
            } else {
                Vec::new()
            },
        };
        let part = parse_ranges(src, &cut).unwrap();
        let mut ours = Vec::new();
        inside(part.root().get_inner_node(), range, &mut ours);
        let mut theirs = Vec::new();
        inside(whole_node, range, &mut theirs);
        assert_eq!(ours, theirs, "{path}: {range:?} parsed alone");
    };
    let (mut runs, mut units) = (0, 0);
    for w in bounds.windows(2) {
        let run = w[0]..w[1];
        alone(&run, false);
        runs += 1;
        // Each run lexed alone, as `anchored_items` does.
        let lx = Lexed::new(src.as_bytes(), run.clone()).unwrap();
        let mut seen = std::collections::HashSet::new();
        for statement in lx.statements(run.clone()) {
            statements_parse_alone(path, src, whole_node, &statement);
            units += 1;
        }
        for (_, unit) in lx.nested_units(run) {
            if !seen.insert(unit.clone()) {
                continue;
            }
            alone(&unit, true);
            units += 1;
            for statement in lx.statements(unit) {
                statements_parse_alone(path, src, whole_node, &statement);
                units += 1;
            }
        }
    }
    (runs, units)
}

/// A run of statements parsed alone (no whole parse to fall back on) has no error and the
/// trees a whole parse gives; a tail, around one expression statement (which patterns that
/// may be one do not cut for: `STATEMENT_NESTING_KINDS`).
fn statements_parse_alone(
    path: &str,
    src: &str,
    whole: tree_sitter::Node<'_>,
    range: &Range<usize>,
) {
    let tree = parse_included(src, std::slice::from_ref(range)).unwrap();
    let root = tree.root_node();
    assert!(
        !root.has_error(),
        "{path}: {range:?} has an error alone: {:?}",
        &src[range.clone()]
    );
    let mut ours = Vec::new();
    inside(root, range, &mut ours);
    let mut theirs = Vec::new();
    inside(whole, range, &mut theirs);
    if let ([(r, p, tail)], [(whole_r, whole_p, node)]) = (&ours[..], &theirs[..])
        && tail.starts_with("(expression_statement ")
        && !node.starts_with("(expression_statement ")
    {
        assert_eq!(
            (r, p, tail.as_str()),
            (
                whole_r,
                whole_p,
                format!("(expression_statement {node})").as_str()
            ),
            "{path}: the tail {range:?} parsed alone"
        );
        return;
    }
    assert_eq!(ours, theirs, "{path}: statements {range:?} parsed alone");
}

#[test]
fn runs_parse_alone_as_in_the_whole_file() {
    let src = concat!(
        "//! Doc.\n#![allow(dead_code)]\nuse std::fmt;\n",
        "/// S.\n#[derive(Debug, Default)]\npub struct S<'a> { x: &'a str }\n",
        "impl<'a> Default for Wrapper<'a> { fn default() -> Self { Self(\"}\") } }\n",
        "macro_rules! m { ($x:expr) => { $x + 1 }; }\nm!(1);\n",
        "const X: u8 = if true { 1 } else { 2 };\n",
        "unsafe extern \"C\" { fn g(); }\npub(crate) mod inner { fn h() {} }\n",
    );
    assert!(
        !super::super::matching::parse(src, Lang::Rust)
            .unwrap()
            .root()
            .get_inner_node()
            .has_error()
    );
    assert_eq!(check_runs_parse_alone("inline", src), (7, 3));
}

/// The same over xcsh's own sources.
#[test]
fn runs_parse_alone_in_this_repository() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let (files, runs, units) = check_tree(root);
    assert!(
        files > 100 && runs > 10 * files && units > 5 * files,
        "{files} files, {runs} runs, {units} inner units"
    );
}

/// The same over a tree of real sources: `XCSH_PARTIAL_CORPUS=dir cargo test --release
/// -p xcsh-tools runs_parse_alone_on_a_corpus -- --ignored`.
#[test]
#[ignore = "minutes; needs XCSH_PARTIAL_CORPUS"]
fn runs_parse_alone_on_a_corpus() {
    let dir = std::env::var("XCSH_PARTIAL_CORPUS").expect("XCSH_PARTIAL_CORPUS");
    let (files, runs, units) = check_tree(&dir);
    eprintln!(
        "{files} files, {runs} runs and {units} inner units parsed alone as in the whole file"
    );
    assert!(runs > files);
}

/// [`check_runs_parse_alone`] on every `.rs` file under `dir` (ignore rules apply):
/// `(files, runs, inner units)`.
fn check_tree(dir: &str) -> (usize, usize, usize) {
    let (mut files, mut runs, mut units) = (0, 0, 0);
    for entry in ignore::WalkBuilder::new(dir).build() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Ok(src) = std::fs::read_to_string(path) else {
            continue;
        };
        let (r, u) = check_runs_parse_alone(&path.display().to_string(), &src);
        runs += r;
        units += u;
        files += 1;
    }
    (files, runs, units)
}

#[test]
fn an_inner_attribute_read_as_a_shebang_is_no_cut() {
    // At the start of a parse tree-sitter reads `#! [attr]` as a shebang line.
    let mut src = String::from("mod m {\n    #! [allow(dead_code)]\n    fn f() {}\n}\n");
    while src.len() < 2 * SMALL_FILE {
        src.push_str("fn filler() { let x = 1; }\n");
    }
    let src = src.as_bytes();
    let units = nested_units(src, 0..item_boundaries(src).unwrap()[1]);
    let (_, unit) = &units[0];
    let text = std::str::from_utf8(src).unwrap();
    let cut = Cut {
        ranges: vec![unit.clone()],
        inner: vec![unit.clone()],
    };
    let part = parse_ranges(text, &cut).unwrap();
    assert!(
        !reads_a_body_as_a_file(part.root().get_inner_node(), &cut.inner),
        "parsed whole instead"
    );
    assert_eq!(part.root().get_inner_node().end_byte(), src.len());
}

#[test]
fn a_macro_call_at_the_top_level_is_no_reason_to_parse_whole() {
    let mut src = String::from(
        "m!(S { a: 1 });\nimpl T {\n    fn f() -> S { S { a: 2 } }\n    fn g() {}\n}\n",
    );
    while src.len() < 2 * SMALL_FILE {
        src.push_str("fn filler() { let x = 1; }\n");
    }
    let anchors = src.match_indices("S {").map(|(i, _)| i..i + 1).collect();
    let cut = anchored_items(&src, anchors, Depth::Members).unwrap();
    assert_eq!(cut.inner.len(), 1, "{cut:?}");
    let part = parse_ranges(&src, &cut).unwrap();
    let end = src.find("    fn g").unwrap();
    assert!(
        part.root().get_inner_node().end_byte() <= end,
        "parsed whole instead"
    );
}

#[test]
fn inner_items_of_impl_trait_mod_and_extern_bodies_are_units() {
    let src = concat!(
        "#[cfg(x)]\npub(crate) unsafe impl<T: Fn() -> u8> Tr for S<T> where T: Copy {\n",
        "    fn a(&self) {}\n    #[inline]\n    pub fn b() -> u8 { 1 }\n    m!(x);\n    const C: u8 = 1;\n}\n",
    );
    let src = src.as_bytes();
    let text = |r: &Range<usize>| std::str::from_utf8(&src[r.clone()]).unwrap();
    let units: Vec<_> = nested_units(src, 0..src.len())
        .iter()
        .map(|(_, u)| text(u))
        .collect();
    // The macro call is no unit (an anchor there needs the whole impl).
    assert_eq!(
        units,
        [
            "\n    fn a(&self) {}",
            "\n    #[inline]\n    pub fn b() -> u8 { 1 }",
            "\n    const C: u8 = 1;"
        ]
    );
    // Nested bodies, down to the impl in a module in a module.
    let src = b"mod a { mod b { impl S { fn f() {} } } fn g() {} }";
    let shown = |segments: Vec<Segment>| -> Vec<(&str, &str)> {
        let text = |r: Range<usize>| std::str::from_utf8(&src[r]).unwrap();
        segments
            .into_iter()
            .map(|(s, u)| (text(s), text(u)))
            .collect()
    };
    assert_eq!(
        shown(nested_units(src, 0..src.len())),
        [
            (" mod b {", " mod b { impl S { fn f() {} } }"),
            (" impl S {", " impl S { fn f() {} } "),
            (" fn f() {} ", " fn f() {} "),
            ("} ", " impl S { fn f() {} } "),
            ("}", " mod b { impl S { fn f() {} } }"),
            (" fn g() {} ", " fn g() {} "),
        ]
    );
    // Looking only into modules: the impl is one unit, whole.
    let lexed = items::Lexed::new(src, 0..src.len()).unwrap();
    assert_eq!(
        shown(lexed.module_units(0..src.len())),
        [
            (" mod b {", " mod b { impl S { fn f() {} } }"),
            (" impl S { fn f() {} } ", " impl S { fn f() {} } "),
            ("}", " mod b { impl S { fn f() {} } }"),
            (" fn g() {} ", " fn g() {} "),
        ]
    );
    // What is no such block, or whose braces do not end it, has no units.
    for src in [
        "fn f() -> impl Fn() { || {} }",
        "impl Foo<{ N }> for X { fn f() {} }",
        "impl A {} m! { fn f() {} }",
        "extern crate a;",
        "mod m;",
        "const _: () = { impl X { fn f() {} } };",
        "trait A = B;",
        // What tree-sitter-rust cannot read, whose recovery may take in its neighbours.
        "impl A { default const X: u8 = 1; fn g() { x } }",
        "mod m { pub macro m() {} fn g() {} }",
        "mod m { pub(crate) macro m() {} fn g() {} }",
    ] {
        assert_eq!(nested_units(src.as_bytes(), 0..src.len()), [], "{src}");
    }
}

#[test]
fn statements_of_a_function_body_are_units() {
    let text =
        |src: &[u8], r: &Range<usize>| std::str::from_utf8(&src[r.clone()]).unwrap().to_owned();
    // The statements of the file's first item, or of its members.
    let statements = |src: &str| -> Vec<String> {
        let src = src.as_bytes();
        let run = 0..src.len();
        let mut found = items::statements(src, run.clone());
        for (_, unit) in nested_units(src, run) {
            found.extend(items::statements(src, unit));
        }
        found.dedup();
        found.iter().map(|u| text(src, u)).collect()
    };
    // In a function at the top level, and in a method; a tail ending with a block is one.
    assert_eq!(
        statements(concat!(
            "pub(crate) async fn f() -> R {\n    let a = x?;\n    if c { y?; }\n",
            "    #[allow(x)]\n    g()?;\n    match z { _ => w? }\n}"
        )),
        [
            "\n    let a = x?;",
            "\n    if c { y?; }",
            "\n    #[allow(x)]\n    g()?;",
            "\n    match z { _ => w? }\n"
        ]
    );
    assert_eq!(
        statements("impl S { fn f(&self) { a(); if b {} else if c {} else { d } } }"),
        [" a();", " if b {} else if c {} else { d } "]
    );
    // Tails that are not one expression ending with a block, and inner attributes, are not.
    for (src, kept) in [
        ("fn f() { a(); Ok(b) }", vec![" a();"]),
        ("fn f() { for x in y {} Built { a } }", vec![]),
        ("fn f() { a(); if let S { a } = s { b } }", vec![" a();"]),
        ("fn f() { a(); match x {}.unwrap() }", vec![" a();"]),
        ("fn f() { #![allow(x)] a(); b(); }", vec![" b();"]),
        ("fn f();", vec![]),
        ("fn f() -> Foo<{ N }> { a(); }", vec![]),
        ("const fn f() -> u8 { a(); 1 }", vec![" a();"]),
    ] {
        assert_eq!(statements(src), kept, "{src}");
    }
    // A function is no body of items.
    let src = b"fn f() { a(); }";
    assert_eq!(nested_units(src, 0..src.len()), []);
}

#[test]
fn statements_that_run_on_into_the_next_range_are_seen() {
    // tree-sitter-rust ends a statement at a block-like expression's `}` as rustc does, so a
    // run of statements ending with one is not continued by the next range (`* p = 1;`)...
    let src = "if c { x?; }\n*p = q?;\nlet a = b\n+ c;";
    let tree = |ranges: &[Range<usize>]| parse_included(src, ranges).unwrap();
    let at = |s: &str| src.find(s).unwrap();
    let ranges = [0..at("\n*p"), at("\n*p")..at("\nlet")];
    assert!(!spans_two_ranges(tree(&ranges).root_node(), &ranges));
    // ... but one that does run on (which the lexer never cuts) is caught.
    let ranges = [at("let")..at("\n+"), at("\n+")..src.len()];
    assert!(spans_two_ranges(tree(&ranges).root_node(), &ranges));
    // At the top level too: tree-sitter reads `m! { zq } (zq);` as one call (rustc does
    // not), so a cut joining those two items is parsed whole.
    let mut text = String::from("m! { zq }\n");
    while text.len() < 2 * SMALL_FILE {
        text.push_str("fn g() { let x = 1; }\n");
    }
    text.push_str("static X: u8 = 1;\n(zq);\n");
    let call = text.rfind("\n(zq)").unwrap();
    let cut = Cut {
        ranges: vec![0..text.find('\n').unwrap(), call..text.len()],
        inner: Vec::new(),
    };
    let joined = parse_included(&text, &cut.ranges).unwrap();
    assert!(spans_two_ranges(joined.root_node(), &cut.ranges));
    let part = parse_ranges(&text, &cut).unwrap();
    assert!(
        part.root()
            .get_inner_node()
            .to_sexp()
            .contains("function_item"),
        "parsed whole"
    );
    // And the matches through such a cut are a whole parse's.
    let mut src =
        String::from("fn a() {\n    if c { x?; }\n    let y = 1;\n}\nfn b() {\n    *p = q?;\n}\n");
    while src.len() < 2 * SMALL_FILE {
        src.push_str("fn filler() { let x = 1; }\n");
    }
    let whole = super::super::matching::parse(&src, Lang::Rust).unwrap();
    assert!(check_matches_through_the_cut("inline", &src, &whole) >= 4);
}

/// What a pattern finds through the cut its anchors choose is what it finds in a whole parse,
/// for the rewrite's walk (not reentrant) and the search's (reentrant): the patterns' matches
/// checked.
fn check_matches_through_the_cut(path: &str, src: &str, whole: &Root) -> usize {
    use crate::engine::matching::for_each_match;
    use crate::engine::prefilter::Tokens;
    static OPS: OnceLock<Vec<(&str, super::super::CompiledOps)>> = OnceLock::new();
    let ops = OPS.get_or_init(|| {
        crate::engine::prefilter::BROAD
            .iter()
            .filter_map(|p| {
                let ops =
                    super::super::CompiledOps::for_search(&[(*p).to_owned()], Some(Lang::Rust));
                Some((*p, ops.ok()?))
            })
            .collect()
    });
    let Some(tokens) = Tokens::lex(src.as_bytes()) else {
        return 0;
    };
    let mut checked = 0;
    for (pat, ops) in ops {
        let lang_ops = ops.for_lang(Lang::Rust).unwrap();
        let OpKind::Pattern { pattern, .. } = &lang_ops.ops[0].kind else {
            continue;
        };
        let prefilter = &lang_ops.prefilter;
        let anchors = prefilter
            .shape_anchors(0, &tokens)
            .or_else(|| prefilter.anchors(0, src.as_bytes()));
        let Some(cut) = cut_for(
            src,
            Lang::Rust,
            lang_ops,
            &[0],
            std::slice::from_ref(&anchors),
        ) else {
            continue;
        };
        let found = |root: &Root, anchors, reentrant, out: &mut Vec<_>| {
            for_each_match(root, pattern, reentrant, anchors, |m| {
                out.push((m.range(), m.text().to_string()));
            });
        };
        let mut whole_found = [Vec::new(), Vec::new()];
        for (reentrant, theirs) in [false, true].into_iter().zip(&mut whole_found) {
            found(whole, None, reentrant, theirs);
        }
        if cut.worth_it(src) {
            let part = parse_ranges(src, &cut).unwrap();
            for (reentrant, theirs) in [false, true].into_iter().zip(&whole_found) {
                let mut ours = Vec::new();
                found(&part, anchors.as_ref(), reentrant, &mut ours);
                assert_eq!(&ours, theirs, "{path}: `{pat}` through {cut:?}");
                checked += theirs.len();
            }
        }
        // In parts (here small ones: a large file's are 64 KiB or more), one after the other:
        // the same, unless a part cannot stand for its items (the whole file is parsed then).
        let parts = cut.chunks(2048);
        let Some(roots) = parts
            .iter()
            .map(|part| parse_cut(src, part))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        for (reentrant, theirs) in [false, true].into_iter().zip(&whole_found) {
            let mut ours = Vec::new();
            for root in &roots {
                found(root, anchors.as_ref(), reentrant, &mut ours);
            }
            assert_eq!(&ours, theirs, "{path}: `{pat}` in {} parts", parts.len());
            checked += theirs.len();
        }
    }
    checked
}

#[test]
fn a_cut_in_parts_keeps_its_ranges_in_order_and_each_run_of_a_body_with_its_range() {
    let cut = Cut {
        ranges: vec![0..10, 20..30, 40..100, 120..125, 130..140],
        inner: vec![22..25, 26..30, 50..60, 131..135],
    };
    let parts = cut.chunks(15);
    let pairs = |rs: &[Range<usize>]| rs.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>();
    let shown: Vec<_> = parts
        .iter()
        .map(|p| (pairs(&p.ranges), pairs(&p.inner)))
        .collect();
    assert_eq!(
        shown,
        [
            (vec![(0, 10), (20, 30)], vec![(22, 25), (26, 30)]),
            (vec![(40, 100)], vec![(50, 60)]),
            (vec![(120, 125), (130, 140)], vec![(131, 135)]),
        ]
    );
}

/// However the cut's length falls against sixteen parts, there are at most sixteen: with
/// parts of a sixteenth rounded down, 10,005 one-byte ranges made sixteen parts of 625 bytes
/// and a seventeenth of five.
#[test]
fn a_cut_in_parts_has_at_most_sixteen() {
    for count in [1, 15, 16, 17, 10_000, 10_005, 10_015] {
        let cut = Cut {
            ranges: (0..count).map(|i| 2 * i..2 * i + 1).collect(),
            inner: Vec::new(),
        };
        let parts = cut.parts(1);
        assert!(
            parts.len() <= super::MAX_PARTS,
            "{count} ranges: {} parts",
            parts.len()
        );
        assert_eq!(parts.iter().map(|p| p.ranges.len()).sum::<usize>(), count);
    }
}

#[test]
fn broad_patterns_find_through_the_cut_what_a_whole_parse_finds() {
    let mut checked = 0;
    for (path, src) in rust_files(concat!(env!("CARGO_MANIFEST_DIR"), "/..")) {
        let whole = super::super::matching::parse(&src, Lang::Rust).unwrap();
        if !whole.root().get_inner_node().has_error() {
            checked += check_matches_through_the_cut(&path, &src, &whole);
        }
    }
    assert!(checked > 1000, "{checked} matches");
}

/// The same over a tree of real sources: `XCSH_PARTIAL_CORPUS=dir cargo test --release -p
/// xcsh-tools broad_patterns_find_through_the_cut_on_a_corpus -- --ignored`.
#[test]
#[ignore = "minutes; needs XCSH_PARTIAL_CORPUS"]
fn broad_patterns_find_through_the_cut_on_a_corpus() {
    let dir = std::env::var("XCSH_PARTIAL_CORPUS").expect("XCSH_PARTIAL_CORPUS");
    let mut checked = 0;
    for (path, src) in rust_files(&dir) {
        let whole = super::super::matching::parse(&src, Lang::Rust).unwrap();
        if !whole.root().get_inner_node().has_error() {
            checked += check_matches_through_the_cut(&path, &src, &whole);
        }
    }
    eprintln!("{checked} matches found through the cut as in whole parses");
}

/// The `.rs` files under `dir` (ignore rules apply) of at least [`SMALL_FILE`] bytes, as
/// (path, text).
fn rust_files(dir: &str) -> impl Iterator<Item = (String, String)> {
    ignore::WalkBuilder::new(dir).build().filter_map(|entry| {
        let entry = entry.ok()?;
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            return None;
        }
        let src = std::fs::read_to_string(path).ok()?;
        (src.len() >= SMALL_FILE).then(|| (path.display().to_string(), src))
    })
}

/// How many bytes a cold run parses per broad pattern, with the cut at top-level items only
/// and with inner units: `XCSH_PARTIAL_CORPUS=dir cargo test --release -p xcsh-tools
/// bytes_parsed_on_a_corpus -- --ignored --nocapture` (a report for BENCHMARKS.md).
#[test]
#[ignore = "a report; needs XCSH_PARTIAL_CORPUS"]
fn bytes_parsed_on_a_corpus() {
    use crate::engine::prefilter::Tokens;
    let dir = std::env::var("XCSH_PARTIAL_CORPUS").expect("XCSH_PARTIAL_CORPUS");
    let files: Vec<(String, String)> = rust_files(&dir).collect();
    eprintln!(
        "| pattern | bytes in anchored files | top-level items | with inner items | with statements |"
    );
    eprintln!("|---|---:|---:|---:|---:|");
    for pat in [
        "$S { $$$F }",
        "$X?",
        "fn $F() { $$$B }",
        "fn $F($$$P) -> $R { $$$B }",
        "$X.$M().$N()",
        "|$A| $B",
        "let $X: $T = $V;",
    ] {
        let ops =
            super::super::CompiledOps::for_search(&[pat.to_owned()], Some(Lang::Rust)).unwrap();
        let lang_ops = ops.for_lang(Lang::Rust).unwrap();
        let prefilter = &lang_ops.prefilter;
        let (mut whole, mut top, mut inner, mut statements) = (0usize, 0usize, 0usize, 0usize);
        for (_, src) in &files {
            let Some(tokens) = Tokens::lex(src.as_bytes()) else {
                continue;
            };
            let Some(anchors) = prefilter.shape_anchors(0, &tokens) else {
                continue;
            };
            if anchors.is_empty() {
                continue;
            }
            whole += src.len();
            let occurrences = || anchors.occurrences().collect::<Vec<_>>();
            top += anchored_items(src, occurrences(), Depth::Items).map_or(src.len(), |c| c.len());
            inner +=
                anchored_items(src, occurrences(), Depth::Members).map_or(src.len(), |c| c.len());
            let Some(cut) = ranges_for(src, Lang::Rust, lang_ops, &[0], &[Some(anchors)]) else {
                statements += src.len();
                continue;
            };
            statements += cut.len();
        }
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        eprintln!(
            "| `{pat}` | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
            mib(whole),
            mib(top),
            mib(inner),
            mib(statements)
        );
    }
}

/// `src` with `replaced` (`(range, text)`, in order) made, and what the guard is told of them.
fn replace_in(src: &str, edits: &[(Range<usize>, &str)]) -> (String, Vec<Replaced>) {
    let mut out = String::new();
    let mut at = 0;
    for (range, text) in edits {
        out.push_str(&src[at..range.start]);
        out.push_str(text);
        at = range.end;
    }
    out.push_str(&src[at..]);
    let replaced = edits
        .iter()
        .map(|(range, text)| Replaced {
            before: range.clone(),
            after_len: text.len(),
        })
        .collect();
    (out, replaced)
}

#[test]
fn touched_runs_are_the_items_each_replacement_reaches_in_both_texts() {
    let src = "fn a() { 1 }\nfn b() { 2 }\nfn c() { 3 }\n";
    let bounds = item_boundaries(src.as_bytes()).unwrap();
    let at = |s: &str| src.find(s).unwrap();
    let item = |name: &str| {
        let start = at(name);
        let k = bounds.partition_point(|&b| b <= start) - 1;
        bounds[k]..bounds[k + 1]
    };
    let runs = |edits: &[(Range<usize>, &str)]| {
        let (after, replaced) = replace_in(src, edits);
        touched_groups(&bounds, &replaced)
            .into_iter()
            .map(|(was, now)| (&src[was], after[now].to_owned()))
            .collect::<Vec<_>>()
    };
    let (a, b, c) = (item("fn a"), item("fn b"), item("fn c"));
    // One replacement inside `b`, after one in `a` that changes the length.
    assert_eq!(
        runs(&[(at("1")..at("1") + 1, "100"), (at("2")..at("2") + 1, "")]),
        [
            (&src[a.clone()], "fn a() { 100 }".to_owned()),
            (&src[b.clone()], "\nfn b() {  }".to_owned())
        ]
    );
    // An insertion where `a` ends and `b` begins reaches both; `c` is apart.
    assert_eq!(
        runs(&[(b.start..b.start, "\n// x"), (at("3")..at("3"), "-")]),
        [
            (
                &src[a.start..b.end],
                "fn a() { 1 }\n// x\nfn b() { 2 }".to_owned()
            ),
            (&src[c.clone()], "\nfn c() { -3 }\n".to_owned())
        ]
    );
    // A replacement from inside `b` into `c` joins them; at the very end, the last item.
    assert_eq!(
        runs(&[(at("2")..at("3"), "")]),
        [(&src[b.start..c.end], "\nfn b() { 3 }\n".to_owned())]
    );
    assert_eq!(
        runs(&[(src.len()..src.len(), "// end")]),
        [(&src[c.clone()], "\nfn c() { 3 }\n// end".to_owned())]
    );
}

/// A change that leaves a bracket open (the result cannot be cut), in files of this
/// repository: where a run parsed alone shows errors, a whole parse of the result has errors
/// too, those errors lie in the run, and an original without errors gives none.
#[test]
fn a_result_that_cannot_be_cut_is_judged_by_its_runs_as_a_whole_parse_would() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let (mut judged, mut files) = (0, 0);
    for (path, src) in rust_files(root) {
        if !super::super::matching::syntax_errors(&src, Lang::Rust).is_empty() {
            continue;
        }
        let Some(bounds) = item_boundaries(src.as_bytes()) else {
            continue;
        };
        files += 1;
        // The last `}` of a few items swallowed by a comment, and an opened parenthesis.
        let items: Vec<Range<usize>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
        for item in items.iter().step_by(items.len().div_ceil(4)) {
            let text = &src[item.clone()];
            let Some(close) = text.rfind('}') else {
                continue;
            };
            let close = item.start + close;
            let open = item.start + text.find('{').unwrap_or(0) + 1;
            for edits in [
                vec![(close..close, "// swallowed ")],
                vec![(open..open, " ( ")],
            ] {
                let (after, replaced) = replace_in(&src, &edits);
                if item_boundaries(after.as_bytes()).is_some() {
                    continue;
                }
                let Some(found) = broken_groups_errors(&src, &after, &replaced, &|_| true) else {
                    continue;
                };
                judged += 1;
                assert!(
                    !super::super::matching::syntax_errors(&after, Lang::Rust).is_empty(),
                    "{path}: {edits:?}: no error in a whole parse"
                );
                assert!(found.before.is_empty(), "{path}: {:?}", found.before);
                let moved = after.len() - src.len();
                for e in &found.after {
                    assert!(
                        e.byte >= item.start && e.byte <= item.end + moved,
                        "{path}: {edits:?}: error at {} outside {item:?}",
                        e.byte
                    );
                }
            }
        }
    }
    assert!(judged > files, "{judged} changes judged in {files} files");
}

#[test]
fn changed_units_are_the_statements_or_members_a_change_is_in_or_the_items_around_it() {
    let src = "impl S {\n    fn a() { 1 }\n    fn b() { 2 }\n}\nfn x() {}\nfn y() {}\n\
               fn z() {\n    let a = 1;\n    let b = 2;\n    a + b\n}\n";
    let at = |s: &str| src.find(s).unwrap();
    let units = |edits: &[(Range<usize>, &str)]| {
        let (after, replaced) = replace_in(src, edits);
        let changed = changed_units(&LexedFile::new(&after).unwrap(), &replaced).unwrap();
        let text = |r: &Range<usize>| after[r.clone()].trim().to_owned();
        (
            changed.cut.ranges.iter().map(text).collect::<Vec<_>>(),
            changed.cut.inner.iter().map(text).collect::<Vec<_>>(),
            changed.bodies.iter().map(text).collect::<Vec<_>>(),
        )
    };
    // Inside one method whose body is a tail alone: that method, as an inner run.
    assert_eq!(
        units(&[(at("2")..at("2") + 1, "20")]),
        (
            vec!["fn b() { 20 }".to_owned()],
            vec!["fn b() { 20 }".to_owned()],
            vec![]
        )
    );
    // Across two methods: the whole impl; in a top-level function: that function.
    let (ranges, inner, _) = units(&[(at("1")..at("2") + 1, "10 }\n    fn c() { 30")]);
    assert!(
        ranges[0].starts_with("impl S") && inner.is_empty(),
        "{ranges:?}"
    );
    assert_eq!(
        units(&[(at("x()"), "z2()")].map(|(a, t)| (a..a + 3, t))),
        (vec!["fn z2() {}".to_owned()], vec![], vec![])
    );
    // In a statement of a function's body: that statement; across two, both.
    let z = "fn z() {\n    let a = 1;\n    let b = 20;\n    a + b\n}".to_owned();
    assert_eq!(
        units(&[(at("= 2")..at("= 2") + 3, "= 20")]),
        (vec!["let b = 20;".to_owned()], vec![], vec![z])
    );
    let (ranges, _, bodies) = units(&[(at("1;")..at("= 2") + 3, "10;\n    let b = 2")]);
    assert_eq!(
        (ranges, bodies.len()),
        (vec!["let a = 10;\n    let b = 2;".to_owned()], 1)
    );
    // In the tail, which alone would not parse: the function.
    let (ranges, _, bodies) = units(&[(at("a + b"), "a - b")].map(|(a, t)| (a..a + 5, t)));
    assert!(
        ranges[0].starts_with("fn z()") && bodies.is_empty(),
        "{ranges:?}"
    );
    // A whole item deleted: the two items that now meet.
    let (ranges, _, _) = units(&[(at("\nfn x")..at("\nfn y"), "")]);
    assert!(
        ranges[0].starts_with("impl S") && ranges[0].ends_with("fn y() {}"),
        "{ranges:?}"
    );
}

/// A change inside statements or methods is judged by those runs alone
/// ([`changed_units_errors`]): over the files of this repository, a statement added at the
/// start of some function bodies, and a prefix to the names of some methods, valid or not. Where the runs parse alone, a whole parse of the result has no error; where the
/// addition is broken, they have errors, all at the addition, and so has a whole parse.
#[test]
fn a_change_inside_statements_or_members_is_judged_by_its_runs_as_a_whole_parse_would() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let (judged, statements, members) = judge_additions(rust_files(root), usize::MAX);
    assert!(
        statements > 500 && members > 50,
        "{judged} judged, {statements} by statements, {members} by members"
    );
}

/// The same over a tree of real sources: `XCSH_PARTIAL_CORPUS=dir cargo test --release -p
/// xcsh-tools -- --ignored additions_are_judged_by_their_runs_on_a_corpus`.
#[test]
#[ignore = "minutes; needs XCSH_PARTIAL_CORPUS"]
fn additions_are_judged_by_their_runs_on_a_corpus() {
    let dir = std::env::var("XCSH_PARTIAL_CORPUS").expect("XCSH_PARTIAL_CORPUS");
    let (judged, statements, members) = judge_additions(rust_files(&dir), 4);
    eprintln!("{judged} judged, {statements} by statements, {members} by members");
    assert!(judged > 1000 && statements > 0 && members > 0);
}

/// [`a_change_inside_statements_or_members_is_judged_by_its_runs_as_a_whole_parse_would`]
/// over `files`, at most `per_file` places of each kind in each: how many changes were
/// judged, and how many of them by statements and by members.
fn judge_additions(
    files: impl Iterator<Item = (String, String)>,
    per_file: usize,
) -> (usize, usize, usize) {
    let (mut judged, mut statements, mut members) = (0, 0, 0);
    for (path, src) in files {
        if src.len() < SMALL_FILE
            || !super::super::matching::syntax_errors(&src, Lang::Rust).is_empty()
        {
            continue;
        }
        let Some(bounds) = item_boundaries(src.as_bytes()) else {
            continue;
        };
        // Function bodies' starts (top-level and members), and members' names.
        let (mut bodies, mut heads): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for w in bounds.windows(2) {
            let Some(lx) = Lexed::new(src.as_bytes(), w[0]..w[1]) else {
                continue;
            };
            let units = lx.nested_units(w[0]..w[1]);
            let functions = std::iter::once(w[0]..w[1]).chain(units.iter().map(|(_, u)| u.clone()));
            for unit in functions {
                if let Some(b) = lx.statement_boundaries(unit.clone())
                    && !bodies.contains(&b[0])
                {
                    bodies.push(b[0]);
                }
            }
            // Members' names: `fn name`, `pub fn name` (not in a doc comment before them).
            for (_, unit) in &units {
                let text = src[unit.clone()].trim_start();
                let head = unit.start + (unit.len() - text.len());
                let name = ["fn ", "pub fn "]
                    .iter()
                    .find(|k| text.starts_with(*k))
                    .map(|k| head + k.len());
                if let Some(at) = name
                    && !heads.contains(&at)
                {
                    heads.push(at);
                }
            }
        }
        let every = |places: &[usize]| {
            let step = (places.len() / per_file.min(places.len()).max(1)).max(1);
            places
                .iter()
                .step_by(step)
                .take(per_file)
                .copied()
                .collect::<Vec<_>>()
        };
        let additions = every(&bodies)
            .into_iter()
            .flat_map(|at| [(at, " let _probe = 0;", true), (at, " let = ;", false)])
            .chain(
                every(&heads)
                    .into_iter()
                    .flat_map(|at| [(at, "_probe_", true), (at, "1", false)]),
            );
        for (at, addition, valid) in additions {
            let (after, replaced) = replace_in(&src, &[(at..at, addition)]);
            let Some(lexed) = LexedFile::new(&after) else {
                continue;
            };
            let Some(found) = changed_units_errors(&src, &lexed, &replaced, &|_| true) else {
                continue;
            };
            let changed = changed_units(&lexed, &replaced).unwrap();
            judged += 1;
            statements += usize::from(!changed.bodies.is_empty());
            members += usize::from(!changed.cut.inner.is_empty());
            let whole = super::super::matching::syntax_errors(&after, Lang::Rust);
            let place = format!("{path}: at {at} ({addition})");
            assert_eq!(found.after.is_empty(), valid, "{place}: {:?}", found.after);
            assert_eq!(whole.is_empty(), valid, "{place}: whole parse {whole:?}");
            assert!(found.before.is_empty(), "{place}: {:?}", found.before);
            let run = changed
                .cut
                .ranges
                .iter()
                .find(|r| r.start <= at && at + addition.len() <= r.end);
            let run = run.unwrap_or_else(|| panic!("{place}: in no run {:?}", changed.cut.ranges));
            for e in &found.after {
                assert!(
                    run.start <= e.byte && e.byte <= run.end,
                    "{place}: error at {} outside {run:?}",
                    e.byte
                );
            }
        }
    }
    (judged, statements, members)
}

/// What a whole parse finds broken, the guard's runs do not judge clean: they find an error,
/// or leave the file to the whole comparison (`None`).
fn assert_not_judged_clean(src: &str, after: &str, replaced: &[Replaced], what: &str) {
    let verdict = changed_items_errors(src, after, replaced, &|_| true);
    assert!(
        verdict.as_ref().is_none_or(|found| !found.after.is_empty()),
        "{what}: judged clean: {verdict:?}"
    );
}

/// Two changed runs that tree-sitter joins into one node when parsed together (a brace macro
/// call, then a run that starts with `.`: `m! { b }.x();`, a reviewer's case) hide the error
/// the file has; the guard sees the join and leaves them to a whole parse.
#[test]
fn changed_runs_read_as_one_node_are_not_judged_together() {
    let pad: String = (0..400).map(|i| format!("fn pad_{i}() {{}}\n")).collect();
    let src = format!("m! {{ a }}\n{pad}const A: u8 = 0;\nconst C: u8 = 1;\n");
    assert!(super::super::matching::syntax_errors(&src, Lang::Rust).is_empty());
    let c = src.find("const C: u8 = 1").unwrap();
    let (after, replaced) = replace_in(&src, &[(5..6, "b"), (c..c + 15, ".x()")]);
    assert!(after.starts_with("m! { b }") && after.ends_with("\n.x();\n"));
    assert!(!super::super::matching::syntax_errors(&after, Lang::Rust).is_empty());
    let bounds = item_boundaries(after.as_bytes()).unwrap();
    let x = after.rfind(".x").unwrap();
    let i = bounds.partition_point(|&b| b <= x);
    let last = bounds[i - 1]..bounds[i];
    let joined = parse_included(&after, &[0..bounds[1], last.clone()]).unwrap();
    assert!(
        spans_two_ranges(joined.root_node(), &[0..bounds[1], last]),
        "tree-sitter no longer joins them: {}",
        joined.root_node().to_sexp()
    );
    assert_not_judged_clean(&src, &after, &replaced, "the join");
}

/// Changes whose text is inside one item but that change how the text around it reads (a
/// reviewer's cases): a block comment's opener deleted (its closer is code now, in the next
/// item), an item's continuation deleted (the item before loses its `;`), at the top level and
/// in a body. Each is left to the whole comparison, which finds the error.
#[test]
fn a_change_that_moves_a_boundary_around_it_is_not_judged_by_its_runs_alone() {
    let pad: String = (0..400).map(|i| format!("fn pad_{i}() {{}}\n")).collect();
    let cases = [
        (
            format!("fn c() {{}}\n/*fn b() {{}}\nfn e() {{}}\n*/\nfn d() {{}}\n{pad}"),
            "/*",
            "",
        ),
        (
            format!("const C: Foo = Foo {{ a: 1 }}\n    .with_b(2);\nfn d() {{}}\n{pad}"),
            "    .with_b(2);",
            "",
        ),
        (
            format!("const C: Foo = Foo {{ a: 1 }}\n    .with_b(2);\nfn d() {{}}\n{pad}"),
            "\n    .with_b(2);",
            "\n",
        ),
        (
            format!(
                "impl S {{\n    const X: Foo = Foo {{ a: 1 }}.with(2);\n    fn d() {{}}\n}}\n{pad}"
            ),
            ".with(2);",
            "",
        ),
    ];
    for (src, old, new) in cases {
        assert!(
            super::super::matching::syntax_errors(&src, Lang::Rust).is_empty(),
            "{src}"
        );
        let at = src.find(old).unwrap();
        let (after, replaced) = replace_in(&src, &[(at..at + old.len(), new)]);
        assert!(
            !super::super::matching::syntax_errors(&after, Lang::Rust).is_empty(),
            "{old:?} -> {new:?} breaks nothing"
        );
        assert_not_judged_clean(&src, &after, &replaced, &format!("{old:?} -> {new:?}"));
    }
}

#[test]
fn brackets_that_do_not_balance_are_found_outside_literals_and_comments() {
    use lex::Unbalanced::{Missing, Unexpected};
    let of = |src: &str| lex::unbalanced(src.as_bytes(), 0..src.len());
    // `closer` is missing right after the first `token` of `src`.
    let missing_after = |src: &str, token: char, closer| {
        let at = src.find(token).unwrap() + 1;
        assert_eq!(of(src), Some(Missing { at, closer }), "{src}");
    };
    assert_eq!(of("fn f() { g(\"}\", '(', /* ] */ [1]) } // {"), None);
    // A `}` swallowed by a comment: the closer is missing after the last token.
    missing_after("fn f() {\n    g(); // done }\n", ';', "}");
    // A `(` left open: its `)` is missing where the `}` closes the block around it.
    missing_after("fn f() { x + (1 }", '1', ")");
    assert_eq!(of("a) b"), Some(Unexpected(1..2)));
    // What does not lex is no verdict.
    assert_eq!(of("f(\"open"), None);
}

/// A reviewer's cases against the guard's runs, each judged as a whole parse judges it: a
/// statement added after a block's tail (the original run, the tail alone, has an error of
/// its own that would pass for the result's), `else` after a block that is no `if`, brackets
/// moved from one run to another, and a run that reads as a shebang.
#[test]
fn runs_the_guard_parses_alone_agree_with_a_whole_parse() {
    let pad: String = (0..300).map(|i| format!("fn pad_{i}() {{}}\n")).collect();
    let whole_errors =
        |text: &str| !super::super::matching::syntax_errors(text, Lang::Rust).is_empty();
    let introduces = |src: &str, edits: &[(Range<usize>, &str)]| {
        let (after, replaced) = replace_in(src, edits);
        let expected = whole_errors(&after);
        assert!(!whole_errors(src), "{src}");
        let found = changed_items_errors(src, &after, &replaced, &|_| true);
        let judged = found.map(|f| !f.after.is_empty() && f.before.is_empty());
        (expected, judged)
    };
    let check = |src: String, edits: &[(Range<usize>, &str)]| {
        let (expected, judged) = introduces(&src, edits);
        assert!(
            judged.is_none_or(|judged| judged == expected),
            "{edits:?}: a whole parse says {expected}, the runs {judged:?}"
        );
    };
    let src = format!("fn f() -> u8 {{\n    let d = 2;\n    d\n}}\n{pad}");
    let at = src.find("    d\n}").unwrap() + 6;
    check(src, &[(at..at, "    let x = 1;")]);

    let src = format!("fn f2() {{\n    let d = 2;\n    loop {{ break; }}\n    ok()\n}}\n{pad}");
    let at = src.find("ok").unwrap();
    check(src, &[(at..at + 2, "else")]);

    let src = format!("fn a() {{\n    x();\n}}\nfn p() {{}}\nfn b() {{\n    y();\n}}\n{pad}");
    let a_end = src.find("}\nfn p").unwrap();
    let b_end = src.find("}\nfn pad_0").unwrap() + 1;
    check(
        src,
        &[
            (0..0, "#!/usr/bin/env run-cargo-script\n"),
            (a_end..a_end + 1, ""),
            (b_end..b_end, "}"),
        ],
    );

    let src = format!("fn a() {{}}\nfn b() {{}}\n{pad}");
    check(src, &[(9..9, " #! ")]);
}

/// What the syntax guard relies on for a small file whose original parses
/// ([`changed_items_errors`]): when what a change touched parses alone, the whole
/// result parses. Over the clean files under [`SMALL_FILE`] of this crate (its sources, tests
/// and fixtures), each changed at its items (an item added, `pub ` put before one, a broken
/// item added), at its functions' bodies (a statement added, valid or not) and at its members'
/// names (a prefix, valid or not).
#[test]
fn a_small_file_judged_clean_by_what_changed_parses_whole() {
    let (mut clean, mut broken) = (0, 0);
    let files = ignore::WalkBuilder::new(env!("CARGO_MANIFEST_DIR"))
        .build()
        .filter_map(|entry| {
            let path = entry.ok()?.into_path();
            let src = std::fs::read_to_string(&path).ok()?;
            (path.extension().is_some_and(|e| e == "rs") && src.len() < SMALL_FILE)
                .then(|| (path.display().to_string(), src))
        });
    for (path, src) in files {
        if src.is_empty() || !super::super::matching::syntax_errors(&src, Lang::Rust).is_empty() {
            continue;
        }
        let Some(bounds) = item_boundaries(src.as_bytes()) else {
            continue;
        };
        let mut places: Vec<(usize, &str)> = Vec::new();
        for &b in &bounds[..bounds.len() - 1] {
            let at = b + (src[b..].len() - src[b..].trim_start().len());
            places.extend([(at, "pub "), (at, "fn _probe() {}\n"), (at, "fn ( {}\n")]);
        }
        for w in bounds.windows(2) {
            let Some(lx) = Lexed::new(src.as_bytes(), w[0]..w[1]) else {
                continue;
            };
            let units = lx.nested_units(w[0]..w[1]);
            for unit in std::iter::once(w[0]..w[1]).chain(units.iter().map(|(_, u)| u.clone())) {
                if let Some(b) = lx.statement_boundaries(unit) {
                    places.extend([(b[0], " let _probe = 0;"), (b[0], " let = ;")]);
                }
            }
            for (_, unit) in &units {
                let text = src[unit.clone()].trim_start();
                if let Some(name) = text.strip_prefix("fn ") {
                    let at = unit.end - name.len();
                    places.extend([(at, "_probe_"), (at, "1")]);
                }
            }
        }
        for (at, addition) in places {
            let (after, replaced) = replace_in(&src, &[(at..at, addition)]);
            let Some(found) = changed_items_errors(&src, &after, &replaced, &|_| false) else {
                continue;
            };
            let whole = super::super::matching::syntax_errors(&after, Lang::Rust);
            let place = format!("{path}: at {at} ({addition:?})");
            if found.after.is_empty() {
                assert!(
                    whole.is_empty(),
                    "{place}: judged clean, whole parse {whole:?}"
                );
                clean += 1;
            } else {
                assert!(
                    !whole.is_empty(),
                    "{place}: errors {:?}, none whole",
                    found.after
                );
                broken += 1;
            }
        }
    }
    assert!(
        clean > 200 && broken > 200,
        "{clean} judged clean, {broken} broken"
    );
}

/// tree-sitter reads a shebang after leading whitespace or comments too (no error), but not
/// after an item: a change that puts one before it (an item inserted at byte 0) breaks the
/// file, and the cut must not judge it clean (the lexer does not read `#!x`: whole parse).
#[test]
fn an_item_put_before_a_late_shebang_is_not_judged_clean() {
    for src in [
        "\n#!x\nfn a() {}\n",
        "  #!x\nfn a() {}\n",
        "// c\n#!x\nfn a() {}\n",
        "/* c */#!x\nfn a() {}\n",
    ] {
        assert!(
            super::super::matching::syntax_errors(src, Lang::Rust).is_empty(),
            "{src:?}"
        );
        let (after, replaced) = replace_in(src, &[(0..0, "fn z() {}\n")]);
        assert!(!super::super::matching::syntax_errors(&after, Lang::Rust).is_empty());
        assert_not_judged_clean(src, &after, &replaced, &format!("{src:?}"));
    }
}

/// A replacement of a whole member is judged by that member alone, even where it holds
/// members of its own (an `impl`'s methods) and the item around it has errors elsewhere
/// (js-sys's `pub type X;` in an `extern` block, which tree-sitter-rust fails on); one that
/// reaches out of a member into the item's own text (a `mod`'s header) is judged with the
/// item, where that text is parsed.
#[test]
fn a_replacement_is_judged_by_the_smallest_member_that_holds_it() {
    let pad: String = (0..300).map(|i| format!("fn pad_{i}() {{}}\n")).collect();
    let imp = "    impl Default for S {\n        fn default() -> Self {\n            S\n        }\n    }\n";
    let src = format!("{pad}mod m {{\n    extern \"C\" {{\n        pub type T;\n    }}\n{imp}}}\n");
    assert!(!super::super::matching::syntax_errors(&src, Lang::Rust).is_empty());
    let at = src.find(imp).unwrap() + 4;
    let whole = at..at + imp.trim().len();
    let (after, replaced) = replace_in(
        &src,
        &[(
            whole,
            &imp.trim()
                .replace("impl Default", "impl core::default::Default"),
        )],
    );
    let changed = changed_units(&LexedFile::new(&after).unwrap(), &replaced).unwrap();
    assert_eq!(changed.cut.ranges.len(), 1);
    let run = &after[changed.cut.ranges[0].clone()];
    assert!(run.trim_start().starts_with("impl core::default"), "{run}");
    let found = changed_items_errors(&src, &after, &replaced, &|_| true).unwrap();
    assert_eq!((found.after.len(), found.before.len()), (0, 0));

    // The same length of text, from the header into the only member: the header breaks.
    let src = format!("{pad}mod tests {{\n    fn a() {{}}\n}}\n");
    let at = src.find("mod tests").unwrap();
    let end = src.find("{}").unwrap() + 2;
    let (after, replaced) = replace_in(&src, &[(at..end, "mod 12345 {\n    fn a() {}")]);
    assert!(!super::super::matching::syntax_errors(&after, Lang::Rust).is_empty());
    assert_not_judged_clean(&src, &after, &replaced, "the header");
}

/// A pattern that may be an `impl` (or a `trait`) is cut at the items of modules: an `impl`
/// in a `mod` is parsed whole, and alone; the rest of the module is not (here an `extern`
/// block with `pub type T;`, which tree-sitter-rust fails on, as in js-sys, and which would
/// have the whole file parsed). Through that cut the matches are a whole parse's.
#[test]
fn a_pattern_that_may_be_an_impl_is_cut_at_the_items_of_modules() {
    let pad: String = (0..300).map(|i| format!("fn pad_{i}() {{}}\n")).collect();
    let imp = "    impl Default for S {\n        fn default() -> Self {\n            S(Default::default())\n        }\n    }\n";
    let src = format!(
        "{pad}mod m {{\n    extern \"C\" {{\n        pub type T;\n    }}\n{imp}    fn g() {{}}\n}}\n"
    );
    let ops = super::super::CompiledOps::for_search(
        &["impl Default for $T { $$$B }".to_owned()],
        Some(Lang::Rust),
    )
    .unwrap();
    let lang_ops = ops.for_lang(Lang::Rust).unwrap();
    let anchors = lang_ops.prefilter.anchors(0, src.as_bytes());
    let cut = cut_for(&src, Lang::Rust, lang_ops, &[0], &[anchors]).unwrap();
    let unit = src.find(imp).unwrap() - 1..src.find("    fn g").unwrap() - 1;
    assert_eq!(
        (&cut.ranges, &cut.inner),
        (&vec![unit.clone()], &vec![unit])
    );
    let part = parse_ranges(&src, &cut).unwrap();
    assert!(
        !has_syntax_error(&part) && part.root().get_inner_node().end_byte() < src.len(),
        "parsed whole instead"
    );
    // And it finds what the whole parse, error and all, finds.
    let OpKind::Pattern { pattern, .. } = &lang_ops.ops[0].kind else {
        unreachable!("a pattern")
    };
    let found = |root: &Root| {
        let mut out = Vec::new();
        super::super::matching::for_each_match(root, pattern, false, None, |m| {
            out.push((m.range(), m.text().to_string()));
        });
        out
    };
    let whole = super::super::matching::parse(&src, Lang::Rust).unwrap();
    assert!(has_syntax_error(&whole));
    assert_eq!(found(&part), found(&whole));
    assert_eq!(found(&part).len(), 1);
    // Without the extern block's error: what the cut finds is what a whole parse finds, for
    // impls and traits in modules, nested, with attributes, beside macro calls.
    let src = format!(
        "{pad}mod m {{\n    m!(x);\n{imp}    #[cfg(x)]\n    mod n {{\n        unsafe impl Send for S {{}}\n        \
         pub trait T {{ fn f(&self) {{ impl Default for X {{ fn default() -> X {{ X }} }} }} }}\n    }}\n}}\n\
         impl Default for Y {{ fn default() -> Y {{ Y }} }}\n"
    );
    let whole = super::super::matching::parse(&src, Lang::Rust).unwrap();
    assert!(!whole.root().get_inner_node().has_error());
    assert!(check_matches_through_the_cut("inline", &src, &whole) >= 8);
}
