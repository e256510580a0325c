//! `redq dead groups [QUEUE]`: the dead letters by error signature, over
//! every dead letter of each queue (`crate::dead_census`), so that
//! `--group SIG` can be used without the console.

use serde_json::json;

use crate::aggregate::Target;
use crate::clock;
use crate::dead_census::{census, GroupTally};
use crate::failure::Failure;
use crate::output::{outln, print_json, Table};

pub async fn run(target: &Target, names: &[String], json: bool) -> Result<(), Failure> {
    let mut groups: Vec<GroupTally> = Vec::new();
    let mut dead = 0;
    for name in names {
        let census = census(target, name, None).await?;
        dead += census.counted;
        groups.extend(census.groups);
    }
    groups.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(a.queue.cmp(&b.queue))
            .then(a.signature.cmp(&b.signature))
    });
    if json {
        print_json(&json!({ "dead": dead, "groups": groups }));
        return Ok(());
    }
    let when = |at: Option<std::time::SystemTime>| {
        at.map(|at| format!("{}Z", clock::datetime(at).replace(' ', "T")))
            .unwrap_or_else(|| "-".into())
    };
    let mut table = Table::new(&[
        ">COUNT",
        "QUEUE",
        "SIGNATURE",
        "NEWEST",
        "OLDEST",
        "EXAMPLE",
    ]);
    for g in &groups {
        table.row(vec![
            g.count.to_string(),
            g.queue.clone(),
            g.signature.clone(),
            when(g.newest),
            when(g.oldest),
            crate::text::truncate(&g.example, 60),
        ]);
    }
    table.print();
    outln!(
        "({} in {}; requeue one: redq dead requeue QUEUE --group SIGNATURE --yes)",
        crate::output::count(dead, "dead letter", "dead letters"),
        crate::output::count(groups.len() as u64, "group", "groups"),
    );
    Ok(())
}
