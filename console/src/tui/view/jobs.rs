//! A queue's jobs by state (paged), and the detail of one job.

use std::time::SystemTime;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use redq::JobState;

use super::facts;
use super::table::{self, Column, Item, List};
use crate::clock;
use crate::text::inert;
use crate::tui::detail_text::view_lines;
use crate::tui::state::{Detail, JobsView, State, JOBS_PAGE};
use crate::tui::theme::Theme;

pub fn render(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    view: &JobsView,
    theme: &Theme,
    now: SystemTime,
) {
    let q = &view.query;
    let counts = state
        .data
        .queues
        .iter()
        .find(|r| r.counts.queue == q.queue)
        .map(|r| &r.counts);
    let [states, list_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(area);
    let mut spans = vec![Span::styled(
        format!(" {} ", inert(&q.queue)),
        theme.header(),
    )];
    if let Some(words) = counts.and_then(super::facts::pause_of) {
        spans.push(Span::styled(
            format!("{} ", words.to_uppercase()),
            theme.warn(),
        ));
    }
    for s in state.job_states(&q.queue, q.state) {
        let n = counts.map(|c| c.in_state(s)).unwrap_or(0);
        let label = format!(" {s} {n} ");
        spans.push(if s == q.state {
            Span::styled(label, theme.tab_active())
        } else {
            Span::styled(label, theme.dim())
        });
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), states);

    let page = state.data.jobs.as_ref().filter(|p| p.query == *q);
    let shard = table::ShardColumn::new(&state.settings.shards);
    let loaded = page.map(|p| p.page.items.len()).unwrap_or(0);
    let items = state.visible_jobs();
    let total = page.map(|p| p.page.total).unwrap_or(0);
    let when_header = match q.state {
        JobState::Scheduled => "DUE",
        JobState::Leased => "LEASE LEFT",
        JobState::Dead => "DIED",
        JobState::Completed | JobState::Cancelled => "FINISHED",
        _ => "ENQUEUED",
    };
    // Held jobs wait for room under their limit key: the key says which.
    let held = q.state == JobState::Held;
    // Awaiting jobs wait on a gate (batch, dependencies, tree): its id says
    // which (screen 8 shows it).
    let awaiting = q.state == JobState::Awaiting;
    // Blocked jobs wait behind their ordering key's holder: the key says
    // which.
    let blocked = q.state == JobState::Blocked;
    let rows = items
        .iter()
        .map(|job| {
            let when = match q.state {
                // Past its time, a scheduled job waits for a claim to move
                // it: "in 0s" would hide that none came (no worker left).
                JobState::Scheduled => job.due_at.map(|at| match at.duration_since(now) {
                    Ok(_) => clock::relative(at, now),
                    Err(_) => format!("due {}", clock::relative(at, now)),
                }),
                JobState::Leased => job.lease_expires_at.map(|at| match at.duration_since(now) {
                    Ok(left) => clock::compact(left),
                    Err(_) => "LAPSED".to_owned(),
                }),
                JobState::Dead => job.died_at.map(|at| clock::short(at, now)),
                JobState::Completed | JobState::Cancelled => {
                    job.finished_at.map(|at| clock::short(at, now))
                }
                _ => Some(format!(
                    "{} ago",
                    clock::compact(clock::age(job.enqueued_at, now))
                )),
            }
            .unwrap_or_else(|| "—".into());
            let mut cells = vec![
                Item::new(&job.id),
                Item::new(job.name.as_deref().unwrap_or("—")),
            ];
            if held {
                cells.push(Item::new(job.limit_key.as_deref().unwrap_or("—")));
            }
            if awaiting {
                cells.push(Item::new(job.awaits.as_deref().unwrap_or("—")));
            }
            if blocked {
                cells.push(Item::new(job.ordering_key.as_deref().unwrap_or("—")));
            }
            cells.extend([
                Item::new(facts::priority_of(job)),
                Item::new(facts::tries_of(job)),
                Item::new(when),
                Item::new(job.last_error.as_deref().unwrap_or("")),
            ]);
            shard.cells(cells, &job.namespace)
        })
        .collect::<Vec<_>>();
    let pages = total.div_ceil(JOBS_PAGE as u64).max(1);
    let first = if loaded == 0 { 0 } else { q.offset + 1 };
    let mut title = if loaded == 0 {
        format!(" {} jobs: none on this page ({total} in all)", q.state)
    } else {
        format!(
            " {} jobs {first}–{} of {total} (page {} of {pages})",
            q.state,
            q.offset + loaded as u64,
            q.offset / JOBS_PAGE as u64 + 1,
        )
    };
    if !view.filter.is_empty() {
        title.push_str(&format!(
            ", {} on this page matching \"{}\"",
            items.len(),
            inert(&view.filter)
        ));
    }
    title.push(' ');
    let empty = if page.is_none() {
        vec![super::not_loaded(state, "jobs")]
    } else if loaded > 0 {
        vec![
            "no job on this page matches the filter".to_owned(),
            "Esc clears it; PgUp/PgDn search other pages".to_owned(),
        ]
    } else if held {
        vec![
            "no held jobs".to_owned(),
            "jobs wait here while their limit key has no room (see screen 7)".to_owned(),
        ]
    } else if awaiting {
        vec![
            "no awaiting jobs".to_owned(),
            "jobs wait here for their batch, dependencies or children (see screen 8)".to_owned(),
        ]
    } else if blocked {
        vec![
            "no blocked jobs".to_owned(),
            "jobs wait here behind an earlier job with the same ordering key".to_owned(),
        ]
    } else {
        vec![format!("no {} jobs", q.state)]
    };
    let mut columns = vec![Column::id("JOB"), Column::name("NAME")];
    if held {
        columns.push(Column::name("KEY"));
    }
    if awaiting {
        columns.push(Column::id("AWAITS"));
    }
    if blocked {
        columns.push(Column::name("ORDERING"));
    }
    columns.extend([
        Column::number("PRIO"),
        Column::number("TRIES"),
        Column::whole(when_header),
        Column::text("LAST ERROR"),
    ]);
    let mut list = List {
        title,
        columns,
        rows,
        selected: view.cursor.index,
        empty,
    };
    shard.add_to(&mut list);
    table::draw(frame, list_area, list, theme);
}

pub fn detail(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    detail: &Detail,
    theme: &Theme,
    now: SystemTime,
) {
    let job = &detail.record;
    let lines: Vec<Line> = view_lines(detail, &state.settings.shards, now)
        .into_iter()
        .map(|l| match l.as_str() {
            "error" | "payload" | "result" => Line::styled(l, theme.header()),
            _ if l.starts_with("log (last ") => Line::styled(l, theme.header()),
            _ => Line::from(l),
        })
        .collect();
    let state_name = match &detail.finished {
        Some(kept) => kept.outcome.as_str().to_owned(),
        None if detail.gone => "gone".to_owned(),
        None => job.state.to_string(),
    };
    let block = Block::bordered().title(Line::styled(
        format!(" {state_name} job {} ", inert(&job.id)),
        theme.header(),
    ));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .scroll((detail.scroll, 0)),
        area,
    );
}
