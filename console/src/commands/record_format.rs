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
    if set.is_some() {
        println!("record format: {format} ({})", what_it_means(format));
    } else {
        println!("record format: {format}");
    }
    Ok(())
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
