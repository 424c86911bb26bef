//! Markdown to styled, wrapped lines.
