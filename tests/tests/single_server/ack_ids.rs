//! ack.lua checks a batch's job ids for control characters in one check of
//! them all (the length of cjson.encode, then the pattern search when JSON
//! escaped something): every control character in any id of the batch
//! refuses the call whole, writing nothing, and the characters JSON escapes
//! besides those ('"', '/', '\\') and bytes above 127 are accepted.

use fred::interfaces::ClientLike;
use fred::types::Value;
use redq_tests::fixtures::*;
use redq_tests::lua;

/// An ack of `ids`, each under lease 0 (whatever lease is current).
fn ack_of(ids: &[Vec<u8>]) -> Vec<Value> {
    let mut args = vec![Value::from(ids.len() as i64)];
    for id in ids {
        args.push(Value::Bytes(id.clone().into()));
        args.push(Value::from("0"));
    }
    args
}

#[tokio::test]
async fn an_ack_batch_is_refused_for_a_control_character_in_any_id_and_only_for_those() {
    let server = server();
    let client = server.client().await;
    let enqueue = lua::load(&client, &lua::compose(lua::source("enqueue"))).await;
    let ack = lua::load(&client, &lua::compose(lua::source("ack"))).await;
    // A job that exists (not leased, so an ack finds its lease lost): a
    // refused call must leave it as it is.
    let job = vec![
        Value::from(1 << 20),
        Value::from(1),
        Value::from(""),
        Value::from(""),
        Value::from(""), // standard records
        Value::from("held"),
        Value::from("{}"),
        Value::from("0"),
    ];
    lua::evalsha(&client, &enqueue, "ackids", "q", &job)
        .await
        .expect("enqueue");
    for byte in (0u8..32).chain([127]) {
        for at in 0..3 {
            let mut ids = vec![b"held".to_vec(), b"gone-1".to_vec(), b"gone-2".to_vec()];
            ids[at] = vec![b'a', byte, b'z'];
            let before = digest(&server).await;
            let err = lua::evalsha(&client, &ack, "ackids", "q", &ack_of(&ids))
                .await
                .expect_err("a control character is refused");
            let text = redq::lua::map_error(err, std::time::Duration::from_secs(1)).to_string();
            assert!(
                text.contains("job id must be at most 64 bytes without control characters"),
                "byte {byte} in id {at}: {text}"
            );
            assert_eq!(
                digest(&server).await,
                before,
                "byte {byte} in id {at}: something was written"
            );
        }
    }
    let escaped = vec![
        b"a\"b".to_vec(),
        b"a/b".to_vec(),
        b"a\\b".to_vec(),
        b"\"/\\ \x7e".to_vec(),
        vec![b'a', 128, 200, 255],
        "caf\u{e9}".as_bytes().to_vec(),
    ];
    for id in &escaped {
        let reply = lua::evalsha(
            &client,
            &ack,
            "ackids",
            "q",
            &ack_of(&[b"held".to_vec(), id.clone()]),
        )
        .await
        .unwrap_or_else(|e| panic!("id {id:?} is accepted: {e:?}"));
        let Value::Array(codes) = reply else {
            panic!("ack replied {reply:?}")
        };
        let codes: Vec<_> = codes.iter().map(Value::as_i64).collect();
        assert_eq!(
            codes,
            [Some(-1), Some(0)],
            "id {id:?}: the held job's lease is lost, the id is gone"
        );
    }
    client.quit().await.ok();
}
