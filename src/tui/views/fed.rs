//! Test support: a pane fed events the way the App feeds it, through a run model that has
//! seen each event first.

use std::ops::{Deref, DerefMut};

use super::chat::ChatState;
use super::timeline::TimelineState;
use crate::event::Event;
use crate::run_model::RunModel;

/// A pane that follows the event stream with the run model beside it.
pub(crate) trait Follows {
    /// Takes one event; `run` has already folded it.
    fn follow(&mut self, event: &Event, run: &RunModel);
}

impl Follows for ChatState {
    fn follow(&mut self, event: &Event, run: &RunModel) {
        self.on_event(event, run);
    }
}

impl Follows for TimelineState {
    fn follow(&mut self, event: &Event, run: &RunModel) {
        self.on_event(event, run);
    }
}

/// A pane and its run model.
#[derive(Debug)]
pub(crate) struct Fed<V> {
    view: V,
    /// The run model the pane reads.
    pub run: RunModel,
}

impl<V: Follows> Fed<V> {
    /// `view` with a fresh run model.
    pub fn new(view: V) -> Self {
        Self {
            view,
            run: RunModel::new(),
        }
    }

    /// Folds `event` into the run model, then gives it to the pane.
    pub fn on_event(&mut self, event: &Event) {
        self.run.apply(event);
        self.view.follow(event, &self.run);
    }
}

impl<V> Deref for Fed<V> {
    type Target = V;
    fn deref(&self) -> &V {
        &self.view
    }
}

impl<V> DerefMut for Fed<V> {
    fn deref_mut(&mut self) -> &mut V {
        &mut self.view
    }
}
