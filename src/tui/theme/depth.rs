//! How many colours the terminal shows, and the nearest of them to a theme's colour. Theme
//! files are written in 24-bit colour; a terminal without it would show an escape it does not
//! understand as the wrong colour, or as nothing.

use ratatui::style::Color;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorDepth {
    /// `COLORTERM=truecolor` or `24bit`: colours as written.
    TrueColor,
    /// The xterm 256-colour palette: most terminals that do not say they have more.
    Indexed256,
    /// The 16 ANSI colours: the Linux console, `*-16color` and dumb-ish terminals.
    Ansi16,
}

impl ColorDepth {
    /// Reads `COLORTERM` and `TERM` from `env`.
    pub fn detect(env: &dyn Fn(&str) -> Option<String>) -> ColorDepth {
        let colorterm = env("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" {
            return ColorDepth::TrueColor;
        }
        let term = env("TERM").unwrap_or_default().to_ascii_lowercase();
        let few_colours = term.is_empty()
            || ["linux", "dumb", "vt100", "vt220", "ansi", "cons25"].contains(&term.as_str())
            || term.ends_with("-16color")
            || term.ends_with("-8color");
        if few_colours {
            ColorDepth::Ansi16
        } else {
            ColorDepth::Indexed256
        }
    }

    /// The nearest colour this depth can show.
    pub fn fit(self, colour: Color) -> Color {
        match (self, colour) {
            (ColorDepth::TrueColor, c) => c,
            (ColorDepth::Indexed256, Color::Rgb(r, g, b)) => Color::Indexed(nearest_256(r, g, b)),
            (ColorDepth::Indexed256, c) => c,
            (ColorDepth::Ansi16, Color::Rgb(r, g, b)) => nearest_16(r, g, b),
            (ColorDepth::Ansi16, Color::Indexed(i)) => {
                let (r, g, b) = indexed_rgb(i);
                nearest_16(r, g, b)
            }
            (ColorDepth::Ansi16, c) => c,
        }
    }
}

/// The levels of each channel in the 6x6x6 cube (indices 16..=231).
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The 16 ANSI colours with xterm's default values.
const ANSI: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

fn distance((r1, g1, b1): (u8, u8, u8), (r2, g2, b2): (u8, u8, u8)) -> u32 {
    let d = |a: u8, b: u8| u32::from(a.abs_diff(b)).pow(2);
    d(r1, r2) + d(g1, g2) + d(b1, b2)
}

/// The closest of the cube and the grey ramp (the first 16 are left out: terminals redefine them).
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    (16..=255u8).min_by_key(|i| distance(indexed_rgb(*i), (r, g, b))).unwrap_or(16)
}

fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    ANSI.iter().min_by_key(|(_, rgb)| distance(*rgb, (r, g, b))).map_or(Color::Reset, |(c, _)| *c)
}

/// What an xterm shows for palette index `i`.
fn indexed_rgb(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI[usize::from(i)].1,
        16..=231 => {
            let n = usize::from(i - 16);
            (CUBE[n / 36], CUBE[n / 6 % 6], CUBE[n % 6])
        }
        232..=255 => {
            let level = 8 + (i - 232) * 10;
            (level, level, level)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn depth_comes_from_colorterm_then_term() {
        assert_eq!(ColorDepth::detect(&env(&[("COLORTERM", "truecolor"), ("TERM", "linux")])), ColorDepth::TrueColor);
        assert_eq!(ColorDepth::detect(&env(&[("COLORTERM", "24bit")])), ColorDepth::TrueColor);
        assert_eq!(ColorDepth::detect(&env(&[("TERM", "xterm-256color")])), ColorDepth::Indexed256);
        assert_eq!(ColorDepth::detect(&env(&[("TERM", "screen")])), ColorDepth::Indexed256);
        for term in ["linux", "dumb", "rxvt-16color", "vt100"] {
            assert_eq!(ColorDepth::detect(&env(&[("TERM", term)])), ColorDepth::Ansi16, "{term}");
        }
    }

    #[test]
    fn colours_map_to_their_nearest() {
        assert_eq!(ColorDepth::Indexed256.fit(Color::Rgb(0, 0, 0)), Color::Indexed(16));
        assert_eq!(ColorDepth::Indexed256.fit(Color::Rgb(255, 135, 0)), Color::Indexed(208));
        assert_eq!(ColorDepth::Indexed256.fit(Color::Rgb(128, 128, 128)), Color::Indexed(244));
        assert_eq!(ColorDepth::Ansi16.fit(Color::Rgb(250, 10, 10)), Color::LightRed);
        assert_eq!(ColorDepth::Ansi16.fit(Color::Rgb(0x61, 0xaf, 0xef)), Color::LightBlue);
        assert_eq!(ColorDepth::Ansi16.fit(Color::Indexed(196)), Color::LightRed);
        assert_eq!(ColorDepth::Ansi16.fit(Color::Cyan), Color::Cyan);
        assert_eq!(ColorDepth::TrueColor.fit(Color::Rgb(1, 2, 3)), Color::Rgb(1, 2, 3));
    }
}
