//! The grammars, the scope-to-role table, and one line at a time through `syntect`.
//!
//! Everything here is built on first use: `SyntaxSet::load_defaults_newlines` reads syntect's
//! bundled grammars (about 1 ms; each grammar's regexes compile when it is first used), the
//! role table is a small `syntect` theme whose "colours" are role numbers, so the terminal's
//! own palette (through [`super::style`]) decides the real colours.

use std::str::FromStr;
use std::sync::LazyLock;

use syntect::highlighting::{
    Color, HighlightIterator, HighlightState, Highlighter, ScopeSelectors, StyleModifier, Theme,
    ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use super::{MAX_BYTES, MAX_JSON_BYTES, MAX_LINE, Role, Runs};

/// syntect's bundled grammars (Rust, Python, JavaScript, JSON, YAML, shell, diff, C/C++, Go,
/// Markdown, …), with newlines kept in lines as the grammars expect.
static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
/// TOML, which syntect does not bundle (see `toml.rs`); `None` if it failed to build.
static TOML: LazyLock<Option<SyntaxSet>> = LazyLock::new(super::toml::syntax_set);
/// Scope selectors to roles, most specific selector winning.
static ROLES: LazyLock<Theme> = LazyLock::new(role_table);
static HIGHLIGHTER: LazyLock<Highlighter<'static>> = LazyLock::new(|| Highlighter::new(&ROLES));

/// Which scopes get which role. A deeper or longer selector beats a shorter one, so
/// `keyword.operator` (plain) wins over `keyword`, and `comment punctuation` over
/// `punctuation`.
const TABLE: &[(&str, Role)] = &[
    ("keyword, storage, variable.language", Role::Keyword),
    ("keyword.operator, punctuation", Role::Plain),
    ("keyword.operator.word", Role::Keyword),
    ("string, string punctuation, markup.raw", Role::String),
    ("comment, comment punctuation", Role::Comment),
    (
        "constant, support.constant, constant.character.escape, constant.other.placeholder",
        Role::Constant,
    ),
    (
        "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum, \
         entity.name.trait, entity.name.impl, entity.other.inherited-class, support.type, \
         support.class",
        Role::Type,
    ),
    (
        "entity.name.function, support.function, variable.function, support.macro",
        Role::Function,
    ),
    (
        "meta.structure.dictionary.key string, meta.structure.dictionary.key string punctuation, \
         meta.mapping.key, entity.name.tag.yaml, support.type.property-name",
        Role::Key,
    ),
    (
        "markup.heading, markup.heading punctuation, entity.name.section",
        Role::Heading,
    ),
    (
        "markup.inserted, markup.inserted punctuation",
        Role::Inserted,
    ),
    ("markup.deleted, markup.deleted punctuation", Role::Deleted),
    ("meta.diff, meta.diff punctuation", Role::Meta),
];

/// A role as the colour the role table carries (its index in [`Role::ALL`]).
fn encode(role: Role) -> Color {
    let index = Role::ALL.iter().position(|r| *r == role).unwrap_or(0);
    Color {
        r: u8::try_from(index).unwrap_or(0),
        g: 0,
        b: 0,
        a: 0xFF,
    }
}

fn decode(color: Color) -> Role {
    Role::ALL
        .get(usize::from(color.r))
        .copied()
        .unwrap_or(Role::Plain)
}

fn item(selectors: &str, role: Role) -> Option<ThemeItem> {
    Some(ThemeItem {
        scope: ScopeSelectors::from_str(selectors).ok()?,
        style: StyleModifier {
            foreground: Some(encode(role)),
            background: None,
            font_style: None,
        },
    })
}

fn role_table() -> Theme {
    let scopes = TABLE
        .iter()
        .filter_map(|(selectors, role)| item(selectors, *role))
        .collect();
    Theme {
        settings: ThemeSettings {
            foreground: Some(encode(Role::Plain)),
            ..ThemeSettings::default()
        },
        scopes,
        ..Theme::default()
    }
}

/// A grammar: the set it belongs to and the syntax in it.
#[derive(Clone, Copy)]
pub(super) struct Grammar {
    set: &'static SyntaxSet,
    syntax: &'static SyntaxReference,
}

impl Grammar {
    /// Whether two grammars are the same (the cache keys on this).
    pub(super) fn same(&self, other: &Grammar) -> bool {
        std::ptr::eq(self.set, other.set) && std::ptr::eq(self.syntax, other.syntax)
    }

    /// Most bytes of a block highlighted with this grammar.
    pub(super) fn cap(&self) -> usize {
        if self.syntax.name == "JSON" {
            MAX_JSON_BYTES
        } else {
            MAX_BYTES
        }
    }
}

/// Tags that mean "no language": they never load the grammars.
const PLAIN_TAGS: [&str; 8] = [
    "text",
    "txt",
    "plain",
    "plaintext",
    "log",
    "output",
    "console-output",
    "none",
];

/// The grammar for a fence tag or file extension (`rust`, `rs`, `py`, `ts`, `c++`, `yml` …).
pub(super) fn by_token(tag: &str) -> Option<Grammar> {
    // `rust,ignore`, `{.python}`, `.rs`: the first name in the tag.
    let tag = tag
        .trim_start_matches(['{', '.'])
        .split([',', '}', ' '])
        .next()?
        .to_ascii_lowercase();
    if tag.is_empty() || PLAIN_TAGS.contains(&tag.as_str()) {
        return None;
    }
    // Close relatives stand in for what syntect does not bundle; TypeScript mostly reads
    // right as JavaScript.
    let token = match tag.as_str() {
        "toml" => return toml(),
        "ts" | "tsx" | "typescript" | "mts" | "cts" | "jsx" | "javascript" | "mjs" | "cjs"
        | "node" => "js",
        "json5" | "jsonc" | "jsonl" | "ndjson" => "json",
        "shell" | "zsh" | "ksh" | "console" | "shellsession" | "bash" | "sh" => "bash",
        "golang" => "go",
        "c++" | "cxx" | "hpp" | "cc" => "cpp",
        "python3" | "py3" => "python",
        "yml" => "yaml",
        "md" => "markdown",
        "rs" => "rust",
        "patch" => "diff",
        other => other,
    };
    let set: &'static SyntaxSet = &SYNTAXES;
    let syntax = set.find_syntax_by_token(token)?;
    Some(Grammar { set, syntax })
}

/// The grammar a first line names (a shebang).
pub(super) fn by_first_line(line: &str) -> Option<Grammar> {
    let set: &'static SyntaxSet = &SYNTAXES;
    let syntax = set.find_syntax_by_first_line(line)?;
    Some(Grammar { set, syntax })
}

fn toml() -> Option<Grammar> {
    let set: &'static SyntaxSet = TOML.as_ref()?;
    let syntax = set.syntaxes().first()?;
    Some(Grammar { set, syntax })
}

/// A grammar's state between lines: cloned to try a line without keeping it.
#[derive(Clone)]
pub(super) struct Lines {
    grammar: Grammar,
    parse: ParseState,
    paint: HighlightState,
}

impl Lines {
    /// The state at the start of a text.
    pub(super) fn new(grammar: Grammar) -> Self {
        Self {
            grammar,
            parse: ParseState::new(grammar.syntax),
            paint: HighlightState::new(&HIGHLIGHTER, ScopeStack::new()),
        }
    }

    /// The runs of `line` (no newline in it), moving the state past it. A line too long
    /// to be worth it, or one the grammar fails on, is one plain run and leaves the state.
    pub(super) fn line(&mut self, line: &str) -> Runs {
        let plain = vec![(line.len(), Role::Plain)];
        if line.len() > MAX_LINE {
            return plain;
        }
        // The grammars match the line's newline (line comments end at it).
        let text = format!("{line}\n");
        let Ok(ops) = self.parse.parse_line(&text, self.grammar.set) else {
            return plain;
        };
        let mut runs: Runs = Vec::new();
        let mut end = 0;
        for (style, piece) in HighlightIterator::new(&mut self.paint, &ops, &text, &HIGHLIGHTER) {
            end = (end + piece.len()).min(line.len());
            let role = decode(style.foreground);
            if end <= runs.last().map_or(0, |l| l.0) {
                continue;
            }
            match runs.last_mut() {
                Some(last) if last.1 == role => last.0 = end,
                _ => runs.push((end, role)),
            }
        }
        if runs.is_empty() { plain } else { runs }
    }
}
