//! The table every list screen uses: a bordered block, a header, the `▶`
//! selection marker and a message in place of an empty table.

use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Text};
use ratatui::widgets::{Block, Cell, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use crate::tui::theme::{Theme, SELECTED_MARKER};

/// A list to draw.
pub struct List<'a> {
    /// Block title.
    pub title: String,
    /// Column headers.
    pub header: Vec<&'static str>,
    /// Column widths.
    pub widths: Vec<Constraint>,
    /// The rows.
    pub rows: Vec<Row<'a>>,
    /// The selected row.
    pub selected: usize,
    /// What to say when there are no rows (one or more lines).
    pub empty: Vec<String>,
}

/// Draw a list.
pub fn draw(frame: &mut Frame, area: Rect, list: List<'_>, theme: &Theme) {
    let block = Block::bordered().title(Line::styled(list.title, theme.header()));
    if list.rows.is_empty() {
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let header = Row::new(list.header.iter().map(|h| Cell::from(*h))).style(theme.header());
        let table = Table::new(Vec::<Row>::new(), list.widths.clone())
            .header(header)
            .highlight_spacing(HighlightSpacing::Always)
            .highlight_symbol(SELECTED_MARKER);
        frame.render_widget(table, inner);
        let message_area = Rect {
            y: inner.y + inner.height / 3,
            height: inner.height - inner.height / 3,
            ..inner
        };
        let text = Text::from(
            list.empty
                .into_iter()
                .enumerate()
                .map(|(i, l)| Line::styled(l, if i == 0 { theme.text() } else { theme.dim() }))
                .collect::<Vec<_>>(),
        );
        frame.render_widget(
            Paragraph::new(text)
                .alignment(Alignment::Center)
                .wrap(Wrap { trim: true }),
            message_area,
        );
        return;
    }
    let header = Row::new(list.header.iter().map(|h| Cell::from(*h))).style(theme.header());
    let table = Table::new(list.rows, list.widths)
        .header(header)
        .block(block)
        .row_highlight_style(theme.selected())
        .highlight_spacing(HighlightSpacing::Always)
        .highlight_symbol(SELECTED_MARKER);
    let mut table_state = TableState::default().with_selected(Some(list.selected));
    frame.render_stateful_widget(table, area, &mut table_state);
}

/// A right-aligned number cell.
pub fn num<'a>(n: u64) -> Cell<'a> {
    Cell::from(Line::from(group_digits(n)).alignment(Alignment::Right))
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Terminals at least this wide show job ids in full.
pub const FULL_ID_WIDTH: u16 = 130;

/// The id column: full ULIDs on wide terminals, else their last 12
/// characters (the random part; the detail view shows the full id).
pub fn id_width(area: Rect) -> u16 {
    if area.width >= FULL_ID_WIDTH {
        26
    } else {
        13
    }
}

/// A job id cut to the id column.
pub fn id_cell<'a>(id: &str, width: u16) -> Cell<'a> {
    let id = crate::text::inert(id);
    let n = id.chars().count();
    if n <= width as usize {
        return Cell::from(id);
    }
    let tail: String = id.chars().skip(n + 1 - width as usize).collect();
    Cell::from(format!("…{tail}"))
}

/// Attempts made, out of the most allowed: `3/5`, or `3` when unlimited.
pub fn tries(attempts: u32, max_attempts: u32) -> String {
    match max_attempts {
        0 => attempts.to_string(),
        max => format!("{attempts}/{max}"),
    }
}

/// Width left for the one flexible column of a list drawn in `area` whose
/// other columns are `fixed` wide (borders, marker and spacing included).
pub fn rest_width(area: Rect, fixed: &[u16]) -> usize {
    let taken: u16 = fixed.iter().sum::<u16>() + fixed.len() as u16 + 2 + 2;
    area.width.saturating_sub(taken) as usize
}

/// A worker id (`node-instance`, the registry's form) short enough for a
/// column: long node ids keep their first 8 digits.
pub fn worker_id(node: u64, instance: u32) -> String {
    let node = node.to_string();
    if node.len() > 9 {
        format!("{}…-{instance}", &node[..8])
    } else {
        format!("{node}-{instance}")
    }
}

/// Width of the SHARD column.
const SHARD_WIDTH: u16 = 5;

/// With several shards (`--shards` above 1), job lists get a SHARD column
/// right after the job id: the shard's index (the detail view names its
/// namespace). With one namespace the list is unchanged.
pub struct ShardColumn<'s> {
    shards: &'s [String],
}

impl<'s> ShardColumn<'s> {
    /// The column for the shards the console watches (none: no column).
    pub fn new(shards: &'s [String]) -> ShardColumn<'s> {
        ShardColumn { shards }
    }

    /// Width it takes from the flexible column (with its spacing).
    pub fn taken(&self) -> usize {
        if self.shards.is_empty() {
            0
        } else {
            SHARD_WIDTH as usize + 1
        }
    }

    /// Add the column's cell for a job in `namespace` to a row's cells.
    pub fn cells<'a>(&self, mut cells: Vec<Cell<'a>>, namespace: &str) -> Vec<Cell<'a>> {
        if !self.shards.is_empty() {
            let index = crate::aggregate::shard_index(self.shards, namespace)
                .map(|i| i.to_string())
                .unwrap_or_else(|| "?".into());
            cells.insert(1, Cell::from(Line::from(index).right_aligned()));
        }
        cells
    }

    /// Add the column to a list's header and widths.
    pub fn add_to(&self, list: &mut List<'_>) {
        if !self.shards.is_empty() {
            list.header.insert(1, "SHARD");
            list.widths.insert(1, Constraint::Length(SHARD_WIDTH));
        }
    }
}
