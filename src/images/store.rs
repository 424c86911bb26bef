//! The bytes of the images sent, kept once each beside the session files that mention them:
//! `<sessions>/images/<sha256>.<png|jpg>`, private like the sessions (0600 in a 0700
//! directory, never through a symlink). A session file's messages carry only each image's
//! name, size and hash, so no line of it holds base64; a resume reads the bytes back by
//! hash and checks them.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use super::{Image, MAX_SENT_BYTES};
use crate::private::PrivateDir;

/// The directory under the sessions directory that holds the images.
pub const DIR: &str = "images";

fn file_name(image: &Image) -> Option<String> {
    // The hash comes from a session file on resume: only a real hex digest names a file.
    let hex = image.sha256.len() == 64 && image.sha256.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then(|| format!("{}.{}", image.sha256, image.media_type.extension()))
}

/// Keeps the bytes of `image` under `sessions` (nothing to do when they are there already).
pub fn save(sessions: &Path, image: &Image) -> std::io::Result<()> {
    let (Some(data), Some(name)) = (&image.data, file_name(image)) else {
        return Ok(());
    };
    let dir = PrivateDir::create(&sessions.join(DIR))?;
    if dir.identity(&name).is_ok() {
        return Ok(());
    }
    // Written whole under a temporary name, then renamed: a crash leaves no half image.
    let temp = format!(".{name}.{}.tmp", std::process::id());
    let written = dir
        .create_new(&temp, false)
        .and_then(|mut file| file.write_all(data))
        .and_then(|()| dir.rename(&temp, &name));
    if written.is_err() {
        let _ = dir.remove(&temp);
    }
    written
}

/// The bytes of `image` read back from under `sessions`, when they are there and are what
/// its hash says.
pub fn load(sessions: &Path, image: &Image) -> Option<Arc<[u8]>> {
    let name = file_name(image)?;
    let file = PrivateDir::open(&sessions.join(DIR))
        .ok()?
        .read(&name)
        .ok()?;
    let mut data = Vec::new();
    file.take(MAX_SENT_BYTES as u64 + 1)
        .read_to_end(&mut data)
        .ok()?;
    let digest = Sha256::digest(&data);
    let same = data.len() <= MAX_SENT_BYTES
        && digest
            .iter()
            .zip(image.sha256.as_bytes().chunks(2))
            .all(|(b, pair)| std::str::from_utf8(pair).ok() == Some(&format!("{b:02x}")));
    same.then(|| Arc::from(data))
}

/// Fills in the bytes of every image in `messages` that lacks them; returns what could not
/// be found (one line each, for the user).
pub fn hydrate(sessions: &Path, messages: &mut [crate::conversation::Message]) -> Vec<String> {
    let mut missing = Vec::new();
    for image in messages.iter_mut().flat_map(|m| m.images.iter_mut()) {
        if image.data.is_some() {
            continue;
        }
        image.data = load(sessions, image);
        if image.data.is_none() {
            missing.push(format!(
                "image {} ({}…) is no longer stored; the model is told it is missing",
                image.name,
                image.sha256.get(..12).unwrap_or(&image.sha256)
            ));
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::images::MediaType;

    fn image(data: &[u8]) -> Image {
        Image {
            name: "a.png".into(),
            media_type: MediaType::Png,
            width: 1,
            height: 1,
            bytes: data.len() as u64,
            sha256: Sha256::digest(data)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            data: Some(Arc::from(data)),
        }
    }

    #[test]
    fn saved_once_and_read_back_only_when_the_hash_agrees() {
        let dir = tempfile::tempdir().unwrap();
        let kept = image(b"png bytes");
        save(dir.path(), &kept).unwrap();
        save(dir.path(), &kept).unwrap();
        let mut bare = kept.clone();
        bare.data = None;
        assert_eq!(load(dir.path(), &bare).as_deref(), Some(&b"png bytes"[..]));
        let path = dir.path().join(DIR).join(format!("{}.png", kept.sha256));
        std::fs::write(&path, b"tampered").unwrap();
        assert_eq!(load(dir.path(), &bare), None);
        bare.sha256 = "../../etc/passwd".into();
        assert_eq!(load(dir.path(), &bare), None);
    }
}
