//! `redq record-format [standard|compact|[compact+]detached[:BYTES]]
//! [--check | --rewrite]`: the job record format the namespace's producers
//! write (the driver's `RecordFormat` says why it is a marker an operator
//! sets, not a default), and the way back from it: the records a driver
//! older than the compact and detached formats cannot read, counted or
//! rewritten in the standard layout (`redq::RecordsRewritten`).

use redq::{NewerRecords, RecordFormat, RecordsRewritten};
use serde_json::json;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::tui::state::plural;

/// What to do with the records already written, beside the format.
pub struct Records {
    /// Count those an older driver cannot read (`--check`).
    pub check: bool,
    /// Rewrite them in the standard layout (`--rewrite`).
    pub rewrite: bool,
}

pub async fn run(
    target: &Target,
    set: Option<RecordFormat>,
    records: Records,
    json: bool,
) -> Result<(), Failure> {
    // Refused before anything is written: the rewrite takes records to the
    // standard layout, which another format would go on leaving.
    if let Some(format) = set.filter(|f| records.rewrite && *f != RecordFormat::Standard) {
        return Err(Failure::Usage(format!(
            "--rewrite rewrites records in the standard layout, so it goes with standard \
             (or no format, when it is already standard), not {format}"
        )));
    }
    // Whether this run takes the namespace back to standard, for what the
    // rewrite says after it.
    let switched = match set {
        Some(RecordFormat::Standard) if records.rewrite => {
            target.record_format().await? != RecordFormat::Standard
        }
        _ => false,
    };
    if let Some(format) = set {
        target.set_record_format(format).await?;
        tracing::info!(format = format.name(), "set the record format");
    }
    if records.check {
        return check(target, json).await;
    }
    let rewritten = match records.rewrite {
        true => Some(target.rewrite_records().await?),
        false => None,
    };
    let format = target.record_format().await?;
    if json {
        match rewritten {
            Some(done) => print_json(&json!({ "record_format": format.name(), "rewritten": done })),
            None => print_json(&json!({ "record_format": format.name() })),
        }
        return Ok(());
    }
    if set.is_some() {
        outln!("record format: {format} ({})", what_it_means(format));
    } else {
        outln!("record format: {format}");
    }
    if let Some(done) = rewritten {
        for line in rewrite_lines(done, switched) {
            outln!("{line}");
        }
    }
    Ok(())
}

/// `--check`: the format, and the records an older driver cannot read.
async fn check(target: &Target, json: bool) -> Result<(), Failure> {
    let format = target.record_format().await?;
    let newer = target.newer_records().await?;
    if json {
        print_json(&json!({
            "record_format": format.name(),
            "newer_records": newer,
            "total": newer.total(),
        }));
        return Ok(());
    }
    outln!("record format: {format}");
    outln!("{}", check_line(newer));
    if format != RecordFormat::Standard {
        outln!(
            "producers write {format} records: set standard (and let them reconnect) before \
             an older driver joins"
        );
    }
    Ok(())
}

/// What `--check` found, as a sentence.
fn check_line(newer: NewerRecords) -> String {
    if newer.total() == 0 {
        return "no compact or detached records: a driver older than those formats can read \
                every job here"
            .to_owned();
    }
    let mut line = format!(
        "{} an older driver cannot read: {} compact, {} detached",
        plural(newer.total() as usize, "record"),
        newer.compact,
        newer.detached + newer.leased_detached
    );
    if newer.leased_detached > 0 {
        line.push_str(&format!(
            " ({} of them running jobs', which a rewrite leaves)",
            newer.leased_detached
        ));
    }
    line.push_str(match newer.compact + newer.detached {
        0 => "; they go when those jobs finish",
        _ => "; `redq record-format standard --rewrite` rewrites them",
    });
    line
}

/// What `--rewrite` did, as lines; `switched` when this same run set the
/// format back to standard (producers connected before still write the old
/// one until they reconnect).
fn rewrite_lines(done: RecordsRewritten, switched: bool) -> Vec<String> {
    let mut lines = vec![format!(
        "rewrote {} in the standard layout ({} compact, {} detached)",
        plural((done.compact + done.detached) as usize, "record"),
        done.compact,
        done.detached
    )];
    if done.left_leased > 0 {
        lines.push(format!(
            "left {} of running jobs: run this again once those jobs have finished",
            plural(done.left_leased as usize, "detached record")
        ));
    }
    if switched {
        lines.push(
            "producers connected before the format was set write the old one until they \
             reconnect: `redq record-format --check` counts what is left"
                .to_owned(),
        );
    }
    lines
}

/// What setting `format` changes, for the line that confirms it: from when
/// producers write it and, for any format but standard, that older drivers
/// cannot read it.
fn what_it_means(format: RecordFormat) -> String {
    const FROM_NEXT_CONNECT: &str = "from their next connect";
    const NEWER_ONLY: &str = "every driver on this namespace must be this version or later";
    match format {
        RecordFormat::Standard => format!(
            "producers write it {FROM_NEXT_CONNECT}; compact and detached records already \
             written stay readable"
        ),
        RecordFormat::Compact => format!("producers write it {FROM_NEXT_CONNECT}; {NEWER_ONLY}"),
        RecordFormat::Detached { min_bytes } => format!(
            "producers keep payloads of {min_bytes} bytes or more apart from their records \
             {FROM_NEXT_CONNECT}; {NEWER_ONLY}"
        ),
        RecordFormat::CompactDetached { min_bytes } => format!(
            "producers keep payloads of {min_bytes} bytes or more apart from their records \
             and store the smaller fresh jobs that fit it compact, {FROM_NEXT_CONNECT}; \
             {NEWER_ONLY}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_running_jobs_are_said_to_be_left_by_a_rewrite() {
        let running_only = NewerRecords {
            leased_detached: 2,
            ..NewerRecords::default()
        };
        assert_eq!(
            check_line(running_only),
            "2 records an older driver cannot read: 0 compact, 2 detached (2 of them running \
             jobs', which a rewrite leaves); they go when those jobs finish"
        );
        let done = RecordsRewritten {
            compact: 0,
            detached: 1,
            left_leased: 1,
        };
        assert_eq!(
            rewrite_lines(done, false),
            [
                "rewrote 1 record in the standard layout (0 compact, 1 detached)",
                "left 1 detached record of running jobs: run this again once those jobs have finished",
            ]
        );
        let lines = rewrite_lines(RecordsRewritten::default(), true);
        assert!(
            lines[1].starts_with("producers connected before the format was set"),
            "{lines:?}"
        );
    }
}
