//! Headless runs (filled in by the exec work).
