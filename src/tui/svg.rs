//! Renders a drawn frame (a ratatui buffer) to SVG, so the screenshots in the README come from
//! the real rendering rather than being drawn by hand (`cargo run --example screenshots`).

use std::fmt::Write as _;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

const CELL_WIDTH: f32 = 8.4;
const CELL_HEIGHT: f32 = 17.0;

/// The SVG of `buffer`, with `background` and `foreground` standing in for the terminal's
/// default colours.
pub fn render(buffer: &Buffer, background: &str, foreground: &str) -> String {
    let area = buffer.area;
    let (width, height) = (f32::from(area.width) * CELL_WIDTH, f32::from(area.height) * CELL_HEIGHT);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="{background}"/>"#);
    for y in 0..area.height {
        let mut x = 0;
        while x < area.width {
            let cell = &buffer[(area.x + x, area.y + y)];
            // A run of cells with the same style becomes one text element.
            let mut text = String::new();
            let start = x;
            while x < area.width {
                let next = &buffer[(area.x + x, area.y + y)];
                if next.fg != cell.fg || next.bg != cell.bg || next.modifier != cell.modifier {
                    break;
                }
                text.push_str(next.symbol());
                x += 1;
            }
            let reversed = cell.modifier.contains(Modifier::REVERSED);
            let (mut fg, mut bg) = (colour(cell.fg, foreground), colour(cell.bg, background));
            if reversed {
                std::mem::swap(&mut fg, &mut bg);
            }
            let (px, py) = (f32::from(start) * CELL_WIDTH, f32::from(y) * CELL_HEIGHT);
            if bg != background {
                let w = f32::from(x - start) * CELL_WIDTH;
                let _ = writeln!(svg, r#"<rect x="{px}" y="{py}" width="{w}" height="{CELL_HEIGHT}" fill="{bg}"/>"#);
            }
            if !text.trim().is_empty() {
                let weight = if cell.modifier.contains(Modifier::BOLD) { r#" font-weight="bold""# } else { "" };
                let opacity = if cell.modifier.contains(Modifier::DIM) { r#" opacity="0.6""# } else { "" };
                let _ = writeln!(
                    svg,
                    r#"<text x="{px}" y="{}" fill="{fg}"{weight}{opacity} xml:space="preserve" textLength="{}">{}</text>"#,
                    py + CELL_HEIGHT * 0.78,
                    f32::from(x - start) * CELL_WIDTH,
                    escape(&text)
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn colour(color: Color, default: &str) -> String {
    let named = match color {
        Color::Reset => return default.to_owned(),
        Color::Rgb(r, g, b) => return format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Black => "#000000",
        Color::Red => "#cd3131",
        Color::Green => "#0dbc79",
        Color::Yellow => "#e5e510",
        Color::Blue => "#2472c8",
        Color::Magenta => "#bc3fbc",
        Color::Cyan => "#11a8cd",
        Color::Gray => "#e5e5e5",
        Color::DarkGray => "#666666",
        Color::LightRed => "#f14c4c",
        Color::LightGreen => "#23d18b",
        Color::LightYellow => "#f5f543",
        Color::LightBlue => "#3b8eea",
        Color::LightMagenta => "#d670d6",
        Color::LightCyan => "#29b8db",
        Color::White => "#ffffff",
        Color::Indexed(_) => return default.to_owned(),
    };
    named.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn text_and_colours_become_svg() {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 10, 2));
        buffer.set_string(0, 0, "a<b", Style::new().fg(Color::Rgb(255, 0, 0)).bg(Color::Blue));
        let svg = render(&buffer, "#111111", "#eeeeee");
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains(r##"fill="#ff0000""##));
        assert!(svg.contains(r##"fill="#2472c8""##));
        assert!(svg.contains("a&lt;b"));
    }
}
