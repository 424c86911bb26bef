//! Both palettes read well on their background: every coloured role has a contrast of at
//! least 4.5:1 (WCAG AA for text) against black (dark) or white (light).

use ratatui::style::{Color, Style};

use super::detect::luminance;
use super::*;

/// The sRGB colour of a 256-colour index (the standard cube and grey ramp; the 16 named
/// colours depend on the terminal's palette, so the themes do not use them).
fn rgb(index: u8) -> Option<(f64, f64, f64)> {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let c = |v: u8| f64::from(v) / 255.0;
    match index {
        16..=231 => {
            let i = index - 16;
            let (r, g, b) = (i / 36, (i % 36) / 6, i % 6);
            Some((
                c(LEVELS[r as usize]),
                c(LEVELS[g as usize]),
                c(LEVELS[b as usize]),
            ))
        }
        232..=255 => {
            let v = c(8 + 10 * (index - 232));
            Some((v, v, v))
        }
        _ => None,
    }
}

fn contrast(fg: (f64, f64, f64), bg: (f64, f64, f64)) -> f64 {
    let a = luminance(fg.0, fg.1, fg.2);
    let b = luminance(bg.0, bg.1, bg.2);
    (a.max(b) + 0.05) / (a.min(b) + 0.05)
}

/// Every style a theme colours text with, by name.
fn text_roles(t: &Theme) -> Vec<(&'static str, Style)> {
    let s = t.syntax;
    vec![
        ("dim", t.dim),
        ("border_focused", t.border_focused),
        ("user", t.user),
        ("code", t.code),
        ("heading", t.heading),
        ("tool", t.tool),
        ("llm", t.llm),
        ("ok", t.ok),
        ("error", t.error),
        ("warn", t.warn),
        ("key", t.key),
        ("syntax.keyword", s.keyword),
        ("syntax.string", s.string),
        ("syntax.comment", s.comment),
        ("syntax.constant", s.constant),
        ("syntax.kind", s.kind),
        ("syntax.function", s.function),
        ("syntax.key", s.key),
    ]
}

fn check(theme: &Theme, background: (f64, f64, f64), name: &str) {
    for (role, style) in text_roles(theme) {
        let Some(Color::Indexed(index)) = style.fg else {
            panic!("{name} {role}: not a 256-colour index: {style:?}");
        };
        let fg = rgb(index).unwrap_or_else(|| panic!("{name} {role}: a named colour {index}"));
        let ratio = contrast(fg, background);
        assert!(ratio >= 4.5, "{name} {role} ({index}) has {ratio:.2}:1");
    }
    assert_eq!(theme.text.fg, None, "text keeps the terminal's foreground");
}

#[test]
fn the_dark_palette_reads_well_on_black() {
    check(&Theme::dark(), (0.0, 0.0, 0.0), "dark");
}

#[test]
fn the_light_palette_reads_well_on_white() {
    check(&Theme::light(), (1.0, 1.0, 1.0), "light");
}

#[test]
fn tool_names_are_not_pure_blue_on_black() {
    let pure_blue = (0.0, 0.0, 0xee as f64 / 255.0);
    assert!(
        contrast(pure_blue, (0.0, 0.0, 0.0)) < 3.0,
        "the old colour was unreadable"
    );
    let Some(Color::Indexed(index)) = Theme::dark().tool.fg else {
        panic!("tool colour");
    };
    assert!(contrast(rgb(index).unwrap(), (0.0, 0.0, 0.0)) >= 7.0);
}

#[test]
fn the_background_picks_the_palette() {
    assert_eq!(Theme::for_background(Background::Dark), Theme::dark());
    assert_eq!(Theme::for_background(Background::Light), Theme::light());
    assert_eq!(Theme::default(), Theme::dark());
    assert_ne!(Theme::dark().tool, Theme::light().tool);
}
