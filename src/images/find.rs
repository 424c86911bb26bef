//! Which words of a prompt name image files: a path (workspace-relative or absolute) ending in
//! `.png`, `.jpg`, `.jpeg`, `.webp` or `.gif` that exists as a regular file, written plain,
//! as `@path`, quoted (`'My Shot.png'`), with backslash-escaped blanks, or as a `file://` URI
//! (the ways terminals paste a dragged file). The prompt's text is left as typed.

use std::path::{Path, PathBuf};

/// The extensions taken as images (the formats all three providers document).
const EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "webp", "gif"];
/// Punctuation that may follow a path without being part of it (`see shot.png, then`).
const TRAILING: &[char] = &[',', '.', ';', ':', '!', '?', ')', ']', '}'];
/// Words longer than this are no path worth a `stat`.
const MAX_WORD: usize = 4096;
/// Most candidate words looked up in one prompt (a pasted log is no list of images).
const MAX_LOOKUPS: usize = 64;

/// An image file a prompt names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where it is.
    pub path: PathBuf,
    /// Its file name, as the chip shows it.
    pub name: String,
}

/// The image files `prompt` names, in order, each once; relative paths are taken from
/// `workdir`.
pub fn find(prompt: &str, workdir: &Path) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut lookups = 0;
    for word in words(prompt) {
        if word.len() > MAX_WORD || !looks_like_image(&word) {
            continue;
        }
        if lookups == MAX_LOOKUPS {
            break;
        }
        lookups += 1;
        let Some(path) = resolve(&word, workdir) else {
            continue;
        };
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        found.push(Found { path, name });
    }
    found
}

/// Whether a word (or it without trailing punctuation) ends in an image extension.
pub fn looks_like_image(word: &str) -> bool {
    let bare = word.trim_end_matches(TRAILING);
    bare.rsplit_once('.').is_some_and(|(_, ext)| {
        EXTENSIONS
            .iter()
            .any(|known| known.eq_ignore_ascii_case(ext))
    })
}

/// The file a word names, if it is a regular file (a FIFO or device named `x.png` is not).
fn resolve(word: &str, workdir: &Path) -> Option<PathBuf> {
    let word = word.strip_prefix('@').unwrap_or(word);
    let word = match word.strip_prefix("file://") {
        Some(rest) => percent_decoded(rest)?,
        None => word.to_string(),
    };
    let mut candidates = vec![word.clone()];
    let bare = word.trim_end_matches(TRAILING);
    if bare.len() != word.len() {
        candidates.push(bare.to_string());
    }
    candidates.into_iter().find_map(|candidate| {
        let path = Path::new(&candidate);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            workdir.join(path)
        };
        std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file())
            .map(|_| path)
    })
}

/// `%20` and the like in a `file://` URI; `None` when an escape is not valid UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The prompt's words: split at blanks, except inside quotes and after a backslash; an
/// `@` or quote opening a word is kept out of it.
fn words(prompt: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = prompt.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                words.push(std::mem::take(&mut word));
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') if word.is_empty() || word == "@" => {
                quote = Some(c);
                word.clear();
            }
            (None, '\\') if chars.peek().is_some_and(|n| n.is_whitespace()) => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_however_they_are_pasted() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.png", "My Shot.JPG", "c.webp", "d.gif"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::create_dir(dir.path().join("dir.png")).unwrap();
        let abs = dir.path().join("d.gif");
        let prompt = format!(
            "see a.png, @a.png and 'My Shot.JPG' and My\\ Shot.JPG, file://{}/c.webp {} \
             missing.png dir.png notes.txt",
            dir.path().display(),
            abs.display()
        );
        let names: Vec<String> = find(&prompt, dir.path())
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["a.png", "My Shot.JPG", "c.webp", "d.gif"]);
    }

    #[test]
    fn percent_escapes_decode() {
        assert_eq!(percent_decoded("/a%20b.png").as_deref(), Some("/a b.png"));
        assert_eq!(percent_decoded("/a%zz.png").as_deref(), Some("/a%zz.png"));
    }
}
