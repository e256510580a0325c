//! The Workflows screen (key 8) and the view of one gate, rendered from the
//! fixture's gates at the sizes an operator uses: what waits on what, and
//! why; and the keys that cancel a gate or decide a held job.

use crate::common::*;
use crate::views::{assert_headers_whole, line_with, screen_text, with};
use redq::JobState;
use redq_console::tui::state::{
    Action, Command, GatePage, GateQuery, Mutation, Screen, State, Update, View,
};

const HEADERS: [&str; 7] = ["GATE", "KIND", "STATE", "DONE", "FAILED", "WAITERS", "IDLE"];

#[test]
fn the_workflows_screen_lists_gates_with_progress_and_decisions() {
    let state = with(&[Action::Show(Screen::Workflows)]);
    for (w, h) in [(140, 42), (100, 30), (80, 24)] {
        let text = screen_text(&state, w, h);
        assert_headers_whole(&text, &HEADERS);
        let receipt = line_with(&text, "deps");
        assert!(
            receipt.contains("done") && receipt.contains("1/1") && receipt.contains("held"),
            "{receipt}"
        );
        let batch = line_with(&text, "4/6");
        assert!(
            batch.contains("batch") && batch.contains("sealed") && batch.contains("2 pending"),
            "{batch}"
        );
        assert!(line_with(&text, "tree").contains("2/3"), "{text}");
        assert!(line_with(&text, "1000/1000").contains("released"), "{text}");
        assert!(text.contains("8 Workflows"), "the tab is not cut: {text}");
        insta::assert_snapshot!(format!("workflows_{w}x{h}"), text);
    }
    let wide = screen_text(&state, 140, 42);
    assert!(line_with(&wide, "4/6").contains("order.created fan-out"));
}

/// The Workflows screen with the batch open and its members page loaded.
fn batch_open() -> State {
    batch_open_with(batch_members())
}

/// The same with this members page.
fn batch_open_with(members: redq::workflow::MemberPage) -> State {
    let mut state = with(&[Action::Show(Screen::Workflows), Action::Down, Action::Open]);
    let View::Gate(view) = &state.view else {
        panic!("Enter opened no gate: {:?}", state.view);
    };
    assert_eq!(view.query.id, BATCH);
    let mut snap = snapshot();
    snap.gates = None;
    snap.gate = Some(GatePage {
        query: view.query.clone(),
        gate: gates().into_iter().find(|g| g.id == BATCH),
        members,
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snap),
        received_at: now(),
    }));
    state
}

#[test]
fn a_gate_shows_its_counts_its_waiters_and_why_and_its_members() {
    let state = batch_open();
    assert_eq!(state.screen(), Screen::Workflows, "the tab stays lit");
    for (w, h) in [(140, 42), (100, 30), (80, 24)] {
        let text = screen_text(&state, w, h);
        assert!(
            text.contains("4 of 6 finished (3 succeeded, 1 failed), 2 pending"),
            "{text}"
        );
        assert!(text.contains("first failure:"), "{text}");
        let complete = line_with(&text, "all finished");
        assert!(complete.contains("waiting for 2 of 6"), "{complete}");
        assert!(
            line_with(&text, "all succeeded").contains("cancel"),
            "{text}"
        );
        assert_headers_whole(
            &text,
            &["WAITER", "QUEUE", "RELEASED IF", "ON FAILURE", "WHY"],
        );
        assert_headers_whole(&text, &["MEMBER", "QUEUE", "STATE", "RESULT / ERROR"]);
        assert!(line_with(&text, "0011").contains("completed"), "{text}");
        assert!(line_with(&text, "0014").contains("leased"), "{text}");
        let died = line_with(&text, "0015");
        assert!(died.contains("dead") && died.contains("HTTP 410"), "{died}");
        assert!(!text.contains('\u{1b}'), "the error is drawn inert");
        insta::assert_snapshot!(format!("workflows_gate_{w}x{h}"), text);
    }
    let wide = screen_text(&state, 140, 42);
    assert!(
        line_with(&wide, "0011").contains(r#"{"ms":84,"status":200}"#),
        "{wide}"
    );
    assert!(
        line_with(&wide, "webhooks dead").contains("\\x1b[2J"),
        "{wide}"
    );
    assert!(wide.contains("Members 1–6 of 6 "), "{wide}");
}

#[test]
fn pgdn_asks_for_the_next_members_page_and_pgup_comes_back() {
    let mut first = batch_members();
    first.next = Some(format!("{BATCH}\n01JDQ9M0000000000000000016"));
    let mut state = batch_open_with(first);
    assert!(screen_text(&state, 100, 30).contains("PgDn for more"));
    state.apply(Action::PageDown);
    let View::Gate(view) = &state.view else {
        panic!("{:?}", state.view)
    };
    assert_eq!(
        view.query.cursor,
        format!("{BATCH}\n01JDQ9M0000000000000000016")
    );
    assert!(
        matches!(state.focus(), redq_console::tui::state::Focus::Gate(q) if q == view.query),
        "the source reads the next page"
    );
    state.apply(Action::PageUp);
    let View::Gate(view) = &state.view else {
        panic!("{:?}", state.view)
    };
    assert_eq!(
        view.query,
        GateQuery {
            id: BATCH.into(),
            cursor: String::new()
        }
    );
    state.apply(Action::Back);
    assert_eq!(state.view, View::Screen(Screen::Workflows));
}

#[test]
fn c_asks_before_cancelling_a_gate_and_names_what_it_cancels() {
    let mut state = batch_open();
    state.apply(Action::CancelGate);
    let prompt = state.confirm().expect("c asks first").prompt.clone();
    assert_eq!(
        prompt,
        format!(
            "Cancel batch {BATCH}? Its 2 pending members are cancelled and 2 jobs waiting on \
             it are cancelled too."
        )
    );
    insta::assert_snapshot!("workflows_confirm_cancel", screen_text(&state, 100, 30));
    let sent = press(&mut state, &[Action::Confirm]);
    assert_eq!(
        sent.last(),
        Some(&Command::Mutate(Mutation::CancelGate(BATCH.into())))
    );

    // A gate that is done with a held waiter: c asks to cancel that waiter.
    let state = with(&[Action::Show(Screen::Workflows), Action::CancelGate]);
    let prompt = state.confirm().expect("c asks").prompt.clone();
    assert_eq!(
        prompt,
        format!(
            "Cancel the 1 job held waiting on deps {RECEIPT}? It is done; that job is cancelled."
        )
    );

    // Read-only refuses before asking.
    let mut state = batch_open();
    state.settings.read_only = true;
    state.apply(Action::CancelGate);
    assert!(state.confirm().is_none());
    let said = state
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(
        said.starts_with("read-only: cancelling a workflow refused"),
        "{said}"
    );
}

#[test]
fn r_and_d_decide_a_held_job_after_asking() {
    // The receipt (first row) is held because its charge died.
    let mut state = with(&[Action::Show(Screen::Workflows)]);
    let text = screen_text(&state, 100, 30);
    assert!(line_with(&text, RECEIPT).contains("held"), "{text}");
    state.apply(Action::DecideHeld(true));
    let prompt = state.confirm().expect("r asks first").prompt.clone();
    assert_eq!(
        prompt,
        format!(
            "Release held job {RECEIPT} into emails (held: dependency 01JDQ9C0000000000000000009 \
             dead: card declined for cus_4: insufficient funds)? It runs as if its dependencies \
             had all succeeded."
        )
    );
    let sent = press(&mut state, &[Action::Confirm]);
    assert_eq!(
        sent.last(),
        Some(&Command::Mutate(Mutation::DecideHeld {
            id: RECEIPT.into(),
            release: true
        }))
    );
    state.apply(Action::Received(Update::Finished {
        message: format!("released {RECEIPT}: it enters its queue and runs"),
        ok: true,
    }));
    state.apply(Action::DecideHeld(false));
    assert!(state
        .confirm()
        .expect("d asks first")
        .prompt
        .starts_with(&format!(
            "Dead-letter held job {RECEIPT} of emails (held: dependency"
        )));

    // The batch holds nobody: said, not asked.
    let mut state = batch_open();
    state.apply(Action::DecideHeld(true));
    assert!(state.confirm().is_none());
    let said = state
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(
        said.starts_with(&format!("no job waiting on {BATCH} is held")),
        "{said}"
    );
}

#[test]
fn the_key_8_the_footer_and_help_know_the_workflows_screen() {
    let mut state = with(&[]);
    press(&mut state, &[Action::Show(Screen::Workflows)]);
    assert_eq!(state.screen(), Screen::Workflows);
    let text = screen_text(&state, 80, 24);
    let footer = text.lines().nth(23).unwrap();
    assert!(footer.contains("1-8 screens"), "{footer}");
    assert!(
        footer.contains("c cancel") && footer.contains("r release"),
        "{footer}"
    );
    let gate = screen_text(&batch_open(), 80, 24);
    let footer = gate.lines().nth(23).unwrap();
    assert!(
        footer.contains("1-8 screens") && footer.contains("Esc back"),
        "{footer}"
    );
    let help: Vec<String> = redq_console::tui::input::help_sections()
        .into_iter()
        .filter(|(title, _)| *title == "Workflows")
        .flat_map(|(_, rows)| rows.into_iter().map(|(k, _)| k.to_owned()))
        .collect();
    assert!(help.iter().any(|k| k == "c r d"), "{help:?}");
}

#[test]
fn an_awaiting_job_says_what_it_awaits_and_the_queue_has_an_awaiting_tab() {
    let mut snap = snapshot();
    for row in &mut snap.queues {
        if row.counts.queue == "emails" {
            row.counts.awaiting = 3;
        }
    }
    let mut state = State::new(settings());
    state.apply(Action::Resize(100, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snap.clone()),
        received_at: now(),
    }));
    // emails is the second queue; its awaiting tab comes after held.
    state.apply(Action::Down);
    state.apply(Action::Open);
    while state.jobs().unwrap().query.state != JobState::Awaiting {
        state.apply(Action::NextState);
    }
    let mut waiting = job("01JDQ9W0000000000000000021", "emails", JobState::Awaiting);
    waiting.awaits = Some(BATCH.into());
    snap.jobs = Some(redq_console::tui::state::JobsPage {
        query: state.jobs().unwrap().query.clone(),
        page: redq::Page {
            total: 1,
            items: vec![waiting.clone()],
        },
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snap),
        received_at: now(),
    }));
    let text = screen_text(&state, 100, 30);
    assert!(
        line_with(&text, " waiting ").contains(" awaiting 3"),
        "{text}"
    );
    assert_headers_whole(&text, &["JOB", "NAME", "AWAITS"]);
    insta::assert_snapshot!("awaiting_jobs_of_a_queue", text);

    state.apply(Action::Open);
    let text = screen_text(&state, 100, 30);
    assert!(
        line_with(&text, "awaits").contains("reading its progress"),
        "{text}"
    );
    state.apply(Action::Received(Update::JobAwaits {
        id: waiting.id.clone(),
        gate: gates().into_iter().find(|g| g.id == BATCH).map(Box::new),
    }));
    let text = screen_text(&state, 100, 30);
    assert!(
        line_with(&text, "awaits").contains(&format!(
            "batch {BATCH} (4 of 6 finished): waiting for 2 of 6"
        )),
        "{text}"
    );
}
