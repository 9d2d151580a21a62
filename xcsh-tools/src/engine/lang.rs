//! The languages the engine can parse: every language `ast-grep-language` 0.51.1 offers,
//! each usable when its grammar is compiled into this build.
//!
//! `ast-grep-language` lists 29 languages whatever grammars are compiled in, and parsing one
//! whose grammar feature is off reaches `unimplemented!`. Each grammar is a cargo feature of
//! xcsh-tools (`lang-rust`, `lang-java`, …, or `all-languages`; the default is the six of
//! [`Lang::DEFAULT`]); [`Lang::ALL`] is the compiled set, and a name outside it is refused
//! here, before anything is parsed, with the list of usable languages or the feature to
//! enable.
//!
//! Names, aliases and file extensions are ast-grep's own: parsing goes through
//! `SupportLang::from_str` and inference through `SupportLang::from_path`, so a name or a
//! file the CLI understands is understood here the same way.
//!
//! One difference remains: the CLI also searches the `<script>` and `<style>` elements of
//! HTML files with JavaScript and CSS patterns (ast-grep's language injection); the engine
//! parses each file in its own language only.

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::LazyLock;

use ast_grep_language::{Alias, Language as _, SupportLang};

use super::EngineError;

/// A language ast-grep knows. Only those in [`Lang::ALL`] (whose grammar is compiled in)
/// can be used; the others are refused with the cargo feature that would enable them.
///
/// Parse a user-given name with [`str::parse`] (case-insensitive; ast-grep's aliases such as
/// `rs`, `py`, `ts`, `js`, `jsx`, `golang`, `cc`, `c++`, `cs`, `kt`, `rb`, `yml` are
/// accepted), or infer it from a file name with [`Lang::from_path`] exactly as the ast-grep
/// CLI 0.51.1 does.
///
/// ```
/// use xcsh_tools::engine::Lang;
///
/// assert_eq!("RS".parse::<Lang>()?, Lang::Rust);
/// assert_eq!("golang".parse::<Lang>()?, Lang::Go);
/// assert_eq!(Lang::from_path("src/app.mts".as_ref()), Some(Lang::TypeScript));
/// assert_eq!(Lang::from_path("README.txt".as_ref()), None);
///
/// let err = "cobol".parse::<Lang>().unwrap_err();
/// assert!(err.to_string().contains("rust, python, typescript, tsx, javascript, go"));
/// # Ok::<(), xcsh_tools::engine::EngineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
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
    /// Bash (`.sh`, `.bash`, `.zsh`, `.ksh`, `.bats`, …).
    Bash,
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.c++`, `.hpp`, `.hh`, `.cu`, `.ino`).
    Cpp,
    /// C# (`.cs`).
    CSharp,
    /// CSS (`.css`, `.scss`).
    Css,
    /// Dart (`.dart`).
    Dart,
    /// Elixir (`.ex`, `.exs`).
    Elixir,
    /// Haskell (`.hs`).
    Haskell,
    /// HCL and Terraform (`.hcl`, `.tf`, `.tfvars`, `.nomad`, `.workflow`).
    Hcl,
    /// HTML (`.html`, `.htm`, `.xhtml`).
    Html,
    /// Java (`.java`).
    Java,
    /// JSON (`.json`).
    Json,
    /// Kotlin (`.kt`, `.kts`, `.ktm`).
    Kotlin,
    /// Lua (`.lua`).
    Lua,
    /// Markdown (`.md`, `.markdown`).
    Markdown,
    /// Nix (`.nix`).
    Nix,
    /// PHP (`.php`).
    Php,
    /// Ruby (`.rb`, `.rbw`, `.gemspec`).
    Ruby,
    /// Scala (`.scala`, `.sc`, `.sbt`).
    Scala,
    /// Solidity (`.sol`).
    Solidity,
    /// Swift (`.swift`).
    Swift,
    /// YAML (`.yaml`, `.yml`).
    Yaml,
    /// Zig (`.zig`).
    Zig,
}

impl Lang {
    /// How many languages ast-grep knows (compiled or not).
    pub const COUNT: usize = Lang::KNOWN.len();

    /// Every language ast-grep 0.51.1 knows, compiled or not, in the order they are listed
    /// in messages: the six defaults first.
    pub const KNOWN: [Lang; 29] = [
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
        Lang::Bash,
        Lang::C,
        Lang::Cpp,
        Lang::CSharp,
        Lang::Css,
        Lang::Dart,
        Lang::Elixir,
        Lang::Haskell,
        Lang::Hcl,
        Lang::Html,
        Lang::Java,
        Lang::Json,
        Lang::Kotlin,
        Lang::Lua,
        Lang::Markdown,
        Lang::Nix,
        Lang::Php,
        Lang::Ruby,
        Lang::Scala,
        Lang::Solidity,
        Lang::Swift,
        Lang::Yaml,
        Lang::Zig,
    ];

    /// The languages of the default features (`lang-rust`, `lang-python`,
    /// `lang-typescript`, `lang-javascript`, `lang-go`).
    pub const DEFAULT: [Lang; 6] = [
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
    ];

    /// Every supported language (its grammar is compiled into this build), in the order they
    /// are listed in messages. The single source of the lists in errors, in the tools' schema
    /// and in the CLI's help.
    pub const ALL: &'static [Lang] = &[
        #[cfg(feature = "lang-rust")]
        Lang::Rust,
        #[cfg(feature = "lang-python")]
        Lang::Python,
        #[cfg(feature = "lang-typescript")]
        Lang::TypeScript,
        #[cfg(feature = "lang-typescript")]
        Lang::Tsx,
        #[cfg(feature = "lang-javascript")]
        Lang::JavaScript,
        #[cfg(feature = "lang-go")]
        Lang::Go,
        #[cfg(feature = "lang-bash")]
        Lang::Bash,
        #[cfg(feature = "lang-c")]
        Lang::C,
        #[cfg(feature = "lang-cpp")]
        Lang::Cpp,
        #[cfg(feature = "lang-csharp")]
        Lang::CSharp,
        #[cfg(feature = "lang-css")]
        Lang::Css,
        #[cfg(feature = "lang-dart")]
        Lang::Dart,
        #[cfg(feature = "lang-elixir")]
        Lang::Elixir,
        #[cfg(feature = "lang-haskell")]
        Lang::Haskell,
        #[cfg(feature = "lang-hcl")]
        Lang::Hcl,
        #[cfg(feature = "lang-html")]
        Lang::Html,
        #[cfg(feature = "lang-java")]
        Lang::Java,
        #[cfg(feature = "lang-json")]
        Lang::Json,
        #[cfg(feature = "lang-kotlin")]
        Lang::Kotlin,
        #[cfg(feature = "lang-lua")]
        Lang::Lua,
        #[cfg(feature = "lang-markdown")]
        Lang::Markdown,
        #[cfg(feature = "lang-nix")]
        Lang::Nix,
        #[cfg(feature = "lang-php")]
        Lang::Php,
        #[cfg(feature = "lang-ruby")]
        Lang::Ruby,
        #[cfg(feature = "lang-scala")]
        Lang::Scala,
        #[cfg(feature = "lang-solidity")]
        Lang::Solidity,
        #[cfg(feature = "lang-swift")]
        Lang::Swift,
        #[cfg(feature = "lang-yaml")]
        Lang::Yaml,
        #[cfg(feature = "lang-zig")]
        Lang::Zig,
    ];

    /// The canonical lower-case name (`"rust"`, `"tsx"`, `"csharp"`, …), accepted back by
    /// `parse`.
    pub const fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
            Lang::Go => "go",
            Lang::Bash => "bash",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::CSharp => "csharp",
            Lang::Css => "css",
            Lang::Dart => "dart",
            Lang::Elixir => "elixir",
            Lang::Haskell => "haskell",
            Lang::Hcl => "hcl",
            Lang::Html => "html",
            Lang::Java => "java",
            Lang::Json => "json",
            Lang::Kotlin => "kotlin",
            Lang::Lua => "lua",
            Lang::Markdown => "markdown",
            Lang::Nix => "nix",
            Lang::Php => "php",
            Lang::Ruby => "ruby",
            Lang::Scala => "scala",
            Lang::Solidity => "solidity",
            Lang::Swift => "swift",
            Lang::Yaml => "yaml",
            Lang::Zig => "zig",
        }
    }

    /// The names accepted for this language (case-insensitively): ast-grep's own aliases,
    /// so a name that works with the CLI works here.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => <ast_grep_language::Rust as Alias>::ALIAS,
            Lang::Python => <ast_grep_language::Python as Alias>::ALIAS,
            Lang::TypeScript => <ast_grep_language::TypeScript as Alias>::ALIAS,
            Lang::Tsx => <ast_grep_language::Tsx as Alias>::ALIAS,
            Lang::JavaScript => <ast_grep_language::JavaScript as Alias>::ALIAS,
            Lang::Go => <ast_grep_language::Go as Alias>::ALIAS,
            Lang::Bash => <ast_grep_language::Bash as Alias>::ALIAS,
            Lang::C => <ast_grep_language::C as Alias>::ALIAS,
            Lang::Cpp => <ast_grep_language::Cpp as Alias>::ALIAS,
            Lang::CSharp => <ast_grep_language::CSharp as Alias>::ALIAS,
            Lang::Css => <ast_grep_language::Css as Alias>::ALIAS,
            Lang::Dart => <ast_grep_language::Dart as Alias>::ALIAS,
            Lang::Elixir => <ast_grep_language::Elixir as Alias>::ALIAS,
            Lang::Haskell => <ast_grep_language::Haskell as Alias>::ALIAS,
            Lang::Hcl => <ast_grep_language::Hcl as Alias>::ALIAS,
            Lang::Html => <ast_grep_language::Html as Alias>::ALIAS,
            Lang::Java => <ast_grep_language::Java as Alias>::ALIAS,
            Lang::Json => <ast_grep_language::Json as Alias>::ALIAS,
            Lang::Kotlin => <ast_grep_language::Kotlin as Alias>::ALIAS,
            Lang::Lua => <ast_grep_language::Lua as Alias>::ALIAS,
            Lang::Markdown => <ast_grep_language::Markdown as Alias>::ALIAS,
            Lang::Nix => <ast_grep_language::Nix as Alias>::ALIAS,
            Lang::Php => <ast_grep_language::Php as Alias>::ALIAS,
            Lang::Ruby => <ast_grep_language::Ruby as Alias>::ALIAS,
            Lang::Scala => <ast_grep_language::Scala as Alias>::ALIAS,
            Lang::Solidity => <ast_grep_language::Solidity as Alias>::ALIAS,
            Lang::Swift => <ast_grep_language::Swift as Alias>::ALIAS,
            Lang::Yaml => <ast_grep_language::Yaml as Alias>::ALIAS,
            Lang::Zig => <ast_grep_language::Zig as Alias>::ALIAS,
        }
    }

    /// The cargo feature of xcsh-tools that compiles this language's grammar.
    pub const fn feature(self) -> &'static str {
        match self {
            Lang::Rust => "lang-rust",
            Lang::Python => "lang-python",
            Lang::TypeScript => "lang-typescript",
            Lang::Tsx => "lang-typescript",
            Lang::JavaScript => "lang-javascript",
            Lang::Go => "lang-go",
            Lang::Bash => "lang-bash",
            Lang::C => "lang-c",
            Lang::Cpp => "lang-cpp",
            Lang::CSharp => "lang-csharp",
            Lang::Css => "lang-css",
            Lang::Dart => "lang-dart",
            Lang::Elixir => "lang-elixir",
            Lang::Haskell => "lang-haskell",
            Lang::Hcl => "lang-hcl",
            Lang::Html => "lang-html",
            Lang::Java => "lang-java",
            Lang::Json => "lang-json",
            Lang::Kotlin => "lang-kotlin",
            Lang::Lua => "lang-lua",
            Lang::Markdown => "lang-markdown",
            Lang::Nix => "lang-nix",
            Lang::Php => "lang-php",
            Lang::Ruby => "lang-ruby",
            Lang::Scala => "lang-scala",
            Lang::Solidity => "lang-solidity",
            Lang::Swift => "lang-swift",
            Lang::Yaml => "lang-yaml",
            Lang::Zig => "lang-zig",
        }
    }

    /// Whether this language's grammar is compiled into this build.
    pub fn is_compiled(self) -> bool {
        Lang::ALL.contains(&self)
    }

    /// The supported languages as a list for people: `rust, python, …, go`.
    pub fn supported_list() -> &'static str {
        static LIST: LazyLock<String> = LazyLock::new(|| {
            Lang::ALL
                .iter()
                .map(|l| l.name())
                .collect::<Vec<_>>()
                .join(", ")
        });
        &LIST
    }

    /// Infers the language from the file's extension, as the ast-grep CLI does (its own
    /// table: the exact, case-sensitive extension, so `x.RS` is not Rust, `.h` is C, `.hpp`
    /// C++), among the compiled languages only.
    pub fn from_path(path: &Path) -> Option<Lang> {
        SupportLang::from_path(path)
            .map(Lang::from_support_lang)
            .filter(|lang| lang.is_compiled())
    }

    /// The file-type filter the CLI uses with `-l`: ast-grep's extensions for the language.
    pub(crate) fn file_types(self) -> ignore::types::Types {
        self.support_lang().file_types()
    }

    const fn from_support_lang(lang: SupportLang) -> Lang {
        match lang {
            SupportLang::Rust => Lang::Rust,
            SupportLang::Python => Lang::Python,
            SupportLang::TypeScript => Lang::TypeScript,
            SupportLang::Tsx => Lang::Tsx,
            SupportLang::JavaScript => Lang::JavaScript,
            SupportLang::Go => Lang::Go,
            SupportLang::Bash => Lang::Bash,
            SupportLang::C => Lang::C,
            SupportLang::Cpp => Lang::Cpp,
            SupportLang::CSharp => Lang::CSharp,
            SupportLang::Css => Lang::Css,
            SupportLang::Dart => Lang::Dart,
            SupportLang::Elixir => Lang::Elixir,
            SupportLang::Haskell => Lang::Haskell,
            SupportLang::Hcl => Lang::Hcl,
            SupportLang::Html => Lang::Html,
            SupportLang::Java => Lang::Java,
            SupportLang::Json => Lang::Json,
            SupportLang::Kotlin => Lang::Kotlin,
            SupportLang::Lua => Lang::Lua,
            SupportLang::Markdown => Lang::Markdown,
            SupportLang::Nix => Lang::Nix,
            SupportLang::Php => Lang::Php,
            SupportLang::Ruby => Lang::Ruby,
            SupportLang::Scala => Lang::Scala,
            SupportLang::Solidity => Lang::Solidity,
            SupportLang::Swift => Lang::Swift,
            SupportLang::Yaml => Lang::Yaml,
            SupportLang::Zig => Lang::Zig,
        }
    }

    /// The ast-grep language this maps to. Only compiled grammars may be parsed: callers
    /// reach here through [`Lang::ALL`] or a checked parse, which is what keeps the engine away
    /// from ast-grep's `unimplemented!`.
    pub(crate) const fn support_lang(self) -> SupportLang {
        match self {
            Lang::Rust => SupportLang::Rust,
            Lang::Python => SupportLang::Python,
            Lang::TypeScript => SupportLang::TypeScript,
            Lang::Tsx => SupportLang::Tsx,
            Lang::JavaScript => SupportLang::JavaScript,
            Lang::Go => SupportLang::Go,
            Lang::Bash => SupportLang::Bash,
            Lang::C => SupportLang::C,
            Lang::Cpp => SupportLang::Cpp,
            Lang::CSharp => SupportLang::CSharp,
            Lang::Css => SupportLang::Css,
            Lang::Dart => SupportLang::Dart,
            Lang::Elixir => SupportLang::Elixir,
            Lang::Haskell => SupportLang::Haskell,
            Lang::Hcl => SupportLang::Hcl,
            Lang::Html => SupportLang::Html,
            Lang::Java => SupportLang::Java,
            Lang::Json => SupportLang::Json,
            Lang::Kotlin => SupportLang::Kotlin,
            Lang::Lua => SupportLang::Lua,
            Lang::Markdown => SupportLang::Markdown,
            Lang::Nix => SupportLang::Nix,
            Lang::Php => SupportLang::Php,
            Lang::Ruby => SupportLang::Ruby,
            Lang::Scala => SupportLang::Scala,
            Lang::Solidity => SupportLang::Solidity,
            Lang::Swift => SupportLang::Swift,
            Lang::Yaml => SupportLang::Yaml,
            Lang::Zig => SupportLang::Zig,
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
        let lang = s
            .trim()
            .parse::<SupportLang>()
            .map(Lang::from_support_lang)
            .map_err(|_| EngineError::UnsupportedLang {
                given: s.to_owned(),
            })?;
        if lang.is_compiled() {
            Ok(lang)
        } else {
            Err(EngineError::LangNotCompiled {
                given: s.to_owned(),
                lang,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_parses_case_insensitively() {
        for &lang in Lang::ALL {
            assert_eq!(lang.name().parse::<Lang>().ok(), Some(lang));
            for alias in lang.aliases() {
                assert_eq!(alias.parse::<Lang>().ok(), Some(lang));
                assert_eq!(alias.to_uppercase().parse::<Lang>().ok(), Some(lang));
            }
        }
        assert_eq!(" Python ".parse::<Lang>().ok(), Some(Lang::Python));
    }

    #[test]
    fn the_tables_cover_what_ast_grep_knows() {
        assert_eq!(Lang::KNOWN.len(), SupportLang::all_langs().len());
        for (i, lang) in Lang::KNOWN.into_iter().enumerate() {
            assert_eq!(lang as usize, i, "{lang}: KNOWN is in declaration order");
            assert_eq!(Lang::from_support_lang(lang.support_lang()), lang);
            assert!(lang.aliases().contains(&lang.name()), "{lang}");
        }
        for lang in Lang::DEFAULT {
            assert!(lang.feature().starts_with("lang-"));
        }
    }

    #[test]
    fn unknown_languages_are_refused_with_the_list_once() {
        for name in ["cobol", "", "rustt", "c-sharp"] {
            let msg = name.parse::<Lang>().unwrap_err().to_string();
            assert!(msg.contains(&format!("`{name}`")), "{msg}");
            assert!(msg.starts_with("lang: `"), "{msg}");
            assert_eq!(msg.matches("lang:").count(), 1, "{msg}");
            assert_eq!(msg.matches(Lang::supported_list()).count(), 1, "{msg}");
        }
    }

    #[test]
    fn known_but_not_compiled_languages_name_their_feature() {
        for lang in Lang::KNOWN.into_iter().filter(|l| !l.is_compiled()) {
            let msg = lang.name().parse::<Lang>().unwrap_err().to_string();
            assert!(msg.contains(lang.feature()), "{msg}");
            assert!(msg.contains("all-languages"), "{msg}");
            assert!(msg.contains(Lang::supported_list()), "{msg}");
            let file = format!("x.{}", lang.name());
            if SupportLang::from_path(&file).is_some() {
                assert_eq!(Lang::from_path(Path::new(&file)), None, "{file}");
            }
        }
    }

    #[test]
    fn extension_inference_matches_ast_grep() {
        let cases: &[(&str, Lang)] = &[
            ("a.rs", Lang::Rust),
            ("a.pyi", Lang::Python),
            ("a.mts", Lang::TypeScript),
            ("a.tsx", Lang::Tsx),
            ("a.mjs", Lang::JavaScript),
            ("a.cjs", Lang::JavaScript),
            ("a.go", Lang::Go),
            ("a.h", Lang::C),
            ("a.hpp", Lang::Cpp),
            ("a.cc", Lang::Cpp),
            ("a.cxx", Lang::Cpp),
            ("a.kts", Lang::Kotlin),
            ("a.cs", Lang::CSharp),
            ("a.yml", Lang::Yaml),
            ("a.htm", Lang::Html),
            ("a.scss", Lang::Css),
            ("a.sh", Lang::Bash),
            ("a.gemspec", Lang::Ruby),
            ("a.sbt", Lang::Scala),
            ("a.tf", Lang::Hcl),
        ];
        for &(name, lang) in cases {
            let expected = lang.is_compiled().then_some(lang);
            assert_eq!(Lang::from_path(Path::new(name)), expected, "{name}");
        }
        for name in ["x.RS", "x.rs.bak", "Makefile", ".rs", "x.txt"] {
            assert_eq!(Lang::from_path(Path::new(name)), None, "{name}");
        }
    }

    #[test]
    fn every_compiled_grammar_parses() {
        use ast_grep_language::LanguageExt as _;
        for &lang in Lang::ALL {
            let root = lang.support_lang().ast_grep("x");
            assert!(!root.root().kind().is_empty(), "{lang}");
        }
    }
}
