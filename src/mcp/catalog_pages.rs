//! Listing a server's prompts or resources page by page, keeping what fits the bounds: at most
//! [`MAX_ITEMS`] kept, [`MAX_BYTES`] of entries, [`MAX_PAGES`] pages and [`LIST_TIMEOUT`] in
//! all. A server that offers more is cut short with a note, never followed to the end: an
//! endless or huge listing costs one bounded listing, not taco's memory.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

/// Entries kept from one listing (per server and kind).
pub const MAX_ITEMS: usize = 200;
/// Bytes of entries (as JSON) kept from one listing.
pub const MAX_BYTES: usize = 512 * 1024;
/// Pages asked for in one listing.
pub const MAX_PAGES: usize = 50;
/// Time for one whole listing, every page included.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// What one listing kept, and why it stopped short if it did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// The entries, as the server sent them (JSON objects), in its order.
    pub items: Vec<Value>,
    /// Why the listing is not whole (a bound, a failure), in words; `None` when it is.
    pub cut: Option<String>,
}

/// One page: its entries and the cursor of the next, if any.
pub type Page = (Vec<Value>, Option<String>);

/// Lists every page `fetch` gives (it gets the cursor, `None` first) within the bounds;
/// `what` names the entries in the notes ("prompts").
pub async fn bounded<F, Fut>(what: &str, mut fetch: F) -> Listing
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<Page, String>>,
{
    let mut listing = Listing::default();
    let mut bytes = 0usize;
    let work = async {
        let mut cursor = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let (items, next) = match fetch(cursor.take()).await {
                Ok(page) => page,
                Err(why) => {
                    listing.cut = Some(format!("listing its {what} failed: {why}"));
                    return;
                }
            };
            for item in items {
                if listing.items.len() == MAX_ITEMS {
                    listing.cut = Some(format!(
                        "it offers more than {MAX_ITEMS} {what}; the first {MAX_ITEMS} are listed"
                    ));
                    return;
                }
                let size = item.to_string().len();
                if bytes + size > MAX_BYTES {
                    listing.cut = Some(format!(
                        "its {what} take more than {} KB; the first {} are listed",
                        MAX_BYTES / 1024,
                        listing.items.len()
                    ));
                    return;
                }
                bytes += size;
                listing.items.push(item);
            }
            match next {
                // A cursor seen before would list the same pages forever.
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                Some(_) => {
                    listing.cut = Some(format!("its {what} listing repeats a page; stopped"));
                    return;
                }
                None => return,
            }
        }
        listing.cut = Some(format!(
            "its {what} take more than {MAX_PAGES} pages; the first {} are listed",
            listing.items.len()
        ));
    };
    if tokio::time::timeout(LIST_TIMEOUT, work).await.is_err() {
        listing.cut = Some(format!(
            "listing its {what} took more than {} s; the first {} are listed",
            LIST_TIMEOUT.as_secs(),
            listing.items.len()
        ));
    }
    listing
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_whole_listing_follows_every_cursor() {
        let listing = bounded("prompts", |cursor| async move {
            Ok(match cursor.as_deref() {
                None => (vec![json!({"name": "a"})], Some("2".to_string())),
                Some(_) => (vec![json!({"name": "b"})], None),
            })
        })
        .await;
        assert_eq!(listing.items.len(), 2);
        assert_eq!(listing.cut, None);
    }

    #[tokio::test]
    async fn endless_pages_stop_at_the_item_bound() {
        let mut pages = 0;
        let listing = bounded("prompts", |_| {
            pages += 1;
            let n = pages;
            async move { Ok((vec![json!({"name": n}); 30], Some(format!("{n}")))) }
        })
        .await;
        assert_eq!(listing.items.len(), MAX_ITEMS);
        assert!(listing.cut.unwrap().contains("more than 200 prompts"));
        assert!(pages <= MAX_ITEMS / 30 + 1, "{pages} pages asked for");
    }

    #[tokio::test]
    async fn a_repeated_cursor_and_huge_entries_stop_the_listing() {
        let listing = bounded("resources", |_| async {
            Ok((vec![json!({"uri": "x"})], Some("same".to_string())))
        })
        .await;
        assert_eq!(listing.items.len(), 2);
        assert!(listing.cut.unwrap().contains("repeats"));
        let big = "x".repeat(200 * 1024);
        let listing = bounded("resources", |_| {
            let big = big.clone();
            async move { Ok((vec![json!({ "uri": big }); 5], None)) }
        })
        .await;
        assert_eq!(listing.items.len(), 2);
        assert!(listing.cut.unwrap().contains("512 KB"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_listing_that_hangs_ends_at_its_timeout() {
        let listing = bounded("prompts", |_| async {
            std::future::pending::<()>().await;
            Ok((Vec::new(), None))
        })
        .await;
        assert!(listing.cut.unwrap().contains("took more than 10 s"));
    }
}
