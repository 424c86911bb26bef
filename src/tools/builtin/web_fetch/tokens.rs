//! A small linear HTML tokenizer for the pre-pass: tags (with the few attributes worth
//! keeping), text, and the raw content of elements like `<script>`. It never backtracks, so
//! one pass costs time proportional to the input.

/// Attributes the pre-pass keeps; everything else (ids, classes, styles) is dropped.
const KEPT_ATTRIBUTES: [&str; 6] = ["href", "src", "alt", "colspan", "rowspan", "start"];

/// Elements whose content is not markup, up to their end tag.
const RAW: [&str; 9] = [
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "plaintext",
];

/// One piece of a document.
#[derive(Debug, PartialEq)]
pub(super) enum Token<'a> {
    /// Text; a `<` in it is a literal character.
    Text(&'a [u8]),
    /// A start tag: lowercase name and the kept attributes (raw values, entities undecoded).
    Start(String, Vec<(&'static str, &'a [u8])>),
    /// An end tag, lowercase.
    End(String),
    /// The content of a raw-text element (see [`RAW`]).
    Raw(&'a [u8]),
}

/// Splits HTML into [`Token`]s. Comments, doctypes and processing instructions are skipped;
/// an unterminated tag or comment ends the document (browsers drop it too).
pub(super) struct Tokens<'a> {
    src: &'a [u8],
    pos: usize,
    /// Set after the start tag of a raw-text element: its end tag's name.
    raw: Option<&'static str>,
}

impl<'a> Tokens<'a> {
    pub(super) fn new(src: &'a [u8]) -> Self {
        Self {
            src,
            pos: 0,
            raw: None,
        }
    }

    fn rest(&self) -> &'a [u8] {
        self.src.get(self.pos..).unwrap_or_default()
    }

    fn position_of(&self, needle: &[u8]) -> Option<usize> {
        self.rest()
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|i| self.pos + i)
    }

    /// Where the raw text of `name` ends: the next `</name` followed by a tag boundary.
    fn raw_end(&self, name: &str) -> usize {
        let rest = self.rest();
        let mut i = 0;
        while let Some(found) = rest
            .get(i..)
            .and_then(|r| r.windows(2).position(|w| w == b"</"))
        {
            let at = i + found;
            let after = at + 2 + name.len();
            let matches = rest
                .get(at + 2..after)
                .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()));
            let boundary = rest
                .get(after)
                .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'));
            if matches && boundary {
                return self.pos + at;
            }
            i = at + 2;
        }
        self.src.len()
    }

    /// Parses a tag at `self.pos` (just after `<` or `</`); `None` when the input ends inside.
    fn tag(&mut self, end: bool) -> Option<Token<'a>> {
        let src = self.src;
        let start = self.pos;
        let mut i = start;
        while i < src.len() && !src[i].is_ascii_whitespace() && !matches!(src[i], b'/' | b'>') {
            i += 1;
        }
        let name = String::from_utf8_lossy(&src[start..i]).to_ascii_lowercase();
        let mut attributes = Vec::new();
        loop {
            while i < src.len() && (src[i].is_ascii_whitespace() || src[i] == b'/') {
                i += 1;
            }
            match src.get(i) {
                None => {
                    self.pos = src.len();
                    return None;
                }
                Some(b'>') => break,
                Some(_) => {}
            }
            let name_start = i;
            // A name may begin with '='; it ends at whitespace, '/', '>' or the next '='.
            i += 1;
            while i < src.len()
                && !src[i].is_ascii_whitespace()
                && !matches!(src[i], b'/' | b'>' | b'=')
            {
                i += 1;
            }
            let attribute = &src[name_start..i];
            while i < src.len() && src[i].is_ascii_whitespace() {
                i += 1;
            }
            let mut value: &[u8] = b"";
            if src.get(i) == Some(&b'=') {
                i += 1;
                while i < src.len() && src[i].is_ascii_whitespace() {
                    i += 1;
                }
                match src.get(i) {
                    Some(&quote @ (b'"' | b'\'')) => {
                        let open = i + 1;
                        let close = src[open..].iter().position(|&b| b == quote);
                        let Some(close) = close else {
                            self.pos = src.len();
                            return None;
                        };
                        value = &src[open..open + close];
                        i = open + close + 1;
                    }
                    _ => {
                        let open = i;
                        while i < src.len() && !src[i].is_ascii_whitespace() && src[i] != b'>' {
                            i += 1;
                        }
                        value = &src[open..i];
                    }
                }
            }
            if !end
                && let Some(kept) = KEPT_ATTRIBUTES
                    .iter()
                    .find(|k| k.as_bytes().eq_ignore_ascii_case(attribute))
                && !attributes.iter().any(|(k, _)| k == kept)
            {
                attributes.push((*kept, value));
            }
        }
        self.pos = i + 1;
        if end {
            return Some(Token::End(name));
        }
        self.raw = RAW.iter().find(|r| **r == name).copied();
        Some(Token::Start(name, attributes))
    }

    /// Skips to just after `close`, or to the end.
    fn skip_past(&mut self, close: &[u8]) {
        self.pos = self
            .position_of(close)
            .map_or(self.src.len(), |at| at + close.len());
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let src = self.src;
            if self.pos >= src.len() {
                return None;
            }
            if let Some(name) = self.raw.take() {
                let end = if name == "plaintext" {
                    src.len()
                } else {
                    self.raw_end(name)
                };
                let text = &src[self.pos..end];
                self.pos = end;
                if !text.is_empty() {
                    return Some(Token::Raw(text));
                }
                continue;
            }
            let rest = self.rest();
            if rest[0] != b'<' {
                let len = rest.iter().position(|&b| b == b'<').unwrap_or(rest.len());
                self.pos += len;
                return Some(Token::Text(&rest[..len]));
            }
            match rest.get(1) {
                Some(b) if b.is_ascii_alphabetic() => {
                    self.pos += 1;
                    return self.tag(false);
                }
                Some(b'/') => match rest.get(2) {
                    Some(b) if b.is_ascii_alphabetic() => {
                        self.pos += 2;
                        return self.tag(true);
                    }
                    Some(b'>') => self.pos += 3,
                    // `</` then something else: a bogus comment up to '>'.
                    _ => self.skip_past(b">"),
                },
                Some(b'!') if rest.starts_with(b"<!--") => {
                    self.pos += 4;
                    // `<!-->` and `<!--->` are complete (empty) comments.
                    if self.rest().starts_with(b">") {
                        self.pos += 1;
                    } else if self.rest().starts_with(b"->") {
                        self.pos += 2;
                    } else {
                        self.skip_past(b"-->");
                    }
                }
                Some(b'!' | b'?') => self.skip_past(b">"),
                _ => {
                    self.pos += 1;
                    return Some(Token::Text(&rest[..1]));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(html: &str) -> Vec<Token<'_>> {
        Tokens::new(html.as_bytes()).collect()
    }

    #[test]
    fn tags_text_and_attributes() {
        use Token::*;
        assert_eq!(
            tokens("a<B Class=x HREF='/y?a>b' data-z>c</b >d<!-- <p> -->e<!DOCTYPE html>< f</>g"),
            vec![
                Text(b"a"),
                Start("b".into(), vec![("href", &b"/y?a>b"[..])]),
                Text(b"c"),
                End("b".into()),
                Text(b"d"),
                Text(b"e"),
                Text(b"<"),
                Text(b" f"),
                Text(b"g"),
            ]
        );
        assert_eq!(
            tokens("<script>if (a<b) x='</p>'</script >t<style>p{}</STYLE>"),
            vec![
                Start("script".into(), vec![]),
                Raw(b"if (a<b) x='</p>'"),
                End("script".into()),
                Text(b"t"),
                Start("style".into(), vec![]),
                Raw(b"p{}"),
                End("style".into()),
            ]
        );
    }

    #[test]
    fn unterminated_markup_ends_the_document() {
        use Token::*;
        assert_eq!(tokens("a<div class='x"), vec![Text(b"a")]);
        assert_eq!(tokens("a<div"), vec![Text(b"a")]);
        assert_eq!(tokens("a<!-- b"), vec![Text(b"a")]);
        assert_eq!(
            tokens("<title>x<"),
            vec![Start("title".into(), vec![]), Raw(b"x<")]
        );
    }
}
