//! The Workers screen over shards: a SHARDS column saying which shards list
//! each worker, kept at 80 columns, and a live worker whose heartbeats no
//! longer reach one shard still live, that shard named in its row.

use redq_console::tui::state::{Action, Screen};

use crate::common::*;
use crate::views::screen_text;

#[test]
fn a_worker_one_shard_lost_is_live_and_its_row_names_that_shard() {
    let mut workers = workers();
    workers[0].shards = vec![0, 1, 2];
    // Its record on shard 2 went silent: the merged row stays live.
    workers[1].shards = vec![0, 1, 2];
    workers[1].gone_shards = vec![2];
    let mut state = loaded();
    let mut snapshot = snapshot();
    snapshot.workers = Some(workers);
    state.apply(Action::Received(
        redq_console::tui::state::Update::Snapshot {
            snapshot: Box::new(snapshot),
            received_at: now(),
        },
    ));
    press(&mut state, &[Action::Show(Screen::Workers)]);
    for (width, height) in [(80, 24), (140, 42)] {
        state.apply(Action::Resize(width, height));
        let text = screen_text(&state, width, height);
        assert!(text.contains(" Workers (2) "), "no worker gone: {text}");
        assert!(text.contains("SHARDS"), "{text}");
        let row = |host: &str| text.lines().find(|l| l.contains(host)).unwrap_or("");
        assert!(row("web-1").contains(" 0-2 "), "{text}");
        assert!(row("web-2").contains(" 0,1 (2 gone) "), "{text}");
    }
}
