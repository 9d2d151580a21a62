//! The shape's verdicts, by example and against the full matcher.

use std::sync::OnceLock;

use ast_grep_core::Pattern;

use super::lexer::Tokens;
use crate::engine::Lang;
use crate::engine::matching::{Root, for_each_match, parse};
use crate::engine::prefilter::shape_of;

fn shape(pat: &str) -> super::Shape {
    let pattern = Pattern::try_new(pat, Lang::Rust.support_lang()).unwrap();
    shape_of(&pattern, Lang::Rust).unwrap_or_else(|| panic!("`{pat}` has no shape"))
}

/// Whether the shape of `pat` may match somewhere in `src`.
fn may(pat: &str, src: &str) -> bool {
    let Some(tokens) = Tokens::lex(src.as_bytes()) else {
        return true;
    };
    !shape(pat).anchors(&tokens).0.is_empty()
}

#[test]
fn a_function_without_parameters() {
    let p = "fn $F() { $$$B }";
    assert!(may(p, "fn f() { x }"));
    // ast-grep 0.51.1 does not step over a return type either (nor over `pub`): the block
    // must follow the parameters.
    assert!(!may(p, "fn f() -> Result<u8, E> { x }"));
    // Nor over generics (a named node before the parameters) or a where clause.
    assert!(!may(p, "fn f<T: Fn(u8)>() where T: Copy { }"));
    assert!(may(p, "fn f( /* none */ ) {}"));
    assert!(!may(p, "fn f(x: u8) { x }\nfn g(&self) -> u8 { 1 }"));
    // A function without parameters inside another's body.
    assert!(may(p, "fn f(x: u8) { fn inner() {} }"));
    assert!(!may(p, "fn f(x: u8);"));
}

#[test]
fn an_inherent_impl() {
    let p = "impl $T { $$$B }";
    assert!(may(p, "impl Foo { fn f() {} }"));
    assert!(may(p, "impl<T> Foo<T> where T: Clone { }"));
    assert!(!may(
        p,
        "impl Foo for Bar { fn f() {} }\nimpl<'a> Tr for &'a X {}"
    ));
    // A higher-ranked bound is no `impl … for …`.
    assert!(may(p, "impl dyn for<'a> Fn(&'a u8) { }"));
    // A `for` loop inside the type (a const generic block) has its block.
    assert!(may(p, "impl Foo<{ for i in 0..1 {} ; 1 }> {}"));
}

#[test]
fn if_else_needs_its_else() {
    let p = "if $C { $A } else { $B }";
    assert!(may(p, "fn f() { if a { b } else { c } }"));
    assert!(may(
        p,
        "fn f() { if let Some(x) = y { b } /* c */ else { c } }"
    ));
    assert!(!may(p, "fn f() { if a { b } let x = 1; if c { d } }"));
    assert!(!may(p, "fn f() { if a { b } else if c { d } }"));
    assert!(may(p, "fn f() { if a { b } else if c { d } else { e } }"));
}

#[test]
fn a_let_with_a_type() {
    let p = "let $X: $T = $V;";
    assert!(may(p, "fn f() { let x: u8 = 1; }"));
    assert!(may(p, "fn f() { let (a, b): (u8, u8) = (1, 2); }"));
    assert!(!may(
        p,
        "fn f() { let x = 1; let y = g(a, b); }\nconst C: u8 = 1;"
    ));
}

#[test]
fn a_struct_literal_needs_a_type_path_before_its_brace() {
    let p = "$S { $$$F }";
    for yes in [
        "fn f() -> S { S { a: 1 } }",
        "fn f() { let x = a::b::S { a }; }",
        "fn f() { g(Self { a }) }",
        "fn f() { let v = Foo::<u8> { a }; }",
        "fn f() { let v = <T as Tr>::Out { a }; }",
        "fn f() { if x == S { a } {} }",
        "fn f() { m(|x| S { x }) }",
        "fn f() { match x { A => S { a }, _ => T {} } }",
        "fn f() { let p = &mut S { a }; }",
        "fn f() { let s = S { a: 1, ..S { a: 2 } }; let r = x..Self { a }; }",
        "fn f() { match x { _ if S { a: 1 } == y => {} _ => {} } }",
        "fn f() { match x { Some(v) if a::S { a: v } == y => {} } }",
        // `dyn` is a word in edition 2015.
        "fn f() { let d = dyn { a: 1 }; }",
        // Every way a field list starts.
        "fn f() { S {} }",
        "fn f() { S { #[cfg(x)] a: 1 } }",
        "fn f() { S { 0: a, 1: b } }",
        "fn f() { S { ..Default::default() } }",
        "fn f() { S { r#type: 1 } }",
        "fn f() { S { a, b } }",
        "fn f() { S { /* none */ } }",
        "fn f() { S { a: b::c } }",
        // What rustc refuses and tree-sitter reads without an error (a helper's review).
        "fn f() { S { , } }",
        "fn f() { S { a:::b } }",
    ] {
        assert!(may(p, yes), "{yes}");
    }
    for no in [
        "struct S { a: u8 }\nenum E { A }\nimpl S { fn f(&self) {} }",
        "impl<T> Tr for S<T> { }\nimpl<T> S<T> where T: Copy, { }",
        "fn f() -> Result<u8, E> { if x { } else { } }",
        "fn f() -> Box<dyn Fn() -> u8> { match self.x { _ => {} } }",
        "fn f() { for x in xs { while go { loop { } } } unsafe { } }",
        "fn f() { if a { } else if b { } let v = if c { 1 } else { 2 }; g(if d { }) }",
        "mod m { fn g() -> Self { } }\ntrait T { }",
        "fn f() { if let S { a } = x.y { } let S { b } = y; }",
        // A block after a where clause, or a body after a return type: no field list.
        "fn f<T>(x: T) where T: Debug { let y = x; }",
        "fn f<T>() where T: Tr<A = u8> { g(); }",
        "fn f() where Self: Sized { a::b(); }",
        "fn f() where Self: Sized { 'l: loop {} }",
        "fn f() where Self: Sized { (a, b) }",
        "fn f() where Self: Sized { a.b }",
    ] {
        assert!(!may(p, no), "{no}");
    }
}

#[test]
fn literals_comments_and_what_does_not_lex() {
    let p = "fn $F() { $$$B }";
    // In strings and comments, nothing counts.
    assert!(!may(
        p,
        "const S: &str = \"fn f() {}\"; // fn g() {}\n/* fn h() {} */"
    ));
    assert!(!may(p, "const S: &str = r#\"fn f() {}\"#;"));
    // What does not lex may match anywhere.
    assert!(may(p, "fn f(x: u8) { \"open }"));
    // A raw identifier is opaque: it may be a metavariable's node, but no skip steps over it
    // (it is a named node).
    assert!(may(p, "fn r#f() {}"));
    assert!(!may(p, "fn f(r#x: u8) {}"));
    // One that cannot hide the token looked for is not (a float holds no `fn`), and one
    // that can is (`fn` glued to a no-break space, which tree-sitter may read as a space).
    assert!(!may(p, "const X: f64 = 1.0; fn f(x: u8) { 2.5e-3 }"));
    assert!(may(p, "const X: f64 = 1.0; fn\u{a0}f() {}"));
    // Lifetimes are not char literals.
    assert!(!may(p, "fn f<'a>(x: &'a u8) -> char { '(' }"));
}

#[test]
fn patterns_without_a_token_have_no_shape() {
    let pattern = Pattern::try_new("$A", Lang::Rust.support_lang()).unwrap();
    assert!(shape_of(&pattern, Lang::Rust).is_none());
    let pattern = Pattern::try_new("$A?", Lang::Rust.support_lang()).unwrap();
    assert!(shape_of(&pattern, Lang::Rust).is_some());
    let pattern = Pattern::try_new("console.log($A)", Lang::JavaScript.support_lang()).unwrap();
    assert!(shape_of(&pattern, Lang::JavaScript).is_none());
}

/// Broad patterns, as agents write them: the benchmark's set and a few more (and one with a
/// word, `Default`, whose cut stops at the items of modules as `impl $T { $$$B }`'s does).
pub(crate) const BROAD: &[&str] = &[
    "fn $F() { $$$B }",
    "fn $F($$$P) -> $R { $$$B }",
    "impl $T { $$$B }",
    "impl $Tr for $T { $$$B }",
    "impl Default for $T { $$$B }",
    "trait $T { $$$B }",
    "|$A| $B",
    "if $C { $A } else { $B }",
    "use $P;",
    "$X?",
    "match $E { $$$A }",
    "$P => $E,",
    "let $X: $T = $V;",
    "let $X = $V;",
    "$S { $$$F }",
    "$X.$M($$$A)",
    "$X.$M().$N()",
    "Some($X)",
    "pub fn $F(&self) -> $R { $$$B }",
    "#[derive($$$D)]",
    "$A == $B",
    "&mut $X",
    "while let $P = $E { $$$B }",
    "for $X in $I { $$$B }",
    "return $X;",
    "struct $S { $$$F }",
    "$F::<$T>($$$A)",
    "'a: loop { $$$B }",
    "\"x\"",
    "unsafe { $$$B }",
    "$X as $T",
    "[$$$A]",
    "($A, $B)",
    "macro_rules! $M { $$$R }",
    "println!($$$A)",
];

/// Every match the full matcher finds in `root` covers one of the shape's anchors.
fn check(pat: &str, path: &str, src: &str, root: &Root) -> usize {
    let Ok(pattern) = Pattern::try_new(pat, Lang::Rust.support_lang()) else {
        return 0;
    };
    let Some(shape) = shape_of(&pattern, Lang::Rust) else {
        return 0;
    };
    let (starts, len) = match Tokens::lex(src.as_bytes()) {
        Some(tokens) => shape.anchors(&tokens),
        None => return 0,
    };
    let mut found = 0;
    for_each_match(root, &pattern, true, None, |m| {
        let r = m.range();
        let i = starts.partition_point(|&p| p < r.start);
        assert!(
            starts.get(i).is_some_and(|&p| p + len <= r.end),
            "`{pat}` matches {path} at {r:?} ({:?}), where its shape saw no match",
            m.text()
        );
        found += 1;
    });
    found
}

/// The Rust files the differential tests read: this repository's, and those under
/// `XCSH_SHAPE_CORPUS` when it is set, with no syntax error (see the module).
fn corpus() -> &'static [(String, String, Root)] {
    static FILES: OnceLock<Vec<(String, String, Root)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let mut dirs = vec![concat!(env!("CARGO_MANIFEST_DIR"), "/..").to_owned()];
        dirs.extend(std::env::var("XCSH_SHAPE_CORPUS").ok());
        let mut out = Vec::new();
        for dir in dirs {
            for entry in ignore::WalkBuilder::new(dir).build().flatten() {
                let path = entry.path();
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let Ok(src) = std::fs::read_to_string(path) else {
                    continue;
                };
                let Some(root) = parse(&src, Lang::Rust) else {
                    continue;
                };
                if src.len() > 40_000 || root.root().get_inner_node().has_error() {
                    continue;
                }
                out.push((path.display().to_string(), src, root));
            }
        }
        out
    })
}

#[test]
fn broad_patterns_lose_no_match_in_this_repository() {
    let files = corpus();
    assert!(files.len() > 100, "{} files", files.len());
    let mut found = 0;
    for pat in BROAD {
        for (path, src, root) in files {
            found += check(pat, path, src, root);
        }
    }
    assert!(found > 1000, "{found} matches");
}

/// A pattern made from a real node: its text, with some of its named descendants (two levels
/// down) turned into metavariables, by `seed`.
fn pattern_from(root: &Root, src: &str, node_pick: usize, seed: u64) -> Option<String> {
    let mut nodes = Vec::new();
    let mut cursor = root.root().get_inner_node().walk();
    loop {
        let n = cursor.node();
        if n.is_named() && n.byte_range().len() < 400 && n.child_count() > 0 {
            nodes.push(n);
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                let node = *nodes.get(node_pick % nodes.len().max(1))?;
                let mut rng = seed | 1;
                let mut next = move || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng
                };
                let mut holes = Vec::new();
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    match next() % 5 {
                        0 => holes.push((child.byte_range(), false)),
                        1 => holes.push((child.byte_range(), true)),
                        2 => {
                            let mut c2 = child.walk();
                            for g in child.named_children(&mut c2) {
                                if next() % 2 == 0 {
                                    holes.push((g.byte_range(), next() % 3 == 0));
                                }
                            }
                        }
                        _ => {}
                    }
                }
                let range = node.byte_range();
                let mut text = String::new();
                let mut at = range.start;
                for (i, (hole, many)) in holes.iter().enumerate() {
                    text.push_str(&src[at..hole.start]);
                    text.push_str(if *many { "$$$" } else { "$" });
                    text.push_str(&format!("M{i}"));
                    at = hole.end;
                }
                text.push_str(&src[at..range.end]);
                return Some(text);
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 24, ..Default::default() })]

    /// Patterns cut from real code, generalised at random, lose no match to the shape on any
    /// file of the corpus.
    #[test]
    fn random_patterns_lose_no_match(
        file in proptest::prelude::any::<usize>(),
        node in proptest::prelude::any::<usize>(),
        seed in proptest::prelude::any::<u64>(),
    ) {
        let files = corpus();
        let (_, src, root) = &files[file % files.len()];
        if let Some(pat) = pattern_from(root, src, node, seed) {
            for (path, src, root) in files {
                check(&pat, path, src, root);
            }
        }
    }
}
