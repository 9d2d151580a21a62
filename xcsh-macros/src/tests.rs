//! Expansion snapshots: what each form of each macro generates, pretty-printed so a
//! reviewer can read it (`src/snapshots/*.snap`). Paths are pinned to `::xcsh` instead of
//! being read from a Cargo.toml.

use proc_macro2::TokenStream;
use quote::quote;

use crate::krate::Paths;

fn facade() -> Option<Paths> {
    Some(Paths::facade(quote!(::xcsh)))
}

fn pretty(tokens: TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens.clone())
        .unwrap_or_else(|e| panic!("expansion does not parse: {e}\n{tokens}"));
    prettyplease::unparse(&file)
}

#[test]
fn custom_tool_on_struct() {
    let expanded = crate::expand_custom_tool(
        quote!(
            name = "batch_rename_preview",
            label = "Batch Rename Preview",
            destructive,
            pending
        ),
        quote! {
            /// Previews renames and defers commit to resolve.
            #[serde(deny_unknown_fields)]
            pub struct BatchRenamePreview {
                /// Files to rename.
                files: Vec<String>,
                /// Suffix to append.
                #[serde(default)]
                suffix: Option<String>,
            }
        },
        facade(),
    );
    insta::assert_snapshot!(pretty(expanded));
}

#[test]
fn custom_tool_on_fn() {
    let expanded = crate::expand_custom_tool(
        quote!(read_only),
        quote! {
            /// Searches files for a pattern.
            pub async fn grep(
                /// The regular expression.
                pattern: String,
                ctx: &ToolContext,
                /// At most this many matches.
                #[serde(default = "default_limit")]
                limit: usize,
            ) -> Result<String, ToolError> {
                search(ctx.workspace_root(), &pattern, limit)
            }
        },
        facade(),
    );
    insta::assert_snapshot!(pretty(expanded));
}

#[test]
fn pending_with_every_key() {
    let expanded = crate::pending::expand(
        quote!(
            apply,
            reject,
            label = "Batch rename: {count} files",
            source = BatchRenamePreview,
            details = files
        ),
        quote! {
            struct RenamePlan {
                files: Vec<(String, String)>,
                count: usize,
            }
        },
        facade(),
    );
    insta::assert_snapshot!(pretty(expanded));
}

#[test]
fn pending_label_with_arguments() {
    let expanded = crate::pending::expand(
        quote!(apply = commit, label = "Batch rename: {} files in {dir}", .files.len(), source = "batch_rename", details),
        quote! {
            struct RenamePlan {
                files: Vec<String>,
                dir: String,
            }
        },
        facade(),
    );
    insta::assert_snapshot!(pretty(expanded));
}

#[test]
fn tool_param_enum() {
    let expanded = crate::param::expand(
        quote!(),
        quote! {
            /// How to sort.
            #[serde(rename_all = "snake_case")]
            pub enum Order { Oldest, Newest }
        },
        facade(),
    );
    insta::assert_snapshot!(pretty(expanded));
}

#[test]
fn suite_of_tools() {
    let expanded = crate::suite::expand(quote!(Grep, BatchRenamePreview), facade());
    let wrapped = quote!(fn tools() -> ::xcsh::ToolSuite { #expanded });
    insta::assert_snapshot!(pretty(wrapped));
}

/// On errors the item is still emitted (so IDEs keep working) along with every error.
#[test]
fn errors_keep_the_item() {
    let expanded = crate::expand_custom_tool(
        quote!(nmae = "x", read_only = "yes"),
        quote! {
            /// Does things.
            struct Thing { a: u32 }
        },
        facade(),
    );
    let text = pretty(expanded);
    assert!(text.contains("struct Thing"), "{text}");
    assert!(
        text.contains("unknown key `nmae`; did you mean `name`?"),
        "{text}"
    );
    assert!(text.contains("`read_only` is a flag"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn did_you_mean_suggests_close_keys_only() {
    use crate::errors::did_you_mean;
    assert_eq!(
        did_you_mean("labl", ["name", "label"]),
        "; did you mean `label`?"
    );
    assert_eq!(
        did_you_mean("dri", ["files", "dir"]),
        "; did you mean `dir`?"
    );
    assert_eq!(did_you_mean("colour", ["name", "label"]), "");
}

/// `register = false` drops the `inventory::submit!`; the flag and `= true` keep it.
#[test]
fn register_false_skips_the_registration() {
    let expand = |attr: TokenStream| {
        pretty(crate::expand_custom_tool(
            attr,
            quote! {
                /// Does things.
                struct Thing { a: u32 }
            },
            facade(),
        ))
    };
    for attr in [quote!(), quote!(register), quote!(register = true)] {
        let text = expand(attr.clone());
        assert!(text.contains("inventory::submit!"), "{attr}: {text}");
    }
    let text = expand(quote!(register = false));
    assert!(!text.contains("inventory::submit!"), "{text}");
    assert!(
        text.contains("impl ::xcsh::__private::xcsh_core::CustomTool for Thing"),
        "{text}"
    );
    assert!(!text.contains("compile_error"), "{text}");
}
