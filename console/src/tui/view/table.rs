//! The table every list screen uses: columns laid out from their content
//! and the room there is ([`layout`]), a header that is never cut, the `▶`
//! selection marker and a message in place of an empty table.
//!
//! Views hand over whole cell texts and say what kind of column each is;
//! only this module decides widths and cuts, so every screen cuts the same
//! way: names in the middle (distinct ends survive), free text at the end,
//! job ids at the front (the random tail of a ULID survives), always with
//! `…`.

use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Text};
use ratatui::widgets::{Block, Cell, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use crate::text::{inert, truncate, truncate_middle};
use crate::tui::theme::{Theme, SELECTED_MARKER};

/// A name column shrinks to this many characters before any optional
/// column is dropped (enough to tell `tenant-…invoices` from `…refunds`).
const NAME_FLOOR: usize = 16;
/// Only when the optional columns are gone do names and free text shrink
/// further, to this.
const HARD_FLOOR: usize = 10;
/// A free-text column keeps this many characters before names shrink.
const TEXT_FLOOR: usize = 20;
/// A job id keeps its last 12 characters (the random part of a ULID) and
/// the `…` before them.
const ID_FLOOR: usize = 13;

/// How a column gives up room when the terminal is narrow. Columns give it
/// up in this order: ids (the detail shows the whole id), text, drawn,
/// names; whole columns never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Never cut: numbers, times, states. As wide as its widest cell.
    Whole,
    /// Free text (an error): cut at the end, the first to shrink, and the
    /// one that takes whatever room is left over.
    Text,
    /// Drawn to the width it gets, between `min` and `max` (a sparkline).
    Drawn {
        /// Narrowest.
        min: u16,
        /// Widest.
        max: u16,
    },
    /// A job id: whole when there is room, else its last characters.
    Id,
    /// A name (queue, job type, host, worker): cut in the middle, and the
    /// last to shrink.
    Name,
}

/// One column of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The header, never cut.
    pub header: &'static str,
    /// How it shrinks.
    pub fit: Fit,
    /// Right-aligned, header included (numbers).
    pub right: bool,
    /// Left out when even the narrowest widths do not fit; lower ranks go
    /// first. `None`: always shown.
    pub optional: Option<u8>,
    /// The list is sorted by this column: ▲ or ▼ after its header.
    pub sorted: Option<&'static str>,
}

impl Column {
    const fn new(header: &'static str, fit: Fit) -> Column {
        Column {
            header,
            fit,
            right: false,
            optional: None,
            sorted: None,
        }
    }

    /// A column never cut.
    pub const fn whole(header: &'static str) -> Column {
        Column::new(header, Fit::Whole)
    }

    /// A right-aligned column of numbers, never cut.
    pub const fn number(header: &'static str) -> Column {
        Column::new(header, Fit::Whole).right()
    }

    /// A name column.
    pub const fn name(header: &'static str) -> Column {
        Column::new(header, Fit::Name)
    }

    /// A free-text column.
    pub const fn text(header: &'static str) -> Column {
        Column::new(header, Fit::Text)
    }

    /// A job id column.
    pub const fn id(header: &'static str) -> Column {
        Column::new(header, Fit::Id)
    }

    /// A column drawn to its width.
    pub const fn drawn(header: &'static str, min: u16, max: u16) -> Column {
        Column::new(header, Fit::Drawn { min, max })
    }

    /// Right-aligned.
    pub const fn right(mut self) -> Column {
        self.right = true;
        self
    }

    /// May be left out at narrow widths (lower ranks first).
    pub const fn optional(mut self, rank: u8) -> Column {
        self.optional = Some(rank);
        self
    }

    fn header_width(&self) -> usize {
        self.header.chars().count() + self.sorted.map_or(0, |arrow| arrow.chars().count())
    }

    /// The header as drawn, with the sort's arrow.
    fn header_text(&self) -> String {
        format!("{}{}", self.header, self.sorted.unwrap_or(""))
    }

    /// The narrowest it gets before optional columns are dropped.
    fn floor(&self, want: usize) -> usize {
        let floor = match self.fit {
            Fit::Whole => want,
            Fit::Text => want.min(TEXT_FLOOR),
            Fit::Drawn { min, .. } => min as usize,
            Fit::Id => want.min(ID_FLOOR),
            Fit::Name => want.min(NAME_FLOOR),
        };
        floor.max(self.header_width())
    }

    /// The narrowest it ever gets.
    fn hard_floor(&self, want: usize) -> usize {
        match self.fit {
            Fit::Name | Fit::Text => want.min(HARD_FLOOR).max(self.header_width()),
            _ => self.floor(want),
        }
    }
}

/// A cell's content: text (made inert here, so no view can forget), or
/// something drawn to the width the column gets.
pub enum Content<'a> {
    /// Text, cut by the column's rule.
    Text(String),
    /// Drawn to the given width.
    Drawn(Box<dyn Fn(usize) -> String + 'a>),
}

/// One cell of a list.
pub struct Item<'a> {
    content: Content<'a>,
    style: Style,
}

impl<'a> Item<'a> {
    /// A text cell. Text from Redis is made inert here.
    pub fn new(text: impl AsRef<str>) -> Item<'a> {
        Item {
            content: Content::Text(inert(text.as_ref())),
            style: Style::default(),
        }
    }

    /// A number with grouped digits.
    pub fn number(n: u64) -> Item<'a> {
        Item::new(group_digits(n))
    }

    /// A cell drawn to its column's width.
    pub fn drawn(draw: impl Fn(usize) -> String + 'a) -> Item<'a> {
        Item {
            content: Content::Drawn(Box::new(draw)),
            style: Style::default(),
        }
    }

    /// With a style.
    pub fn style(mut self, style: Style) -> Item<'a> {
        self.style = style;
        self
    }

    fn width(&self) -> usize {
        match &self.content {
            Content::Text(t) => t.chars().count(),
            Content::Drawn(_) => 0,
        }
    }

    fn cell(&self, column: &Column, width: usize) -> Cell<'a> {
        let text = match &self.content {
            Content::Drawn(draw) => draw(width),
            Content::Text(t) => match column.fit {
                Fit::Whole | Fit::Drawn { .. } => t.clone(),
                Fit::Text => truncate(t, width),
                Fit::Name => truncate_middle(t, width),
                Fit::Id => keep_tail(t, width),
            },
        };
        let line = Line::from(text);
        let line = if column.right {
            line.right_aligned()
        } else {
            line
        };
        Cell::from(line).style(self.style)
    }
}

/// `…` and the last characters of `text`, at most `width` in all.
fn keep_tail(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width || width == 0 {
        return text.chars().take(width).collect();
    }
    let tail: String = text.chars().skip(n + 1 - width).collect();
    format!("…{tail}")
}

/// A list to draw.
pub struct List<'a> {
    /// Block title.
    pub title: String,
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows, one item per column.
    pub rows: Vec<Vec<Item<'a>>>,
    /// The selected row.
    pub selected: usize,
    /// What to say when there are no rows (one or more lines).
    pub empty: Vec<String>,
}

/// Widths for `columns` in `room` characters (the spacing of one between
/// columns included), each wanting `wants[i]`; `None` for a column left
/// out. Every column first gets what its widest cell wants. When that is
/// too wide, columns shrink in [`Fit`] order (ids, text, drawn, names; the
/// widest first within each), each to its floor; then optional columns are
/// dropped, lowest rank first; then names and text share a last cut. Room
/// freed by a drop goes back (names first), and what is left over goes to
/// the last text column. No column gets narrower than its header.
pub fn layout(room: usize, columns: &[Column], wants: &[usize]) -> Vec<Option<u16>> {
    let wants: Vec<usize> = columns
        .iter()
        .zip(wants)
        .map(|(c, w)| {
            match c.fit {
                Fit::Drawn { max, .. } => max as usize,
                _ => *w,
            }
            .max(c.header_width())
        })
        .collect();
    let mut width = wants.clone();
    let mut shown = vec![true; columns.len()];
    let total = |width: &[usize], shown: &[bool]| -> usize {
        let n = shown.iter().filter(|s| **s).count();
        let sum: usize = (0..width.len())
            .filter(|i| shown[*i])
            .map(|i| width[i])
            .sum();
        sum + n.saturating_sub(1)
    };
    let order = [
        |f: Fit| f == Fit::Id,
        |f: Fit| f == Fit::Text,
        |f: Fit| matches!(f, Fit::Drawn { .. }),
        |f: Fit| f == Fit::Name,
    ];
    for is in order {
        let over = total(&width, &shown).saturating_sub(room);
        let pick: Vec<usize> = (0..columns.len()).filter(|i| is(columns[*i].fit)).collect();
        shrink(&mut width, over, &pick, |i| columns[i].floor(wants[i]));
    }
    while total(&width, &shown) > room {
        let drop = (0..columns.len())
            .filter(|i| shown[*i])
            .filter_map(|i| columns[i].optional.map(|rank| (rank, i)))
            .min();
        let Some((_, i)) = drop else { break };
        shown[i] = false;
    }
    // Last resort: names and free text share the cut, widest first.
    let over = total(&width, &shown).saturating_sub(room);
    let cut: Vec<usize> = (0..columns.len())
        .filter(|i| shown[*i] && matches!(columns[*i].fit, Fit::Name | Fit::Text))
        .collect();
    shrink(&mut width, over, &cut, |i| columns[i].hard_floor(wants[i]));
    for is in order.iter().rev() {
        let spare = room.saturating_sub(total(&width, &shown));
        let pick: Vec<usize> = (0..columns.len())
            .filter(|i| shown[*i] && is(columns[*i].fit))
            .collect();
        grow(&mut width, spare, &pick, |i| wants[i]);
    }
    let spare = room.saturating_sub(total(&width, &shown));
    if let Some(last_text) = (0..columns.len())
        .rev()
        .find(|i| shown[*i] && columns[*i].fit == Fit::Text)
    {
        width[last_text] += spare;
    }
    (0..columns.len())
        .map(|i| shown[i].then(|| width[i].min(u16::MAX as usize) as u16))
        .collect()
}

/// Take `over` characters from the `pick`ed columns, widest first, none
/// below its floor.
fn shrink(width: &mut [usize], mut over: usize, pick: &[usize], floor: impl Fn(usize) -> usize) {
    while over > 0 {
        let widest = pick
            .iter()
            .copied()
            .filter(|i| width[*i] > floor(*i))
            .max_by_key(|i| (width[*i], usize::MAX - i));
        let Some(i) = widest else { return };
        width[i] -= 1;
        over -= 1;
    }
}

/// Give `spare` characters back to the `pick`ed columns, narrowest first,
/// none above what it wants.
fn grow(width: &mut [usize], mut spare: usize, pick: &[usize], want: impl Fn(usize) -> usize) {
    while spare > 0 {
        let narrowest = pick
            .iter()
            .copied()
            .filter(|i| width[*i] < want(*i))
            .min_by_key(|i| (width[*i], *i));
        let Some(i) = narrowest else { return };
        width[i] += 1;
        spare -= 1;
    }
}

/// Draw a list sorted by `sort` (the state sorted its rows already): the
/// sorted column's header shows ▲ or ▼.
pub fn draw_sorted(
    frame: &mut Frame,
    area: Rect,
    mut list: List<'_>,
    theme: &Theme,
    sort: Option<crate::tui::state::sort::Sort>,
) {
    if let Some(sort) = sort {
        for column in list.columns.iter_mut().filter(|c| c.header == sort.column) {
            column.sorted = Some(sort.arrow());
        }
    }
    draw(frame, area, list, theme);
}

/// Draw a list.
pub fn draw(frame: &mut Frame, area: Rect, list: List<'_>, theme: &Theme) {
    let selected = Some(list.selected);
    draw_with(frame, area, list, theme, selected);
}

/// Draw a list that holds no selection (one of two lists on a screen,
/// where the other has it); `list.selected` is ignored.
pub fn draw_unselected(frame: &mut Frame, area: Rect, list: List<'_>, theme: &Theme) {
    draw_with(frame, area, list, theme, None);
}

fn draw_with(
    frame: &mut Frame,
    area: Rect,
    list: List<'_>,
    theme: &Theme,
    selected: Option<usize>,
) {
    let block = Block::bordered().title(Line::styled(list.title, theme.header()));
    let inner = block.inner(area);
    let marker = SELECTED_MARKER.chars().count();
    let room = (inner.width as usize).saturating_sub(marker);
    let wants: Vec<usize> = (0..list.columns.len())
        .map(|c| {
            list.rows
                .iter()
                .filter_map(|r| r.get(c))
                .map(Item::width)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let widths = layout(room, &list.columns, &wants);
    let shown: Vec<(usize, u16)> = widths
        .iter()
        .enumerate()
        .filter_map(|(i, w)| w.map(|w| (i, w)))
        .collect();
    let constraints: Vec<Constraint> = shown.iter().map(|(_, w)| Constraint::Length(*w)).collect();
    let header = Row::new(shown.iter().map(|(i, _)| {
        let column = &list.columns[*i];
        let line = Line::from(column.header_text());
        Cell::from(if column.right {
            line.right_aligned()
        } else {
            line
        })
    }))
    .style(theme.header());
    if list.rows.is_empty() {
        frame.render_widget(block, area);
        let table = Table::new(Vec::<Row>::new(), constraints)
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
    let rows: Vec<Row> = list
        .rows
        .iter()
        .map(|items| {
            Row::new(shown.iter().map(|(i, w)| match items.get(*i) {
                Some(item) => item.cell(&list.columns[*i], *w as usize),
                None => Cell::from(""),
            }))
        })
        .collect();
    let table = Table::new(rows, constraints)
        .header(header)
        .block(block)
        .row_highlight_style(theme.selected())
        .highlight_spacing(HighlightSpacing::Always)
        .highlight_symbol(SELECTED_MARKER);
    let mut table_state = TableState::default().with_selected(selected);
    frame.render_stateful_widget(table, area, &mut table_state);
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

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

    /// Add the column's cell for a job in `namespace` to a row's items.
    pub fn cells<'a>(&self, mut items: Vec<Item<'a>>, namespace: &str) -> Vec<Item<'a>> {
        if !self.shards.is_empty() {
            let index = crate::aggregate::shard_index(self.shards, namespace)
                .map(|i| i.to_string())
                .unwrap_or_else(|| "?".into());
            items.insert(1, Item::new(index));
        }
        items
    }

    /// Add the column to a list's columns.
    pub fn add_to(&self, list: &mut List<'_>) {
        if !self.shards.is_empty() {
            list.columns.insert(1, Column::number("SHARD"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queues() -> Vec<Column> {
        vec![
            Column::name("QUEUE"),
            Column::number("WAITING"),
            Column::drawn("DONE 15m", 9, 30).optional(1),
            Column::text("ERROR"),
        ]
    }

    #[test]
    fn room_to_spare_gives_every_column_what_it_wants() {
        let w = layout(100, &queues(), &[41, 3, 0, 10]);
        // The text column takes what is left over.
        assert_eq!(
            w,
            vec![Some(41), Some(7), Some(30), Some(100 - 41 - 7 - 30 - 3)]
        );
    }

    #[test]
    fn text_then_drawn_give_up_room_before_names() {
        let w = layout(80, &queues(), &[41, 3, 0, 30]);
        assert_eq!(w, vec![Some(41), Some(7), Some(9), Some(20)]);
        let w = layout(60, &queues(), &[41, 3, 0, 30]);
        assert_eq!(w, vec![Some(21), Some(7), Some(9), Some(20)]);
    }

    #[test]
    fn optional_columns_go_before_names_shrink_past_their_floor() {
        // 16 + 7 + 9 + 20 + 3 = 55 does not fit 50: the sparkline goes
        // and the name gets the room back.
        let w = layout(50, &queues(), &[41, 3, 0, 30]);
        assert_eq!(w, vec![Some(21), Some(7), None, Some(20)]);
    }

    #[test]
    fn no_header_is_cut() {
        let columns = [Column::name("A LONG HEADER"), Column::number("N")];
        let w = layout(10, &columns, &[3, 1]);
        assert_eq!(w, vec![Some(13), Some(1)]);
    }

    #[test]
    fn ids_keep_their_tail() {
        assert_eq!(keep_tail("01JDQ2X7K5M3N8P9R2S4T6V8W0", 13), "…P9R2S4T6V8W0");
        assert_eq!(keep_tail("short", 13), "short");
    }
}
