//! The images a prompt names, made ready before anything is sent: refused at once when the
//! model takes none (the user's text is kept; nothing reaches the provider), each prepared off
//! the async threads under [`PREPARE_WITHIN`].

use std::path::Path;

use tokio_util::sync::CancellationToken;

use crate::images::{self, Image, MAX_PER_MESSAGE, PREPARE_WITHIN, PrepareError};
use crate::provider::Provider;

/// Why a prompt's images stop it before it is sent.
#[derive(Debug)]
pub(super) enum Refused {
    /// The message for the user (an `error` event of kind `image`).
    Error(String),
    /// The user cancelled while images were being prepared.
    Cancelled,
}

/// The images `prompt` names, prepared; none when it names none.
pub(super) async fn attach(
    prompt: &str,
    workdir: &Path,
    provider: &dyn Provider,
    cancel: &CancellationToken,
) -> Result<Vec<Image>, Refused> {
    let (text, dir) = (prompt.to_string(), workdir.to_path_buf());
    let found = tokio::task::spawn_blocking(move || images::find(&text, &dir))
        .await
        .unwrap_or_default();
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    if !provider.accepts_images() {
        return Err(Refused::Error(format!(
            "model '{}' of provider '{}' does not take images, and the prompt names {}: \
             nothing was sent. Send it again without the image, switch to a model that takes \
             images (/model), or set `vision = true` in [providers.{}.options] if this one does.",
            provider.model(),
            provider.name(),
            names.join(", "),
            provider.name()
        )));
    }
    if found.len() > MAX_PER_MESSAGE {
        let error = PrepareError::TooMany {
            count: found.len(),
            max: MAX_PER_MESSAGE,
        };
        return Err(Refused::Error(format!("{error}; nothing was sent")));
    }
    let mut prepared = Vec::with_capacity(found.len());
    for one in found {
        let name = one.name.clone();
        let job = tokio::task::spawn_blocking(move || images::prepare(&one));
        let result = tokio::select! {
            () = cancel.cancelled() => return Err(Refused::Cancelled),
            done = tokio::time::timeout(PREPARE_WITHIN, job) => match done {
                Ok(Ok(result)) => result,
                Ok(Err(join)) => Err(PrepareError::Damaged { name, reason: join.to_string() }),
                Err(_) => Err(PrepareError::TimedOut { name, secs: PREPARE_WITHIN.as_secs() }),
            },
        };
        match result {
            Ok(image) => prepared.push(image),
            Err(error) => return Err(Refused::Error(format!("{error}; nothing was sent"))),
        }
    }
    Ok(prepared)
}
