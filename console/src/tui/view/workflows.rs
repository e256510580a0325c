//! Screen 8: workflows. The newest gates (batches, dependencies, trees)
//! with their progress and their waiters' decisions; Enter opens one: its
//! counts, each waiter with why it waits or how it was decided, and a page
//! of its members with their state or outcome (results and errors inert).

use std::time::SystemTime;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::table::{self, Column, Item, List};
use crate::clock;
use crate::text::{inert, truncate};
use crate::tui::state::{GateView, State};
use crate::tui::theme::Theme;
use crate::workflow::why::{progress, waiter_why};
use crate::workflow::{
    condition_text, decisions_text, done_text, held_waiter, kind_word, last_change, member_detail,
    member_failed, member_word, on_failure_text, Gate, GateState, Member, MemberState,
    WaiterDecision,
};

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let gates = state.visible_gates();
    let rows = gates.iter().map(|g| gate_cells(g, theme, now)).collect();
    let empty = if !state.data.gates_loaded {
        vec![super::not_loaded(state, "workflows")]
    } else if state.filter().is_empty() {
        vec![
            "no batch, dependencies or tree in this namespace".to_owned(),
            "RedisQueue::enqueue_batch, NewJob::after and add_tree create them".to_owned(),
        ]
    } else {
        vec!["no workflow matches the filter".to_owned()]
    };
    let running = gates
        .iter()
        .filter(|g| matches!(g.state, GateState::Open | GateState::Sealed))
        .count();
    let list = List {
        title: format!(" Workflows ({}), {running} running ", gates.len()),
        columns: vec![
            Column::id("GATE"),
            Column::whole("KIND"),
            Column::whole("STATE"),
            Column::number("DONE"),
            Column::number("FAILED"),
            Column::text("WAITERS"),
            Column::name("LABEL").optional(1),
            Column::number("IDLE"),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw(frame, area, list, theme);
}

/// A gate's cells: failures and held waiters stand out.
fn gate_cells<'a>(gate: &'a Gate, theme: &Theme, now: SystemTime) -> Vec<Item<'a>> {
    let warn_if = |item: Item<'a>, on: bool| if on { item.style(theme.warn()) } else { item };
    vec![
        Item::new(&gate.id),
        Item::new(kind_word(gate.kind)),
        Item::new(gate.state.as_str()),
        Item::new(done_text(gate)),
        warn_if(Item::number(gate.failed), gate.failed > 0),
        warn_if(Item::new(decisions_text(gate)), held_waiter(gate).is_some()),
        Item::new(gate.label.as_deref().unwrap_or("")),
        Item::new(clock::compact(clock::age(last_change(gate), now))),
    ]
}

/// One gate: its facts, its waiters, a page of its members.
pub fn gate(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    view: &GateView,
    theme: &Theme,
    now: SystemTime,
) {
    let Some(page) = state.gate_shown() else {
        let text = super::not_loaded(state, "this gate");
        let title = format!(" {} ", inert(&view.query.id));
        frame.render_widget(
            Paragraph::new(text)
                .block(Block::bordered().title(Line::styled(title, theme.header()))),
            area,
        );
        return;
    };
    let Some(gate) = &page.gate else {
        let text = format!(
            "gate {} is not in this namespace (never created, or its data expired \
             24 h after it finished)",
            inert(&view.query.id)
        );
        frame.render_widget(Paragraph::new(text).block(Block::bordered()), area);
        return;
    };
    let facts = fact_lines(gate, area.width as usize, theme, now);
    let waiters = gate.waiters.len().max(1) as u16 + 3;
    let [facts_area, waiters_area, members_area] = Layout::vertical([
        Constraint::Length(facts.len() as u16),
        Constraint::Length(waiters),
        Constraint::Min(4),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(facts), facts_area);

    let waiter_rows = gate
        .waiters
        .iter()
        .map(|w| {
            let why = waiter_why(gate, w);
            let held = w.decision == WaiterDecision::Held;
            let why = if held {
                Item::new(why).style(theme.warn())
            } else {
                Item::new(why)
            };
            vec![
                Item::new(&w.id),
                Item::new(&w.queue),
                Item::new(condition_text(w.condition)),
                Item::new(on_failure_text(w)),
                why,
            ]
        })
        .collect();
    // With several waiters and one held, the one picked (w), which r and d
    // decide, is marked; the members list keeps the cursor (j/k).
    let picking = gate.waiters.len() > 1 && held_waiter(gate).is_some();
    let pick = if picking { ", w picks, r d decide" } else { "" };
    let waiters_list = List {
        title: format!(" Waiting on it ({}){pick} ", gate.waiters.len()),
        columns: vec![
            Column::id("WAITER"),
            Column::name("QUEUE"),
            Column::whole("RELEASED IF"),
            Column::whole("ON FAILURE"),
            Column::text("WHY"),
        ],
        rows: waiter_rows,
        selected: view.waiter,
        empty: vec!["no job waits on it yet: members may still join".to_owned()],
    };
    if picking {
        table::draw(frame, waiters_area, waiters_list, theme);
    } else {
        table::draw_unselected(frame, waiters_area, waiters_list, theme);
    }

    let members = state.visible_members();
    let first = view.earlier.len() * crate::workflow::MEMBERS_PAGE + 1;
    let more = if page.members.next.is_some() {
        ", PgDn for more"
    } else {
        ""
    };
    let title = if members.is_empty() {
        " Members ".to_owned()
    } else {
        format!(
            " Members {first}–{} of {}{more} ",
            first + members.len() - 1,
            gate.total
        )
    };
    let list = List {
        title,
        columns: vec![
            Column::id("MEMBER"),
            Column::name("QUEUE"),
            Column::whole("STATE"),
            Column::text("RESULT / ERROR"),
        ],
        rows: members.iter().map(|m| member_cells(m, theme)).collect(),
        selected: state.cursor().index,
        empty: vec!["no members on this page".to_owned()],
    };
    table::draw(frame, members_area, list, theme);
}

/// The lines above the tables: what it is, its progress, its first
/// failure, its times.
fn fact_lines<'a>(gate: &Gate, width: usize, theme: &Theme, now: SystemTime) -> Vec<Line<'a>> {
    let mut head = vec![
        Span::styled(format!(" {} ", gate.kind.as_str()), theme.header()),
        Span::raw(inert(&gate.id)),
    ];
    if let Some(label) = &gate.label {
        head.push(Span::raw(format!("  \"{}\"", inert(label))));
    }
    head.push(Span::styled(
        format!("  {}", gate.state.as_str()),
        theme.tab_active(),
    ));
    let mut lines = vec![Line::from(head), Line::from(format!(" {}", progress(gate)))];
    if let Some(failure) = &gate.first_failure {
        let text = format!(" first failure: {}", inert(failure));
        lines.push(Line::styled(truncate(&text, width), theme.warn()));
    }
    let at =
        |what: &str, t: SystemTime| format!("{what} {} ago", clock::compact(clock::age(t, now)));
    let mut times = vec![at("created", gate.created_at)];
    if let Some(t) = gate.sealed_at {
        times.push(at("sealed", t));
    }
    if let Some(t) = gate.done_at {
        times.push(at(gate.state.as_str(), t));
    }
    lines.push(Line::styled(format!(" {}", times.join(", ")), theme.dim()));
    lines
}

/// A member's cells: its state or outcome, and its result or error as one
/// inert line.
fn member_cells<'a>(member: &'a Member, theme: &Theme) -> Vec<Item<'a>> {
    let state = Item::new(member_word(&member.state));
    let state = match &member.state {
        MemberState::Completed(_) => state.style(theme.ok()),
        s if member_failed(s) => state.style(theme.warn()),
        _ => state,
    };
    vec![
        Item::new(&member.id),
        Item::new(&member.queue),
        state,
        Item::new(member_detail(&member.state).unwrap_or_default()),
    ]
}
