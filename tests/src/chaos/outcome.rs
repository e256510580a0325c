//! What a scenario measured, and whether it proved anything.
//!
//! A scenario fails when the checker or a structural check found a broken
//! guarantee, and also when the run cannot count as evidence: the queue
//! did not drain, no job was created, no fault was injected, a worker never
//! claimed or panicked, a history was lost. A run that stalls or never
//! really ran must not pass.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use crate::history::Report;

/// How many lines of each worker's stderr a failure shows.
const STDERR_TAIL: usize = 15;

/// What a scenario measured and what the checks said.
#[derive(Debug)]
pub struct Outcome {
    pub scenario: &'static str,
    pub elapsed: Duration,
    /// Scenario-specific figures (faults injected, errors seen…).
    pub figures: BTreeMap<&'static str, String>,
    pub report: Report,
    /// Broken invariants found by the structural checks after each fault.
    pub structure: Vec<String>,
    /// Why the run does not count as evidence (see the module docs).
    pub unproven: Vec<String>,
    /// Each worker process's stderr (name, text), shown when the run failed.
    pub worker_stderr: Vec<(String, String)>,
}

impl Outcome {
    pub(crate) fn new(
        scenario: &'static str,
        started: Instant,
        report: Report,
        structure: Vec<String>,
    ) -> Outcome {
        Outcome {
            scenario,
            elapsed: started.elapsed(),
            figures: BTreeMap::new(),
            report,
            structure,
            unproven: Vec::new(),
            worker_stderr: Vec::new(),
        }
    }

    pub(crate) fn figure(&mut self, name: &'static str, value: impl ToString) {
        self.figures.insert(name, value.to_string());
    }

    /// Records `problem` as a reason the run does not count unless `held`.
    pub(crate) fn require(&mut self, held: bool, problem: impl FnOnce() -> String) {
        if !held {
            self.unproven.push(problem());
        }
    }

    /// Records every problem of `problems`.
    pub(crate) fn require_none(&mut self, problems: impl IntoIterator<Item = String>) {
        self.unproven.extend(problems);
    }

    /// Whether a guarantee was broken or the run does not count.
    pub fn failed(&self) -> bool {
        !self.report.violations.is_empty()
            || !self.structure.is_empty()
            || !self.unproven.is_empty()
    }

    /// Panics with everything measured when the scenario failed.
    #[track_caller]
    pub fn assert_ok(&self) {
        assert!(!self.failed(), "{self}");
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "== {} ({:.1?})", self.scenario, self.elapsed)?;
        for (k, v) in &self.figures {
            writeln!(f, "  {k}: {v}")?;
        }
        write!(f, "  {}", self.report)?;
        writeln!(
            f,
            "  structural checks: {} violations",
            self.structure.len()
        )?;
        for v in self.structure.iter().take(20) {
            writeln!(f, "    - {v}")?;
        }
        writeln!(
            f,
            "  the run counts as evidence: {}",
            if self.unproven.is_empty() {
                "yes"
            } else {
                "NO"
            }
        )?;
        for v in self.unproven.iter().take(20) {
            writeln!(f, "    - {v}")?;
        }
        if self.failed() {
            for (name, text) in &self.worker_stderr {
                let lines: Vec<&str> = text.lines().collect();
                if lines.is_empty() {
                    continue;
                }
                let tail = &lines[lines.len().saturating_sub(STDERR_TAIL)..];
                writeln!(f, "  stderr of {name} (last {} lines):", tail.len())?;
                for line in tail {
                    writeln!(f, "    | {line}")?;
                }
            }
        }
        Ok(())
    }
}
