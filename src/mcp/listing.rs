//! Listing what a server offers (tools; prompts and resources use the same pager) within
//! bounds: pages, items and bytes per listing, and time per page and per listing. A server
//! that passes one is hostile or broken: the caller withdraws it and says what it did
//! (issue 28.1: an endless re-list once took 5.4 GB in 30 s).

use std::future::Future;
use std::time::Duration;

use serde::Serialize;

/// Pages one listing may take.
pub const MAX_PAGES: usize = 100;
/// Items one listing may return.
pub const MAX_ITEMS: usize = 10_000;
/// Bytes (as JSON) of the items of one listing.
pub const MAX_BYTES: usize = 8 * 1024 * 1024;
/// Bytes of one message from a server (a JSON-RPC line, an HTTP body or SSE event).
pub const MAX_MESSAGE: usize = 8 * 1024 * 1024;

/// The bounds of one listing.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Pages at most.
    pub pages: usize,
    /// Items at most.
    pub items: usize,
    /// Bytes of items at most.
    pub bytes: usize,
    /// Time for the whole listing (each page within it).
    pub time: Duration,
}

impl Bounds {
    /// The standard bounds, the listing within `time`.
    pub fn within(time: Duration) -> Self {
        Self {
            pages: MAX_PAGES,
            items: MAX_ITEMS,
            bytes: MAX_BYTES,
            time,
        }
    }
}

/// Why a listing ended without a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListError {
    /// The server passed a bound; the text says what it did.
    Passed(String),
    /// The request failed (the server said no, the connection broke).
    Failed(String),
}

impl ListError {
    /// In words, for the user.
    pub fn text(&self) -> &str {
        match self {
            Self::Passed(why) | Self::Failed(why) => why,
        }
    }
}

/// Lists every page of `what` (`tools/list`…) through `page` (cursor in, items and the
/// next cursor out) within `bounds`.
pub async fn all_pages<T, E, F, Fut>(
    what: &str,
    bounds: Bounds,
    mut page: F,
) -> Result<Vec<T>, ListError>
where
    T: Serialize,
    E: std::fmt::Display,
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), E>>,
{
    let listing = async {
        let mut items = Vec::new();
        let mut bytes = 0usize;
        let mut cursor = None;
        for pages in 1.. {
            if pages > bounds.pages {
                return Err(ListError::Passed(format!(
                    "it answered {what} with more than {} pages (endless pagination?)",
                    bounds.pages
                )));
            }
            let (got, next) = page(cursor)
                .await
                .map_err(|e| ListError::Failed(format!("{what} failed: {e}")))?;
            for item in got {
                bytes = bytes.saturating_add(serde_json::to_vec(&item).map_or(0, |v| v.len()));
                items.push(item);
                if items.len() > bounds.items {
                    return Err(ListError::Passed(format!(
                        "it listed more than {} items in {what}",
                        bounds.items
                    )));
                }
                if bytes > bounds.bytes {
                    return Err(ListError::Passed(format!(
                        "its {what} came to more than {} MB",
                        bounds.bytes / (1024 * 1024)
                    )));
                }
            }
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(items)
    };
    tokio::time::timeout(bounds.time, listing)
        .await
        .unwrap_or_else(|_| {
            let secs = bounds.time.as_secs_f32();
            let secs = if secs >= 1.0 {
                format!("{secs:.0}")
            } else {
                format!("{secs:.1}")
            };
            Err(ListError::Passed(format!(
                "it did not finish {what} within {secs} s"
            )))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> Bounds {
        Bounds {
            pages: 5,
            items: 20,
            bytes: 1_000,
            time: Duration::from_millis(200),
        }
    }

    /// A server with `pages` pages of `per_page` items of `size` bytes each.
    async fn server(
        cursor: Option<String>,
        pages: usize,
        per_page: usize,
        size: usize,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let at: usize = cursor.map_or(0, |c| c.parse().unwrap());
        let items = (0..per_page).map(|_| "x".repeat(size)).collect();
        let next = (at + 1 < pages).then(|| (at + 1).to_string());
        Ok((items, next))
    }

    #[tokio::test]
    async fn a_listing_within_bounds_returns_every_page() {
        let items = all_pages("tools/list", bounds(), |c| server(c, 3, 4, 10))
            .await
            .unwrap();
        assert_eq!(items.len(), 12);
    }

    #[tokio::test]
    async fn each_bound_passed_says_what_the_server_did() {
        let endless = all_pages("tools/list", bounds(), |c| server(c, usize::MAX, 1, 1)).await;
        assert_eq!(
            endless.unwrap_err(),
            ListError::Passed(
                "it answered tools/list with more than 5 pages (endless pagination?)".into()
            )
        );
        let many = all_pages("tools/list", bounds(), |c| server(c, 1, 21, 1)).await;
        assert!(
            matches!(&many, Err(ListError::Passed(w)) if w.contains("more than 20 items")),
            "{many:?}"
        );
        let big = all_pages("tools/list", bounds(), |c| server(c, 2, 1, 600)).await;
        assert!(
            matches!(&big, Err(ListError::Passed(w)) if w.contains("tools/list came to more than")),
            "{big:?}"
        );
        let stalled = all_pages("tools/list", bounds(), |_| {
            std::future::pending::<Result<(Vec<String>, Option<String>), String>>()
        })
        .await;
        assert_eq!(
            stalled.unwrap_err(),
            ListError::Passed("it did not finish tools/list within 0.2 s".into())
        );
        let refused = all_pages("tools/list", bounds(), |_| async {
            Err::<(Vec<String>, Option<String>), _>("Method not found")
        })
        .await;
        assert_eq!(
            refused.unwrap_err(),
            ListError::Failed("tools/list failed: Method not found".into())
        );
    }
}
