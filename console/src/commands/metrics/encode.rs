//! The Prometheus text exposition format (version 0.0.4), written by hand.
//!
//! Why not the `prometheus-client` crate: it writes OpenMetrics text, which
//! allows no comment lines but `HELP`/`TYPE`/`UNIT`, and this endpoint
//! says why Redis could not be read as a `#` comment next to `redq_up 0`;
//! and its model is a registry of metric objects that instrumentation
//! updates, while every figure here is read from Redis anew at each scrape
//! (it would mean building a throw-away registry per scrape). The format
//! itself is a few rules: `# HELP`, `# TYPE`, then `name{label="value"}
//! value` lines, with `\`, `"` and newlines escaped.

use std::fmt::Write;

/// The content type of this format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric's type as the format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A value that only goes up (until the process restarts).
    Counter,
    /// Cumulative buckets: samples named `_bucket` (with an `le` label),
    /// `_sum` and `_count` after the family's name.
    Histogram,
}

/// One metric family: a name, its help text, and its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub samples: Vec<Sample>,
}

/// One sample of a family: its labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Written after the family's name: `""`, or a histogram's `_bucket`,
    /// `_sum`, `_count`.
    pub suffix: &'static str,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

impl Family {
    /// A family without samples yet.
    pub fn new(name: &'static str, kind: Kind, help: &'static str) -> Family {
        Family {
            name,
            help,
            kind,
            samples: Vec::new(),
        }
    }

    /// Add a sample.
    pub fn sample(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        self.sample_named("", labels, value);
    }

    /// Add a sample written as the family's name and `suffix`.
    pub fn sample_named(
        &mut self,
        suffix: &'static str,
        labels: Vec<(&'static str, String)>,
        value: f64,
    ) {
        self.samples.push(Sample {
            suffix,
            labels,
            value,
        });
    }

    /// This family with one unlabelled sample.
    pub fn single(mut self, value: f64) -> Family {
        self.sample(Vec::new(), value);
        self
    }
}

/// The page: `comments` first (one `#` line each), then every family.
pub fn encode(comments: &[String], families: &[Family]) -> String {
    let mut out = String::new();
    for comment in comments {
        // A comment is one line: a newline in it would start a sample.
        let line: String = comment
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let _ = writeln!(out, "# {line}");
    }
    for family in families {
        let kind = match family.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        };
        let _ = writeln!(out, "# HELP {} {}", family.name, escape_help(family.help));
        let _ = writeln!(out, "# TYPE {} {kind}", family.name);
        for sample in &family.samples {
            out.push_str(family.name);
            out.push_str(sample.suffix);
            if !sample.labels.is_empty() {
                out.push('{');
                for (i, (name, value)) in sample.labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{name}=\"{}\"", escape_label(value));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(sample.value));
        }
    }
    out
}

fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A value as the format writes it: whole numbers without a fraction.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_written_with_help_type_and_escaped_labels() {
        let mut jobs = Family::new(
            "redq_jobs",
            Kind::Gauge,
            "Jobs by state.\nSecond line \\ here.",
        );
        jobs.sample(
            vec![("queue", "a\"b\\c\nd".into()), ("state", "waiting".into())],
            3.0,
        );
        jobs.sample(vec![("queue", "e".into()), ("state", "dead".into())], 0.25);
        let errors = Family::new("redq_scrape_errors_total", Kind::Counter, "Errors.").single(2.0);
        let page = encode(&["Redis refused\nthe connection".into()], &[jobs, errors]);
        assert_eq!(
            page,
            "# Redis refused the connection\n\
             # HELP redq_jobs Jobs by state.\\nSecond line \\\\ here.\n\
             # TYPE redq_jobs gauge\n\
             redq_jobs{queue=\"a\\\"b\\\\c\\nd\",state=\"waiting\"} 3\n\
             redq_jobs{queue=\"e\",state=\"dead\"} 0.25\n\
             # HELP redq_scrape_errors_total Errors.\n\
             # TYPE redq_scrape_errors_total counter\n\
             redq_scrape_errors_total 2\n"
        );
    }

    #[test]
    fn special_values_use_the_format_s_spelling() {
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(1e20), "100000000000000000000");
        assert_eq!(number(12.5), "12.5");
    }
}
