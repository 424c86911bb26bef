//! Mutations of real inputs for the fuzz tests: byte edits, record edits (an SSE event, an
//! NDJSON or session line) and hostile JSON values (huge numbers, deep nesting, wrong types)
//! put in place of a value of a JSON line.
#![allow(dead_code)]

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// Nesting depths around serde_json's recursion limit (128) and far beyond it.
const DEPTHS: [usize; 5] = [127, 128, 129, 1_000, 100_000];

/// Values that are valid JSON of the wrong kind or size, or not quite JSON.
const RAW: [&str; 24] = [
    "null",
    "true",
    "0",
    "-0",
    "-1",
    "1.5",
    "1e15",
    "1e308",
    "1e999",
    "-1e999",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    "340282366920938463463374607431768211456",
    "\"\"",
    "\"\\ud800\"",
    "\"\\u0000\\n\\u001b[2J\"",
    "[]",
    "{}",
    "[1,\"a\",null,{},[]]",
    "{\"type\":\"message_stop\",\"done\":true}",
    "\"[DONE]\"",
    "NaN",
    "tru",
];

/// A hostile JSON value.
#[derive(Debug, Clone)]
pub enum Nasty {
    /// One of [`RAW`].
    Raw(&'static str),
    /// A string this long.
    LongString(usize),
    /// `[[[…]]]` this deep.
    DeepArray(usize),
    /// `{"a":{"a":…1}}` this deep.
    DeepObject(usize),
}

impl Nasty {
    /// The value as JSON text.
    pub fn render(&self) -> String {
        match self {
            Self::Raw(raw) => raw.to_string(),
            Self::LongString(len) => format!("\"{}\"", "x".repeat(*len)),
            Self::DeepArray(depth) => format!("{}{}", "[".repeat(*depth), "]".repeat(*depth)),
            Self::DeepObject(depth) => {
                format!("{}1{}", "{\"a\":".repeat(*depth), "}".repeat(*depth))
            }
        }
    }
}

fn nasty() -> impl Strategy<Value = Nasty> {
    prop_oneof![
        4 => prop::sample::select(&RAW[..]).prop_map(Nasty::Raw),
        1 => prop_oneof![Just(1usize << 10), Just(64usize << 10)].prop_map(Nasty::LongString),
        1 => prop::sample::select(&DEPTHS[..]).prop_map(Nasty::DeepArray),
        1 => prop::sample::select(&DEPTHS[..]).prop_map(Nasty::DeepObject),
    ]
}

/// One edit of an input.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// XORs one byte with a non-zero mask.
    Flip(Index, u8),
    /// Inserts bytes.
    Insert(Index, Vec<u8>),
    /// Deletes up to this many bytes.
    Delete(Index, usize),
    /// Cuts the input short.
    Truncate(Index),
    /// Copies a range (start, length) to another place.
    Duplicate(Index, usize, Index),
    /// Drops one record.
    DropRecord(Index),
    /// Repeats one record this many extra times.
    RepeatRecord(Index, u8),
    /// Swaps two records.
    SwapRecords(Index, Index),
    /// Replaces one value (which line, which value in it) of a JSON line.
    ReplaceValue(Index, Index, Nasty),
}

/// Any mutation; `Insert` draws its bytes from `alphabet` half of the time (the format's own
/// tokens make more interesting inputs than noise alone).
pub fn mutation(alphabet: &'static [&'static [u8]]) -> impl Strategy<Value = Mutation> {
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..16),
        prop::sample::select(alphabet).prop_map(<[u8]>::to_vec),
    ];
    prop_oneof![
        1 => (any::<Index>(), 1..=255u8).prop_map(|(i, m)| Mutation::Flip(i, m)),
        1 => (any::<Index>(), bytes).prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => (any::<Index>(), 1..64usize).prop_map(|(i, n)| Mutation::Delete(i, n)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        1 => (any::<Index>(), 1..256usize, any::<Index>())
            .prop_map(|(i, n, to)| Mutation::Duplicate(i, n, to)),
        1 => any::<Index>().prop_map(Mutation::DropRecord),
        1 => (any::<Index>(), 1..4u8).prop_map(|(i, n)| Mutation::RepeatRecord(i, n)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapRecords(a, b)),
        3 => (any::<Index>(), any::<Index>(), nasty())
            .prop_map(|(line, node, value)| Mutation::ReplaceValue(line, node, value)),
    ]
}

/// Applies `mutations` in order; records end with `separator` (`\n\n` for SSE, `\n` for lines).
pub fn apply(input: &[u8], mutations: &[Mutation], separator: &[u8]) -> Vec<u8> {
    let mut bytes = input.to_vec();
    for mutation in mutations {
        bytes = apply_one(bytes, mutation, separator);
    }
    bytes
}

fn apply_one(mut bytes: Vec<u8>, mutation: &Mutation, separator: &[u8]) -> Vec<u8> {
    let at = |i: &Index, len: usize| i.index(len + 1);
    match mutation {
        Mutation::Flip(i, mask) => {
            if !bytes.is_empty() {
                let i = i.index(bytes.len());
                bytes[i] ^= mask;
            }
        }
        Mutation::Insert(i, new) => {
            let i = at(i, bytes.len());
            bytes.splice(i..i, new.iter().copied());
        }
        Mutation::Delete(i, n) => {
            let i = at(i, bytes.len());
            let end = (i + n).min(bytes.len());
            bytes.drain(i..end);
        }
        Mutation::Truncate(i) => bytes.truncate(at(i, bytes.len())),
        Mutation::Duplicate(i, n, to) => {
            let i = at(i, bytes.len());
            let copy = bytes[i..(i + n).min(bytes.len())].to_vec();
            let to = at(to, bytes.len());
            bytes.splice(to..to, copy);
        }
        Mutation::DropRecord(i) => {
            let mut records = records(&bytes, separator);
            if !records.is_empty() {
                records.remove(i.index(records.len()));
            }
            bytes = records.concat();
        }
        Mutation::RepeatRecord(i, n) => {
            let mut records = records(&bytes, separator);
            if !records.is_empty() {
                let i = i.index(records.len());
                for _ in 0..*n {
                    records.insert(i, records[i].clone());
                }
            }
            bytes = records.concat();
        }
        Mutation::SwapRecords(a, b) => {
            let mut records = records(&bytes, separator);
            if !records.is_empty() {
                let (a, b) = (a.index(records.len()), b.index(records.len()));
                records.swap(a, b);
            }
            bytes = records.concat();
        }
        Mutation::ReplaceValue(line, node, nasty) => {
            bytes = replace_value(&bytes, line, node, nasty);
        }
    }
    bytes
}

/// The input cut after each `separator` (the last record may lack it).
pub fn records(bytes: &[u8], separator: &[u8]) -> Vec<Vec<u8>> {
    let mut records = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + separator.len() <= bytes.len() {
        if bytes[i..].starts_with(separator) {
            i += separator.len();
            records.push(bytes[start..i].to_vec());
            start = i;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        records.push(bytes[start..].to_vec());
    }
    records
}

/// A placeholder that no input contains, swapped for the hostile value's text.
const PLACEHOLDER: &str = "\u{1}taco-fuzz\u{1}";

/// Replaces one value of one JSON line (a whole line, or the JSON after `data:`).
fn replace_value(bytes: &[u8], line: &Index, node: &Index, nasty: &Nasty) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let candidates: Vec<(usize, usize, usize, Value)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let start = json_start(line);
            let end = line.trim_ascii_end().len().max(start);
            let value = serde_json::from_slice::<Value>(&line[start..end]).ok()?;
            Some((i, start, end, value))
        })
        .collect();
    if candidates.is_empty() {
        return bytes.to_vec();
    }
    let (i, start, end, mut value) = line.get(&candidates).clone();
    let mut paths = Vec::new();
    pointers(&value, String::new(), &mut paths);
    let path = node.get(&paths);
    if let Some(slot) = value.pointer_mut(path) {
        *slot = Value::String(PLACEHOLDER.into());
    }
    let placeholder = Value::String(PLACEHOLDER.into()).to_string();
    let text = value.to_string().replace(&placeholder, &nasty.render());
    let old = &lines[i];
    let mut new = old[..start].to_vec();
    new.extend_from_slice(text.as_bytes());
    new.extend_from_slice(&old[end..]);
    lines[i] = new;
    lines.join(&b'\n')
}

/// Where the JSON of a line starts: after `data:` and one space, or at the start.
fn json_start(line: &[u8]) -> usize {
    match line.strip_prefix(b"data:") {
        Some(rest) if rest.starts_with(b" ") => 6,
        Some(_) => 5,
        None => 0,
    }
}

/// JSON pointers of every value in `value`, itself first.
fn pointers(value: &Value, path: String, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => {
            out.push(path.clone());
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{path}/{i}"), out);
            }
        }
        Value::Object(map) => {
            out.push(path.clone());
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                pointers(item, format!("{path}/{key}"), out);
            }
        }
        _ => out.push(path),
    }
}
