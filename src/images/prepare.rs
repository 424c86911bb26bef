//! One image file made ready to send: read under a byte cap, recognised by its content (not
//! its name), decoded under the decoder's [`image::Limits`] (a decompression bomb, a lying
//! header or a truncated file is a clear error, never unbounded memory), downscaled to
//! [`MAX_SIDE`](super::MAX_SIDE) and re-encoded when it does not fit every provider as it is.

use std::io::{Cursor, Read};
use std::sync::Arc;

use image::{DynamicImage, ImageError, ImageFormat, ImageReader};
use sha2::{Digest as _, Sha256};

use super::find::Found;
use super::{
    Image, MAX_DECODE_ALLOC, MAX_DECODE_SIDE, MAX_FILE_BYTES, MAX_SENT_BYTES, MAX_SIDE, MediaType,
    human_size,
};

/// Why an image cannot be sent. Each names the file and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// The file is over [`MAX_FILE_BYTES`].
    #[error("{name} is {size}, over the {cap} an image may be; make it smaller or leave it out")]
    TooLarge {
        /// The file name.
        name: String,
        /// Its size, readable.
        size: String,
        /// The cap, readable.
        cap: String,
    },
    /// The file could not be read.
    #[error("cannot read {name}: {reason}")]
    Unreadable {
        /// The file name.
        name: String,
        /// Why.
        reason: String,
    },
    /// Its content is no PNG, JPEG, WebP or GIF, whatever its name says.
    #[error("{name} is not a PNG, JPEG, WebP or GIF image (its content says otherwise)")]
    NotAnImage {
        /// The file name.
        name: String,
    },
    /// Decoding it would take more than taco allows (huge dimensions, a decompression bomb).
    #[error(
        "{name} is too large to decode: {reason} (at most {MAX_DECODE_SIDE}×{MAX_DECODE_SIDE} pixels)"
    )]
    TooManyPixels {
        /// The file name.
        name: String,
        /// What the decoder said.
        reason: String,
    },
    /// The content is damaged (a truncated file, a corrupt stream).
    #[error("{name} cannot be decoded: {reason}")]
    Damaged {
        /// The file name.
        name: String,
        /// What the decoder said.
        reason: String,
    },
    /// Even downscaled, it stays over the bytes a provider takes.
    #[error("{name} stays over {cap} even downscaled; crop or compress it")]
    Incompressible {
        /// The file name.
        name: String,
        /// The cap, readable.
        cap: String,
    },
    /// Preparing it took too long.
    #[error("{name} took longer than {secs} s to read and prepare")]
    TimedOut {
        /// The file name.
        name: String,
        /// The bound.
        secs: u64,
    },
    /// The message names more images than one may carry.
    #[error("the message names {count} images; at most {max} may go in one message")]
    TooMany {
        /// How many it names.
        count: usize,
        /// The bound.
        max: usize,
    },
}

/// Reads, checks and (when needed) downscales one image file. Blocking: run it off the
/// async threads.
pub fn prepare(found: &Found) -> Result<Image, PrepareError> {
    let name = found.name.clone();
    let bytes = read_capped(found, MAX_FILE_BYTES)?;
    let format = match image::guess_format(&bytes) {
        Ok(f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP | ImageFormat::Gif)) => f,
        _ => return Err(PrepareError::NotAnImage { name }),
    };
    let decoded = decode(&bytes, format).map_err(|e| decode_error(&name, e))?;
    let (width, height) = (decoded.width(), decoded.height());
    let fits = width.max(height) <= MAX_SIDE && bytes.len() <= MAX_SENT_BYTES;
    // A PNG or JPEG that fits goes as it is: no quality lost, no time spent.
    let (media_type, data, width, height) = match format {
        ImageFormat::Png if fits => (MediaType::Png, bytes, width, height),
        ImageFormat::Jpeg if fits => (MediaType::Jpeg, bytes, width, height),
        _ => {
            drop(bytes);
            let shrunk = shrink(decoded, &name)?;
            (shrunk.media_type, shrunk.data, shrunk.width, shrunk.height)
        }
    };
    let sha256 = hex(&Sha256::digest(&data));
    Ok(Image {
        name,
        media_type,
        width,
        height,
        bytes: data.len() as u64,
        sha256,
        data: Some(Arc::from(data)),
    })
}

/// The file's bytes, refused when over `cap` (checked before reading, and while reading, in
/// case it grows meanwhile).
fn read_capped(found: &Found, cap: u64) -> Result<Vec<u8>, PrepareError> {
    let name = &found.name;
    let unreadable = |e: std::io::Error| PrepareError::Unreadable {
        name: name.clone(),
        reason: e.to_string(),
    };
    let too_large = |size: u64| PrepareError::TooLarge {
        name: name.clone(),
        size: human_size(size),
        cap: human_size(cap),
    };
    let file = std::fs::File::open(&found.path).map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(PrepareError::Unreadable {
            name: name.clone(),
            reason: "not a regular file".into(),
        });
    }
    if meta.len() > cap {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Decodes under taco's limits: dimensions are checked against the header before any pixel
/// buffer is made, and the decoder's allocations are bounded.
fn decode(bytes: &[u8], format: ImageFormat) -> Result<DynamicImage, ImageError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_DECODE_SIDE);
    limits.max_image_height = Some(MAX_DECODE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    reader.decode()
}

fn decode_error(name: &str, error: ImageError) -> PrepareError {
    let name = name.to_string();
    match error {
        ImageError::Limits(e) => PrepareError::TooManyPixels {
            name,
            reason: e.to_string(),
        },
        ImageError::IoError(e) => PrepareError::Damaged {
            name,
            reason: format!("the file ends early or is damaged ({e})"),
        },
        other => PrepareError::Damaged {
            name,
            reason: other.to_string(),
        },
    }
}

/// An image re-encoded: its type, bytes and size in pixels.
struct Encoded {
    media_type: MediaType,
    data: Vec<u8>,
    width: u32,
    height: u32,
}

impl Encoded {
    fn new(media_type: MediaType, data: Vec<u8>, image: &DynamicImage) -> Self {
        Self {
            media_type,
            data,
            width: image.width(),
            height: image.height(),
        }
    }
}

/// Downscales to [`MAX_SIDE`] and re-encodes: PNG when it has transparency, JPEG otherwise;
/// halved again (as JPEG) while it stays over [`MAX_SENT_BYTES`].
fn shrink(image: DynamicImage, name: &str) -> Result<Encoded, PrepareError> {
    // `thumbnail` averages the source pixels of each target pixel in integers: no float copy
    // of the whole picture, so a 12-megapixel photo stays under ~100 MB while it is scaled.
    let mut image = if image.width().max(image.height()) > MAX_SIDE {
        image.thumbnail(MAX_SIDE, MAX_SIDE)
    } else {
        image
    };
    let damaged = |e: ImageError| PrepareError::Damaged {
        name: name.to_string(),
        reason: e.to_string(),
    };
    if image.has_alpha() {
        let png = encode_png(&image).map_err(damaged)?;
        if png.len() <= MAX_SENT_BYTES {
            return Ok(Encoded::new(MediaType::Png, png, &image));
        }
    }
    for _ in 0..4 {
        let jpeg = encode_jpeg(&image).map_err(damaged)?;
        if jpeg.len() <= MAX_SENT_BYTES {
            return Ok(Encoded::new(MediaType::Jpeg, jpeg, &image));
        }
        let (w, h) = (image.width() / 2, image.height() / 2);
        image = image.thumbnail(w.max(1), h.max(1));
    }
    Err(PrepareError::Incompressible {
        name: name.to_string(),
        cap: human_size(MAX_SENT_BYTES as u64),
    })
}

fn encode_png(image: &DynamicImage) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    DynamicImage::ImageRgba8(image.to_rgba8())
        .write_with_encoder(image::codecs::png::PngEncoder::new(&mut out))?;
    Ok(out)
}

fn encode_jpeg(image: &DynamicImage) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(image.to_rgb8()).write_with_encoder(
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85),
    )?;
    Ok(out)
}

/// Lower-case hex of a digest.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32, alpha: bool) -> Vec<u8> {
        let image = if alpha {
            DynamicImage::new_rgba8(w, h)
        } else {
            DynamicImage::new_rgb8(w, h)
        };
        let mut out = Vec::new();
        image
            .write_with_encoder(image::codecs::png::PngEncoder::new(&mut out))
            .unwrap();
        out
    }

    fn found(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Found {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        Found {
            path,
            name: name.into(),
        }
    }

    #[test]
    fn a_small_png_goes_as_it_is_and_a_large_one_is_downscaled() {
        let dir = tempfile::tempdir().unwrap();
        let small = png(4, 3, false);
        let image = prepare(&found(dir.path(), "s.png", &small)).unwrap();
        assert_eq!((image.width, image.height), (4, 3));
        assert_eq!(image.data.as_deref(), Some(&small[..]));
        assert_eq!(image.sha256.len(), 64);
        let big = prepare(&found(dir.path(), "b.png", &png(3200, 1600, true))).unwrap();
        assert_eq!((big.width, big.height), (MAX_SIDE, MAX_SIDE / 2));
        assert_eq!(big.media_type, MediaType::Png);
        let opaque = prepare(&found(dir.path(), "o.png", &png(1600, 100, false))).unwrap();
        assert_eq!(opaque.media_type, MediaType::Jpeg);
    }

    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn hostile_files_fail_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let whole = png(64, 64, false);
        let cut = prepare(&found(dir.path(), "cut.png", &whole[..whole.len() / 2]));
        assert!(matches!(cut, Err(PrepareError::Damaged { .. })), "{cut:?}");
        let text = prepare(&found(dir.path(), "fake.png", b"hello, not an image"));
        assert!(
            matches!(text, Err(PrepareError::NotAnImage { .. })),
            "{text:?}"
        );
        // A header that claims 100,000 × 100,000 pixels is refused before any buffer is made.
        let mut lying = png(1, 1, false);
        lying[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        lying[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        // The IHDR chunk's CRC (over its type and data) is made right, so only the size lies.
        let crc = crc32(&lying[12..29]);
        lying[29..33].copy_from_slice(&crc.to_be_bytes());
        let bomb = prepare(&found(dir.path(), "bomb.png", &lying));
        assert!(
            matches!(bomb, Err(PrepareError::TooManyPixels { .. })),
            "{bomb:?}"
        );
        let message = bomb.unwrap_err().to_string();
        assert!(
            message.starts_with("bomb.png is too large to decode"),
            "{message}"
        );
    }
}
