//! The queue keys of a composed script (`lua/lib/keys.lua`): a script or
//! module names a key as `K.<name>`, and K is no table. The composer
//! rewrites each use to `KEYS[i]`, where i is the key's place in the
//! script's own key list: the keys the composed text (its lazy modules
//! included) names, in the order of `lua/lib/keys.lua`. The driver sends
//! exactly that list, so a call builds no table of key names and receives no
//! key its script cannot touch, yet every key it touches is declared (Redis
//! Cluster). A name the list does not have, or a `K` read any other way (a
//! key picked at run time could not be declared), fails here, at composition,
//! not in Redis.

use super::rename::{code_words, is_field, is_key};
use crate::keys::{queue_key_names, queue_key_position};

/// A composed text with its queue keys bound.
#[derive(Debug)]
pub struct Bound {
    /// The text, each `K.<name>` now `KEYS[i]`, line for line as before.
    pub text: String,
    /// The script's key list: `KEYS[i]` is the key named `keys[i - 1]`.
    pub keys: Vec<&'static str>,
}

/// A use of `K` the composer cannot bind.
#[derive(Debug, PartialEq, Eq)]
pub struct Misuse {
    /// Its byte offset in the text.
    pub at: usize,
    /// What is wrong, as a sentence.
    pub what: String,
}

/// The line of the composed text that declares how many queue keys the
/// script takes (its own keys, if any, follow from `KEYS[QUEUE_KEY_COUNT +
/// 1]`) and names them: `local QUEUE_KEY_COUNT = 2 -- KEYS: jobs fifo`.
pub fn count_line(keys: &[&str]) -> String {
    format!(
        "{COUNT_LINE}{} {KEYS_MARK}{}",
        keys.len(),
        keys.iter().map(|k| format!(" {k}")).collect::<String>()
    )
}

const COUNT_LINE: &str = "local QUEUE_KEY_COUNT = ";
const KEYS_MARK: &str = "-- KEYS:";

/// The queue key names a composed text declares on its count line
/// (`local QUEUE_KEY_COUNT = n -- KEYS: …`), in its KEYS order (`None`: the
/// script takes no queue keys).
pub fn declared(text: &str) -> Option<Vec<&str>> {
    let line = text.lines().find(|line| line.starts_with(COUNT_LINE))?;
    let (_, names) = line.split_once(KEYS_MARK)?;
    Some(names.split_whitespace().collect())
}

/// `text` with every `K.<name>` outside comments and strings rewritten to
/// its `KEYS[i]`, and the key list that numbering follows: every key the
/// text names or, for a variant (`only`), the variant's keys, in the order
/// of `lua/lib/keys.lua`, and each key the text names outside them written
/// `false` (the script checks, before it writes, that a call needs none of
/// those: `lua/README.md`, "Variants").
pub fn bind(text: &str, only: Option<&[&str]>) -> Result<Bound, Misuse> {
    let bytes = text.as_bytes();
    // Each use: where `K` starts, where its name ends, and the name.
    let mut uses: Vec<(usize, usize, &'static str)> = Vec::new();
    for (start, end) in code_words(text) {
        if &text[start..end] != "K" || is_field(bytes, start) {
            continue;
        }
        let name_start = end + 1;
        let name_len = bytes[name_start.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        if bytes.get(end) != Some(&b'.') || name_len == 0 {
            return Err(Misuse {
                at: start,
                what: "K is read other than as K.<name>: a key chosen at run time cannot be \
                       declared, so name each key the script may use (a table of K.<name> \
                       values, say)"
                    .to_owned(),
            });
        }
        let name_end = name_start + name_len;
        let name = &text[name_start..name_end];
        let Some(position) = queue_key_position(name) else {
            return Err(Misuse {
                at: start,
                what: format!("K.{name} is not a queue key of lua/lib/keys.lua"),
            });
        };
        if is_key(bytes, name_end) {
            return Err(Misuse {
                at: start,
                what: format!("K.{name} is assigned: a queue key is only ever read"),
            });
        }
        let listed = queue_key_names()
            .nth(position)
            .expect("a position of the list is in it");
        uses.push((start, name_end, listed));
    }
    let keys: Vec<&'static str> = queue_key_names()
        .filter(|name| uses.iter().any(|(_, _, used)| used == name))
        .filter(|name| only.is_none_or(|only| only.contains(name)))
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, name) in uses {
        out.push_str(&text[copied..start]);
        match keys.iter().position(|k| *k == name) {
            Some(index) => out.push_str(&format!("KEYS[{}]", index + 1)),
            None => out.push_str("false"),
        }
        copied = end;
    }
    out.push_str(&text[copied..]);
    Ok(Bound { text: out, keys })
}

/// `line` with each `KEYS[i]` of a script whose key list is `keys` written
/// back as the `K.<name>` it came from.
#[cfg(test)]
pub(crate) fn unbound(line: &str, keys: &[&str]) -> String {
    let mut line = line.to_owned();
    for (i, name) in keys.iter().enumerate() {
        line = line.replace(&format!("KEYS[{}]", i + 1), &format!("K.{name}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_becomes_its_place_in_the_list_of_those_used_in_catalogue_order() {
        let text = "local a = K.waiting -- K.dead\n\
                    redis.call('RPUSH', K.fifo, 'K.leased', K.waiting)\n\
                    t.K = 1; x = t.K.jobs";
        let bound = bind(text, None).unwrap();
        assert_eq!(bound.keys, vec!["fifo", "waiting"]);
        assert_eq!(
            bound.text,
            "local a = KEYS[2] -- K.dead\n\
             redis.call('RPUSH', KEYS[1], 'K.leased', KEYS[2])\n\
             t.K = 1; x = t.K.jobs"
        );
        assert_eq!(
            unbound("x(KEYS[1], KEYS[2])", &bound.keys),
            "x(K.fifo, K.waiting)"
        );
    }

    #[test]
    fn a_misspelt_key_fails_at_composition() {
        let text = "local a = K.jobs\nlocal b = K.wating\n";
        assert_eq!(
            bind(text, None).unwrap_err(),
            Misuse {
                at: text.find("K.wating").unwrap(),
                what: "K.wating is not a queue key of lua/lib/keys.lua".to_owned(),
            }
        );
    }

    #[test]
    fn a_key_chosen_at_run_time_or_assigned_fails_at_composition() {
        for text in ["local s = K[state]", "f(K)", "local K = {}", "x = K .. 'y'"] {
            let misuse = bind(text, None).unwrap_err();
            assert_eq!(misuse.at, text.find('K').unwrap(), "{text}");
            assert!(misuse.what.starts_with("K is read other than"), "{text}");
        }
        assert!(bind("K.jobs = 'x'", None)
            .unwrap_err()
            .what
            .contains("assigned"));
        assert!(bind("if K.jobs == x then end", None).is_ok());
    }

    #[test]
    fn a_variant_takes_only_its_keys_and_reads_the_others_as_false() {
        let text = "redis.call('RPUSH', K.fifo, 1)\nif not K.dedup then end\nx(K.waiting, K.jobs)";
        let bound = bind(text, Some(&["waiting", "fifo"])).unwrap();
        assert_eq!(
            bound.keys,
            vec!["fifo", "waiting"],
            "in the catalogue's order"
        );
        assert_eq!(
            bound.text,
            "redis.call('RPUSH', KEYS[1], 1)\nif not false then end\nx(KEYS[2], false)"
        );
    }

    #[test]
    fn the_count_line_names_the_keys_it_counts() {
        let line = count_line(&["jobs", "fifo"]);
        assert_eq!(line, "local QUEUE_KEY_COUNT = 2 -- KEYS: jobs fifo");
        assert_eq!(
            declared(&format!("#!lua\n{line}\nreturn 1")),
            Some(vec!["jobs", "fifo"])
        );
        assert_eq!(declared("#!lua\nreturn 1"), None);
        assert_eq!(
            declared(&count_line(&[])),
            Some(Vec::new()),
            "a script may name no queue key"
        );
    }
}
