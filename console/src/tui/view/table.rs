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
/// names; whole columns never do (they are left out instead, see
/// [`layout`]).
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
    /// Never dropped to make room (a warning badge): other columns go
    /// first, even ones not `optional`.
    pub kept: bool,
}

impl Column {
    const fn new(header: &'static str, fit: Fit) -> Column {
        Column {
            header,
            fit,
            right: false,
            optional: None,
            sorted: None,
            kept: false,
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

    /// Kept whatever the width: what a narrow terminal must still show
    /// (the Queues screen's badges), other columns going first.
    pub const fn kept(mut self) -> Column {
        self.kept = true;
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
                // Only the last cut of a lone first column (see
                // [`layout`]) leaves these narrower than their text.
                Fit::Whole | Fit::Drawn { .. } | Fit::Text => truncate(t, width),
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
/// the last text column. Down to there no column is narrower than its
/// header, and a cut cell ends (or, for names and ids, holds) a `…`.
///
/// The widths never add up to more than `room`: were they to, ratatui
/// would squeeze columns as it likes, clipping names and headers with no
/// `…` (a queue `thumbnails` read `thumbna`). So when even that is too
/// wide, whole columns go, from the right: first those that are not names
/// or text, then those, never the first column nor a [`Column::kept`] one
/// (a warning badge); a dropped column is seen missing, a clipped one is
/// not. Only a first column alone too wide for `room` is cut, header and
/// all.
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
    // Still too wide: whole columns go, from the right, numbers and other
    // uncut columns before names and text; never the first or a kept one.
    for names_too in [false, true] {
        while total(&width, &shown) > room {
            let drop = (1..columns.len()).rev().find(|i| {
                shown[*i]
                    && !columns[*i].kept
                    && (names_too || !matches!(columns[*i].fit, Fit::Name | Fit::Text))
            });
            let Some(i) = drop else { break };
            shown[i] = false;
        }
    }
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
    // Kept columns and the first one alone did not fit: kept ones go too,
    // from the right, and the first is cut.
    while total(&width, &shown) > room {
        let Some(i) = (1..columns.len()).rev().find(|i| shown[*i]) else {
            break;
        };
        shown[i] = false;
    }
    let over = total(&width, &shown).saturating_sub(room);
    if let Some(first) = (0..columns.len()).find(|i| shown[*i]) {
        width[first] = width[first].saturating_sub(over);
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
    let header = Row::new(shown.iter().map(|(i, w)| {
        let column = &list.columns[*i];
        let line = Line::from(truncate(&column.header_text(), *w as usize));
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
        assert_eq!(layout(15, &columns, &[3, 1]), vec![Some(13), Some(1)]);
        // A column goes rather than a header being cut...
        assert_eq!(layout(14, &columns, &[3, 1]), vec![Some(13), None]);
        // ...until the first column alone is too wide for the room.
        assert_eq!(layout(10, &columns, &[3, 1]), vec![Some(10), None]);
    }

    /// The Queues screen's columns at the review's incident (DUE and HELD
    /// shown, LAPSED too), ranked as `queues.rs` ranks them, and its
    /// badge, kept.
    fn incident_queues() -> Vec<Column> {
        vec![
            Column::name("QUEUE"),
            Column::number("WAITING"),
            Column::number("SCHED").optional(4),
            Column::number("DUE").optional(9),
            Column::number("LEASED"),
            Column::number("HELD").optional(6),
            Column::number("LAPSED").optional(3),
            Column::number("DEAD"),
            Column::number("DONE/S").optional(7),
            Column::number("FAIL/S").optional(8),
            Column::drawn("DONE 15m", 9, 30).optional(2),
            Column::drawn("FAILED 15m", 9, 30).optional(1),
            Column::number("OLDEST"),
            Column::whole("").kept(),
        ]
    }

    fn total(widths: &[Option<u16>]) -> usize {
        let shown: Vec<usize> = widths.iter().flatten().map(|w| *w as usize).collect();
        shown.iter().sum::<usize>() + shown.len().saturating_sub(1)
    }

    /// 80 columns less the borders and the `▶ ` marker.
    const ROOM_AT_80: usize = 80 - 2 - 2;

    #[test]
    fn at_80_columns_the_queue_name_and_the_badge_survive_within_the_room() {
        // thumbnails, with "LAPSED NO WORKER": the widths added up to 83
        // in 76 and ratatui clipped QUEUE, LEASED and the badge.
        let wants = [10, 1, 1, 1, 1, 1, 1, 2, 1, 1, 0, 0, 3, 16];
        let w = layout(ROOM_AT_80, &incident_queues(), &wants);
        assert!(total(&w) <= ROOM_AT_80, "{w:?}");
        assert_eq!(w[0], Some(10), "the name whole: {w:?}");
        assert_eq!(w[13], Some(16), "the badge whole: {w:?}");
        // What an operator needs least went, by its rank; the rest stayed
        // whole, headers and all.
        for (i, gone) in [(2, "SCHED"), (5, "HELD"), (6, "LAPSED"), (10, ""), (11, "")] {
            assert_eq!(w[i], None, "{gone}: {w:?}");
        }
        for i in [1, 3, 4, 7, 8, 9, 12] {
            let header = incident_queues()[i].header_width();
            assert!(w[i].is_some_and(|w| w as usize >= header), "{i}: {w:?}");
        }
    }

    #[test]
    fn a_longer_badge_takes_more_numbers_but_never_the_name() {
        let wants = [20, 1, 1, 1, 1, 1, 1, 2, 1, 1, 0, 0, 3, 27];
        let w = layout(ROOM_AT_80, &incident_queues(), &wants);
        assert!(total(&w) <= ROOM_AT_80, "{w:?}");
        assert_eq!(w[13], Some(27), "{w:?}");
        assert!(w[0].is_some_and(|w| w >= 10), "{w:?}");
        // DONE/S went before FAIL/S, FAIL/S before DUE.
        assert_eq!(w[8], None, "{w:?}");
    }

    #[test]
    fn the_widths_never_add_up_to_more_than_the_room() {
        let sets: Vec<(Vec<Column>, Vec<usize>)> = vec![
            (
                incident_queues(),
                vec![41, 9, 9, 9, 9, 9, 9, 9, 5, 5, 0, 0, 7, 27],
            ),
            (queues(), vec![41, 3, 0, 30]),
            (
                vec![
                    Column::whole("TIME"),
                    Column::name("KIND"),
                    Column::id("JOB"),
                    Column::number("FAILED").optional(2),
                    Column::name("WHO").optional(3),
                    Column::text("WHAT"),
                ],
                vec![8, 12, 26, 1, 18, 60],
            ),
            (
                vec![Column::whole("A LONG HEADER"), Column::number("N")],
                vec![3, 1],
            ),
        ];
        for (columns, wants) in sets {
            for room in 0..200 {
                let w = layout(room, &columns, &wants);
                assert!(total(&w) <= room, "{room}: {w:?}");
                assert!(w[0].is_some(), "the first column stays: {room}: {w:?}");
            }
        }
    }

    #[test]
    fn whole_columns_go_from_the_right_before_names_when_nothing_else_is_left() {
        let columns = [
            Column::name("QUEUE"),
            Column::number("WAITING"),
            Column::name("HOLDER"),
            Column::number("TRIES"),
            Column::whole("").kept(),
        ];
        // 10 + 7 + 10 + 5 + 9 + 4 = 45 > 40: TRIES goes, then WAITING.
        let w = layout(40, &columns, &[30, 1, 30, 3, 9]);
        assert_eq!(w[3], None, "{w:?}");
        assert_eq!(w[4], Some(9), "kept: {w:?}");
        assert!(total(&w) <= 40, "{w:?}");
        // Too narrow even for the first column: it alone is cut.
        let w = layout(4, &columns, &[30, 1, 30, 3, 9]);
        assert_eq!(w, vec![Some(4), None, None, None, None]);
    }

    #[test]
    fn a_cut_cell_shows_its_ellipsis() {
        let name = Column::name("QUEUE");
        let text = Column::text("WHAT");
        let whole = Column::whole("OLDEST");
        let shown = |item: Item, column: &Column, width: usize| {
            let mut buffer = ratatui::buffer::Buffer::empty(Rect::new(0, 0, width as u16, 1));
            let row = Row::new([item.cell(column, width)]);
            ratatui::widgets::Widget::render(
                Table::new([row], [Constraint::Length(width as u16)]),
                buffer.area,
                &mut buffer,
            );
            (0..width as u16)
                .map(|x| buffer[(x, 0)].symbol().to_owned())
                .collect::<String>()
        };
        assert_eq!(shown(Item::new("thumbnails"), &name, 7), "thu…ils");
        assert_eq!(shown(Item::new("thumbnails"), &name, 10), "thumbnails");
        assert_eq!(shown(Item::new("HTTP 503 from x"), &text, 9), "HTTP 503…");
        // Only the last cut makes an uncut column narrower than its text.
        assert_eq!(shown(Item::new("3h2m"), &whole, 3), "3h…");
    }

    #[test]
    fn ids_keep_their_tail() {
        assert_eq!(keep_tail("01JDQ2X7K5M3N8P9R2S4T6V8W0", 13), "…P9R2S4T6V8W0");
        assert_eq!(keep_tail("short", 13), "short");
    }
}
