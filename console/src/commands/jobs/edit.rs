//! `redq jobs edit ID PAYLOAD | --file PATH | -`: replace the payload of a
//! job that is not running (waiting, scheduled, held, blocked, awaiting or
//! dead), checked as an enqueue checks it.

use std::io::Read;
use std::path::PathBuf;

use serde_json::json;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;

/// Where the new payload comes from.
pub enum Source {
    /// Given on the command line.
    Argument(String),
    /// Read from this file.
    File(PathBuf),
    /// Read from standard input (`-`).
    Stdin,
}

impl Source {
    fn read(self) -> Result<String, Failure> {
        match self {
            Source::Argument(text) => Ok(text),
            Source::File(path) => std::fs::read_to_string(&path).map_err(|e| {
                Failure::Usage(format!(
                    "cannot read {}: {e}",
                    inert(&path.display().to_string())
                ))
            }),
            Source::Stdin => {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .map_err(|e| Failure::Usage(format!("cannot read standard input: {e}")))?;
                Ok(text)
            }
        }
    }
}

pub async fn run(queue: &Target, id: &str, source: Source, json: bool) -> Result<(), Failure> {
    let text = source.read()?;
    let payload: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("the payload is not JSON: {e}")))?;
    let state = queue.edit_payload(id, &payload).await?;
    tracing::info!(id = %id, state = state.as_str(), "edited a payload");
    if json {
        print_json(&json!({ "id": id, "outcome": "edited", "state": state.as_str() }));
    } else {
        outln!("edited {} ({})", inert(id), state.as_str());
    }
    Ok(())
}
