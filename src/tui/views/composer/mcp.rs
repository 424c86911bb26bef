//! What the composer knows of the MCP servers' prompts and resources (issue 28.5): prompts
//! listed in the command popup as `/server:prompt`, resources in the `@` popup as
//! `@server:uri` beside the files; a message that mentions resources is held until they are
//! read (by the app, off the UI thread) and then attached like files (`attach.rs`).

use std::collections::HashSet;
use std::path::Path;

use super::attach::Read;
use super::popup::Item;
use super::{Composer, Outgoing, fuzzy};
use crate::mcp::McpHub;
use crate::mcp::resources::Part;
use crate::tools::workspace::Workspace;

/// A prompt as the command popup lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptEntry {
    /// `/server:prompt`.
    pub name: String,
    /// Its arguments (`<name> [style]`).
    pub args: String,
    /// What it does.
    pub about: String,
    /// It needs an argument: completing it adds a space.
    pub takes_args: bool,
}

/// A resource as the `@` popup lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    /// `server:uri` (what follows the `@`).
    pub text: String,
    /// Its name and type.
    pub about: String,
}

/// The ready servers' prompts and resources, as the composer offers them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpEntries {
    /// Prompts, as slash commands.
    pub prompts: Vec<PromptEntry>,
    /// Resources and templates.
    pub resources: Vec<ResourceEntry>,
    /// The servers with a catalog: `@NAME:…` mentions one of their resources.
    pub servers: Vec<String>,
}

impl McpEntries {
    /// What `hub` offers now.
    pub fn from_hub(hub: &McpHub) -> Self {
        let prompts = (hub.prompts().into_iter())
            .map(|p| PromptEntry {
                name: p.command(),
                args: crate::mcp::prompt_args::usage(&p.arguments),
                takes_args: p.arguments.iter().any(|a| a.required),
                about: p.description,
            })
            .collect();
        let resources = (hub.resources().into_iter())
            .map(|r| {
                let mut about = r.name.clone();
                if let Some(mime) = &r.mime {
                    about.push_str(&format!(" · {mime}"));
                }
                if r.template {
                    about.push_str(" · template");
                }
                ResourceEntry {
                    text: format!("{}:{}", r.server, r.uri),
                    about,
                }
            })
            .collect();
        Self {
            prompts,
            resources,
            servers: hub.catalog_servers(),
        }
    }

    /// The prompt named exactly `name` (`/server:prompt`).
    pub fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompts.iter().find(|p| p.name == name)
    }

    /// Whether `text` (what follows an `@`) is a listed resource.
    pub fn is_resource(&self, text: &str) -> bool {
        self.resources.iter().any(|r| r.text == text)
    }
}

impl Composer {
    /// Sets the MCP servers' prompts and resources the popups offer and `@server:uri`
    /// mentions read.
    pub fn set_mcp(&mut self, entries: McpEntries) {
        if self.mcp != entries {
            self.mcp = entries;
            self.mcp_generation += 1;
        }
    }

    /// Sets the custom commands the command popup lists (after the built-in ones).
    pub fn set_custom(&mut self, entries: Vec<PromptEntry>) {
        if self.custom != entries {
            self.custom = entries;
            self.mcp_generation += 1;
        }
    }

    /// The custom command or MCP prompt named exactly `name` (`/name`).
    pub(super) fn prompt_like(&self, name: &str) -> Option<&PromptEntry> {
        (self.custom.iter().find(|p| p.name == name)).or_else(|| self.mcp.prompt(name))
    }

    /// A message taken with MCP resources to read ([`Outgoing::wanted`]), with what reading
    /// them gave (`server:uri` → its parts, or why not): its files and resources attached.
    pub fn finish_message(&mut self, message: Outgoing, read: &[Read]) -> Outgoing {
        self.attach_message(message.draft, read)
    }

    /// Puts a message taken to send back into the editor, as it was typed (it could not be
    /// sent now); `false` when the editor holds text.
    pub fn put_back(&mut self, message: &Outgoing) -> bool {
        if !self.is_empty() {
            return false;
        }
        self.load(message.draft.clone());
        self.cursor_to_end();
        true
    }
}

impl Outgoing {
    /// The MCP resources (`server:uri`) to read before it is sent; empty: send it as it is.
    pub fn wanted(&self) -> &[String] {
        &self.wanted
    }
}

/// The popup's prompt rows matching `query` (after the `/`): (group, item) as
/// `rank_commands` groups them.
pub(super) fn rank_prompts(query: &str, prompts: &[PromptEntry]) -> Vec<(u8, Item)> {
    let mut ranked = Vec::new();
    for prompt in prompts {
        let name = &prompt.name[1..];
        let lower = name.to_lowercase();
        let (group, positions): (u8, Vec<usize>) = if let Some(at) = lower.find(query) {
            let at = lower[..at].chars().count();
            let group = match at {
                _ if lower == query => 0,
                0 => 1,
                _ => 2,
            };
            (group, (at..at + query.chars().count()).collect())
        } else if let Some(m) = fuzzy::score(query, name) {
            (3, m.positions)
        } else {
            continue;
        };
        let insert = if prompt.takes_args {
            format!("{} ", prompt.name)
        } else {
            prompt.name.clone()
        };
        ranked.push((
            group,
            Item::new(
                prompt.name.clone(),
                prompt.args.clone(),
                prompt.about.clone(),
                positions.into_iter().map(|p| p + 1).collect(),
                insert,
            ),
        ));
    }
    ranked
}

/// The resources matching `query` (after the `@`), scored as files are.
pub(super) fn score_resources<'a>(
    query: &str,
    resources: &'a [ResourceEntry],
) -> Vec<(i32, &'a ResourceEntry, Vec<usize>)> {
    (resources.iter())
        .filter_map(|r| fuzzy::score(query, &r.text).map(|m| (m.score, r, m.positions)))
        .collect()
}

/// Punctuation that may follow a mention (as for files).
const TRAILING: &[char] = &[',', '.', ';', ':', '!', '?', ')', ']', '}', '\'', '"'];

/// The resources `typed` mentions (`@server:uri` that is not a workspace file, on a server
/// with a catalog), as `server:uri`, each once, in order.
pub fn wanted(typed: &str, root: Option<&Path>, entries: &McpEntries) -> Vec<String> {
    if entries.servers.is_empty() {
        return Vec::new();
    }
    let workspace = root.and_then(|r| Workspace::new(r).ok());
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for word in typed.split_whitespace() {
        let Some(text) = word.strip_prefix('@') else {
            continue;
        };
        let Some((server, uri)) = text.split_once(':') else {
            continue;
        };
        if uri.is_empty() || !entries.servers.iter().any(|s| s == server) {
            continue;
        }
        if workspace.as_ref().is_some_and(|w| w.exists(text)) {
            continue;
        }
        // A listed resource as typed, else without trailing punctuation (`see @s:x.txt,`).
        let bare = text.trim_end_matches(TRAILING);
        let key = if entries.is_resource(text) || bare.len() <= server.len() + 1 {
            text
        } else if entries.is_resource(bare) {
            bare
        } else {
            text
        };
        if seen.insert(key.to_string()) {
            out.push(key.to_string());
        }
    }
    out
}

/// A resource's parts as one attachment: the text (within `budget` bytes), binary parts
/// named; its whole size, and whether it was cut.
pub(super) fn resource_text(parts: &[Part], budget: usize) -> (String, u64, bool, Vec<String>) {
    let mut text = String::new();
    let mut size = 0u64;
    let mut cut = false;
    let mut binary = Vec::new();
    for part in parts {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        match part {
            Part::Text {
                text: t,
                size: s,
                cut: c,
                ..
            } => {
                text.push_str(t);
                size += s;
                cut |= c;
            }
            Part::Binary { mime, size: s, .. } => {
                text.push_str(&Part::describe_binary(mime.as_deref(), *s));
                size += s;
                binary.push(format!(
                    "{}, {}",
                    mime.as_deref().unwrap_or("unknown type"),
                    super::attach::size(*s)
                ));
            }
        }
    }
    if text.len() > budget {
        crate::mcp::prompts::cut(&mut text, budget);
        cut = true;
    }
    (text, size, cut, binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> McpEntries {
        McpEntries {
            prompts: Vec::new(),
            resources: vec![ResourceEntry {
                text: "fx:fx://a.txt".into(),
                about: "a".into(),
            }],
            servers: vec!["fx".into()],
        }
    }

    #[test]
    fn mentions_of_a_servers_resources_are_wanted_once() {
        let typed = "read @fx:fx://a.txt, and @fx:fx://e/w then @fx:fx://a.txt @other:x @fx:";
        assert_eq!(
            wanted(typed, None, &entries()),
            ["fx:fx://a.txt", "fx:fx://e/w"]
        );
        assert!(wanted("@fx:fx://a.txt", None, &McpEntries::default()).is_empty());
    }

    #[test]
    fn binary_parts_are_named_and_text_is_cut() {
        let parts = [
            Part::Text {
                uri: "u".into(),
                mime: None,
                text: "hello".into(),
                size: 5,
                cut: false,
            },
            Part::Binary {
                uri: "u".into(),
                mime: Some("image/png".into()),
                size: 67,
            },
        ];
        let (text, size, cut, binary) = resource_text(&parts, 1000);
        assert_eq!(
            text,
            "hello\n[binary content: image/png, 67 B; not attached]"
        );
        assert_eq!((size, cut), (72, false));
        assert_eq!(binary, ["image/png, 67 B"]);
        let (text, _, cut, _) = resource_text(&parts, 3);
        assert_eq!((text.as_str(), cut), ("hel", true));
    }
}
