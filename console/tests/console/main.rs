//! The console's tests in one binary: its screens and key bindings from
//! fixed states (no Redis), and the real `redq` binary driven against
//! private servers, in tmux where it draws a terminal.

mod common;
mod live;
mod seed;
mod spawned;

mod bench;
mod canary;
mod cancel_keys;
mod cli_errors;
mod demo_guard;
mod detail_notes;
mod events;
mod events_kinds_cli;
mod events_view;
mod functions_cli;
mod handoffs_lost;
mod jobs;
mod jobs_cancel;
mod jobs_states;
mod jobs_surgery;
mod json_inert;
mod kept_tabs;
mod limits_cli;
mod limits_keys;
mod limits_views;
mod metrics;
mod metrics_histograms;
mod metrics_keys;
mod metrics_show;
mod operator_acts;
mod operator_keys;
mod outage;
mod piped_output;
mod queues_cli;
mod record_format_cli;
mod requeue_attempts;
mod search_keys;
mod search_views;
mod see_keys;
mod see_terminal;
mod see_views;
mod sharded;
mod state_input;
mod subcommands;
mod surgery_keys;
mod terminal;
mod viewer;
mod views;
mod workers_control;
mod workers_json;
mod workers_lost_claims;
mod workflows_cli;
mod workflows_keys;
mod workflows_views;
