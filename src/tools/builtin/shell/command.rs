//! What a command line is made of, read with a real shell parser (tree-sitter's bash grammar):
//! the simple commands it runs, joined by `&&`, `||`, `;`, `|` or newlines, each as literal
//! words. Anything whose effect depends on more than those words makes the line opaque:
//! expansions (`$`, backticks, globs, `~`, braces), subshells and compound commands,
//! here-documents, redirections other than to `/dev/null` or between descriptors, `&`,
//! standalone assignments, function definitions.
//!
//! The grammar only finds the structure. Every word is decoded again here from its source
//! text, by POSIX quoting rules, accepting only characters that are literal in every `sh`
//! (dash, bash, busybox); every byte between the parts must be blank. A construct the grammar
//! reads differently from `sh` then makes the line opaque instead of being misread.

use std::ops::ControlFlow;

use tree_sitter::{Node, ParseOptions, ParseState, Parser, Tree};

/// Longest command line judged; a longer one is opaque (always asked about).
pub const MAX_BYTES: usize = 16 * 1024;
/// Deepest syntax tree walked (a chain of `&&` nests one level per operator).
const MAX_DEPTH: usize = 128;
/// Most simple commands in one line.
const MAX_COMMANDS: usize = 64;
/// The parser's work budget, in progress reports (each a few hundred parser steps; a
/// 16 KiB line of 4,000 pipes takes ~700).
const MAX_PROGRESS: u32 = 4_000;

/// One simple command: its leading `NAME=value` assignments and its words, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Simple {
    /// `NAME=value` before the command's name, in order.
    pub assignments: Vec<(String, String)>,
    /// The command's name and arguments.
    pub words: Vec<String>,
}

/// Why a line's commands cannot be known from its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Opaque {
    /// Longer than [`MAX_BYTES`].
    #[error("longer than 16 KiB")]
    TooLong,
    /// Nested deeper than the walk goes, or more commands than it counts.
    #[error("nested too deep or too many commands")]
    TooBig,
    /// A control character other than tab and newline.
    #[error("a control character")]
    ControlCharacter,
    /// A here-document or here-string (`<<`).
    #[error("a here-document")]
    HereDocument,
    /// The parser failed, gave up (work budget) or found a syntax error.
    #[error("not a complete command")]
    Unparsed,
    /// A construct other than simple commands and their joining operators.
    #[error("a `{0}`")]
    Construct(String),
    /// A word the shell would expand or that holds a character not literal in every `sh`.
    #[error("a word that expands: {0}")]
    Word(String),
    /// A redirection other than to `/dev/null` or between descriptors.
    #[error("a redirection")]
    Redirection,
    /// Text the grammar skipped that is not blank.
    #[error("text the parser skipped")]
    Skipped,
    /// No command at all.
    #[error("no command")]
    Empty,
}

/// The simple commands of `line`, in order; an error when any part is opaque.
pub fn parse(line: &str) -> Result<Vec<Simple>, Opaque> {
    if line.len() > MAX_BYTES {
        return Err(Opaque::TooLong);
    }
    if line
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(Opaque::ControlCharacter);
    }
    // Opaque anyway, and the grammar's scanner is quadratic in the number of them.
    if line.contains("<<") {
        return Err(Opaque::HereDocument);
    }
    let tree = syntax_tree(line)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(Opaque::Unparsed);
    }
    let mut walk = Walk {
        src: line,
        spans: Vec::new(),
        commands: Vec::new(),
    };
    walk.statement(root, 0)?;
    walk.nothing_skipped()?;
    if walk.commands.is_empty() {
        return Err(Opaque::Empty);
    }
    Ok(walk.commands)
}

/// The syntax tree of `line`, within the work budget.
fn syntax_tree(line: &str) -> Result<Tree, Opaque> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|_| Opaque::Unparsed)?;
    let bytes = line.as_bytes();
    let mut reports = 0u32;
    let mut budget = |_: &ParseState| {
        reports += 1;
        if reports > MAX_PROGRESS {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let options = ParseOptions::new().progress_callback(&mut budget);
    parser
        .parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(options),
        )
        .ok_or(Opaque::Unparsed)
}

/// The walk over the tree: the commands found and the source spans accounted for.
struct Walk<'s> {
    src: &'s str,
    spans: Vec<(usize, usize)>,
    commands: Vec<Simple>,
}

impl<'s> Walk<'s> {
    /// The source text of `node`, accounted for.
    fn take(&mut self, node: Node) -> Result<&'s str, Opaque> {
        let range = node.byte_range();
        self.spans.push((range.start, range.end));
        self.src.get(range).ok_or(Opaque::Unparsed)
    }

    fn statement(&mut self, node: Node, depth: usize) -> Result<(), Opaque> {
        if depth > MAX_DEPTH {
            return Err(Opaque::TooBig);
        }
        let mut cursor = node.walk();
        match node.kind() {
            "program" | "list" | "pipeline" => {
                for child in node.children(&mut cursor) {
                    if child.is_named() {
                        self.statement(child, depth + 1)?;
                    } else {
                        self.operator(child)?;
                    }
                }
            }
            // The body, then its redirections.
            "redirected_statement" => {
                for child in node.children(&mut cursor) {
                    if child.kind() == "file_redirect" {
                        let words = self.redirect(child)?;
                        // Words after a redirection's target are the command's arguments
                        // (`echo a >/dev/null b`); the grammar files them under it.
                        let last = self.commands.last_mut().ok_or(Opaque::Redirection)?;
                        last.words.extend(words);
                    } else if child.is_named() {
                        self.statement(child, depth + 1)?;
                    } else {
                        return Err(Opaque::Construct(child.kind().to_string()));
                    }
                }
            }
            "command" => self.command(node)?,
            "comment" => self.comment(node)?,
            kind => return Err(Opaque::Construct(kind.to_string())),
        }
        Ok(())
    }

    /// `&&`, `||`, `;` and `|` join commands; anything else (`&`, `|&`, `;;`) is opaque.
    fn operator(&mut self, node: Node) -> Result<(), Opaque> {
        let kind = node.kind();
        if matches!(kind, "&&" | "||" | ";" | "|") && self.take(node)? == kind {
            Ok(())
        } else {
            Err(Opaque::Construct(kind.to_string()))
        }
    }

    fn command(&mut self, node: Node) -> Result<(), Opaque> {
        if self.commands.len() >= MAX_COMMANDS {
            return Err(Opaque::TooBig);
        }
        let mut simple = Simple::default();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "variable_assignment" if simple.words.is_empty() => {
                    let text = self.take(child)?;
                    simple.assignments.push(assignment(text)?);
                }
                "command_name" | "word" | "string" | "raw_string" | "number" | "concatenation" => {
                    let text = self.take(child)?;
                    simple.words.push(decode(text)?);
                }
                "file_redirect" => {
                    let words = self.redirect(child)?;
                    simple.words.extend(words);
                }
                kind => return Err(Opaque::Construct(kind.to_string())),
            }
        }
        if simple.words.is_empty() {
            return Err(Opaque::Empty);
        }
        self.commands.push(simple);
        Ok(())
    }

    /// Checks one redirection (to `/dev/null`, or a descriptor duplicated or closed) and
    /// returns the words the grammar filed after its target.
    fn redirect(&mut self, node: Node) -> Result<Vec<String>, Opaque> {
        let mut operator: Option<&str> = None;
        let mut target: Option<String> = None;
        let mut extra = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let kind = child.kind();
            match (kind, operator) {
                ("file_descriptor", None) => {
                    let text = self.take(child)?;
                    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(Opaque::Redirection);
                    }
                }
                (_, None) if !child.is_named() => {
                    if self.take(child)? != kind {
                        return Err(Opaque::Redirection);
                    }
                    operator = Some(kind);
                }
                ("word" | "string" | "raw_string" | "number" | "concatenation", Some(op)) => {
                    let word = decode(self.take(child)?)?;
                    let closes = matches!(op, ">&-" | "<&-");
                    if target.is_none() && !closes {
                        target = Some(word);
                    } else {
                        extra.push(word);
                    }
                }
                _ => return Err(Opaque::Redirection),
            }
        }
        let fine = match (operator, target.as_deref()) {
            (Some(">" | ">>" | "<"), Some(target)) => target == "/dev/null",
            (Some(">&" | "<&"), Some(fd)) => {
                (1..=2).contains(&fd.len()) && fd.bytes().all(|b| b.is_ascii_digit())
            }
            (Some(">&-" | "<&-"), None) => true,
            _ => false,
        };
        if fine {
            Ok(extra)
        } else {
            Err(Opaque::Redirection)
        }
    }

    /// A comment starts a word: at the line's start, after a blank or an operator. One that
    /// would run past its line (a trailing `\`) is opaque, since shells disagree on it.
    fn comment(&mut self, node: Node) -> Result<(), Opaque> {
        let start = node.start_byte();
        let before = self.src.get(..start).and_then(|s| s.chars().next_back());
        let text = self.take(node)?;
        let starts_word = before.is_none_or(|c| matches!(c, ' ' | '\t' | '\n' | ';' | '|' | '&'));
        if starts_word && text.starts_with('#') && !text.contains('\n') && !text.ends_with('\\') {
            Ok(())
        } else {
            Err(Opaque::Construct("comment".to_string()))
        }
    }

    /// Every byte the walk did not account for is blank: spaces, tabs, newlines and
    /// escaped newlines.
    fn nothing_skipped(&mut self) -> Result<(), Opaque> {
        self.spans.sort_unstable();
        let mut at = 0;
        for &(start, end) in &self.spans {
            if start < at {
                return Err(Opaque::Skipped);
            }
            blank(self.src.get(at..start).ok_or(Opaque::Skipped)?)?;
            at = end;
        }
        blank(self.src.get(at..).ok_or(Opaque::Skipped)?)
    }
}

fn blank(gap: &str) -> Result<(), Opaque> {
    let gap = gap.replace("\\\n", "");
    if gap.chars().all(|c| matches!(c, ' ' | '\t' | '\n')) {
        Ok(())
    } else {
        Err(Opaque::Skipped)
    }
}

/// `NAME=value` with a plain name and a literal value.
fn assignment(text: &str) -> Result<(String, String), Opaque> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| Opaque::Word(text.to_string()))?;
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain {
        return Err(Opaque::Word(text.to_string()));
    }
    Ok((name.to_string(), decode(value)?))
}

/// Characters literal, unquoted, in every `sh`: no expansion, no globbing, no operator.
fn literal(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '-' | '_' | '.' | '/' | ':' | '=' | '+' | ',' | '@' | '%' | '^'
        )
        || (!c.is_ascii() && !c.is_control() && !c.is_whitespace())
}

/// The value of one word's source text, quotes and escapes removed; an error when the shell
/// would expand any of it.
pub fn decode(text: &str) -> Result<String, Opaque> {
    let opaque = || Opaque::Word(text.to_string());
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut before: Option<char> = None;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => out.push(c),
                None => return Err(opaque()),
            },
            '\'' => loop {
                match chars.next() {
                    Some('\'') => break,
                    Some(c) => out.push(c),
                    None => return Err(opaque()),
                }
            },
            '"' => loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(c @ ('$' | '`' | '"' | '\\')) => out.push(c),
                        Some('\n') => {}
                        Some(c) => {
                            out.push('\\');
                            out.push(c);
                        }
                        None => return Err(opaque()),
                    },
                    Some('$' | '`') | None => return Err(opaque()),
                    Some(c) => out.push(c),
                }
            },
            // `{}` (find's placeholder) is literal; `{a,b}` is brace expansion in bash.
            '{' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push_str("{}");
            }
            // A tilde expands only at a word's start or after `=` or `:`.
            '~' if before.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, '_' | '.')) => {
                out.push('~')
            }
            // `#` starts a comment only at a word's start.
            '#' if before.is_some() => out.push('#'),
            c if literal(c) => out.push(c),
            _ => return Err(opaque()),
        }
        before = Some(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
