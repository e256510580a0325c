//! The `--state` values each `redq jobs` subcommand's help lists are the
//! ones it accepts: every value listed works, and none it refuses is listed.

use redq::{JobState, NewJob};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

use crate::seed::*;

/// The values `redq jobs SUB --help` lists under `--state`'s possible values.
fn listed_states(url: &str, ns: &str, sub: &str) -> Vec<String> {
    let out = redq(url, ns, &["jobs", sub, "--help"]);
    assert_exit(&out, 0);
    let help = stdout(&out);
    let from = help
        .find("--state <STATE>")
        .unwrap_or_else(|| panic!("no --state in jobs {sub} --help:\n{help}"));
    let section = &help[from..];
    let values = section
        .find("Possible values:")
        .map(|at| &section[at..])
        .unwrap_or_else(|| panic!("no possible values in jobs {sub} --help:\n{help}"));
    values
        .lines()
        .skip(1)
        .map_while(|line| line.trim().strip_prefix("- "))
        .map(|v| v.split(':').next().unwrap_or("").trim().to_owned())
        .collect()
}

#[tokio::test]
async fn each_jobs_subcommand_lists_only_the_states_it_accepts() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-states");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(value!({"to": "ada"})))
        .await
        .unwrap();

    // cancel: the live states a bulk cancel reaches; never a finished one.
    let cancel = listed_states(&url, &ns, "cancel");
    assert_eq!(
        cancel,
        ["waiting", "held", "awaiting", "scheduled", "leased", "dead"],
        "jobs cancel --help"
    );
    for state in &cancel {
        // Without --yes: the question, not a refusal of the state.
        let out = redq(
            &url,
            &ns,
            &["jobs", "cancel", "--queue", "emails", "--state", state],
        );
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("add --yes"),
            "{state}: {}",
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("invalid"),
            "{state}: {}",
            stderr(&out)
        );
    }
    for refused in ["completed", "cancelled", "blocked"] {
        let out = redq(
            &url,
            &ns,
            &[
                "jobs", "cancel", "--queue", "emails", "--state", refused, "--yes",
            ],
        );
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("waiting, held, awaiting, scheduled, leased, dead"),
            "{refused}: {}",
            stderr(&out)
        );
    }

    // delete: the states the bulk delete takes, blocked and awaiting among
    // them.
    let delete = listed_states(&url, &ns, "delete");
    assert_eq!(
        delete,
        [
            "waiting",
            "scheduled",
            "blocked",
            "held",
            "awaiting",
            "dead",
            "leased"
        ],
        "jobs delete --help"
    );
    for state in &delete {
        let out = redq(
            &url,
            &ns,
            &[
                "jobs", "delete", "--force", "--queue", "emails", "--state", state,
            ],
        );
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("add --yes"),
            "{state}: {}",
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("invalid"),
            "{state}: {}",
            stderr(&out)
        );
    }
    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "delete", "--queue", "emails", "--state", "awaiting", "--yes",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(
        q.counts("emails").await.unwrap().waiting,
        1,
        "no awaiting job to delete, and the waiting one left"
    );

    // search: a live job's states, blocked among them; finished jobs are
    // not searched, so not offered.
    let search = listed_states(&url, &ns, "search");
    assert_eq!(
        search,
        [
            "waiting",
            "held",
            "blocked",
            "awaiting",
            "scheduled",
            "leased",
            "dead"
        ],
        "jobs search --help"
    );
    for state in &search {
        let out = redq(
            &url,
            &ns,
            &["jobs", "search", "emails", "ada", "--state", state],
        );
        assert_exit(&out, 0);
    }

    // list: every state it lists, the kept ones too.
    let list = listed_states(&url, &ns, "list");
    for state in &list {
        let out = redq(&url, &ns, &["jobs", "list", "emails", "--state", state]);
        assert_exit(&out, 0);
    }
}

#[tokio::test]
async fn blocked_jobs_are_found_by_search_and_deleted_by_state() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-blocked");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let first = q
        .add(
            "emails",
            NewJob::new(value!({"n": 1})).ordering_key("customer-7"),
        )
        .await
        .unwrap();
    let second = q
        .add(
            "emails",
            NewJob::new(value!({"n": 2})).ordering_key("customer-7"),
        )
        .await
        .unwrap();
    assert_eq!(
        q.inspect(second.id()).await.unwrap().unwrap().state,
        JobState::Blocked
    );

    // Listed by state, with the key each waits behind, and found by search.
    let out = redq(&url, &ns, &["jobs", "list", "emails", "--state", "blocked"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    let rows: Vec<&str> = table.lines().filter(|l| l.contains(second.id())).collect();
    assert_eq!(rows.len(), 1, "{table}");
    assert!(rows[0].contains("customer-7"), "{table}");
    assert!(table.contains("ORDERING"), "{table}");
    assert!(
        !table.contains(first.id()),
        "the key's holder is waiting: {table}"
    );
    let out = redq(
        &url,
        &ns,
        &["jobs", "list", "emails", "--state", "blocked", "-o", "json"],
    );
    assert_exit(&out, 0);
    let listed = json(&out);
    assert_eq!(listed["total"], 1, "{listed}");
    assert_eq!(listed["jobs"][0]["id"], second.id(), "{listed}");
    assert_eq!(listed["jobs"][0]["state"], "blocked", "{listed}");
    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "search", "emails", "\"n\"", "--state", "blocked", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    let found = json(&out);
    let ids: Vec<&str> = found["jobs"]
        .as_array()
        .or(found.as_array())
        .into_iter()
        .flatten()
        .filter_map(|j| j["id"].as_str())
        .collect();
    assert_eq!(ids, [second.id()], "{found}");

    // The bulk delete asks first, counting the blocked job, then deletes
    // it; the key's holder is left waiting.
    let out = redq(
        &url,
        &ns,
        &["jobs", "delete", "--queue", "emails", "--state", "blocked"],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("the 1 blocked job of emails"),
        "{}",
        stderr(&out)
    );
    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "delete", "--queue", "emails", "--state", "blocked", "--yes",
        ],
    );
    assert_exit(&out, 0);
    assert!(q.inspect(second.id()).await.unwrap().is_none());
    assert_eq!(
        q.inspect(first.id()).await.unwrap().unwrap().state,
        JobState::Waiting
    );
}

#[tokio::test]
async fn awaiting_jobs_are_deleted_by_state_and_what_depends_on_them_is_decided() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-awaiting");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let charge = q
        .add("payments", NewJob::new(value!({"order": 9})))
        .await
        .unwrap();
    let receipt = q
        .add(
            "mail",
            NewJob::new(value!({"receipt": 9})).after([charge.id()]),
        )
        .await
        .unwrap();
    let audit = q
        .add(
            "audit",
            NewJob::new(value!({"order": 9})).after([receipt.id()]),
        )
        .await
        .unwrap();
    assert_eq!(q.counts("mail").await.unwrap().awaiting, 1);

    // The question counts the awaiting job; nothing is deleted without --yes.
    let out = redq(
        &url,
        &ns,
        &["jobs", "delete", "--queue", "mail", "--state", "awaiting"],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("the 1 awaiting job of mail"),
        "{}",
        stderr(&out)
    );
    assert_eq!(q.counts("mail").await.unwrap().awaiting, 1);

    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "delete", "--queue", "mail", "--state", "awaiting", "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], 1, "{}", stdout(&out));
    assert!(q.inspect(receipt.id()).await.unwrap().is_none());
    assert_eq!(q.counts("mail").await.unwrap().awaiting, 0);
    // What it waited on goes on; what waited on it counts it deleted, and
    // its queue's next claim dead-letters it as a dependency failure.
    assert_eq!(
        q.inspect(charge.id()).await.unwrap().unwrap().state,
        JobState::Waiting
    );
    let claimed = q
        .claim("audit", 10, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    assert!(claimed.is_empty(), "{claimed:?}");
    let audit = q.inspect(audit.id()).await.unwrap().unwrap();
    assert_eq!(audit.state, JobState::Dead);
    let error = audit.last_error.unwrap_or_default();
    assert!(
        error.contains(&format!("{} deleted", receipt.id())),
        "{error}"
    );
}
