//! `#[tool_param]`: derives what a type needs to be a tool parameter (`Deserialize`,
//! `JsonSchema`, optionally `Serialize`) through the facade, so enums and nested structs
//! used as parameter types need no serde or schemars dependency either.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Item;

use crate::args::{self, Args, KeySpec, Kind};
use crate::derives::{self, ManualDerives};
use crate::errors::Errors;
use crate::krate::Paths;

const KEYS: &[KeySpec] = &[
    KeySpec {
        name: "serialize",
        kind: Kind::Flag,
        example: "write `serialize` to derive `Serialize` as well (for `#[pending(details)]`)",
    },
    KeySpec {
        name: "allow_unknown_fields",
        kind: Kind::Flag,
        example: "write `allow_unknown_fields` to ignore fields the struct does not know (by default they are refused, naming the field)",
    },
    KeySpec {
        name: "crate",
        kind: Kind::StrOrPath,
        example: "`crate = my_facade` (a crate re-exporting xcsh, with its `__private` module)",
    },
];

pub(crate) fn expand(
    attr: TokenStream,
    item: TokenStream,
    default_paths: Option<Paths>,
) -> TokenStream {
    let mut errors = Errors::new();
    let args = args::parse(attr, KEYS, &mut errors);
    let paths = Paths::from_args(&args, default_paths, &mut errors);
    let output = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(s)) => {
            derives::check_no_manual_derives(&s.attrs, &mut errors);
            let manual = ManualDerives::of(&s.attrs);
            let allow = args.flag("allow_unknown_fields").is_some_and(|(v, _)| v);
            let deny = derives::refuses_unknown(
                allow,
                &s.attrs,
                s.fields.iter().map(|f| f.attrs.as_slice()),
            );
            with_derives(&paths, &args, &manual, deny, quote!(#s))
        }
        Ok(Item::Enum(e)) => {
            derives::check_no_manual_derives(&e.attrs, &mut errors);
            let manual = ManualDerives::of(&e.attrs);
            with_derives(&paths, &args, &manual, false, quote!(#e))
        }
        Ok(other) => {
            errors.spanned(
                crate::item::keyword(&other),
                "#[tool_param] goes on a struct or an enum used as a tool parameter type",
            );
            item
        }
        Err(error) => {
            errors.push(error);
            item
        }
    };
    let errors = errors.finish();
    quote!(#output #errors)
}

fn with_derives(
    paths: &Paths,
    args: &Args,
    manual: &ManualDerives,
    deny_unknown: bool,
    item: TokenStream,
) -> TokenStream {
    let derive = derives::derive_attrs(paths, manual, deny_unknown);
    let serialize = args.flag("serialize").is_some_and(|(v, _)| v).then(|| {
        let serde = &paths.serde;
        quote!(#[derive(#serde::Serialize)])
    });
    quote! {
        #derive
        #serialize
        #item
    }
}
