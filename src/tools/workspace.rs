//! Path confinement to the workspace.
