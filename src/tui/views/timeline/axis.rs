//! Time axes: each run's bars are drawn on that run's own span, with the time it spent
//! waiting for the user (approvals, questions) squeezed, so a ten-minute approval does not
//! flatten everything else and a run after many others still fills the width.

/// Waits longer than this are squeezed (shorter ones cost little room anyway).
const MIN_SQUEEZED_MS: u64 = 1000;
/// A squeezed wait takes this share of the run's busy time on the axis.
const SQUEEZE_SHARE: u64 = 8;
/// Idle time between runs worth marking on the next run's first row.
pub(super) const MIN_IDLE_MS: u64 = 1000;

/// A wait for the user inside a run, squeezed on the axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Gap {
    /// Unix ms.
    pub start: u64,
    /// Unix ms.
    pub end: u64,
    /// Milliseconds of axis it takes (less than `end - start`).
    pub on_axis: u64,
}

/// One run's time axis: unix ms in, axis ms out (0 at the run's start), waits squeezed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Axis {
    origin: u64,
    horizon: u64,
    gaps: Vec<Gap>,
    span: u64,
}

impl Axis {
    /// The axis of a run from `origin` to `horizon` that waited for the user in `waits`
    /// (in any order, overlapping or not; clipped to the run).
    pub(super) fn new(
        origin: u64,
        horizon: u64,
        waits: impl IntoIterator<Item = (u64, u64)>,
    ) -> Self {
        let horizon = horizon.max(origin);
        let mut spans: Vec<(u64, u64)> = (waits.into_iter())
            .map(|(a, b)| (a.clamp(origin, horizon), b.clamp(origin, horizon)))
            .filter(|(a, b)| b > a)
            .collect();
        spans.sort_unstable();
        // Overlapping waits (a batch of approvals asked at once) are one wait.
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(spans.len());
        for (a, b) in spans {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let waited: u64 = merged.iter().map(|(a, b)| b - a).sum();
        let busy = (horizon - origin).saturating_sub(waited);
        let squeezed = (busy / SQUEEZE_SHARE).max(1);
        let gaps: Vec<Gap> = (merged.into_iter())
            .filter(|(a, b)| b - a > MIN_SQUEEZED_MS.max(squeezed * 2))
            .map(|(start, end)| Gap {
                start,
                end,
                on_axis: squeezed,
            })
            .collect();
        let mut axis = Self {
            origin,
            horizon,
            gaps,
            span: 0,
        };
        axis.span = axis.at(horizon);
        axis
    }

    /// The squeezed waits, in order.
    #[cfg(test)]
    pub(super) fn gaps(&self) -> &[Gap] {
        &self.gaps
    }

    /// Axis milliseconds of the run's whole span.
    #[cfg(test)]
    pub(super) fn span(&self) -> u64 {
        self.span
    }

    /// Where unix ms `t` falls on the axis (clamped to the run).
    pub(super) fn at(&self, t: u64) -> u64 {
        let t = t.clamp(self.origin, self.horizon);
        let mut pos = t - self.origin;
        for gap in &self.gaps {
            if t >= gap.end {
                pos -= (gap.end - gap.start) - gap.on_axis;
            } else if t > gap.start {
                // Inside a wait: its squeezed share, in proportion.
                let into = t - gap.start;
                let kept =
                    u128::from(into) * u128::from(gap.on_axis) / u128::from(gap.end - gap.start);
                pos -= into - kept as u64;
            } else {
                break;
            }
        }
        pos
    }

    /// Cells `[first, last)` of a bar `width` cells wide for `start..end` (unix ms).
    pub(super) fn cells(&self, start: u64, end: u64, width: u16) -> (u16, u16) {
        bar_cells(self.at(start), self.at(end.max(start)), 0, self.span, width)
    }

    /// The cell of each squeezed wait, where the bar axis is broken.
    pub(super) fn breaks(&self, width: u16) -> impl Iterator<Item = u16> + '_ {
        (self.gaps.iter()).map(move |gap| self.cells(gap.start, gap.end, width).0)
    }
}

/// What the timeline knows of one run: its span and its waits for the user.
#[derive(Debug)]
pub(super) struct RunSpan {
    /// Unix ms of its earliest row.
    pub origin: u64,
    /// Unix ms of its latest event.
    pub horizon: u64,
    /// Waits for the user (`approval ID`, `question ID`): start, and end once answered.
    waits: Vec<(String, u64, Option<u64>)>,
    /// The axis, kept until the span or the waits change.
    axis: Option<Axis>,
}

impl RunSpan {
    /// A run whose first row starts at `at`.
    pub(super) fn new(at: u64) -> Self {
        Self {
            origin: at,
            horizon: at,
            waits: Vec::new(),
            axis: None,
        }
    }

    /// Widens the span to take `start..end`.
    pub(super) fn cover(&mut self, start: u64, end: u64) {
        if start < self.origin || end > self.horizon {
            self.origin = self.origin.min(start);
            self.horizon = self.horizon.max(end);
            self.axis = None;
        }
    }

    /// The run starts waiting for the user on `what` at `at`.
    pub(super) fn wait(&mut self, what: String, at: u64) {
        self.waits.push((what, at, None));
        self.axis = None;
    }

    /// The wait on `what` ends at `at`: when it started, if it was seen.
    pub(super) fn answered(&mut self, what: &str, at: u64) -> Option<u64> {
        let wait = (self.waits.iter_mut().rev()).find(|(w, _, end)| w == what && end.is_none())?;
        wait.2 = Some(at.max(wait.1));
        self.axis = None;
        Some(wait.1)
    }

    /// The run's axis (built again only after a change).
    pub(super) fn axis(&mut self) -> &Axis {
        let (origin, horizon) = (self.origin, self.horizon);
        let waits = &self.waits;
        self.axis.get_or_insert_with(|| {
            let spans = (waits.iter()).map(|&(_, start, end)| (start, end.unwrap_or(horizon)));
            Axis::new(origin, horizon, spans)
        })
    }
}

/// Cells `[first, last)` of a bar `width` cells wide for the span `start..end` on the axis
/// `origin..horizon`. At least one cell, always inside the bar.
pub(super) fn bar_cells(start: u64, end: u64, origin: u64, horizon: u64, width: u16) -> (u16, u16) {
    if width == 0 {
        return (0, 0);
    }
    let span = u128::from(horizon.saturating_sub(origin).max(1));
    let w = u128::from(width);
    let from = u128::from(start.saturating_sub(origin));
    let to = u128::from(end.max(start).saturating_sub(origin));
    let first = (from * w / span).min(w - 1);
    // Round the end up so a span that covers part of a cell shows in it.
    let last = (to * w).div_ceil(span).clamp(first + 1, w);
    (first as u16, last as u16)
}

/// `⋯ 4m idle`-style: how long nothing ran, in at most five cells (`⋯35s`, `⋯4m`,
/// `⋯12h`, `⋯3d`).
pub(super) fn idle_label(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 60 {
        format!("⋯{secs}s")
    } else if secs < 3600 {
        format!("⋯{}m", secs / 60)
    } else if secs < 86_400 {
        format!("⋯{}h", secs / 3600)
    } else {
        format!("⋯{}d", secs / 86_400)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_without_waits_is_the_runs_own_span() {
        let axis = Axis::new(5_000, 9_000, []);
        assert_eq!(axis.span(), 4_000);
        assert_eq!(axis.at(7_000), 2_000);
        assert_eq!(axis.at(1_000), 0, "clamped to the run");
        assert_eq!(axis.cells(5_000, 9_000, 10), (0, 10));
        assert!(axis.gaps().is_empty());
    }

    #[test]
    fn a_long_wait_is_squeezed_and_the_busy_time_keeps_the_width() {
        // 2 s of work, a 10-minute approval, 2 s more.
        let start = 1_000_000;
        let asked = start + 2_000;
        let answered = asked + 600_000;
        let end = answered + 2_000;
        let axis = Axis::new(start, end, [(asked, answered)]);
        // Busy 4 s; the wait takes an eighth of that on the axis.
        assert_eq!(
            axis.gaps(),
            [Gap {
                start: asked,
                end: answered,
                on_axis: 500
            }]
        );
        assert_eq!(axis.span(), 4_500);
        assert_eq!(axis.at(asked), 2_000);
        assert_eq!(axis.at(answered), 2_500);
        assert_eq!(axis.at(asked + 300_000), 2_250, "halfway through the wait");
        // The work before the wait fills 2/4.5 of a 45-cell bar, not a sliver.
        assert_eq!(axis.cells(start, asked, 45), (0, 20));
        assert_eq!(axis.cells(answered, end, 45), (25, 45));
        assert_eq!(axis.breaks(45).collect::<Vec<_>>(), [20]);
    }

    #[test]
    fn short_and_overlapping_waits() {
        // A quick answer is not worth squeezing.
        let axis = Axis::new(0, 10_000, [(2_000, 2_600)]);
        assert!(axis.gaps().is_empty());
        assert_eq!(axis.span(), 10_000);
        // A batch of approvals asked together is one wait; one still open runs to the end.
        let axis = Axis::new(
            0,
            100_000,
            [(1_000, 60_000), (1_000, 90_000), (95_000, 200_000)],
        );
        let gaps: Vec<(u64, u64)> = axis.gaps().iter().map(|g| (g.start, g.end)).collect();
        assert_eq!(gaps, [(1_000, 90_000), (95_000, 100_000)]);
    }

    #[test]
    fn bars_share_their_runs_axis() {
        assert_eq!(bar_cells(0, 100, 0, 1000, 10), (0, 1));
        assert_eq!(bar_cells(500, 1000, 0, 1000, 10), (5, 10));
        assert_eq!(bar_cells(250, 260, 0, 1000, 10), (2, 3));
        assert_eq!(
            bar_cells(1000, 1000, 0, 1000, 10),
            (9, 10),
            "an instant at the end"
        );
        assert_eq!(bar_cells(5, 5, 5, 5, 4), (0, 1), "an empty axis");
        assert_eq!(bar_cells(0, u64::MAX, 0, u64::MAX, u16::MAX), (0, u16::MAX));
        assert_eq!(bar_cells(1, 2, 0, 3, 0), (0, 0));
    }

    #[test]
    fn idle_labels_fit_five_cells() {
        assert_eq!(idle_label(35_000), "⋯35s");
        assert_eq!(idle_label(250_000), "⋯4m");
        assert_eq!(idle_label(13 * 3_600_000), "⋯13h");
        assert_eq!(idle_label(3 * 86_400_000), "⋯3d");
    }
}
