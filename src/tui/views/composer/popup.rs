//! The popup over the composer: the slash commands and what they do when the draft starts
//! with `/`, or the workspace's files when the word at the cursor starts with `@`; filtered
//! as the user types (commands by prefix, then substring, then fuzzy; files fuzzy), ↑/↓ to
//! choose, Tab or Enter to take one, Esc to close it (the draft stays).
//!
//! The popup is the composer's own state, not an overlay: it follows the text and the
//! cursor, which only the composer has, and it is worked out again from them on every key.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::Composer;
use super::fuzzy;
use crate::tui::commands::{self, COMMANDS};

mod draw;

/// Rows of choices shown at once (the list scrolls with the selection).
pub const VISIBLE: usize = 8;
/// Most files kept from a ranking (more would never be scrolled to).
const MAX_FILES_SHOWN: usize = 50;

/// What the popup lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupKind {
    /// Slash commands.
    Command,
    /// Workspace files, for `@`.
    File,
}

/// The word being completed: where it is and what is typed of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Trigger {
    kind: PopupKind,
    row: usize,
    /// Char column of the `/` or `@`.
    start: usize,
    /// Char column where the word ends (the next blank, or the line end).
    end: usize,
    /// What is typed between the `/` or `@` and the cursor.
    query: String,
}

/// One choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item {
    /// The command's name, or the file's path.
    text: String,
    /// A command's arguments and what it does (a resource's name and type).
    args: String,
    about: String,
    /// Chars of `text` the query matched.
    positions: Vec<usize>,
    /// What taking it puts in place of the word.
    insert: String,
}

impl Item {
    /// A choice: its text, arguments, what it does, the matched chars, what taking it inserts.
    pub(super) fn new(
        text: String,
        args: String,
        about: String,
        positions: Vec<usize>,
        insert: String,
    ) -> Self {
        Self {
            text,
            args,
            about,
            positions,
            insert,
        }
    }
}

/// The popup's state between keys.
#[derive(Debug, Default)]
pub(super) struct Popup {
    /// The word (row, start) whose popup Esc closed: it stays closed until another word.
    dismissed: Option<(usize, usize)>,
    /// The word whose popup was last open: a new one lists the files again.
    seen: Option<(PopupKind, usize, usize)>,
    /// What `items` were ranked for: the kind, the query, the file list's generation and
    /// the MCP entries' (`Composer::set_mcp`).
    ranked: Option<(PopupKind, String, u64, u64)>,
    items: Vec<Item>,
    /// How many matched in all (`items` may keep fewer).
    matched: usize,
    selected: usize,
    /// What showed when last worked out.
    showing: Option<PopupKind>,
}

impl Composer {
    /// The word at the cursor the popup completes, if any.
    fn trigger(&self) -> Option<Trigger> {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        let line: Vec<char> = self.area.lines().get(row)?.chars().collect();
        let before = &line[..col.min(line.len())];
        let start = before
            .iter()
            .rposition(|c| c.is_whitespace())
            .map_or(0, |i| i + 1);
        let end = (line[col.min(line.len())..].iter())
            .position(|c| c.is_whitespace())
            .map_or(line.len(), |i| col + i);
        let word: String = before[start..].iter().collect();
        // The cursor before the `/` or `@`: nothing typed of the word yet.
        if word.is_empty() {
            return None;
        }
        let command_line = row == 0 && line.first() == Some(&'/');
        let kind = if command_line && start == 0 {
            PopupKind::Command
        } else if word.starts_with('@') && !self.typed().starts_with('/') {
            PopupKind::File
        } else {
            return None;
        };
        Some(Trigger {
            kind,
            row,
            start,
            end,
            query: word[1..].to_string(),
        })
    }

    /// Works the popup out for the text as it is now: `None` when it is closed.
    pub(super) fn sync_popup(&mut self) -> Option<Trigger> {
        let trigger = self.work_out_popup();
        self.popup.showing = trigger.as_ref().map(|t| t.kind);
        trigger
    }

    /// What the popup showed when last worked out (drawn or given a key), without working it
    /// out again.
    pub fn popup_showing(&self) -> Option<PopupKind> {
        self.popup.showing
    }

    fn work_out_popup(&mut self) -> Option<Trigger> {
        let changed = self.files.poll();
        if self.search.is_some() {
            return None;
        }
        let Some(trigger) = self.trigger() else {
            self.popup = Popup::default();
            return None;
        };
        let anchor = (trigger.row, trigger.start);
        if self.popup.dismissed == Some(anchor) {
            return None;
        }
        self.popup.dismissed = None;
        if self.popup.seen != Some((trigger.kind, anchor.0, anchor.1)) {
            self.popup.seen = Some((trigger.kind, anchor.0, anchor.1));
            if trigger.kind == PopupKind::File {
                self.files.refresh();
            }
        }
        let generation = self.files.generation();
        let key = (
            trigger.kind,
            trigger.query.clone(),
            generation,
            self.mcp_generation,
        );
        if changed || self.popup.ranked.as_ref() != Some(&key) {
            // A new list keeps the choice where it can; a new query starts at the top.
            let same_query = (self.popup.ranked.as_ref())
                .is_some_and(|(k, q, _, _)| *k == trigger.kind && *q == trigger.query);
            let (items, matched) = match trigger.kind {
                PopupKind::Command => {
                    rank_commands(&trigger.query, &[&self.custom[..], &self.mcp.prompts[..]])
                }
                PopupKind::File => self.rank_files(&trigger.query),
            };
            self.popup.items = items;
            self.popup.matched = matched;
            if !same_query {
                self.popup.selected = 0;
            }
            self.popup.selected = self
                .popup
                .selected
                .min(self.popup.items.len().saturating_sub(1));
            self.popup.ranked = Some(key);
        }
        Some(trigger)
    }

    /// Whether the popup shows.
    pub fn popup_open(&mut self) -> bool {
        self.sync_popup().is_some()
    }

    /// The popup when it shows: what it lists, its choices best first (names or paths) and
    /// the selected one.
    pub fn popup(&mut self) -> Option<(PopupKind, Vec<String>, usize)> {
        let trigger = self.sync_popup()?;
        let items = self.popup.items.iter().map(|i| i.text.clone()).collect();
        Some((trigger.kind, items, self.popup.selected))
    }

    /// Whether the file list for `@` is still being made (it is taken when done).
    pub fn listing_files(&mut self) -> bool {
        self.files.poll();
        self.files.is_walking()
    }

    /// Whether a file list is being made (without taking it: the next draw does).
    pub fn is_listing(&self) -> bool {
        self.files.is_walking()
    }

    /// A key while the popup shows: `true` when the popup took it. ↑/↓ choose, Tab takes the
    /// choice, Enter too (but a whole command that needs no argument runs, as before), Esc
    /// closes the popup and leaves the draft.
    pub fn popup_key(&mut self, key: KeyEvent) -> bool {
        if !key.modifiers.difference(KeyModifiers::SHIFT).is_empty() {
            return false;
        }
        let Some(trigger) = self.sync_popup() else {
            return false;
        };
        let count = self.popup.items.len();
        match key.code {
            KeyCode::Esc => {
                self.popup.dismissed = Some((trigger.row, trigger.start));
                true
            }
            KeyCode::Up | KeyCode::Down if count == 0 => false,
            KeyCode::Up => {
                self.popup.selected = (self.popup.selected + count - 1) % count;
                true
            }
            KeyCode::Down => {
                self.popup.selected = (self.popup.selected + 1) % count;
                true
            }
            KeyCode::Tab if count == 0 => trigger.kind == PopupKind::File,
            KeyCode::Tab => {
                self.take_choice(&trigger);
                true
            }
            KeyCode::Enter if key.modifiers.contains(KeyModifiers::SHIFT) => false,
            KeyCode::Enter => {
                // What is typed is already whole: Enter sends it, as without the popup.
                let whole = match trigger.kind {
                    PopupKind::Command => {
                        let typed = self.typed();
                        commands::find(&typed).is_some_and(|c| !c.takes_args())
                            || self.prompt_like(&typed).is_some_and(|p| !p.takes_args)
                    }
                    // A path typed out (the listing may not have it: a symlink, a file
                    // just made) is sent as typed; mentions are checked when it is sent.
                    PopupKind::File => {
                        (self.workspace.as_ref())
                            .is_some_and(|root| root.join(&trigger.query).is_file())
                            || self.mcp.is_resource(&trigger.query)
                    }
                };
                if count == 0 || whole {
                    return false;
                }
                self.take_choice(&trigger);
                true
            }
            _ => false,
        }
    }

    /// Puts the selected choice in place of the word.
    fn take_choice(&mut self, trigger: &Trigger) {
        let Some(item) = self.popup.items.get(self.popup.selected).cloned() else {
            return;
        };
        if !self.jump(trigger.row, trigger.start) {
            return;
        }
        self.area.delete_str(trigger.end - trigger.start);
        self.area.insert_str(&item.insert);
        let line = self
            .area
            .lines()
            .get(trigger.row)
            .map_or("", String::as_str);
        let next = line
            .chars()
            .nth(trigger.start + item.insert.chars().count());
        if trigger.kind == PopupKind::File {
            // A blank after the path closes the finder: the word is done.
            match next {
                Some(c) if c.is_whitespace() => {
                    self.area.move_cursor(ratatui_textarea::CursorMove::Forward);
                }
                _ => {
                    self.area.insert_char(' ');
                }
            }
        }
        self.laid_out = None;
    }

    fn rank_files(&self, query: &str) -> (Vec<Item>, usize) {
        let empty = Vec::new();
        let paths = self.files.listing().map_or(&empty, |l| &l.paths);
        // Files and the servers' resources (`server:uri`) ranked together.
        let resources = super::mcp::score_resources(query, &self.mcp.resources);
        let mut scored: Vec<(i32, &str, Vec<usize>, String)> =
            (paths.iter())
                .filter_map(|path| {
                    fuzzy::score(query, path)
                        .map(|m| (m.score, path.as_str(), m.positions, String::new()))
                })
                .chain(resources.into_iter().map(|(score, r, positions)| {
                    (score, r.text.as_str(), positions, r.about.clone())
                }))
                .collect();
        let matched = scored.len();
        // Best first; among equals the shorter path, then the name.
        let order = |a: &(i32, &str, Vec<usize>, String), b: &(i32, &str, Vec<usize>, String)| {
            (b.0.cmp(&a.0))
                .then(a.1.len().cmp(&b.1.len()))
                .then(a.1.cmp(b.1))
        };
        if scored.len() > MAX_FILES_SHOWN {
            scored.select_nth_unstable_by(MAX_FILES_SHOWN, order);
            scored.truncate(MAX_FILES_SHOWN);
        }
        scored.sort_by(order);
        let items = (scored.into_iter())
            .map(|(_, text, positions, about)| Item {
                text: text.to_string(),
                args: String::new(),
                about,
                positions,
                insert: format!("@{text}"),
            })
            .collect();
        (items, matched)
    }
}

/// The commands that match `query` (what follows the `/`): the one it names, those it starts,
/// those that contain it, then fuzzy matches; each group in the table's order, the custom
/// commands and the MCP servers' prompts (`lists`, in order) after the built-in commands.
fn rank_commands(query: &str, lists: &[&[super::mcp::PromptEntry]]) -> (Vec<Item>, usize) {
    let query = query.to_lowercase();
    let mut ranked: Vec<(u8, i32, Item)> = Vec::new();
    for (order, command) in COMMANDS.iter().enumerate() {
        let name = &command.name[1..];
        let (group, positions) = if let Some(at) = name.find(&query) {
            let at = name[..at].chars().count();
            let group = match at {
                _ if name == query => 0,
                0 => 1,
                _ => 2,
            };
            (group, (at..at + query.chars().count()).collect())
        } else if let Some(m) = fuzzy::score(&query, name) {
            (3, m.positions)
        } else {
            continue;
        };
        ranked.push((
            group,
            order as i32,
            Item {
                text: command.name.to_string(),
                args: command.args.to_string(),
                about: command.about.to_string(),
                // Shifted past the `/`.
                positions: positions.into_iter().map(|p: usize| p + 1).collect(),
                insert: command.completion(),
            },
        ));
    }
    let first = COMMANDS.len() as i32;
    let prompts = (lists.iter()).flat_map(|list| super::mcp::rank_prompts(&query, list));
    for (order, (group, item)) in prompts.enumerate() {
        ranked.push((group, first + order as i32, item));
    }
    ranked.sort_by_key(|(group, order, _)| (*group, *order));
    let items: Vec<Item> = ranked.into_iter().map(|(_, _, item)| item).collect();
    let matched = items.len();
    (items, matched)
}
