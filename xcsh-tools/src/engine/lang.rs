//! The languages the engine can parse: exactly the grammars compiled into this build.
//!
//! `ast-grep-language` lists 29 languages whatever grammars are compiled in, and parsing one
//! whose grammar feature is off reaches `unimplemented!`. [`Lang`] is the closed set that is
//! compiled (see the workspace `Cargo.toml`), so an unsupported name is refused here, with the
//! list of supported ones, before anything is parsed.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use ast_grep_language::SupportLang;

use super::EngineError;

/// A language whose tree-sitter grammar is compiled into this build.
///
/// Parse a user-given name with [`str::parse`] (case-insensitive; aliases such as `rs`, `py`,
/// `ts`, `js`, `jsx`, `golang` are accepted), or infer it from a file name with
/// [`Lang::from_path`] exactly as the ast-grep CLI 0.51.1 does.
///
/// ```
/// use xcsh_tools::engine::Lang;
///
/// assert_eq!("RS".parse::<Lang>()?, Lang::Rust);
/// assert_eq!("golang".parse::<Lang>()?, Lang::Go);
/// assert_eq!(Lang::from_path("src/app.mts".as_ref()), Some(Lang::TypeScript));
/// assert_eq!(Lang::from_path("README.md".as_ref()), None);
///
/// let err = "cobol".parse::<Lang>().unwrap_err();
/// assert!(err.to_string().contains("rust, python, typescript, tsx, javascript, go"));
/// # Ok::<(), xcsh_tools::engine::EngineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    /// Rust (`.rs`).
    Rust,
    /// Python (`.py`, `.py3`, `.pyi`, `.bzl`, `.bazel`).
    Python,
    /// TypeScript without JSX (`.ts`, `.cts`, `.mts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// JavaScript, JSX included (`.js`, `.cjs`, `.mjs`, `.jsx`).
    JavaScript,
    /// Go (`.go`).
    Go,
}

impl Lang {
    /// Every supported language, in the order they are listed in messages.
    pub const ALL: [Lang; 6] = [
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
    ];

    /// The canonical lower-case name (`"rust"`, `"tsx"`, …), accepted back by `parse`.
    pub const fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
            Lang::Go => "go",
        }
    }

    /// The names accepted for this language (case-insensitively), canonical name first.
    ///
    /// These are ast-grep's own aliases, so a name that works with the CLI works here.
    pub const fn aliases(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["rust", "rs"],
            Lang::Python => &["python", "py"],
            Lang::TypeScript => &["typescript", "ts"],
            Lang::Tsx => &["tsx"],
            Lang::JavaScript => &["javascript", "js", "jsx"],
            Lang::Go => &["go", "golang"],
        }
    }

    /// File extensions (without the dot, case-sensitive) that select this language.
    ///
    /// Copied from `ast-grep-language` 0.51.1 (`extensions()`), which the CLI uses both to
    /// infer a file's language and, with `-l`, to choose which files to walk.
    pub const fn extensions(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["rs"],
            Lang::Python => &["py", "py3", "pyi", "bzl", "bazel"],
            Lang::TypeScript => &["ts", "cts", "mts"],
            Lang::Tsx => &["tsx"],
            Lang::JavaScript => &["cjs", "js", "mjs", "jsx"],
            Lang::Go => &["go"],
        }
    }

    /// Infers the language from the file's extension, as the ast-grep CLI does: the exact,
    /// case-sensitive extension (`x.RS` is not Rust), nothing else.
    pub fn from_path(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        Lang::ALL
            .into_iter()
            .find(|lang| lang.extensions().contains(&ext))
    }

    /// The ast-grep language this maps to. Only compiled grammars are reachable from here,
    /// which is what keeps the engine away from ast-grep's `unimplemented!`.
    pub(crate) const fn support_lang(self) -> SupportLang {
        match self {
            Lang::Rust => SupportLang::Rust,
            Lang::Python => SupportLang::Python,
            Lang::TypeScript => SupportLang::TypeScript,
            Lang::Tsx => SupportLang::Tsx,
            Lang::JavaScript => SupportLang::JavaScript,
            Lang::Go => SupportLang::Go,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Lang {
    type Err = EngineError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Lang::ALL
            .into_iter()
            .find(|lang| {
                lang.aliases()
                    .iter()
                    .any(|alias| alias.eq_ignore_ascii_case(wanted))
            })
            .ok_or_else(|| EngineError::UnsupportedLang {
                given: s.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_parses_case_insensitively() {
        for lang in Lang::ALL {
            for alias in lang.aliases() {
                assert_eq!(alias.parse::<Lang>().ok(), Some(lang));
                assert_eq!(alias.to_uppercase().parse::<Lang>().ok(), Some(lang));
            }
        }
        assert_eq!(" Python ".parse::<Lang>().ok(), Some(Lang::Python));
    }

    #[test]
    fn languages_that_are_not_compiled_are_refused_with_the_list() {
        for name in ["java", "c", "html", "bash", "", "rustt"] {
            let err = name.parse::<Lang>().unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&format!("`{name}`")), "{msg}");
            // The message spells the list out: it must stay the compiled set.
            let supported = Lang::ALL.map(Lang::name).join(", ");
            assert!(msg.contains(&supported), "{msg}");
        }
    }

    #[test]
    fn extension_inference_matches_ast_grep() {
        // Must agree with ast-grep-language's own table for every compiled language.
        use ast_grep_language::Language as _;
        for lang in Lang::ALL {
            for ext in lang.extensions() {
                let name = format!("dir/file.{ext}");
                assert_eq!(Lang::from_path(Path::new(&name)), Some(lang), "{name}");
                assert_eq!(
                    SupportLang::from_path(&name),
                    Some(lang.support_lang()),
                    "{name}"
                );
            }
        }
        for name in ["x.RS", "x.rs.bak", "Makefile", "x.c", "x.java", ".rs"] {
            assert_eq!(Lang::from_path(Path::new(name)), None, "{name}");
        }
    }

    #[test]
    fn every_grammar_is_really_compiled() {
        use ast_grep_language::LanguageExt as _;
        for lang in Lang::ALL {
            let root = lang.support_lang().ast_grep("x");
            assert!(root.root().get_inner_node().child_count() > 0, "{lang}");
        }
    }
}
