//! The attribute argument grammar shared by every macro: a comma-separated list of
//! `key` (a flag) and `key = value` items, checked against a table of known keys.
//!
//! The list is split into items at top-level commas before anything is parsed, so one
//! malformed item is reported and skipped while the others are still read — which is what
//! lets an invocation report every mistake at once.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Expr, Ident, LitBool, LitStr, Path};

use crate::errors::{Errors, closest, suggestion};

/// What a key accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `key` or `key = true|false`.
    Flag,
    /// `key = "text"`.
    Str,
    /// `key = ident`.
    Ident,
    /// `key = "text"` or `key = some::Path`.
    StrOrPath,
    /// `key`, `key = false` or `key = ident` (a hook that may name its method).
    FlagOrIdent,
    /// `key = "format {field}"`, optionally followed by format arguments.
    Format,
    /// `key = SomeType`.
    Type,
}

/// One key a macro accepts, with an example of its use for error messages.
pub(crate) struct KeySpec {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) example: &'static str,
}

/// A parsed value.
pub(crate) enum Value {
    Flag(LitBool),
    Str(LitStr),
    Ident(Ident),
    Path(Path),
    Format(LitStr, Vec<FormatArg>),
    Type(Box<syn::Type>),
}

/// An extra argument after a format string: `self.files.len()`, `.files.len()` (shorthand
/// for `self.files.len()`, as in thiserror) or `name = expr`.
pub(crate) struct FormatArg {
    pub(crate) name: Option<Ident>,
    pub(crate) expr: Expr,
}

/// One `key` or `key = value` item.
pub(crate) struct Arg {
    pub(crate) key: Ident,
    pub(crate) value: Value,
}

/// Splits `tokens` at top-level commas. Delimited groups are single token trees, so commas
/// inside `(…)`, `[…]` and `{…}` never split; commas inside generic arguments (`<A, B>`) do,
/// which only matters for format arguments and is documented there.
fn split_items(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut items = vec![Vec::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => items.push(Vec::new()),
            _ => items.last_mut().expect("never empty").push(tt),
        }
    }
    if items.last().is_some_and(Vec::is_empty) {
        items.pop(); // trailing comma
    }
    items
}

fn is_eq(tt: &TokenTree) -> bool {
    matches!(tt, TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == proc_macro2::Spacing::Alone)
}

fn tokens_of(tts: &[TokenTree]) -> TokenStream {
    tts.iter().cloned().collect()
}

/// The key of an item: a leading identifier followed by `=` or nothing.
fn item_key(item: &[TokenTree]) -> Option<Ident> {
    match item {
        [TokenTree::Ident(key)] => Some(key.clone()),
        [TokenTree::Ident(key), eq, ..] if is_eq(eq) => Some(key.clone()),
        _ => None,
    }
}

/// Parses an attribute's arguments against `specs`. Unknown keys (with a suggestion),
/// duplicates and malformed values are reported to `errors` and skipped.
pub(crate) fn parse(tokens: TokenStream, specs: &[KeySpec], errors: &mut Errors) -> Args {
    let mut args: Vec<Arg> = Vec::new();
    let mut misspelled: Vec<&'static str> = Vec::new();
    // Index in `args` of the format string that following non-key items extend.
    let mut open_format: Option<usize> = None;
    for item in split_items(tokens) {
        if item.is_empty() {
            errors.at(Span::call_site(), "unexpected `,,`: remove the extra comma");
            continue;
        }
        let key = item_key(&item);
        let spec = key
            .as_ref()
            .and_then(|k| specs.iter().find(|s| k == s.name));
        if spec.is_none()
            && let Some(index) = open_format
        {
            match parse_format_arg(&item) {
                Ok(arg) => {
                    if let Value::Format(_, extra) = &mut args[index].value {
                        extra.push(arg);
                    }
                }
                Err(e) => errors.push(e),
            }
            continue;
        }
        let Some(spec) = spec else {
            match &key {
                Some(key) => {
                    let name = key.to_string();
                    let meant = closest(&name, specs.iter().map(|s| s.name));
                    misspelled.extend(meant);
                    let hint = suggestion(meant);
                    let valid: Vec<_> = specs.iter().map(|s| format!("`{}`", s.name)).collect();
                    errors.spanned(
                        key,
                        format!(
                            "unknown key `{name}`{hint}\nvalid keys: {}",
                            valid.join(", ")
                        ),
                    );
                }
                None => errors.spanned(
                    tokens_of(&item),
                    format!(
                        "expected `key` or `key = value`, found `{}`",
                        tokens_of(&item)
                    ),
                ),
            }
            continue;
        };
        let key = key.expect("a spec matched a key");
        open_format = None;
        if let Some(previous) = args.iter().find(|a| a.key == spec.name) {
            let mut error = syn::Error::new(
                key.span(),
                format!("duplicate key `{}`: give it once", spec.name),
            );
            error.combine(syn::Error::new(
                previous.key.span(),
                format!("`{}` first given here", spec.name),
            ));
            errors.push(error);
            continue;
        }
        let value_tokens = if item.len() > 2 {
            Some(tokens_of(&item[2..]))
        } else if item.len() == 2 {
            // `key =` with nothing after it
            errors.spanned(
                tokens_of(&item),
                format!("`{}` is missing its value: {}", spec.name, spec.example),
            );
            continue;
        } else {
            None
        };
        match parse_value(spec, &key, value_tokens) {
            Ok(value) => {
                if matches!(value, Value::Format(..)) {
                    open_format = Some(args.len());
                }
                args.push(Arg { key, value });
            }
            Err(e) => errors.push(e),
        }
    }
    Args { args, misspelled }
}

fn expected(spec: &KeySpec, key: &Ident, found: Option<&TokenStream>) -> syn::Error {
    let what = match spec.kind {
        Kind::Flag => "is a flag",
        Kind::Str => "expects a string literal",
        Kind::Ident => "expects an identifier",
        Kind::StrOrPath => "expects a string literal or a path",
        Kind::FlagOrIdent => "is a flag or names a method",
        Kind::Format => "expects a format string",
        Kind::Type => "expects a type",
    };
    let message = format!("`{}` {what}: {}", spec.name, spec.example);
    match found {
        Some(tokens) => syn::Error::new_spanned(tokens, message),
        None => syn::Error::new(key.span(), message),
    }
}

fn parse_value(spec: &KeySpec, key: &Ident, tokens: Option<TokenStream>) -> syn::Result<Value> {
    let Some(tokens) = tokens else {
        return match spec.kind {
            Kind::Flag | Kind::FlagOrIdent => Ok(Value::Flag(LitBool::new(true, key.span()))),
            _ => Err(expected(spec, key, None)),
        };
    };
    let fail = |_| expected(spec, key, Some(&tokens));
    match spec.kind {
        Kind::Flag => syn::parse2::<LitBool>(tokens.clone())
            .map(Value::Flag)
            .map_err(fail),
        Kind::Str => syn::parse2::<LitStr>(tokens.clone())
            .map(Value::Str)
            .map_err(fail),
        Kind::Ident => syn::parse2::<Ident>(tokens.clone())
            .map(Value::Ident)
            .map_err(fail),
        Kind::StrOrPath => syn::parse2::<LitStr>(tokens.clone())
            .map(Value::Str)
            .or_else(|_| syn::parse2::<Path>(tokens.clone()).map(Value::Path))
            .map_err(fail),
        Kind::FlagOrIdent => syn::parse2::<LitBool>(tokens.clone())
            .map(Value::Flag)
            .or_else(|_| syn::parse2::<Ident>(tokens.clone()).map(Value::Ident))
            .map_err(fail),
        Kind::Format => syn::parse2::<LitStr>(tokens.clone())
            .map(|lit| Value::Format(lit, Vec::new()))
            .map_err(fail),
        // A string is a common slip (`output = "Summary"`): refused, not read as a type.
        Kind::Type => match syn::parse2::<LitStr>(tokens.clone()) {
            Ok(_) => Err(expected(spec, key, Some(&tokens))),
            Err(_) => syn::parse2::<syn::Type>(tokens.clone())
                .map(|ty| Value::Type(Box::new(ty)))
                .map_err(fail),
        },
    }
}

fn parse_format_arg(item: &[TokenTree]) -> syn::Result<FormatArg> {
    let (name, rest) = match item {
        [TokenTree::Ident(name), eq, rest @ ..] if is_eq(eq) && !rest.is_empty() => {
            (Some(name.clone()), rest)
        }
        _ => (None, item),
    };
    let mut tokens = TokenStream::new();
    // `.field` is shorthand for `self.field`, as in thiserror's `#[error("…", .field)]`.
    if let Some(TokenTree::Punct(p)) = rest.first()
        && p.as_char() == '.'
    {
        tokens.extend(quote::quote_spanned!(p.span()=> self));
    }
    tokens.extend(rest.iter().cloned());
    let expr = syn::parse2::<Expr>(tokens.clone()).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "cannot read `{}` as a format argument: {e}",
                tokens_of(rest)
            ),
        )
    })?;
    Ok(FormatArg { name, expr })
}

/// Typed access to parsed arguments.
pub(crate) struct Args {
    args: Vec<Arg>,
    /// The keys unknown keys were taken for (reported with "did you mean"), so a check for
    /// a missing key can stay quiet about a key already reported as misspelled.
    misspelled: Vec<&'static str>,
}

impl Args {
    /// Whether an unknown key was reported as a likely misspelling of `name`.
    pub(crate) fn misspelled(&self, name: &str) -> bool {
        self.misspelled.contains(&name)
    }

    fn get(&self, name: &str) -> Option<&Arg> {
        self.args.iter().find(|a| a.key == name)
    }

    pub(crate) fn key(&self, name: &str) -> Option<&Ident> {
        self.get(name).map(|a| &a.key)
    }

    /// A flag's value; `None` when absent.
    pub(crate) fn flag(&self, name: &str) -> Option<(bool, Span)> {
        match &self.get(name)?.value {
            Value::Flag(b) => Some((b.value, b.span)),
            _ => None,
        }
    }

    pub(crate) fn str(&self, name: &str) -> Option<&LitStr> {
        match &self.get(name)?.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn ty(&self, name: &str) -> Option<&syn::Type> {
        match &self.get(name)?.value {
            Value::Type(ty) => Some(ty),
            _ => None,
        }
    }

    pub(crate) fn value(&self, name: &str) -> Option<&Value> {
        self.get(name).map(|a| &a.value)
    }

    /// Removes and returns a key's item, for readers that keep the values.
    pub(crate) fn take(&mut self, name: &str) -> Option<Arg> {
        let index = self.args.iter().position(|a| a.key == name)?;
        Some(self.args.remove(index))
    }
}

impl ToTokens for FormatArg {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        if let Some(name) = &self.name {
            name.to_tokens(tokens);
            tokens.extend(quote::quote!(=));
        }
        self.expr.to_tokens(tokens);
    }
}
