//! Markdown to styled, wrapped lines.
//!
//! The chat pane renders model answers with this. Input may be any prefix of a stream (an
//! unclosed fence, half a list), so nothing here assumes well-formed Markdown. Soft breaks
//! keep their line break: model output is rarely hard-wrapped prose, and tables, poems and
//! ASCII art read better that way. Controls in the text show as placeholders (`^[`, see
//! [`super::safe`]), so an escape sequence in a model's answer is seen, not obeyed.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::safe::escape;
use super::theme::Theme;

mod blocks;
mod wrap;

pub use wrap::str_width;
use wrap::{Wrapper, trim_trailing_blanks};

/// Renders `markdown` as styled lines no wider than `width` display columns (where possible:
/// at tiny widths a nested prefix alone may exceed it; the caller clips).
pub fn render(markdown: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let options =
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_TABLES;
    let markdown = escape(markdown);
    let mut renderer = Renderer::new(width, theme);
    for event in Parser::new_ext(&markdown, options) {
        renderer.event(event);
    }
    renderer.finish()
}

/// Wraps plain `text` (newlines kept, controls shown as placeholders) to `width`, the first
/// line after `first`, the others after `rest` (hanging indent). Trailing blank lines are
/// dropped.
pub fn wrap_plain(
    text: &str,
    style: Style,
    width: u16,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    // Every row leaves room for the wider of the two prefixes (each the sum of its spans).
    let width_of = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>();
    let prefix_w = width_of(first).max(width_of(rest));
    let avail = usize::from(width).saturating_sub(prefix_w).max(1);
    let mut wrapper = Wrapper::new(avail);
    wrapper.push_str(&escape(text), style);
    let rows = wrapper.finish();
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let mut spans = if i == 0 {
                first.to_vec()
            } else {
                rest.to_vec()
            };
            if row.is_empty() {
                trim_trailing_blanks(&mut spans);
            }
            spans.extend(row);
            Line::from(spans)
        })
        .collect()
}

/// Wraps one styled line to `width` as the chat wraps text (words at spaces, long words at
/// chars, leading spaces kept): always at least one row, so a blank line stays a row.
pub fn wrap_line(line: &Line<'_>, width: u16) -> Vec<Line<'static>> {
    let mut wrapper = Wrapper::new(usize::from(width));
    for span in &line.spans {
        wrapper.push_str(&span.content, line.style.patch(span.style));
    }
    let rows = wrapper.finish();
    if rows.is_empty() {
        return vec![Line::default()];
    }
    rows.into_iter().map(Line::from).collect()
}

/// Length of the longest prefix of `text` that ends where a top-level block starts after a
/// blank line, outside any code fence. Text appended later cannot change how that prefix
/// renders, so a streaming view renders it once and re-renders only the rest.
pub fn stable_prefix_len(text: &str) -> usize {
    let mut fence: Option<(char, usize)> = None;
    let mut prev_blank = false;
    let mut stable = 0;
    let mut start = 0;
    while let Some(len) = text.get(start..).and_then(|rest| rest.find('\n')) {
        let line = &text[start..start + len];
        if let Some((ch, n)) = fence {
            if fence_run(line)
                .is_some_and(|(c, m, info)| c == ch && m >= n && info.trim().is_empty())
            {
                fence = None;
            }
            prev_blank = false;
        } else if line.trim().is_empty() {
            prev_blank = true;
        } else {
            if prev_blank && !line.starts_with([' ', '\t']) {
                stable = start;
            }
            fence = fence_run(line)
                .filter(|(c, _, info)| *c == '~' || !info.contains('`'))
                .map(|(c, n, _)| (c, n));
            prev_blank = false;
        }
        start += len + 1;
    }
    stable
}

/// A fence line's char, run length and info string (up to 3 spaces of indent allowed).
fn fence_run(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|c| *c == ch).count();
    (n >= 3).then(|| (ch, n, &trimmed[n..]))
}

/// An open container block: its lines carry a prefix.
enum Container {
    Quote,
    Item {
        marker: String,
        /// The marker is printed on the item's first content line, then spaces of its width.
        pending: bool,
    },
}

/// A table being collected (cells are flattened to styled spans).
#[derive(Default)]
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    head_rows: usize,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    lines: Vec<Line<'static>>,
    containers: Vec<Container>,
    inline: Vec<(String, Style)>,
    styles: Vec<Style>,
    links: Vec<(usize, String)>,
    lists: Vec<Option<u64>>,
    code: Option<(String, String)>,
    table: Option<Table>,
    needs_gap: bool,
}

impl<'t> Renderer<'t> {
    fn new(width: u16, theme: &'t Theme) -> Self {
        Self {
            theme,
            width: usize::from(width),
            lines: Vec::new(),
            containers: Vec::new(),
            inline: Vec::new(),
            styles: vec![theme.text],
            links: Vec::new(),
            lists: Vec::new(),
            code: None,
            table: None,
            needs_gap: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.theme.text)
    }

    fn push_style(&mut self, patch: Style) {
        let style = self.style().patch(patch);
        self.styles.push(style);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn text(&mut self, text: &str, style: Style) {
        self.inline.push((text.to_string(), style));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => match &mut self.code {
                Some((_, code)) => code.push_str(&text),
                None => self.text(&text, self.style()),
            },
            Event::Code(code) => self.text(&code, self.style().patch(self.theme.code)),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t, self.theme.code),
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html, self.style()),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]"), self.theme.dim),
            Event::SoftBreak | Event::HardBreak => self.text("\n", self.style()),
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.text(mark, self.theme.dim);
            }
            Event::Rule => {
                self.begin_block();
                let mut spans = self.prefix();
                let prefix_w: usize = spans.iter().map(Span::width).sum();
                let rule = "─".repeat(self.width.saturating_sub(prefix_w).max(1));
                spans.push(Span::styled(rule, self.theme.dim));
                self.lines.push(Line::from(spans));
                self.needs_gap = true;
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => self.begin_block(),
            Tag::Heading { level, .. } => {
                self.begin_block();
                let style = if level == HeadingLevel::H1 {
                    self.theme.heading.add_modifier(Modifier::UNDERLINED)
                } else {
                    self.theme.heading
                };
                let marks = "#".repeat(heading_depth(level));
                self.text(&format!("{marks} "), self.theme.dim);
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.begin_block();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.begin_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.begin_block();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_inline();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n = n.saturating_add(1);
                        marker
                    }
                    _ => format!("{} ", ["•", "◦", "▪"][depth % 3]),
                };
                self.containers.push(Container::Item {
                    marker,
                    pending: true,
                });
            }
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push((self.inline.len(), dest_url.to_string()));
                self.push_style(Style::new().add_modifier(Modifier::UNDERLINED));
            }
            Tag::Table(aligns) => {
                self.begin_block();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => self.inline.clear(),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition => self.begin_block(),
            Tag::Superscript | Tag::Subscript => self.push_style(Style::new()),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::MetadataBlock(_)
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.end_block(),
            TagEnd::Heading(_) => {
                self.pop_style();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.end_block();
                self.containers.pop();
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(&lang, &code);
                }
                self.needs_gap = true;
            }
            TagEnd::List(_) => {
                self.end_block();
                self.lists.pop();
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Container::Item { pending: true, .. }) = self.containers.last() {
                    // An empty item still shows its marker.
                    let mut spans = self.prefix();
                    trim_trailing_blanks(&mut spans);
                    self.lines.push(Line::from(spans));
                }
                self.containers.pop();
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some((start, url)) = self.links.pop() {
                    let text: String = self
                        .inline
                        .get(start..)
                        .unwrap_or_default()
                        .iter()
                        .map(|(t, _)| t.as_str())
                        .collect();
                    let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && bare != text {
                        self.text(&format!(" ({url})"), self.theme.dim);
                    }
                }
            }
            TagEnd::TableCell => {
                let cell = self.cell_spans();
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.head_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {}
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(table);
                }
                self.needs_gap = true;
            }
        }
    }

    /// Starts a block: flushes pending text and puts one blank line after the previous block.
    fn begin_block(&mut self) {
        self.flush_inline();
        if self.needs_gap && !self.lines.is_empty() {
            let mut spans = self.gap_prefix();
            trim_trailing_blanks(&mut spans);
            self.lines.push(Line::from(spans));
        }
        self.needs_gap = false;
    }

    fn end_block(&mut self) {
        self.flush_inline();
        self.needs_gap = true;
    }

    /// The prefix of a content line; consumes pending list markers.
    fn prefix(&mut self) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        for container in &mut self.containers {
            match container {
                Container::Quote => spans.push(Span::styled("▌ ", self.theme.dim)),
                Container::Item { marker, pending } => {
                    if *pending {
                        spans.push(Span::styled(marker.clone(), self.theme.text));
                        *pending = false;
                    } else {
                        spans.push(Span::raw(" ".repeat(str_width(marker))));
                    }
                }
            }
        }
        spans
    }

    /// The prefix of a blank separator line: quote bars only, markers left for content.
    fn gap_prefix(&self) -> Vec<Span<'static>> {
        self.containers
            .iter()
            .map(|c| match c {
                Container::Quote => Span::styled("▌ ", self.theme.dim),
                Container::Item { marker, .. } => Span::raw(" ".repeat(str_width(marker))),
            })
            .collect()
    }

    fn avail(&self) -> usize {
        let prefix_w: usize = self.gap_prefix().iter().map(Span::width).sum();
        self.width.saturating_sub(prefix_w).max(1)
    }

    fn flush_inline(&mut self) {
        if self.inline.is_empty() || self.table.is_some() {
            return;
        }
        let mut wrapper = Wrapper::new(self.avail());
        for (text, style) in std::mem::take(&mut self.inline) {
            wrapper.push_str(&text, style);
        }
        for row in wrapper.finish() {
            let mut spans = self.prefix();
            if row.is_empty() {
                trim_trailing_blanks(&mut spans);
            }
            spans.extend(row);
            self.lines.push(Line::from(spans));
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        // A stream cut inside a block leaves it open: show what arrived.
        if let Some((lang, code)) = self.code.take() {
            self.code_block(&lang, &code);
        }
        if let Some(table) = self.table.take() {
            self.table_lines(table);
        }
        self.flush_inline();
        while self.lines.last().is_some_and(|l| l.width() == 0) {
            self.lines.pop();
        }
        self.lines
    }
}

fn heading_depth(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn text(lines: &[Line<'_>]) -> String {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn md(source: &str, width: u16) -> String {
        text(&render(source, width, &Theme::default()))
    }

    const DOC: &str = "# Title\n\nSome *emphasis*, **bold**, ~~gone~~ and `code` in a paragraph \
        that is long enough to wrap.\nA soft break.\n\n## Lists\n\n- one\n- two\n  - nested item \
        with enough words to wrap around\n  - [x] done\n- three\n\n3. third\n4. fourth\n\n\
        > quoted *text*\n> > nested quote\n\n```rust\nfn main() {\n\tprintln!(\"a very long line \
        of code that must be hard-broken\");\n}\n```\n\n    indented code\n\n---\n\n\
        See [the docs](https://docs.rs) or <https://example.com>.\n\n\
        | name | size |\n|:-----|-----:|\n| a | 1 |\n| bb | 22 |\n";

    #[test]
    fn snapshot_rich_document() {
        insta::assert_snapshot!("markdown_rich_40", md(DOC, 40));
        insta::assert_snapshot!("markdown_rich_24", md(DOC, 24));
    }

    #[test]
    fn words_wrap_at_spaces_and_long_words_break() {
        assert_eq!(md("aaa bbb ccc", 7), "aaa bbb\nccc");
        assert_eq!(md("abcdefghij", 4), "abcd\nefgh\nij");
        assert_eq!(md("世界世界", 5), "世界\n世界");
        assert_eq!(md("- one two three", 9), "• one two\n  three");
        assert_eq!(md("12. a b", 6), "12. a\n    b");
    }

    #[test]
    fn styles_follow_the_theme() {
        let theme = Theme::default();
        let lines = render("# H\n\n**b** `c` [l](u)", 40, &theme);
        let span = |needle: &str| {
            lines
                .iter()
                .flat_map(|l| l.spans.iter())
                .find(|s| s.content.contains(needle))
                .map(|s| s.style)
                .unwrap_or_default()
        };
        assert_eq!(span("H").fg, theme.heading.fg);
        assert!(span("b").add_modifier.contains(Modifier::BOLD));
        assert_eq!(span("c").fg, theme.code.fg);
        assert!(span("l").add_modifier.contains(Modifier::UNDERLINED));
        assert_eq!(span("(u)"), theme.dim);
    }

    #[test]
    fn fenced_code_is_coloured_by_its_language_and_wraps_the_same() {
        let theme = Theme::default();
        let source = "```rust\nfn main() { let s = \"hi\"; }\n```\n\n```\nfn plain() {}\n```";
        let lines = render(source, 20, &theme);
        let fg = |needle: &str| {
            lines
                .iter()
                .flat_map(|l| l.spans.iter())
                .find(|s| s.content.contains(needle))
                .and_then(|s| s.style.fg)
        };
        assert_eq!(fg("fn"), theme.syntax.keyword.fg);
        assert_eq!(fg("\"hi\""), theme.syntax.string.fg);
        assert_eq!(fg("main"), theme.syntax.function.fg);
        assert_eq!(fg(" {"), theme.code.fg, "plain code keeps the code tone");
        assert_eq!(fg("fn plain"), theme.code.fg, "no tag: no colours");
        assert_eq!(
            md(source, 20),
            "│ rust\n│ fn main() { let s \n│ = \"hi\"; }\n\n│ fn plain() {}",
            "hard-wrapped at the width as before"
        );
    }

    #[test]
    fn links_show_their_url_once() {
        assert_eq!(md("[docs](https://docs.rs)", 80), "docs (https://docs.rs)");
        assert_eq!(md("<https://a.b>", 80), "https://a.b");
        assert_eq!(md("<me@a.b>", 80), "me@a.b");
    }

    #[test]
    fn incomplete_markdown_renders_what_arrived() {
        assert_eq!(md("```rust\nfn main() {", 30), "│ rust\n│ fn main() {");
        assert_eq!(md("**bold", 30), "**bold");
        assert_eq!(md("- a\n- ", 30), "• a\n•");
        assert_eq!(md("[link](http", 30), "[link](http");
        assert_eq!(md("| a | b |\n|---", 30), "| a | b |\n|---");
        assert_eq!(md("", 30), "");
    }

    #[test]
    fn tiny_widths_do_not_panic() {
        for width in 0..4 {
            let lines = render(DOC, width, &Theme::default());
            assert!(!lines.is_empty());
        }
    }

    #[test]
    fn plain_text_keeps_newlines_and_indents() {
        let first = [Span::raw("› ")];
        let rest = [Span::raw("  ")];
        let lines = wrap_plain("one two\n\nthree", Style::new(), 7, &first, &rest);
        assert_eq!(text(&lines), "› one\n  two\n\n  three");
    }

    #[test]
    fn stable_prefix_stops_before_the_last_top_level_block() {
        assert_eq!(
            stable_prefix_len("a\n\nb"),
            0,
            "the line after the blank is incomplete"
        );
        assert_eq!(stable_prefix_len("a\n\nb\n"), 3);
        assert_eq!(
            stable_prefix_len("a\n\n  b\n"),
            0,
            "indented: may continue a block"
        );
        assert_eq!(stable_prefix_len("```\na\n\nb\n"), 0, "inside a fence");
        assert_eq!(stable_prefix_len("```\na\n\n```\n\nb\n"), 12);
        assert_eq!(stable_prefix_len("~~~~\n```\n\nx\n"), 0);
    }

    #[test]
    fn rendering_in_stable_pieces_equals_rendering_whole() {
        let theme = Theme::default();
        for doc in [
            DOC,
            "1. a\n\n2. b\n\n- c\n\n  d\n\ne\n",
            "> q\n\n> r\n\n```\nx\n\ny\n```\n\nz\n",
        ] {
            let cut = stable_prefix_len(doc);
            let mut pieces = render(&doc[..cut], 40, &theme);
            let rest = render(&doc[cut..], 40, &theme);
            if !pieces.is_empty() && !rest.is_empty() {
                pieces.push(Line::default());
            }
            pieces.extend(rest);
            assert_eq!(text(&pieces), text(&render(doc, 40, &theme)), "{doc:?}");
        }
    }

    proptest! {
        #[test]
        fn any_input_renders_without_panicking(source in "[-*_`#>|~\\[\\]()0-9. a-z\n\t世]{0,200}", width in 0u16..50) {
            let lines = render(&source, width, &Theme::default());
            let _ = stable_prefix_len(&source);
            if width >= 10 && !source.contains(['>', '-', '*', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '|', '~', '`', '\t']) {
                for line in &lines {
                    prop_assert!(line.width() <= usize::from(width), "{line:?}");
                }
            }
        }
    }
}
