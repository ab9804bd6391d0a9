//! Label files: what a bought shipment's label says (carrier, service, both addresses, tracking
//! code, weight, date), drawn as the formats EasyPost serves: a 4x6 PNG (the original), and by
//! conversion a PDF page, ZPL and EPL2 (the printer languages, whose barcode commands print a
//! real Code 128 of the tracking code). Batch labels merge several; a scan form is a PDF listing.
//! Files are drawn when fetched, from the shipment's data, so they cost no memory while stored.

use std::io::Write;

/// The content of one label.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub carrier: String,
    pub service: String,
    pub tracking_code: String,
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub weight_oz: f64,
    pub date: String,
    pub reference: Option<String>,
}

/// A label file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Png,
    Pdf,
    Zpl,
    Epl2,
}

impl Format {
    pub fn parse(text: &str) -> Option<Format> {
        match text.trim().to_ascii_uppercase().as_str() {
            "PNG" => Some(Format::Png),
            "PDF" => Some(Format::Pdf),
            "ZPL" => Some(Format::Zpl),
            "EPL2" => Some(Format::Epl2),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Pdf => "pdf",
            Format::Zpl => "zpl",
            Format::Epl2 => "epl2",
        }
    }

    /// `label_file_type` and the `Content-Type` the file is served with.
    pub fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Pdf => "application/pdf",
            Format::Zpl => "application/zpl",
            Format::Epl2 => "application/epl2",
        }
    }

    /// The `postage_label` field holding this format's URL.
    pub fn url_field(self) -> &'static str {
        match self {
            Format::Png => "label_url",
            Format::Pdf => "label_pdf_url",
            Format::Zpl => "label_zpl_url",
            Format::Epl2 => "label_epl2_url",
        }
    }
}

/// Printable ASCII only: label text comes from callers' addresses.
fn ascii(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c.to_ascii_uppercase() } else { '?' }).collect()
}

impl Label {
    /// The lines printed, top to bottom, and whether each is large.
    fn lines(&self) -> Vec<(String, bool)> {
        let mut lines = vec![
            (format!("{} {}", self.carrier, self.service), true),
            (format!("SHIP DATE {}  WT {:.1} OZ", self.date, self.weight_oz), false),
            (String::new(), false),
            ("FROM:".to_owned(), false),
        ];
        lines.extend(self.from.iter().map(|l| (l.clone(), false)));
        lines.push((String::new(), false));
        lines.push(("SHIP TO:".to_owned(), true));
        lines.extend(self.to.iter().map(|l| (l.clone(), true)));
        if let Some(reference) = &self.reference {
            lines.push((String::new(), false));
            lines.push((format!("REF {reference}"), false));
        }
        lines.into_iter().map(|(text, big)| (ascii(&text), big)).collect()
    }

    /// Bars of the tracking code as module widths (bar, space, bar, ...): a visual barcode for
    /// the picture formats; ZPL and EPL2 ask the printer for a real Code 128.
    fn bars(&self) -> Vec<u8> {
        let mut bars = vec![2, 1, 1, 2];
        for b in self.tracking_code.bytes() {
            bars.extend([1 + (b & 1), 1 + ((b >> 1) & 1), 1 + ((b >> 2) & 3), 1 + ((b >> 4) & 1)]);
        }
        bars.extend([2, 1, 1, 2]);
        bars
    }
}

/// Renders `format` of one label (PNG, PDF, ZPL, EPL2).
pub fn render(label: &Label, format: Format) -> Vec<u8> {
    match format {
        Format::Png => png(label),
        Format::Pdf => pdf(std::slice::from_ref(label)),
        Format::Zpl => zpl(label).into_bytes(),
        Format::Epl2 => epl2(label).into_bytes(),
    }
}

/// Several labels in one file: PDF pages, or ZPL / EPL2 jobs one after another (PNG has no pages,
/// so a merged PNG is not offered).
pub fn render_many(labels: &[Label], format: Format) -> Vec<u8> {
    match format {
        Format::Pdf | Format::Png => pdf(labels),
        Format::Zpl => labels.iter().map(zpl).collect::<String>().into_bytes(),
        Format::Epl2 => labels.iter().map(epl2).collect::<String>().into_bytes(),
    }
}

const WIDTH: usize = 400;
const HEIGHT: usize = 600;

/// A grey image being drawn: white, with black rectangles and text.
struct Canvas {
    pixels: Vec<u8>,
}

impl Canvas {
    fn fill(&mut self, x0: usize, y0: usize, w: usize, h: usize) {
        for y in y0..(y0 + h).min(HEIGHT) {
            for x in x0..(x0 + w).min(WIDTH) {
                self.pixels[y * WIDTH + x] = 0;
            }
        }
    }

    /// Writes `text` in the 8x8 font at `scale`, stopping at the right margin.
    fn text(&mut self, text: &str, x0: usize, y: usize, scale: usize) {
        let mut x = x0;
        for c in text.chars() {
            if x + 8 * scale > WIDTH - 12 {
                break;
            }
            let glyph = font8x8::legacy::BASIC_LEGACY.get(c as usize).copied().unwrap_or([0; 8]);
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) != 0 {
                        self.fill(x + col * scale, y + row * scale, scale, scale);
                    }
                }
            }
            x += 8 * scale;
        }
    }
}

/// A 4x6 label at 100 dpi, 8-bit grey.
fn png(label: &Label) -> Vec<u8> {
    let mut canvas = Canvas { pixels: vec![255_u8; WIDTH * HEIGHT] };
    // Frame.
    canvas.fill(4, 4, WIDTH - 8, 3);
    canvas.fill(4, HEIGHT - 7, WIDTH - 8, 3);
    canvas.fill(4, 4, 3, HEIGHT - 8);
    canvas.fill(WIDTH - 7, 4, 3, HEIGHT - 8);
    let mut y = 20;
    for (text, big) in label.lines() {
        let scale = if big { 2 } else { 1 };
        canvas.text(&text, 16, y, scale);
        y += 10 * scale + 2;
    }
    let mut x = 24;
    let top = HEIGHT - 150;
    for (i, width) in label.bars().into_iter().enumerate() {
        let w = usize::from(width) * 2;
        if i % 2 == 0 {
            canvas.fill(x, top, w, 90);
        }
        x += w;
        if x > WIDTH - 24 {
            break;
        }
    }
    canvas.text(&ascii(&label.tracking_code), 24, top + 100, 1);
    let pixels = canvas.pixels;
    let mut out = Vec::new();
    #[expect(clippy::cast_possible_truncation, reason = "the label's size is a small constant")]
    let mut encoder = png::Encoder::new(&mut out, WIDTH as u32, HEIGHT as u32);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    // Writing to a Vec cannot fail; an empty file would be noticed by any test that decodes it.
    if let Ok(mut writer) = encoder.write_header() {
        let _ = writer.write_image_data(&pixels);
    }
    out
}

/// Text safe inside a PDF string.
fn pdf_text(text: &str) -> String {
    ascii(text).replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)")
}

/// One PDF, a 4x6 in page (288x432 pt) per label, in Helvetica (which every reader has).
pub fn pdf(labels: &[Label]) -> Vec<u8> {
    let pages: Vec<String> = labels
        .iter()
        .map(|label| {
            let mut content = String::from("0 g\n8 8 272 416 re S\n");
            let mut y = 410;
            for (text, big) in label.lines() {
                let size = if big { 13 } else { 9 };
                content.push_str(&format!("BT /F1 {size} Tf 16 {y} Td ({}) Tj ET\n", pdf_text(&text)));
                y -= size + 4;
            }
            let mut x = 20.0;
            for (i, width) in label.bars().into_iter().enumerate() {
                let w = f64::from(width) * 1.1;
                if i % 2 == 0 && x < 268.0 {
                    content.push_str(&format!("{x:.1} 60 {w:.1} 60 re f\n"));
                }
                x += w;
            }
            content.push_str(&format!("BT /F1 10 Tf 20 44 Td ({}) Tj ET\n", pdf_text(&label.tracking_code)));
            content
        })
        .collect();
    document(&pages, "288 432")
}

/// A scan form: one page listing the tracking codes it covers.
pub fn scan_form_pdf(id: &str, from: &[String], tracking_codes: &[String], date: &str) -> Vec<u8> {
    let mut lines: Vec<(String, u32)> = vec![
        ("USPS SCAN FORM (PS FORM 5630)".to_owned(), 16),
        (format!("{id}   {date}   {} PACKAGES", tracking_codes.len()), 10),
    ];
    lines.extend(from.iter().map(|l| (l.clone(), 10)));
    lines.extend(tracking_codes.iter().map(|c| (c.clone(), 10)));
    let mut content = String::from("0 g\n");
    let mut y = 750;
    for (text, size) in lines {
        if y < 40 {
            break;
        }
        content.push_str(&format!("BT /F1 {size} Tf 40 {y} Td ({}) Tj ET\n", pdf_text(&text)));
        y -= size + 6;
    }
    document(&[content], "612 792")
}

/// Assembles a PDF from page content streams, with a correct cross-reference table.
fn document(pages: &[String], media_box: &str) -> Vec<u8> {
    let count = pages.len();
    // Objects: 1 catalog, 2 pages, 3 font, then (page, content) pairs.
    let kids: Vec<String> = (0..count).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!("<< /Type /Pages /Kids [{}] /Count {count} >>", kids.join(" ")),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    for (i, content) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {media_box}] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        objects.push(format!("<< /Length {} >>\nstream\n{content}endstream", content.len()));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        let _ = write!(out, "{} 0 obj\n{object}\nendobj\n", i + 1);
    }
    let xref = out.len();
    let _ = write!(out, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        let _ = writeln!(out, "{offset:010} 00000 n ");
    }
    let _ = write!(out, "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1);
    out
}

/// Zebra ZPL II at 203 dpi.
fn zpl(label: &Label) -> String {
    let mut out = String::from("^XA^CI28^PW812^LL1218\n^FO20,20^GB772,1178,4^FS\n");
    let mut y = 50;
    for (text, big) in label.lines() {
        let size = if big { 40 } else { 26 };
        out.push_str(&format!("^FO50,{y}^A0N,{size},{size}^FD{}^FS\n", text.replace(['^', '~'], " ")));
        y += size + 10;
    }
    out.push_str(&format!("^FO60,920^BY3^BCN,200,Y,N,N^FD{}^FS\n^XZ\n", ascii(&label.tracking_code)));
    out
}

/// Eltron EPL2 at 203 dpi.
fn epl2(label: &Label) -> String {
    let mut out = String::from("\nN\nq812\nQ1218,24\n");
    let mut y = 40;
    for (text, big) in label.lines() {
        let (font, step) = if big { (4, 44) } else { (2, 28) };
        out.push_str(&format!("A50,{y},0,{font},1,1,N,\"{}\"\n", text.replace('"', "'")));
        y += step;
    }
    out.push_str(&format!("B60,920,0,1,3,7,200,B,\"{}\"\nP1\n", ascii(&label.tracking_code)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label() -> Label {
        Label {
            carrier: "USPS".into(),
            service: "Priority".into(),
            tracking_code: "9400100208303109505657".into(),
            from: vec!["EASYPOST".into(), "417 MONTGOMERY ST".into(), "SAN FRANCISCO CA 94104".into()],
            to: vec!["DR. STEVE BRULE (\"ME\")".into(), "179 N HARBOR DR".into(), "REDONDO BEACH CA 90277".into()],
            weight_oz: 15.4,
            date: "2026-11-26".into(),
            reference: None,
        }
    }

    #[test]
    fn png_decodes_as_a_4x6_grey_image_with_ink() {
        let bytes = render(&label(), Format::Png);
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().expect("png");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("frame");
        assert_eq!((info.width, info.height), (400, 600));
        let dark = buf.iter().filter(|p| **p == 0).count();
        assert!(dark > 5_000, "{dark} dark pixels");
    }

    #[test]
    fn pdf_has_a_page_per_label_and_a_valid_xref() {
        let bytes = render_many(&[label(), label()], Format::Pdf);
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.starts_with("%PDF-1.4"));
        assert!(text.contains("/Count 2"));
        assert!(text.contains("(DR. STEVE BRULE \\(\"ME\"\\))"));
        let start: usize = text.rsplit("startxref\n").next().unwrap().lines().next().unwrap().parse().unwrap();
        assert!(text[start..].starts_with("xref"));
        // Every offset in the table points at its object.
        for (i, line) in text[start..].lines().skip(3).take(7).enumerate() {
            let offset: usize = line[..10].parse().unwrap();
            assert!(text[offset..].starts_with(&format!("{} 0 obj", i + 1)), "object {}", i + 1);
        }
    }

    #[test]
    fn printer_languages_carry_a_code128_of_the_tracking_code() {
        let zpl = String::from_utf8(render(&label(), Format::Zpl)).unwrap();
        assert!(zpl.starts_with("^XA") && zpl.trim_end().ends_with("^XZ"));
        assert!(zpl.contains("^BCN,200,Y,N,N^FD9400100208303109505657^FS"));
        let epl = String::from_utf8(render(&label(), Format::Epl2)).unwrap();
        assert!(epl.contains("B60,920,0,1,3,7,200,B,\"9400100208303109505657\""));
        assert!(epl.contains("\"DR. STEVE BRULE ('ME')\""));
        assert_eq!(Format::parse("epl2"), Some(Format::Epl2));
        assert_eq!(Format::parse("GIF"), None);
    }
}
