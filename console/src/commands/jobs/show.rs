//! `redq jobs show ID`: everything about one job, from the shard that
//! holds it.

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{job_json, print_json};
use crate::tui::detail_text::detail_lines;

pub async fn run(queue: &Target, id: &str, json: bool) -> Result<(), Failure> {
    let Some(job) = queue.inspect(id).await? else {
        return Err(Failure::Failed(format!(
            "no job {}",
            crate::text::inert(id)
        )));
    };
    if json {
        print_json(&job_json(&job, &queue.shard_namespaces()));
    } else {
        for line in detail_lines(
            &job,
            &queue.shard_namespaces(),
            std::time::SystemTime::now(),
        ) {
            println!("{}", line.trim_end());
        }
    }
    Ok(())
}
