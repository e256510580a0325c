//! The README's "Driver quick start" as a reader copies it: the
//! `[dependencies]` block declares every crate its snippet names, and the
//! sentence on feature flags names the features the crates have.

use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The text of the first fenced block opening with `fence` after `from`.
fn block<'a>(text: &'a str, from: usize, fence: &str) -> &'a str {
    let start = text[from..]
        .find(fence)
        .map(|at| from + at + fence.len())
        .unwrap_or_else(|| panic!("no {fence} block"));
    let end = text[start..].find("\n```").map(|at| start + at).unwrap();
    &text[start..end]
}

/// The feature names of a Cargo.toml's `[features]` table.
fn features(manifest: &str) -> Vec<String> {
    let Some(at) = manifest.find("\n[features]") else {
        return Vec::new();
    };
    manifest[at + 1..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split_once('=').map(|(name, _)| name.trim().to_owned()))
        .filter(|name| !name.is_empty() && !name.starts_with('#') && name != "default")
        .collect()
}

#[test]
fn the_quick_start_declares_every_crate_its_snippet_uses() {
    let readme = read("README.md");
    let section = readme
        .find("## Driver quick start")
        .expect("a Driver quick start section");
    let toml = block(&readme, section, "```toml\n");
    let snippet = block(&readme, section, "```rust,no_run\n");
    // The code alone: no string literal (`"billing::send_invoice"`) or
    // comment is a path.
    let rust: String = snippet
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .flat_map(|line| line.split('"').step_by(2).chain(["\n"]))
        .collect();
    let declared: BTreeSet<&str> = toml
        .lines()
        .filter_map(|l| l.split_once('=').map(|(name, _)| name.trim()))
        .collect();
    // Every lowercase path root the snippet names outside std: a crate.
    let mut used = BTreeSet::new();
    for (at, _) in rust.match_indices("::") {
        let root: String = rust[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let before = rust[..at - root.len()].chars().next_back();
        let first = root.chars().next();
        // Not a method's turbofish (`registry.add_job::<T>()`), not a
        // path's inner segment.
        let turbofish = rust[at + 2..].starts_with('<');
        if first.is_some_and(|c| c.is_ascii_lowercase())
            && !matches!(before, Some(':' | '.'))
            && !turbofish
            && !["std", "core", "alloc", "self", "crate", "super"].contains(&root.as_str())
        {
            used.insert(root);
        }
    }
    assert!(used.contains("serde_json"), "{used:?}");
    for krate in &used {
        assert!(
            declared.contains(krate.as_str()),
            "the snippet uses {krate}:: but [dependencies] declares only {declared:?}"
        );
    }
}

#[test]
fn the_feature_flag_sentence_names_the_crates_features() {
    let readme = read("README.md");
    let at = readme
        .find("feature flag")
        .expect("a sentence on feature flags");
    let paragraph_start = readme[..at].rfind("\n\n").map_or(0, |p| p + 2);
    let paragraph_end = readme[at..].find("\n\n").map_or(readme.len(), |p| at + p);
    let paragraph = &readme[paragraph_start..paragraph_end];
    assert!(
        !paragraph.contains("Neither crate has feature flags"),
        "{paragraph}"
    );
    let driver = features(&read("driver/Cargo.toml"));
    assert!(
        !driver.is_empty(),
        "the driver has an opentelemetry feature"
    );
    for feature in &driver {
        assert!(
            paragraph.contains(&format!("`{feature}`")),
            "the driver's {feature} feature is not named: {paragraph}"
        );
    }
    assert!(
        features(&read("console/Cargo.toml")).is_empty(),
        "the console has features now: name them in the README"
    );
    assert!(paragraph.contains("the console has"), "{paragraph}");
    assert!(paragraph.contains("none"), "{paragraph}");
}
