//! Serde helpers the wire formats share: sequences serialized straight from iterators, and
//! the user's `extra_body` fields.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

/// A sequence serialized from an iterator made on demand (`serialize` only gets `&self`).
pub(crate) struct Seq<F>(pub F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// Writes the configured `extra_body` fields: they replace ours of the same name (the
/// caller leaves those out), a `null` removes one of ours, and `messages` and `stream` stay
/// ours.
pub(crate) fn extra_fields<M: SerializeMap>(
    map: &mut M,
    extra: &Map<String, Value>,
) -> Result<(), M::Error> {
    for (key, value) in extra {
        if !value.is_null() && key != "messages" && key != "stream" {
            map.serialize_entry(key, value)?;
        }
    }
    Ok(())
}

/// `{"name", "description", "parameters"}`: one offered tool, as OpenAI-style APIs take it.
#[derive(Serialize)]
pub(crate) struct ToolFunction<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
}

/// A `Display` value serialized as a string without building it first (an image's base64).
pub(crate) struct AsStr<T>(pub T);

impl<T: std::fmt::Display> Serialize for AsStr<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}
