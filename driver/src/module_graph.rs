//! A test that the crate's top-level modules depend on each other without a
//! circle, so each can be read knowing only what it imports (`codes` knows the
//! outcome types; the modules that call scripts know `codes`; never both ways).
//!
//! A module's dependencies are the `crate::` paths in its non-test code: a
//! path through a root re-export (`crate::RedisQueue`) counts as the module
//! the name is re-exported from. Paths inside macros (`$crate::`) belong to
//! where the macro is expanded, and comments do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules (files and folders of `src/`, but `lib.rs`).
fn modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name != "lib.rs")
        .map(|name| name.trim_end_matches(".rs").to_owned())
        .collect()
}

/// Root names re-exported by `lib.rs` (`pub use module::{A, B as C};`), and
/// the module each comes from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for item in lib.split("pub use ").skip(1) {
        let item = item.split(';').next().unwrap_or("");
        let (path, list) = match item.split_once("::{") {
            Some((path, list)) => (path, list.trim_end_matches('}')),
            None => match item.rsplit_once("::") {
                Some((path, name)) => (path, name),
                None => continue,
            },
        };
        let module = path.split("::").next().unwrap_or("").trim().to_owned();
        for name in list.split(',') {
            let name = name.rsplit(" as ").next().unwrap_or("").trim();
            if !name.is_empty() {
                names.insert(name.to_owned(), module.clone());
            }
        }
    }
    names
}

/// The code of a file without its tests, comments and macro-relative paths.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("$crate::", "$macro::")
}

/// The first path segments after each `crate::` in `code`, braces expanded.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            let list = list.split('}').next().unwrap_or("");
            out.extend(list.split(',').map(|item| first_segment(item.trim())));
        } else {
            out.push(first_segment(rest));
        }
    }
    out
}

fn first_segment(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every module's dependencies on the other top-level modules.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let names = reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path.strip_prefix(src).unwrap();
            let top = relative.components().next().unwrap().as_os_str();
            let module = top.to_string_lossy().trim_end_matches(".rs").to_owned();
            if module == "lib" || path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            for segment in crate_paths(&code) {
                let target = if modules.contains(&segment) {
                    segment
                } else if let Some(from) = names.get(&segment) {
                    from.clone()
                } else {
                    continue;
                };
                if target != module {
                    graph.entry(module.clone()).or_default().insert(target);
                }
            }
        }
    }
    graph
}

/// A circle through `from`, if there is one: the modules along it.
fn circle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut trail = vec![from.to_owned()];
    let mut seen = BTreeSet::new();
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        trail: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let here = trail.last().unwrap().clone();
        for next in graph.get(&here).into_iter().flatten() {
            if next == from {
                return true;
            }
            if seen.insert(next.clone()) {
                trail.push(next.clone());
                if walk(graph, from, trail, seen) {
                    return true;
                }
                trail.pop();
            }
        }
        false
    }
    walk(graph, from, &mut trail, &mut seen).then_some(trail)
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&src);
    assert!(
        graph
            .get("queue")
            .is_some_and(|deps| deps.contains("scripts")),
        "the scan finds nothing: queue must depend on scripts ({graph:?})"
    );
    for module in graph.keys() {
        if let Some(circle) = circle_through(&graph, module) {
            panic!("modules in a circle: {} -> {module}", circle.join(" -> "));
        }
    }
}

#[test]
fn a_circle_is_found() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    assert_eq!(circle_through(&graph, "a"), None);
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        circle_through(&graph, "a"),
        Some(vec!["a".into(), "b".into(), "c".into()])
    );
}
