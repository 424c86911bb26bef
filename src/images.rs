//! Images in the user's prompt (issue 30.5): found as paths in the text ([`find`]), read and
//! decoded under bounds, downscaled and re-encoded to fit every provider ([`prepare`]), kept
//! once per content hash beside the session files ([`store`]), and sent only to models that
//! take images ([`vision`]).
//!
//! One prepared image fits every provider's documented limits at once (the smallest of each),
//! so a `/model` switch never needs the original file again:
//! - Anthropic: at most 8000×8000 px (2000×2000 beyond 20 images), 5 MB a base64 image, and
//!   images with a long edge over 1568 px are downscaled by the API anyway;
//! - OpenAI: 20 MB an image; `detail: high` scales to fit 2048×2048, then 768 px on the
//!   short side;
//! - Ollama: no documented bound; its vision models resize to well under 1568 px.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::conversation::Message;

pub mod find;
pub mod prepare;
pub mod store;
pub mod vision;

pub use find::find;
pub use prepare::{PrepareError, prepare};

/// Files larger than this are refused before they are read (OpenAI's own per-image cap).
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// The longest side sent: Anthropic's native resolution, below every other provider's limit.
pub const MAX_SIDE: u32 = 1568;
/// Most bytes of one image sent: 5 MB of base64 (Anthropic's per-image cap) is 3.75 MB raw.
pub const MAX_SENT_BYTES: usize = 3_750_000;
/// Most images one message carries (Anthropic lowers its pixel limit beyond 20 a request).
pub const MAX_PER_MESSAGE: usize = 8;
/// The largest side a file may declare before decoding is refused (Anthropic's 8000 px, with
/// room for screenshots of 8K screens).
pub const MAX_DECODE_SIDE: u32 = 8192;
/// Most memory the decoder may allocate for one image: an 8192×8192 RGBA picture.
pub const MAX_DECODE_ALLOC: u64 = 8192 * 8192 * 4;
/// How long reading and preparing one image may take.
pub const PREPARE_WITHIN: std::time::Duration = std::time::Duration::from_secs(20);

/// The encodings sent (a WebP or GIF is re-encoded as PNG, which every provider reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MediaType {
    /// `image/png`.
    #[serde(rename = "image/png")]
    Png,
    /// `image/jpeg`.
    #[serde(rename = "image/jpeg")]
    Jpeg,
}

impl MediaType {
    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
        }
    }

    /// The file extension of a stored copy.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
        }
    }
}

/// An image of a user message: what it is (kept in session files) and its bytes (never
/// serialized: the store keeps them once, by hash; `None` after a resume that could not find
/// them).
#[derive(Clone, Serialize, Deserialize)]
pub struct Image {
    /// The file name it came from, as the chip shows it.
    pub name: String,
    /// The encoding of the bytes sent.
    pub media_type: MediaType,
    /// Width in pixels, as sent.
    pub width: u32,
    /// Height in pixels, as sent.
    pub height: u32,
    /// Size of the bytes sent.
    pub bytes: u64,
    /// SHA-256 of the bytes sent, hex: the name of the stored copy.
    pub sha256: String,
    /// The bytes sent.
    #[serde(skip)]
    pub data: Option<Arc<[u8]>>,
}

impl Image {
    /// The chip the chat shows: `🖼 name.png 1024×768 · 210 KB`.
    pub fn chip(&self) -> String {
        format!("🖼 {}", self.label())
    }

    /// `name.png 1024×768 · 210 KB`: the chip without its mark (the timeline's row).
    pub fn label(&self) -> String {
        format!(
            "{} {}×{} · {}",
            self.name,
            self.width,
            self.height,
            human_size(self.bytes)
        )
    }

    /// What the model is told in place of an image whose bytes are gone.
    pub fn missing_note(&self) -> String {
        format!(
            "[image {} ({}×{}) is no longer available: its stored copy was not found]",
            self.name, self.width, self.height
        )
    }
}

// The bytes never reach a log or an error through `Debug`.
impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Image")
            .field("name", &self.name)
            .field("media_type", &self.media_type)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("bytes", &self.bytes)
            .field("sha256", &self.sha256)
            .field("loaded", &self.data.is_some())
            .finish()
    }
}

// Two images are the same when their content is: the bytes are named by their hash.
impl PartialEq for Image {
    fn eq(&self, other: &Self) -> bool {
        self.sha256 == other.sha256
            && self.name == other.name
            && self.media_type == other.media_type
            && (self.width, self.height, self.bytes) == (other.width, other.height, other.bytes)
    }
}

/// The messages as a model that takes no images gets them (an earlier model of the
/// conversation took them): each image becomes a line of text saying so.
pub fn for_model(
    messages: std::borrow::Cow<'_, [Message]>,
    accepts_images: bool,
) -> std::borrow::Cow<'_, [Message]> {
    if accepts_images || messages.iter().all(|m| m.images.is_empty()) {
        return messages;
    }
    let mut owned = messages.into_owned();
    for message in owned.iter_mut().filter(|m| !m.images.is_empty()) {
        let notes: Vec<String> = (message.images.drain(..))
            .map(|i| {
                format!(
                    "[image {} left out: this model does not take images]",
                    i.name
                )
            })
            .collect();
        let text = message.content.get_or_insert_with(String::new);
        text.push_str("\n\n");
        text.push_str(&notes.join("\n"));
    }
    std::borrow::Cow::Owned(owned)
}

/// `210 KB`, `1.4 MB`: sizes as the chat shows them.
pub fn human_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    if bytes < KB {
        format!("{bytes} B")
    } else if bytes < KB * KB {
        format!("{} KB", bytes.div_ceil(KB))
    } else {
        format!("{:.1} MB", bytes as f64 / (KB * KB) as f64)
    }
}

/// Base64 of an image's bytes, written straight into a serializer (no copy of the text).
pub(crate) struct Base64<'a>(pub &'a [u8]);

impl fmt::Display for Base64<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use base64::display::Base64Display;
        use base64::engine::general_purpose::STANDARD;
        Base64Display::new(self.0, &STANDARD).fmt(f)
    }
}

/// `data:image/png;base64,…`: an image as an OpenAI-style data URL.
pub(crate) struct DataUrl<'a>(pub MediaType, pub &'a [u8]);

impl fmt::Display for DataUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data:{};base64,{}", self.0.mime(), Base64(self.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chips_and_sizes_read_as_the_chat_shows_them() {
        let image = Image {
            name: "shot.png".into(),
            media_type: MediaType::Png,
            width: 1024,
            height: 768,
            bytes: 210 * 1024,
            sha256: "ab".into(),
            data: Some(Arc::from(vec![1u8, 2, 3])),
        };
        assert_eq!(image.chip(), "🖼 shot.png 1024×768 · 210 KB");
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(3 * 1024 * 1024 / 2), "1.5 MB");
        let debug = format!("{image:?}");
        assert!(debug.contains("loaded: true") && !debug.contains("[1, 2, 3]"));
        let json = serde_json::to_string(&image).unwrap();
        assert!(!json.contains("data"), "{json}");
        assert_eq!(
            DataUrl(MediaType::Png, b"hi").to_string(),
            "data:image/png;base64,aGk="
        );
    }

    #[test]
    fn a_model_without_vision_gets_notes_for_earlier_images() {
        let image = Image {
            name: "shot.png".into(),
            media_type: MediaType::Png,
            width: 1,
            height: 1,
            bytes: 1,
            sha256: "ab".into(),
            data: None,
        };
        let messages = vec![Message::user_with_images("see", vec![image])];
        let kept = for_model(std::borrow::Cow::Borrowed(&messages), true);
        assert!(matches!(kept, std::borrow::Cow::Borrowed(_)));
        let noted = for_model(std::borrow::Cow::Borrowed(&messages), false);
        assert!(noted[0].images.is_empty());
        assert_eq!(
            noted[0].content.as_deref(),
            Some("see\n\n[image shot.png left out: this model does not take images]")
        );
    }
}
