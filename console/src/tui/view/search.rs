//! A payload search over a queue's jobs view (`S`): the text being typed,
//! then the matches as the steps bring them (id, state, name, the payload
//! around the text), with how far the walk has come.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::table::{self, Column, Item, List};
use crate::text::inert;
use crate::tui::state::{matches_text, SearchView, State};
use crate::tui::theme::Theme;

/// Characters of payload shown before the text found, so the excerpt says
/// which field it is in.
const EXCERPT_LEAD: usize = 16;

pub fn render(frame: &mut Frame, area: Rect, state: &State, search: &SearchView, theme: &Theme) {
    let [head, list_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(area);
    let queue = inert(&search.queue);
    let text = inert(&search.text);
    if search.typing {
        let spans = vec![
            Span::styled(format!(" {queue} "), theme.header()),
            Span::raw(format!(" search payloads for: {text}█")),
        ];
        frame.render_widget(Paragraph::new(Line::from(spans)), head);
        let list = List {
            title: " search ".to_owned(),
            columns: columns(),
            rows: Vec::new(),
            selected: 0,
            empty: vec![
                "type the text a job's payload contains (case-sensitive), then Enter".to_owned(),
                "Redis is searched in short bounded steps: it never blocks".to_owned(),
            ],
        };
        table::draw(frame, list_area, list, theme);
        return;
    }
    let found = matches_text(search.matches.len());
    let records = state.search_records();
    // Jobs added during the walk (or a rehash's repeats) can take it past
    // the count it started with: then there is no "of" to give.
    let progress = if search.running && search.examined <= records {
        format!(
            "searched {} of about {records} records… (Esc stops)",
            search.examined
        )
    } else if search.running {
        format!("searched {} records… (Esc stops)", search.examined)
    } else if search.done {
        format!("done: searched {} records, {found}", search.examined)
    } else {
        format!("stopped after {} records, {found} so far", search.examined)
    };
    let spans = vec![
        Span::styled(format!(" {queue} "), theme.header()),
        Span::raw(format!(" \"{text}\": ")),
        Span::styled(progress, theme.dim()),
    ];
    frame.render_widget(Paragraph::new(Line::from(spans)), head);
    let rows = search
        .matches
        .iter()
        .map(|job| {
            vec![
                Item::new(&job.id),
                Item::new(job.state.to_string()),
                Item::new(job.name.as_deref().unwrap_or("—")),
                Item::new(excerpt(&job.payload, &search.text)),
            ]
        })
        .collect();
    let empty = if search.running {
        vec!["no match yet…".to_owned()]
    } else {
        vec![format!(
            "no live job of {queue} has \"{text}\" in its payload"
        )]
    };
    let list = List {
        title: format!(" {found} for \"{text}\" "),
        columns: columns(),
        rows,
        selected: search.cursor.index,
        empty,
    };
    table::draw(frame, list_area, list, theme);
}

fn columns() -> Vec<Column> {
    vec![
        Column::id("JOB"),
        Column::whole("STATE"),
        Column::name("NAME"),
        Column::text("PAYLOAD"),
    ]
}

/// The payload as one line of JSON from a little before `needle`, made
/// inert (the table cuts its end).
pub fn excerpt(payload: &serde_json::Value, needle: &str) -> String {
    let whole = payload.to_string();
    let start = whole.find(needle).unwrap_or(0);
    let lead = whole[..start]
        .char_indices()
        .rev()
        .nth(EXCERPT_LEAD - 1)
        .map_or(0, |(i, _)| i);
    let cut = if lead > 0 { "…" } else { "" };
    format!("{cut}{}", inert(&whole[lead..]))
}
