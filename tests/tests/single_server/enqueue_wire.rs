//! enqueue.lua's job entries (id, payload, then only the options that differ
//! from their defaults) and the records it splices from a template packed
//! once per call: every combination of options stores the fields it was
//! given, in exactly the bytes `cmsgpack.pack` of those fields gives; a
//! malformed entry list is refused before anything is written.

use fred::interfaces::{ClientLike, HashesInterface, LuaInterface, SortedSetsInterface};
use fred::types::Value;
use redq_tests::fixtures::*;
use redq_tests::lua;

const TRACE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const OPTIONS: usize = 14;
const BACKOFF_BASE: usize = 10; // option code 11, from 0
const BACKOFF_CAP: usize = 11; // option code 12, from 0

/// A value for each option (code 1 to 14) of the job numbered `n`: keys
/// unique to the job, so that none is a duplicate of another.
fn option_values(n: usize) -> [String; OPTIONS] {
    [
        "3".into(),                  // priority
        "60000".into(),              // delay_ms
        "4000000000000".into(),      // not_before_ms
        format!("dedup-{n}"),        // dedup_key
        "30000".into(),              // dedup_ttl_ms
        format!("order-{n}"),        // ordering_key
        "5".into(),                  // max_attempts
        "1000".into(),               // retry_window_ms
        "kind".into(),               // name
        "2".into(),                  // attempts
        "100".into(),                // backoff_base_ms
        "200".into(),                // backoff_cap_ms
        format!("tenant-{}", n % 3), // limit_key
        TRACE.into(),                // trace
    ]
}

/// Job `n` with the options whose bits are set in `mask` (bit i: code i + 1).
fn options_of(mask: usize, n: usize) -> [String; OPTIONS] {
    let values = option_values(n);
    std::array::from_fn(|i| {
        if mask & (1 << i) != 0 {
            values[i].clone()
        } else {
            String::new()
        }
    })
}

fn uint(text: &str) -> u64 {
    if text.is_empty() {
        0
    } else {
        text.parse().unwrap()
    }
}

/// The fields (lua/lib/job_record.lua's M, in order) a job created with
/// `options` should store, given its seq, its call's enqueued_at and gate:
/// lean, without its trailing defaults (down to 19 fields) and with a due
/// time equal to enqueued_at stored as 0.
fn expected_fields(
    options: &[String; OPTIONS],
    seq: u64,
    enqueued_at: u64,
    gate: &str,
) -> Vec<rmpv::Value> {
    let n = |v: u64| rmpv::Value::from(v);
    let s = |v: &str| rmpv::Value::from(v);
    let not_before = (enqueued_at + uint(&options[1])).max(uint(&options[2]));
    let stored_due = if not_before == enqueued_at {
        0
    } else {
        not_before
    };
    let mut fields = vec![
        n(0),                  // lease_id
        n(0),                  // lease_expiry
        s(""),                 // worker_node
        n(0),                  // worker_instance
        s("q"),                // queue
        s(&options[3]),        // dedup_key
        n(uint(&options[4])),  // dedup_ttl
        s(&options[5]),        // ordering_key
        n(uint(&options[0])),  // priority
        n(seq),                // seq
        n(enqueued_at),        // enqueued_at
        n(stored_due),         // not_before
        n(uint(&options[9])),  // attempts
        n(uint(&options[6])),  // max_attempts
        n(uint(&options[7])),  // retry_window
        s(&options[8]),        // name
        s(""),                 // error
        n(0),                  // died_at
        n(0),                  // resolved_lease
        n(uint(&options[10])), // backoff_base
        n(uint(&options[11])), // backoff_cap
        n(0),                  // noted
        s(&options[12]),       // limit_key
        s(&options[13]),       // trace
        s(gate),               // gate
        n(0),                  // more_gates
        s(""),                 // awaits
    ];
    let at_default = |v: &rmpv::Value| v.as_u64() == Some(0) || v.as_str() == Some("");
    while fields.len() > redq::lua::OLDEST_JOB_RECORD_LEN && fields.last().is_some_and(at_default) {
        fields.pop();
    }
    fields
}

/// Re-packs a stored record's fields with `cmsgpack.pack`, as enqueue
/// packed every record before it spliced them: what the record must be.
pub(crate) const REPACK: &str = "local raw = redis.call('HGET', KEYS[1], ARGV[1]) \
    local used, m = cmsgpack.unpack_one(raw) \
    return cmsgpack.pack(m) .. string.sub(raw, used + 1)";

/// Enqueue `args` (the call `case`) is refused with a message containing
/// `message`, and the server's digest is still `before`: nothing written.
async fn refused_unchanged(
    server: &redq_tests::RedisServer,
    client: &fred::clients::Client,
    enqueue: &str,
    args: &[Value],
    case: &str,
    message: &str,
    before: &str,
) {
    let err = lua::evalsha(client, enqueue, "wire", "q", args)
        .await
        .expect_err(case);
    let text = redq::lua::map_error(err, std::time::Duration::from_secs(1)).to_string();
    assert!(text.contains(message), "{case}: {text}");
    assert_eq!(
        digest(server).await,
        before,
        "{case}: something was written"
    );
}

#[tokio::test]
async fn every_combination_of_options_stores_the_bytes_packing_its_fields_whole_would() {
    let server = server();
    let client = server.client().await;
    let ns = "wire";
    let jobs_key = format!("{{{ns}}}:jobs");
    let enqueue = lua::load(&client, &lua::compose(lua::source("enqueue"))).await;
    let repack: String = client.script_load(REPACK).await.unwrap();

    // Every subset of the 14 options but those with a backoff base and no
    // cap (refused: the cap must be at least the base), then a few into a
    // gate (its id is in every record of the call).
    let masks: Vec<usize> = (0..1usize << OPTIONS)
        .filter(|mask| mask & (1 << BACKOFF_BASE) == 0 || mask & (1 << BACKOFF_CAP) != 0)
        .collect();
    let mut calls: Vec<(&str, Vec<usize>)> = masks.chunks(1000).map(|c| ("", c.to_vec())).collect();
    calls.push(("G", masks.iter().copied().step_by(97).collect()));

    let mut seq = 0u64;
    let mut checked = 0usize;
    for (gate, chunk) in calls {
        let first_seq = seq + 1;
        let kind = if gate.is_empty() { "" } else { "batch" };
        let mut args = vec![
            Value::from(1 << 20),
            Value::from(chunk.len() as i64),
            Value::from(gate),
            Value::from(kind),
            Value::from(""), // standard records
        ];
        let jobs: Vec<(String, [String; OPTIONS])> = chunk
            .iter()
            .enumerate()
            .map(|(i, mask)| {
                let n = first_seq as usize + i;
                (format!("job-{n}"), options_of(*mask, n))
            })
            .collect();
        for (id, options) in &jobs {
            args.extend(lua::enqueue_entries(
                id,
                &format!("{{\"n\":\"{id}\"}}"),
                options.clone(),
            ));
        }
        let reply = lua::evalsha(&client, &enqueue, ns, "q", &args)
            .await
            .expect("every job is accepted");
        let Value::Array(reply) = reply else {
            panic!("enqueue replied {reply:?}")
        };
        let mut enqueued_at = None;
        for (i, (id, options)) in jobs.iter().enumerate() {
            assert_eq!(reply[2 * i].as_i64(), Some(1), "job {id} is created");
            seq += 1;
            let raw: Vec<u8> = client.hget(&jobs_key, id).await.unwrap();
            let repacked: Vec<u8> = client
                .evalsha(&repack, vec![jobs_key.clone()], vec![id.clone()])
                .await
                .unwrap();
            assert!(raw == repacked, "job {id} (options {options:?}): the stored record is not cmsgpack.pack of its fields");
            let mut rest = raw.as_slice();
            let rmpv::Value::Array(fields) = rmpv::decode::read_value(&mut rest).unwrap() else {
                panic!("job {id}: no array")
            };
            assert_eq!(
                rest,
                format!("{{\"n\":\"{id}\"}}").as_bytes(),
                "job {id}: payload"
            );
            let at = *enqueued_at.get_or_insert_with(|| fields[10].as_u64().unwrap());
            assert_eq!(
                fields,
                expected_fields(options, seq, at, gate),
                "job {id} with options {options:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, masks.len() + masks.len().div_ceil(97));
    client.quit().await.ok();
}

/// A call with one malformed job writes nothing, and says what was wrong.
#[tokio::test]
async fn a_malformed_job_entry_is_refused_before_anything_is_written() {
    let server = server();
    let client = server.client().await;
    let enqueue = lua::load(&client, &lua::compose(lua::source("enqueue"))).await;
    let before = digest(&server).await;
    let good = lua::enqueue_entries("good", "{}", options_of(1 << 8, 0)); // a name
    let entries =
        |texts: &[&str]| -> Vec<Value> { texts.iter().map(|t| Value::from(*t)).collect() };
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "unknown code",
            entries(&["bad", "{}", "1", "15", "x"]),
            "option code of job bad must be 1 to 14, got \"15\"",
        ),
        (
            "code 0",
            entries(&["bad", "{}", "1", "0", "x"]),
            "option code of job bad must be 1 to 14",
        ),
        (
            "a code with a leading zero",
            entries(&["bad", "{}", "1", "01", "3"]),
            "option code of job bad must be 1 to 14, got \"01\"",
        ),
        (
            "a code as a fraction",
            entries(&["bad", "{}", "1", "1.0", "3"]),
            "option code of job bad must be 1 to 14, got \"1.0\"",
        ),
        (
            "a code in hex",
            entries(&["bad", "{}", "1", "0x9", "n"]),
            "option code of job bad must be 1 to 14, got \"0x9\"",
        ),
        (
            "a code with a space",
            entries(&["bad", "{}", "1", " 9", "n"]),
            "option code of job bad must be 1 to 14, got \" 9\"",
        ),
        (
            "a code not a number",
            entries(&["bad", "{}", "1", "nan", "n"]),
            "option code of job bad must be 1 to 14, got \"nan\"",
        ),
        (
            "a code past the last",
            entries(&["bad", "{}", "1", "1e9", "n"]),
            "option code of job bad must be 1 to 14, got \"1e9\"",
        ),
        (
            "repeated code",
            entries(&["bad", "{}", "2", "1", "3", "1", "4"]),
            "must be ascending without repeats, got 1 after 1",
        ),
        (
            "descending codes",
            entries(&["bad", "{}", "2", "9", "n", "1", "4"]),
            "got 1 after 9",
        ),
        (
            "count not a number",
            entries(&["bad", "{}", "x"]),
            "option count of job bad must be a whole number",
        ),
        (
            "count too large",
            entries(&["bad", "{}", "15"]),
            "option count of job bad must be at most 14",
        ),
        (
            "count past the end",
            entries(&["bad", "{}", "2", "1", "4"]),
            "job bad has 2 options, but the arguments end",
        ),
        (
            "entries past the last job",
            entries(&["bad", "{}", "0", "extra"]),
            "expected 15 arguments for 2 jobs, got 16",
        ),
        (
            "an option's value",
            entries(&["bad", "{}", "1", "1", "256"]),
            "priority must be at most 255, got 256",
        ),
        (
            "a backoff cap below its base",
            entries(&["bad", "{}", "1", "11", "5"]),
            "backoff_cap_ms of job bad is 0",
        ),
        (
            "attempts not below max",
            entries(&["bad", "{}", "2", "7", "2", "10", "2"]),
            "attempts of job bad is 2",
        ),
    ];
    for (case, bad, message) in cases {
        let mut args = vec![
            Value::from(1 << 20),
            Value::from(2),
            Value::from(""),
            Value::from(""),
            Value::from(""), // standard records
        ];
        args.extend(good.iter().cloned());
        args.extend(bad);
        refused_unchanged(&server, &client, &enqueue, &args, case, message, &before).await;
    }
    // A record format this script does not know (ARGV[7]).
    let mut args = vec![
        Value::from(1 << 20),
        Value::from(1),
        Value::from(""),
        Value::from(""),
        Value::from("tiny"),
    ];
    args.extend(good.iter().cloned());
    let err = lua::evalsha(&client, &enqueue, "wire", "q", &args)
        .await
        .expect_err("an unknown record format");
    let text = redq::lua::map_error(err, std::time::Duration::from_secs(1)).to_string();
    assert!(
        text.contains("record format must be \"\", compact, detached:<bytes> or compact+detached:<bytes> (<bytes> 1 to 1073741824), got \"tiny\""),
        "{text}"
    );
    assert_eq!(digest(&server).await, before);
    // Too few entries for the job count.
    let mut args = vec![
        Value::from(1 << 20),
        Value::from(2),
        Value::from(""),
        Value::from(""),
        Value::from(""), // standard records
    ];
    args.extend(good.iter().cloned());
    let err = lua::evalsha(&client, &enqueue, "wire", "q", &args)
        .await
        .expect_err("a missing job");
    let text = redq::lua::map_error(err, std::time::Duration::from_secs(1)).to_string();
    assert!(text.contains("job 2 needs 3 entries at least"), "{text}");
    assert_eq!(digest(&server).await, before);
    // Sending an option at its default is allowed and sets nothing.
    let mut args = vec![
        Value::from(1 << 20),
        Value::from(1),
        Value::from(""),
        Value::from(""),
        Value::from(""), // standard records
    ];
    args.extend(entries(&["zero", "{}", "2", "1", "0", "9", ""]));
    lua::evalsha(&client, &enqueue, "wire", "q", &args)
        .await
        .expect("defaults sent are accepted");
    client.quit().await.ok();
}

/// Options as enqueue_entries takes them, from (code, value) pairs.
fn with(pairs: &[(usize, &str)]) -> [String; OPTIONS] {
    let mut options: [String; OPTIONS] = Default::default();
    for (code, value) in pairs {
        options[code - 1] = (*value).to_owned();
    }
    options
}

/// A job sending the same options as the job before it, whole or as "="
/// (what the driver sends then), takes that job's parse (lib/job_new.lua):
/// each such job still stores its own seq, due time and payload, and the
/// fields of its options, in the bytes packing them whole would give.
#[tokio::test]
async fn jobs_repeating_the_options_before_them_store_the_fields_they_sent() {
    repeated_options_store_their_fields(false).await;
}

#[tokio::test]
async fn jobs_sending_equals_store_the_fields_of_the_options_before_them() {
    repeated_options_store_their_fields(true).await;
}

/// The calls of the two tests above: with `equals`, a job whose options are
/// those of the job before it (and not none) sends "=" in their place.
async fn repeated_options_store_their_fields(equals: bool) {
    let server = server();
    let client = server.client().await;
    let ns = "wire";
    let jobs_key = format!("{{{ns}}}:jobs");
    let enqueue = lua::load(&client, &lua::compose(lua::source("enqueue"))).await;
    let repack: String = client.script_load(REPACK).await.unwrap();

    let named = with(&[(1, "3"), (9, "kind")]);
    let other = with(&[(9, "other")]);
    let later = with(&[
        (2, "60000"),
        (3, "4000000000000"),
        (7, "5"),
        (10, "2"),
        (14, TRACE),
    ]);
    let plain = with(&[]);
    // Runs of the same options, a plain job between two of a run, a set
    // broken by another and taken up again (parsed again: it is not the
    // last one sent), and the due time's parts repeated.
    let calls = [
        named.clone(),
        named.clone(),
        named.clone(),
        plain.clone(),
        named.clone(),
        other.clone(),
        named.clone(),
        later.clone(),
        later.clone(),
        plain.clone(),
        later.clone(),
        named.clone(),
    ];
    let mut args = vec![
        Value::from(1 << 20),
        Value::from(calls.len() as i64),
        Value::from(""),
        Value::from(""),
        Value::from(""), // standard records
    ];
    let mut sent_equals = 0;
    for (i, options) in calls.iter().enumerate() {
        let (id, payload) = (format!("job-{i}"), format!("{{\"i\":{i}}}"));
        if equals && i > 0 && calls[i - 1] == *options && *options != plain {
            args.extend([Value::from(id), Value::from(payload), Value::from("=")]);
            sent_equals += 1;
        } else {
            args.extend(lua::enqueue_entries(&id, &payload, options.clone()));
        }
    }
    assert_eq!(sent_equals, if equals { 3 } else { 0 });
    let Value::Array(reply) = lua::evalsha(&client, &enqueue, ns, "q", &args)
        .await
        .expect("every job is accepted")
    else {
        panic!("enqueue replied no array")
    };
    let mut enqueued_at = None;
    for (i, options) in calls.iter().enumerate() {
        let id = format!("job-{i}");
        assert_eq!(reply[2 * i].as_i64(), Some(1), "job {id} is created");
        let raw: Vec<u8> = client.hget(&jobs_key, &id).await.unwrap();
        let repacked: Vec<u8> = client
            .evalsha(&repack, vec![jobs_key.clone()], vec![id.clone()])
            .await
            .unwrap();
        assert!(
            raw == repacked,
            "job {id}: the stored record is not cmsgpack.pack of its fields"
        );
        let mut rest = raw.as_slice();
        let rmpv::Value::Array(fields) = rmpv::decode::read_value(&mut rest).unwrap() else {
            panic!("job {id}: no array")
        };
        assert_eq!(
            rest,
            format!("{{\"i\":{i}}}").as_bytes(),
            "job {id}: payload"
        );
        let at = *enqueued_at.get_or_insert_with(|| fields[10].as_u64().unwrap());
        assert_eq!(
            fields,
            expected_fields(options, i as u64 + 1, at, ""),
            "job {id} with options {options:?}"
        );
    }
    // The delayed ones are scheduled at their due time (the later of the
    // two parts), the rest wait.
    let scheduled: Vec<(String, f64)> = client
        .zrange(
            format!("{{{ns}}}:q:q:scheduled"),
            0,
            -1,
            None,
            false,
            None,
            true,
        )
        .await
        .unwrap();
    let due = 4_000_000_000_000.0;
    assert_eq!(
        scheduled,
        [
            ("job-10".to_owned(), due),
            ("job-7".to_owned(), due),
            ("job-8".to_owned(), due)
        ]
    );
    client.quit().await.ok();
}

/// Repeating the last job's option codes proves nothing about the values:
/// a job whose entries differ from the last job's in one value is checked
/// whole, and a bad value there refuses the call, writing nothing.
#[tokio::test]
async fn a_job_repeating_the_last_options_but_one_bad_value_is_refused_whole() {
    let server = server();
    let client = server.client().await;
    let enqueue = lua::load(&client, &lua::compose(lua::source("enqueue"))).await;
    let before = digest(&server).await;
    let entries =
        |texts: &[&str]| -> Vec<Value> { texts.iter().map(|t| Value::from(*t)).collect() };
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "a value out of bounds",
            entries(&[
                "a", "{}", "2", "1", "3", "9", "kind", "b", "{}", "2", "1", "256", "9", "kind",
            ]),
            "priority must be at most 255, got 256",
        ),
        (
            "a text with a control character",
            entries(&[
                "a", "{}", "2", "1", "3", "9", "kind", "b", "{}", "2", "1", "3", "9", "ki\nnd",
            ]),
            "job name must be at most 256 bytes without control characters",
        ),
        (
            "attempts no longer below max_attempts",
            entries(&[
                "a", "{}", "2", "7", "5", "10", "2", "b", "{}", "2", "7", "2", "10", "2",
            ]),
            "attempts of job b is 2",
        ),
        (
            "the same options, but the arguments end",
            entries(&[
                "a", "{}", "2", "1", "3", "9", "kind", "b", "{}", "2", "1", "3",
            ]),
            "job b has 2 options, but the arguments end",
        ),
    ];
    for (case, jobs, message) in cases {
        let mut args = vec![
            Value::from(1 << 20),
            Value::from(2),
            Value::from(""),
            Value::from(""),
            Value::from(""), // standard records
        ];
        args.extend(jobs);
        refused_unchanged(&server, &client, &enqueue, &args, case, message, &before).await;
    }
    client.quit().await.ok();
}

/// A job id with any control character (bytes 0 to 31 and 127) is refused,
/// writing nothing; the characters JSON escapes besides those ('"', '/',
/// '\\') and bytes above 127 are accepted (lib/check.lua's text decides by
/// the length of cjson.encode, then by the pattern search when it escaped
/// something).
#[tokio::test]
async fn a_job_id_is_refused_for_every_control_character_and_only_for_those() {
    let server = server();
    let client = server.client().await;
    let enqueue = lua::load(&client, &lua::compose(lua::source("enqueue"))).await;
    let call = |id: Vec<u8>| {
        vec![
            Value::from(1 << 20),
            Value::from(1),
            Value::from(""),
            Value::from(""),
            Value::from(""), // standard records
            Value::Bytes(id.into()),
            Value::from("{}"),
            Value::from("0"),
        ]
    };
    for byte in (0u8..32).chain([127]) {
        let before = digest(&server).await;
        let err = lua::evalsha(
            &client,
            &enqueue,
            "wire",
            "q",
            &call(vec![b'a', byte, b'z']),
        )
        .await
        .expect_err("a control character is refused");
        let text = redq::lua::map_error(err, std::time::Duration::from_secs(1)).to_string();
        assert!(
            text.contains("job id must be at most 64 bytes without control characters"),
            "byte {byte}: {text}"
        );
        assert_eq!(
            digest(&server).await,
            before,
            "byte {byte}: something was written"
        );
    }
    for (n, id) in [
        b"a\"b".to_vec(),
        b"a/b".to_vec(),
        b"a\\b".to_vec(),
        b"\"/\\ \x7e".to_vec(),
        vec![b'a', 128, 200, 255],
        "caf\u{e9}".as_bytes().to_vec(),
    ]
    .into_iter()
    .enumerate()
    {
        let reply = lua::evalsha(&client, &enqueue, "wire", "q", &call(id.clone()))
            .await
            .unwrap_or_else(|e| panic!("id {n} ({id:?}) is accepted: {e:?}"));
        let Value::Array(reply) = reply else {
            panic!("enqueue replied {reply:?}")
        };
        assert_eq!(reply[0].as_i64(), Some(1), "id {n} ({id:?}) is created");
    }
    client.quit().await.ok();
}

/// "=" takes the options of the job before it, so it cannot open a call; a
/// call whose ids are checked together (lib/check.lua texts) still refuses
/// one bad id among good ones, naming it, and a refusal that names a job
/// checks its id first; none writes anything.
#[tokio::test]
async fn an_equals_opening_a_call_and_a_bad_id_in_a_batch_are_refused_writing_nothing() {
    let server = server();
    let client = server.client().await;
    let enqueue = lua::load(&client, &lua::compose(lua::source("enqueue"))).await;
    let before = digest(&server).await;
    let call = |jobs: &[&[&[u8]]]| {
        let mut args = vec![
            Value::from(1 << 20),
            Value::from(jobs.len() as i64),
            Value::from(""),
            Value::from(""),
            Value::from(""), // standard records
        ];
        for job in jobs {
            args.extend(job.iter().map(|entry| Value::Bytes(entry.to_vec().into())));
        }
        args
    };
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "= on the first job",
            call(&[&[b"a", b"{}", b"="], &[b"b", b"{}", b"1", b"9", b"kind"]]),
            "option count of job 1 is \"=\"",
        ),
        (
            "a control character in the third id, after jobs sending =",
            call(&[
                &[b"a", b"{}", b"1", b"9", b"kind"],
                &[b"b", b"{}", b"="],
                &[b"c\x01", b"{}", b"="],
                &[b"d", b"{}", b"="],
            ]),
            "job id must be at most 64 bytes without control characters",
        ),
        (
            "a bad id whose payload is refused too: the id is named",
            call(&[&[b"a", b"{}", b"0"], &[b"b\n", b"", b"0"]]),
            "job id must be at most 64 bytes without control characters",
        ),
        (
            "a bad id whose options are parsed afresh and refused: the id is named",
            call(&[&[b"a", b"{}", b"0"], &[b"b\n", b"{}", b"1", b"99", b"x"]]),
            "job id must be at most 64 bytes without control characters",
        ),
        (
            "an id too long among good ones",
            call(&[&[b"a", b"{}", b"0"], &[&[b'x'; 65], b"{}", b"0"]]),
            "job id must be at most 64 bytes without control characters",
        ),
    ];
    for (case, args, message) in cases {
        refused_unchanged(&server, &client, &enqueue, &args, case, message, &before).await;
    }
    // "=" repeats a dedup key too: the second job is the first's duplicate.
    let reply = lua::evalsha(
        &client,
        &enqueue,
        "wire",
        "q",
        &call(&[&[b"a", b"{}", b"1", b"4", b"once"], &[b"b", b"{}", b"="]]),
    )
    .await
    .expect("a repeated dedup key is accepted");
    let Value::Array(reply) = reply else {
        panic!("enqueue replied {reply:?}")
    };
    let codes: Vec<(Option<i64>, Option<String>)> = reply
        .chunks(2)
        .map(|pair| (pair[0].as_i64(), pair[1].as_string()))
        .collect();
    assert_eq!(
        codes,
        [(Some(1), Some("a".into())), (Some(0), Some("a".into()))],
        "created, then its duplicate"
    );
    client.quit().await.ok();
}
