//! The loopback redirect of a login: a listener on 127.0.0.1 (a port the kernel picks) that
//! waits, within a time bound, for the browser to come back with the authorization code.
//! Only a request with the login's `state` ends the wait; anything else (another path, a
//! wrong `state`, a request larger than [`MAX_REQUEST`]) is answered and refused, and the
//! wait goes on.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path the browser is sent back to.
pub const PATH: &str = "/callback";
/// The most of a request read (its request line and headers).
pub const MAX_REQUEST: usize = 8 * 1024;
/// How long one connection may take to send its request.
const READ_TIME: Duration = Duration::from_secs(10);

/// Why the wait ended without a code.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    /// No browser came back in time.
    #[error("the browser did not come back within {0} s")]
    TimedOut(u64),
    /// The authorization server said no.
    #[error("the authorization server refused: {0}")]
    Refused(String),
    /// The listener failed.
    #[error("the loopback listener failed: {0}")]
    Io(#[from] std::io::Error),
}

/// What the browser brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    /// The authorization code.
    pub code: String,
    /// The `state` (equal to the login's).
    pub state: String,
    /// The issuer (RFC 9207), when sent.
    pub issuer: Option<String>,
}

/// The listener of one login.
pub struct Listener {
    listener: TcpListener,
    port: u16,
}

impl Listener {
    /// Binds 127.0.0.1 on a free port.
    pub async fn bind() -> Result<Self, CallbackError> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self { listener, port })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{PATH}", self.port)
    }

    /// Waits at most `bound` for the browser to bring the code for `state`.
    pub async fn wait(&self, state: &str, bound: Duration) -> Result<Callback, CallbackError> {
        let waited = tokio::time::timeout(bound, async {
            loop {
                let (stream, _) = self.listener.accept().await?;
                if let Some(outcome) = answer(stream, state).await {
                    return outcome;
                }
            }
        });
        waited
            .await
            .unwrap_or(Err(CallbackError::TimedOut(bound.as_secs())))
    }
}

/// What one request was.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// The code, for this login.
    Code(Callback),
    /// The authorization server's refusal (`error=access_denied`), for this login.
    Refused(String),
    /// Not for this login: said why, and the wait goes on.
    Ignored(&'static str),
}

/// Reads one request and answers it; `Some` ends the wait.
async fn answer(mut stream: TcpStream, state: &str) -> Option<Result<Callback, CallbackError>> {
    let head = tokio::time::timeout(READ_TIME, read_head(&mut stream)).await;
    let verdict = match head {
        Ok(Some(head)) => judge(&head, state),
        Ok(None) => Verdict::Ignored("the request is too large or malformed"),
        Err(_) => Verdict::Ignored("the request took too long"),
    };
    let (status, text) = match &verdict {
        Verdict::Code(_) => (
            "200 OK",
            "taco received the authorization. You can close this tab and go back to the terminal.",
        ),
        Verdict::Refused(_) => (
            "200 OK",
            "The authorization was refused; taco says why in the terminal.",
        ),
        Verdict::Ignored(why) => ("400 Bad Request", *why),
    };
    let page = format!("<!doctype html><meta charset=utf-8><title>taco</title><p>{text}</p>\n");
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = tokio::time::timeout(READ_TIME, stream.write_all(reply.as_bytes())).await;
    let _ = stream.shutdown().await;
    match verdict {
        Verdict::Code(callback) => Some(Ok(callback)),
        Verdict::Refused(why) => Some(Err(CallbackError::Refused(why))),
        Verdict::Ignored(why) => {
            tracing::info!(why, "oauth redirect listener: a request was refused");
            None
        }
    }
}

/// The request line and headers, at most [`MAX_REQUEST`] bytes; `None` past that.
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(head).ok()
}

/// What a request (its head) means for the login with `state`.
fn judge(head: &str, state: &str) -> Verdict {
    let line = head.lines().next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some("GET"), Some(target)) = (parts.next(), parts.next()) else {
        return Verdict::Ignored("only GET is answered here");
    };
    let Ok(url) = reqwest::Url::parse(&format!("http://127.0.0.1{target}")) else {
        return Verdict::Ignored("the address is malformed");
    };
    if url.path() != PATH {
        return Verdict::Ignored("nothing is here");
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    };
    // The state is checked first: a request without it (or with another) is not this
    // login's, whatever else it says.
    if param("state").as_deref() != Some(state) {
        return Verdict::Ignored("the state does not match this login; refused");
    }
    if let Some(error) = param("error") {
        let mut why: String = error.chars().take(100).collect();
        if let Some(description) = param("error_description") {
            why.push_str(": ");
            why.extend(description.chars().take(300));
        }
        // Shown on the user's screen: the server's words, without controls.
        return Verdict::Refused(why.chars().filter(|c| !c.is_control()).collect());
    }
    match param("code") {
        Some(code) if !code.is_empty() => Verdict::Code(Callback {
            code,
            state: state.to_string(),
            issuer: param("iss"),
        }),
        _ => Verdict::Ignored("the redirect carries no code"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(target: &str) -> String {
        format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    }

    #[test]
    fn only_this_logins_state_brings_a_code() {
        assert_eq!(
            judge(
                &get("/callback?code=c1&state=s1&iss=https%3A%2F%2Fas"),
                "s1"
            ),
            Verdict::Code(Callback {
                code: "c1".into(),
                state: "s1".into(),
                issuer: Some("https://as".into()),
            })
        );
        for (target, state) in [
            ("/callback?code=c1&state=other", "s1"),
            ("/callback?code=c1", "s1"),
            ("/callback?code=c1&state=s1&state=s1", "s2"),
            ("/callback?error=access_denied&state=x", "s1"),
            ("/elsewhere?code=c1&state=s1", "s1"),
            ("/callback?state=s1", "s1"),
        ] {
            assert!(
                matches!(judge(&get(target), state), Verdict::Ignored(_)),
                "{target}"
            );
        }
        assert!(matches!(
            judge("POST /callback?code=c&state=s HTTP/1.1\r\n\r\n", "s"),
            Verdict::Ignored(_)
        ));
        assert_eq!(
            judge(
                &get("/callback?error=access_denied&error_description=no%1b[2J&state=s1"),
                "s1"
            ),
            Verdict::Refused("access_denied: no[2J".into())
        );
    }

    #[tokio::test]
    async fn a_wrong_state_is_refused_and_the_wait_goes_on_until_the_right_one() {
        let listener = Listener::bind().await.unwrap();
        let uri = listener.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let client = async {
            let http = reqwest::Client::new();
            let wrong = http
                .get(format!("{uri}?code=evil&state=forged"))
                .send()
                .await
                .unwrap();
            assert_eq!(wrong.status(), 400);
            // A request past the bound is cut off, not read on.
            let mut big =
                TcpStream::connect(uri.trim_start_matches("http://").trim_end_matches(PATH))
                    .await
                    .unwrap();
            let _ = big.write_all(&vec![b'a'; MAX_REQUEST + 10]).await;
            let mut answer = String::new();
            let _ = big.read_to_string(&mut answer).await;
            assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
            let right = http
                .get(format!("{uri}?code=good&state=s1"))
                .send()
                .await
                .unwrap();
            assert_eq!(right.status(), 200);
        };
        let (got, ()) = tokio::join!(listener.wait("s1", Duration::from_secs(10)), client);
        assert_eq!(got.unwrap().code, "good");
    }

    #[tokio::test]
    async fn the_wait_is_bounded() {
        let listener = Listener::bind().await.unwrap();
        let got = listener.wait("s", Duration::from_millis(50)).await;
        assert!(matches!(got, Err(CallbackError::TimedOut(_))), "{got:?}");
    }
}
