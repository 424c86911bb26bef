//! The client's buffers, for a client that offers `fs/read_text_file`: `read_file` reads the
//! editor's copy of a file (unsaved edits included) once taco has found the file inside the
//! workspace (`tools::buffers`).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use crate::tools::buffers::Buffers;

/// Reads through the client, for one session (its id is known once the session is open).
pub struct ClientFiles {
    cx: ConnectionTo<Client>,
    session: Arc<OnceLock<SessionId>>,
}

impl ClientFiles {
    /// Reads through `cx` for the session `session` will name.
    pub fn new(cx: ConnectionTo<Client>, session: Arc<OnceLock<SessionId>>) -> Self {
        Self { cx, session }
    }
}

impl Buffers for ClientFiles {
    fn read(&self, path: &Path) -> BoxFuture<'static, Option<String>> {
        let cx = self.cx.clone();
        let session = self.session.get().cloned();
        let path = path.to_path_buf();
        async move {
            let request = ReadTextFileRequest::new(session?, path);
            match cx.send_request(request).block_task().await {
                Ok(response) => Some(response.content),
                Err(e) => {
                    tracing::info!("the client could not read a file; the disk is read: {e}");
                    None
                }
            }
        }
        .boxed()
    }
}
