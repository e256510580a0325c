//! `redq record-format [standard|compact|[compact+]detached[:BYTES]]`: the job record format the
//! namespace's producers write (the driver's `RecordFormat` says why it is
//! a marker an operator sets, not a default).

use redq::RecordFormat;
use serde_json::json;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::print_json;

pub async fn run(target: &Target, set: Option<RecordFormat>, json: bool) -> Result<(), Failure> {
    if let Some(format) = set {
        target.set_record_format(format).await?;
        tracing::info!(format = format.name(), "set the record format");
    }
    let format = target.record_format().await?;
    if json {
        print_json(&json!({ "record_format": format.name() }));
        return Ok(());
    }
    match (set.is_some(), format) {
        (false, _) => println!("record format: {format}"),
        (true, RecordFormat::Compact) => println!(
            "record format: compact (producers write it from their next connect; \
             every driver on this namespace must be this version or later)"
        ),
        (true, RecordFormat::Detached { min_bytes }) => println!(
            "record format: {format} (producers keep payloads of {min_bytes} bytes or more \
             apart from their records from their next connect; every driver on this \
             namespace must be this version or later)"
        ),
        (true, RecordFormat::CompactDetached { min_bytes }) => println!(
            "record format: {format} (producers keep payloads of {min_bytes} bytes or more \
             apart from their records and store the smaller fresh jobs that fit it compact, \
             from their next connect; every driver on this namespace must be this version \
             or later)"
        ),
        (true, RecordFormat::Standard) => println!(
            "record format: standard (producers write it from their next connect; \
             compact and detached records already written stay readable)"
        ),
    }
    Ok(())
}
