//! The pre-pass that bounds the cost of HTML conversion. html5ever's tree building scans
//! the stack of open elements for most tags, and html2text's layout grows with nesting, so
//! 100,000 nested tags cost minutes of CPU. This pass rewrites a page, in one linear pass, into
//! well-nested markup at most [`MAX_DEPTH`] elements deep: tags beyond the limit are dropped
//! (their text stays), every element is closed explicitly in order, attributes are cut to the
//! few that matter (so the formatting-element bookkeeping stays small), stray content in
//! tables gets a cell (no foster parenting), and scripts, styles and SVG are removed.

use std::collections::HashMap;

use super::tokens::{Token, Tokens};

/// Deepest nesting passed on; real pages stay well below it.
pub(super) const MAX_DEPTH: usize = 64;
/// Most tables nested in each other; html2text's table layout grows fast with nesting.
const MAX_TABLES: usize = 6;

/// Elements without content.
const VOID: [&str; 17] = [
    "area", "base", "br", "col", "embed", "hr", "img", "image", "input", "link", "meta", "param",
    "source", "track", "wbr", "keygen", "basefont",
];
/// Tags dropped while their content stays (the parser implies the document structure).
const TRANSPARENT: [&str; 5] = ["html", "head", "body", "frameset", "frame"];
/// Elements dropped with everything inside.
const SKIPPED: [&str; 9] = [
    "script", "style", "iframe", "noembed", "noframes", "svg", "math", "template", "object",
];
/// Elements that close an open `<p>`.
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "listing",
    "section",
    "summary",
    "table",
    "ul",
    "li",
    "dd",
    "dt",
];
/// Where a search for an open element stops (the parser's "scope" boundaries).
const SCOPE: [&str; 8] = [
    "td", "th", "caption", "table", "marquee", "applet", "button", "select",
];
/// Elements that hold table rows or cells; other content there is given a cell.
const TABLE_CONTEXT: [&str; 5] = ["table", "tbody", "thead", "tfoot", "tr"];
/// What may appear directly inside [`TABLE_CONTEXT`] elements.
const TABLE_PARTS: [&str; 9] = [
    "caption", "colgroup", "col", "tbody", "thead", "tfoot", "tr", "td", "th",
];
const HEADINGS: [&str; 6] = ["h1", "h2", "h3", "h4", "h5", "h6"];

/// Rewrites `html` as described in the module docs. The output is at most a small constant
/// factor larger than the input.
pub(super) fn flatten(html: &[u8]) -> Vec<u8> {
    let mut pass = Pass {
        out: Vec::with_capacity(html.len()),
        stack: Vec::new(),
        dropped: HashMap::new(),
        tables: 0,
        skipping: None,
    };
    for token in Tokens::new(html) {
        match token {
            Token::Text(text) => pass.text(text),
            Token::Start(name, attributes) => pass.start(name, &attributes),
            Token::End(name) => pass.end(&name),
            Token::Raw(text) => pass.raw(text),
        }
    }
    pass.out
}

/// The text of `html` without any markup, for when conversion is not possible.
pub(super) fn strip(html: &[u8]) -> String {
    let mut out = Vec::with_capacity(html.len() / 2);
    let mut skipping: Option<(String, usize)> = None;
    for token in Tokens::new(html) {
        match token {
            Token::Start(name, _) => {
                if let Some((skipped, depth)) = &mut skipping {
                    *depth += usize::from(*skipped == name);
                } else if SKIPPED.contains(&name.as_str()) {
                    skipping = Some((name, 1));
                } else if !out.ends_with(b"\n") && is_block(&name) {
                    out.push(b'\n');
                }
            }
            Token::End(name) => {
                if let Some((skipped, depth)) = &mut skipping {
                    if *skipped == name {
                        *depth -= 1;
                        if *depth == 0 {
                            skipping = None;
                        }
                    }
                } else if !out.ends_with(b"\n") && is_block(&name) {
                    out.push(b'\n');
                }
            }
            Token::Text(text) | Token::Raw(text) if skipping.is_none() => {
                out.extend_from_slice(text);
            }
            Token::Text(_) | Token::Raw(_) => {}
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_block(name: &str) -> bool {
    CLOSES_P.contains(&name) || matches!(name, "br" | "tr" | "title" | "textarea")
}

struct Pass {
    out: Vec<u8>,
    /// The open elements as the parser will see them (the output is well nested).
    stack: Vec<String>,
    /// Start tags dropped at the depth limit, by name: their end tags are dropped too.
    dropped: HashMap<String, usize>,
    /// `table` elements on the stack.
    tables: usize,
    /// Inside a [`SKIPPED`] element: its name and how many of them are open.
    skipping: Option<(String, usize)>,
}

impl Pass {
    fn text(&mut self, text: &[u8]) {
        if self.skipping.is_some() {
            return;
        }
        if !text.iter().all(u8::is_ascii_whitespace) {
            self.give_cell("");
        }
        escape_into(&mut self.out, text, false);
    }

    fn raw(&mut self, text: &[u8]) {
        if self.skipping.is_some() {
            return;
        }
        // Only title and textarea (text with entities) and xmp/plaintext (shown as <pre>,
        // so '&' is escaped too) get here; the others are skipped.
        let literal = matches!(self.stack.last().map(String::as_str), Some("pre"));
        escape_into(&mut self.out, text, literal);
    }

    fn start(&mut self, name: String, attributes: &[(&'static str, &[u8])]) {
        if let Some((skipped, depth)) = &mut self.skipping {
            *depth += usize::from(*skipped == name);
            return;
        }
        if SKIPPED.contains(&name.as_str()) {
            self.skipping = Some((name, 1));
            return;
        }
        if TRANSPARENT.contains(&name.as_str()) {
            return;
        }
        // Raw text shown as is: a <pre> whose content is escaped completely.
        let name = if matches!(name.as_str(), "xmp" | "plaintext") {
            "pre".to_string()
        } else {
            name
        };
        self.close_implied(&name);
        self.give_cell(&name);
        let void = VOID.contains(&name.as_str());
        if !void
            && (self.stack.len() >= MAX_DEPTH || (name == "table" && self.tables >= MAX_TABLES))
        {
            *self.dropped.entry(name).or_default() += 1;
            return;
        }
        self.out.push(b'<');
        self.out.extend_from_slice(name.as_bytes());
        for (key, value) in attributes {
            let small_number =
                (1..=3).contains(&value.len()) && value.iter().all(u8::is_ascii_digit);
            if matches!(*key, "colspan" | "rowspan" | "start") && !small_number {
                // Spans in the millions make layouts allocate per column.
                continue;
            }
            self.out.push(b' ');
            self.out.extend_from_slice(key.as_bytes());
            self.out.extend_from_slice(b"=\"");
            for &b in *value {
                match b {
                    b'"' => self.out.extend_from_slice(b"&quot;"),
                    b'<' => self.out.extend_from_slice(b"&lt;"),
                    _ => self.out.push(b),
                }
            }
            self.out.push(b'"');
        }
        self.out.push(b'>');
        if !void {
            self.tables += usize::from(name == "table");
            self.stack.push(name);
        }
    }

    fn end(&mut self, name: &str) {
        if let Some((skipped, depth)) = &mut self.skipping {
            if skipped == name {
                *depth -= 1;
                if *depth == 0 {
                    self.skipping = None;
                }
            }
            return;
        }
        if name == "br" {
            // The parser reads `</br>` as `<br>`.
            self.out.extend_from_slice(b"<br>");
            return;
        }
        let name = if matches!(name, "xmp" | "plaintext") {
            "pre"
        } else {
            name
        };
        if TRANSPARENT.contains(&name) || VOID.contains(&name) {
            return;
        }
        if let Some(count) = self.dropped.get_mut(name)
            && *count > 0
        {
            *count -= 1;
            return;
        }
        let stops: &[&str] = match name {
            "table" => &[],
            "td" | "th" | "tr" | "tbody" | "thead" | "tfoot" | "caption" | "colgroup" => &["table"],
            _ => &SCOPE,
        };
        if let Some(at) = self.find_open(&[name], stops) {
            self.close_to(at);
        }
    }

    /// Closes what a start tag `name` implicitly ends (an open `<p>` before a `<div>`, the
    /// previous `<li>` before an `<li>`), explicitly, so the parser sees the same nesting.
    fn close_implied(&mut self, name: &str) {
        if CLOSES_P.contains(&name) {
            self.close_open(&["p"], &SCOPE);
        }
        match name {
            "li" => self.close_open(&["li"], &["ul", "ol", "td", "th", "table"]),
            "dd" | "dt" => self.close_open(&["dd", "dt"], &["dl", "td", "th", "table"]),
            "tr" => self.close_open(&["tr"], &["table"]),
            "td" | "th" => self.close_open(&["td", "th"], &["tr", "table"]),
            "tbody" | "thead" | "tfoot" => {
                self.close_open(&["tbody", "thead", "tfoot"], &["table"]);
            }
            "caption" | "colgroup" => self.close_open(&["caption", "colgroup"], &["table"]),
            "a" | "button" | "select" | "nobr" | "form" => self.close_open(&[name], &SCOPE),
            "option" | "optgroup" => self.close_open(&["option"], &["select"]),
            _ if HEADINGS.contains(&name) => self.close_top_if(|top| HEADINGS.contains(&top)),
            _ => {}
        }
        if name != "col" {
            self.close_top_if(|top| top == "colgroup");
        }
    }

    /// Closes the innermost element if it is one `which` picks.
    fn close_top_if(&mut self, which: impl Fn(&str) -> bool) {
        if self.stack.last().is_some_and(|top| which(top)) {
            self.close_to(self.stack.len() - 1);
        }
    }

    /// Content (a tag `name`, or text when `name` is empty) directly in a table or row gets a
    /// row and cell of its own; the parser would otherwise move it in front of the table,
    /// which costs time proportional to everything moved before.
    fn give_cell(&mut self, name: &str) {
        let Some(top) = self.stack.last() else {
            return;
        };
        if !TABLE_CONTEXT.contains(&top.as_str()) || TABLE_PARTS.contains(&name) {
            return;
        }
        // Past the depth limit by at most two: the cell then holds whatever follows.
        if top != "tr" {
            self.push_implied("tr");
        }
        self.push_implied("td");
    }

    fn push_implied(&mut self, name: &str) {
        self.out.push(b'<');
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'>');
        self.stack.push(name.to_string());
    }

    /// The innermost open element named one of `names`, searching no further out than an
    /// element named in `stops`.
    fn find_open(&self, names: &[&str], stops: &[&str]) -> Option<usize> {
        for (at, open) in self.stack.iter().enumerate().rev() {
            if names.contains(&open.as_str()) {
                return Some(at);
            }
            if stops.contains(&open.as_str()) {
                return None;
            }
        }
        None
    }

    fn close_open(&mut self, names: &[&str], stops: &[&str]) {
        if let Some(at) = self.find_open(names, stops) {
            self.close_to(at);
        }
    }

    /// Closes the elements from `at` up, innermost first.
    fn close_to(&mut self, at: usize) {
        while self.stack.len() > at {
            let Some(name) = self.stack.pop() else {
                break;
            };
            self.tables -= usize::from(name == "table");
            self.out.extend_from_slice(b"</");
            self.out.extend_from_slice(name.as_bytes());
            self.out.push(b'>');
        }
    }
}

/// Copies text so that no markup can start in it; `literal` also escapes `&` (for text shown
/// exactly as written).
fn escape_into(out: &mut Vec<u8>, text: &[u8], literal: bool) {
    for &b in text {
        match b {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'&' if literal => out.extend_from_slice(b"&amp;"),
            _ => out.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(html: &str) -> String {
        String::from_utf8(flatten(html.as_bytes())).unwrap()
    }

    #[test]
    fn closes_implied_and_misnested_elements() {
        assert_eq!(flat("<p>a<p>b<div>c</div>"), "<p>a</p><p>b</p><div>c</div>");
        assert_eq!(
            flat("<ul><li>a<li>b</ul>x"),
            "<ul><li>a</li><li>b</li></ul>x"
        );
        assert_eq!(flat("<b><i>x</b>y</i>"), "<b><i>x</i></b>y");
        assert_eq!(flat("<div>x</span></div>"), "<div>x</div>");
        assert_eq!(
            flat("<html><body class=x><p id=a>Hi &amp; bye</p></body></html>"),
            "<p>Hi &amp; bye</p>"
        );
    }

    #[test]
    fn keeps_useful_attributes_only() {
        assert_eq!(
            flat(r#"<a class=c href='/x?a="b"' onclick=e>l</a><td colspan=99999999>"#),
            r#"<a href="/x?a=&quot;b&quot;">l</a><td>"#
        );
    }

    #[test]
    fn drops_scripts_svg_and_comments() {
        assert_eq!(
            flat("a<script>x<p>y</script>b<svg><svg></svg><p>z</svg>c<!-- d -->e"),
            "abce"
        );
        assert_eq!(flat("<xmp><b>&amp;</xmp>"), "<pre>&lt;b>&amp;amp;</pre>");
    }

    #[test]
    fn stray_table_content_gets_a_cell() {
        assert_eq!(
            flat("<table>x<b>y</b><tr>z<td>w</table>"),
            "<table><tr><td>x<b>y</b></td></tr><tr><td>z</td><td>w</td></tr></table>"
        );
    }

    #[test]
    fn depth_is_bounded_and_end_tags_stay_paired() {
        let n = 1000;
        let html = format!("{}deep{}after", "<div>".repeat(n), "</div>".repeat(n));
        let out = flat(&html);
        assert_eq!(out.matches("<div>").count(), MAX_DEPTH);
        assert_eq!(out.matches("</div>").count(), MAX_DEPTH);
        assert!(out.ends_with(&format!("deep{}after", "</div>".repeat(MAX_DEPTH))));
        let tables = flat(&"<table><tr><td>x".repeat(n));
        assert_eq!(tables.matches("<table>").count(), MAX_TABLES);
        let unclosed = flat(&"<p>para".repeat(n));
        assert_eq!(
            unclosed.matches("<p>").count(),
            n,
            "unclosed <p>s are not nesting"
        );
    }

    #[test]
    fn strip_keeps_text_only() {
        assert_eq!(
            strip(b"<h1>T</h1><p>a <b>b</b><script>x</script></p><style>s</style>c"),
            "\nT\na b\nc"
        );
    }
}
