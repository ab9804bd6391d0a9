//! Asks before a destructive operation runs, restating exactly what will happen and where. On a
//! live service the target's id must be typed, so a reflexive Enter cannot delete production data.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::catalog::Operation;
use crate::client::Values;
use unicode_width::UnicodeWidthStr;

use crate::inert::inert;
use crate::tui::components::line_input::LineInput;
use crate::tui::theme::Theme;

#[derive(Debug, PartialEq, Eq)]
pub enum ConfirmAction {
    None,
    Confirmed,
    Cancel,
}

/// A pending destructive call, waiting for the user's word.
pub struct Confirm {
    pub op: &'static Operation,
    pub values: Values,
    live: bool,
    profile: String,
    /// What must be typed on LIVE (the target's id), if anything identifies it.
    expected: Option<String>,
    typed: LineInput,
    /// What the call will spend or do, in words, beyond its parameters (`buys USPS Priority
    /// for 7.42 USD`): filled by the app from what it has seen, shown above the question.
    pub effects: Vec<String>,
    /// Where it goes, as the tab says it (`SANDBOX http://127.0.0.1:7701`, `LIVE https://…`).
    pub badge: String,
    /// What the border says it does, when its service says better than the rule (`This sends
    /// mail`); else a call that spends says so, and anything else cannot be undone.
    pub headline: Option<&'static str>,
}

impl Confirm {
    pub fn new(op: &'static Operation, values: Values, live: bool, profile: String) -> Confirm {
        // The target is the most specific path parameter's value (the last in the path: the
        // transaction, not its company), else the first value given.
        let expected = op
            .path_params()
            .iter()
            .rev()
            .find_map(|name| values.get(*name).cloned())
            .or_else(|| op.params.iter().find_map(|p| values.get(p.name).cloned()));
        let badge = if live { "LIVE" } else { "SANDBOX" }.to_owned();
        Confirm {
            op,
            values,
            live,
            profile,
            expected,
            typed: LineInput::default(),
            effects: Vec::new(),
            badge,
            headline: None,
        }
    }

    /// The width the popup's longest line needs, borders included.
    fn render_width(&self) -> usize {
        let lines = [
            format!(" {} {} · profile {}", self.badge, self.op.service.title(), self.profile),
            format!("{} {}", self.op.name, self.op.summary),
            format!("target: {}", self.target()),
            format!("with: {}", self.options().unwrap_or_default()),
            format!("Type {} and press Enter to confirm; Esc cancels.", self.expected.as_deref().unwrap_or_default()),
        ];
        let effects = self.effects.iter().map(|e| e.width() + 2);
        lines.iter().map(|l| l.width()).chain(effects).max().unwrap_or(0) + 2
    }

    /// What the call acts on: the values of its path (the document voided, not the options it
    /// is asked with), or every value when its path names nothing.
    fn target(&self) -> String {
        let (on, _) = self.split_values();
        if on.is_empty() {
            return "(no parameters)".into();
        }
        on.join("  ")
    }

    /// The values the call is sent with beside its target (`code=DocVoided`, `$include=…`).
    fn options(&self) -> Option<String> {
        let (_, with) = self.split_values();
        (!with.is_empty()).then(|| with.join("  "))
    }

    /// The given values as `name=value`, split into the path's and the others; all count as
    /// the target when the path has none.
    fn split_values(&self) -> (Vec<String>, Vec<String>) {
        let path = self.op.path_params();
        // Each item of a repeated field on its own, as it was typed (`to=a  to=b`).
        let pairs = crate::catalog::given_pairs(self.op, self.values.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let (on, with): (Vec<_>, Vec<_>) = pairs.into_iter().partition(|(k, _)| path.contains(k));
        let text = |pairs: Vec<(&str, &str)>| pairs.into_iter().map(|(k, v)| format!("{k}={}", inert(v))).collect();
        if on.is_empty() {
            (text(with), Vec::new())
        } else {
            (text(on), text(with))
        }
    }

    /// What the call does, in the border: said by its service, else what the catalog knows.
    pub fn headline(&self) -> &'static str {
        let spends = self.op.spending(&|name| self.values.get(name).cloned()).is_some();
        match self.headline {
            Some(headline) => headline,
            None if spends && !self.op.destructive => "This spends what it says below",
            None => "This cannot be undone",
        }
    }

    /// What has been typed into the id box (LIVE).
    pub fn typed(&self) -> &str {
        self.typed.text()
    }

    /// Pasted text is typed into the id box on LIVE; elsewhere a paste decides nothing.
    pub fn paste(&mut self, text: &str) {
        if self.live {
            self.typed.insert_str(text);
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ConfirmAction {
        if key.code == KeyCode::Esc {
            return ConfirmAction::Cancel;
        }
        if !self.live {
            return match key.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => ConfirmAction::Confirmed,
                KeyCode::Char('n' | 'N') => ConfirmAction::Cancel,
                _ => ConfirmAction::None,
            };
        }
        match key.code {
            KeyCode::Enter if self.expected.as_deref().is_none_or(|id| id == self.typed.text()) => {
                ConfirmAction::Confirmed
            }
            _ => {
                self.typed.handle_key(&key);
                ConfirmAction::None
            }
        }
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        // As wide as its longest line (a long target, a price) up to the screen; what is wider
        // still wraps, and the height counts the wrapped rows.
        let most = area.width.saturating_sub(4).max(10).min(area.width);
        let width = self.render_width().clamp(44, usize::from(most));
        let width = u16::try_from(width).unwrap_or(most);
        let badge_style = if self.live { theme.live_badge } else { theme.sandbox_badge };
        let badge = format!(" {} ", inert(&self.badge));
        let mut lines = vec![
            Line::from(vec![
                Span::styled(badge, badge_style),
                Span::styled(format!(" {} · profile {}", self.op.service.title(), inert(&self.profile)), theme.text),
            ]),
            Line::from(vec![
                Span::styled(format!("{} ", self.op.name), theme.warning),
                Span::styled(self.op.summary, theme.muted),
            ]),
            Line::from(Span::styled(format!("target: {}", self.target()), theme.text)),
        ];
        if let Some(options) = self.options() {
            lines.push(Line::from(Span::styled(format!("with: {options}"), theme.muted)));
        }
        for effect in &self.effects {
            lines.push(Line::from(Span::styled(format!("→ {}", inert(effect)), theme.warning)));
        }
        lines.push(Line::default());
        match (&self.expected, self.live) {
            (Some(expected), true) => {
                lines.push(Line::from(Span::styled(
                    format!("Type {} and press Enter to confirm; Esc cancels.", inert(expected)),
                    theme.warning,
                )));
                let mut typed = vec![Span::styled("> ", theme.accent)];
                typed.extend(self.typed.spans(usize::from(width.saturating_sub(4)), theme.accent, theme.selection));
                lines.push(Line::from(typed));
            }
            (None, true) => lines.push(Line::from(Span::styled("Enter confirms on LIVE; Esc cancels.", theme.warning))),
            _ => lines.push(Line::from(Span::styled("y or Enter confirms · n or Esc cancels", theme.warning))),
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warning)
            .title(Span::styled(format!(" {} ", self.headline()), theme.warning));
        let inner_width = usize::from(width.saturating_sub(2)).max(1);
        // Word wrapping can take a row more than the characters alone would.
        let rows: usize = lines
            .iter()
            .map(|line| match line.width() {
                w if w <= inner_width => 1,
                w => w.div_ceil(inner_width) + 1,
            })
            .sum();
        let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
        let popup = super::centered(area, width, height);
        frame.render_widget(Clear, popup);
        frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), popup);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Service;
    use crossterm::event::KeyModifiers;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn voiding_on_live_asks_for_the_transaction_code_not_the_company() {
        let op = Service::Avatax.operation("transactions_void").unwrap();
        let values: Values = [
            ("companyCode".to_owned(), "DEFAULT".to_owned()),
            ("transactionCode".to_owned(), "INV-7".to_owned()),
            ("code".to_owned(), "DocVoided".to_owned()),
        ]
        .into();
        let mut live = Confirm::new(op, values, true, "work".into());
        for c in "DEFAULT".chars() {
            live.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(live.handle_key(key(KeyCode::Enter)), ConfirmAction::None);
        let mut live = Confirm { typed: LineInput::default(), ..live };
        for c in "INV-7".chars() {
            live.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(live.handle_key(key(KeyCode::Enter)), ConfirmAction::Confirmed);
    }

    #[test]
    fn the_void_target_names_the_document_and_the_title_says_what_is_at_stake() {
        let op = Service::Avatax.operation("transactions_void").unwrap();
        let values: Values = [
            ("companyCode".to_owned(), "DEFAULT".to_owned()),
            ("transactionCode".to_owned(), "INV-7".to_owned()),
            ("code".to_owned(), "DocVoided".to_owned()),
            ("$include".to_owned(), "Lines".to_owned()),
        ]
        .into();
        let void = Confirm::new(op, values, false, "default".into());
        let target = void.target();
        assert!(target.contains("transactionCode=INV-7") && target.contains("companyCode=DEFAULT"), "{target}");
        assert!(!target.contains("$include") && !target.contains("code=DocVoided"), "{target}");
        let options = void.options().unwrap();
        assert!(options.contains("$include=Lines") && options.contains("code=DocVoided"), "{options}");
        assert_eq!(void.headline(), "This cannot be undone");
        // An order spends (its service says better: see the Coinbase console's headline).
        let order = Service::Coinbase.operation("orders_create").unwrap();
        let spending: Values = [("side".to_owned(), "buy".to_owned()), ("size".to_owned(), "1".to_owned())].into();
        let order = Confirm::new(order, spending, false, String::new());
        assert_eq!(order.headline(), "This spends what it says below");
        let device = Service::Ably.operation("push_device_delete").unwrap();
        let values: Values = [("deviceId".to_owned(), "dev-1".to_owned())].into();
        assert_eq!(Confirm::new(device, values, false, String::new()).target(), "deviceId=dev-1");
    }

    #[test]
    fn live_needs_the_id_typed_and_sandbox_needs_a_yes() {
        let op = Service::Ably.operation("push_device_delete").unwrap();
        let values: Values = [("deviceId".to_owned(), "dev-1".to_owned())].into();
        let mut live = Confirm::new(op, values.clone(), true, "work".into());
        assert_eq!(live.handle_key(key(KeyCode::Enter)), ConfirmAction::None);
        for c in "dev-1".chars() {
            live.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(live.handle_key(key(KeyCode::Enter)), ConfirmAction::Confirmed);
        let mut sandbox = Confirm::new(op, values, false, "default".into());
        assert_eq!(sandbox.handle_key(key(KeyCode::Char('x'))), ConfirmAction::None);
        assert_eq!(sandbox.handle_key(key(KeyCode::Char('y'))), ConfirmAction::Confirmed);
        assert_eq!(sandbox.handle_key(key(KeyCode::Esc)), ConfirmAction::Cancel);
    }
}
