//! How a script becomes the text loaded into Redis, and how a line of that
//! text is traced back to the file it came from.
//!
//! A script names the helper modules it uses on a header line
//! `-- include: name name ...`; a module may include others the same way.
//! The composed text is the script's first line (its `#!lua` shebang with its
//! flags), then every module it needs, each once and after the modules it
//! includes, then the rest of the script. Redis reports a Lua error at a line
//! of that text (`user_script:N`); [`Composed::explain`] rewrites it to the
//! file and line a reader opens (`lua/lib/check.lua:12`).
//!
//! Redis runs the whole composed text on every call, so every module's body
//! (its functions' closures, its tables) is built again each call, used or
//! not: about 1 000 instructions a function, more when it uses names defined
//! early (in Lua 5.1 a closure finds each upvalue by walking the list of open
//! upvalues from the top of the stack, and a local's first capture allocates
//! it: about 450 instructions an upvalue). So a module is composed lazily:
//! the script's top declares, for each lazy module, an empty table
//! `<module>__` sharing one metatable `lazy__`; every use of the module's
//! locals (in the modules after it and in the script) is written
//! `<module>__.name` (`rename.rs`, on the same line). The one `__index` of
//! that metatable, defined after every other module, holds each lazy
//! module's body as a branch (`if lazy__module == flow__ then ...`): the
//! call's first use of a module runs its branch, which puts its locals in a
//! table of their own (built whole, no rehashing) that replaces `<module>__`,
//! so later uses read that. A call pays only for the modules it touches,
//! plus a table a lazy module and one closure for them all (whose upvalues
//! are the lazy tables and the other modules' locals they use, each captured
//! once: a closure per module cost about 4 000 instructions each, mostly
//! walking and capturing upvalues). The composition panics, naming the
//! script, if that closure would need more than Lua 5.1's 60 upvalues, or
//! the modules more than half of the 200 locals of the top level. Moving the
//! lazy bodies after the other modules changes no name they see: a module
//! uses only the names of the modules it includes (a unit test), and no
//! eager or inline module includes a lazy one (asserted here). Modules every
//! call uses say `-- composed eager: <why>` and run at once in a function of
//! their own (`local a, b = (function() ... return a, b end)()`: their
//! closures take the outer names as copies, no walk); a module whose locals
//! a script assigns says `-- composed inline: <why>` and is plain top-level
//! text. The added lines are lines of their own, traced to no file; a
//! renamed line is traced to the line it came from.
//!
//! Last, a script that includes `keys` has each `K.<name>` bound to its own
//! `KEYS[i]` (`queue_keys.rs`), and its second line, generated, says how
//! many queue keys it takes and which: `local QUEUE_KEY_COUNT = n -- KEYS:
//! ...`. A variant ([`compose_variant`]) is the same text bound to the
//! fewer keys its script's `-- variant` header line names, every other key
//! written `false` (`lua/README.md`, "Variants").

use super::catalogue::MODULES;
use super::queue_keys;
use super::rename::{code_words, is_field, rename};

/// A script composed with its modules, and where each line came from.
#[derive(Debug, Clone)]
pub struct Composed {
    /// The text loaded into Redis.
    pub text: String,
    pieces: Vec<Piece>,
    /// The queue keys the script takes, in its KEYS order (`None`: it takes
    /// none: it does not include `keys`).
    queue_keys: Option<Vec<&'static str>>,
}

/// A run of consecutive composed lines taken from one file.
#[derive(Debug, Clone)]
struct Piece {
    /// The composed line (from 1) the run starts at.
    first: usize,
    /// How many lines it has.
    lines: usize,
    /// The file, as a path from the workspace root.
    file: String,
    /// The file's line (from 1) the run starts at.
    file_first: usize,
}

/// The modules a script or module declares on its `-- include:` lines.
pub fn includes(source: &str) -> Vec<&str> {
    source
        .lines()
        .filter_map(|line| line.strip_prefix("-- include:"))
        .flat_map(str::split_whitespace)
        .collect()
}

/// The text of module `name` (panics for an unknown name: includes are
/// compile-time constants, and a unit test composes every script).
fn module(name: &str) -> &'static str {
    MODULES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("no module lua/lib/{name}.lua"))
}

/// The locals a module defines at its top level (what the scripts that
/// include it may use): `local function f(`, `local a, b = ...`, `local x`.
pub fn defined(module_text: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    let declared = module_text
        .lines()
        .filter_map(|line| line.strip_prefix("local "))
        .flat_map(|rest| {
            let names = match rest.strip_prefix("function ") {
                Some(f) => f.split('(').next().unwrap_or(""),
                None => rest.split('=').next().unwrap_or(""),
            };
            names.split(',').map(str::trim)
        })
        .filter(|n| !n.is_empty());
    for name in declared {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// How a module is composed.
enum Composition {
    /// Plain top-level text, its locals shared with the script (a script
    /// assigns one of them): the module says `-- composed inline: <why>`.
    Inline,
    /// In a function of its own run at once: the module says
    /// `-- composed eager: <why>` (every call uses it).
    Eager,
    /// A branch of the lazy tables' one `__index`, run by the first use of
    /// any of its locals in the call, read through its table
    /// (`flow__.hold`): every other module.
    Lazy,
}

const INLINE_MARK: &str = "-- composed inline:";
const EAGER_MARK: &str = "-- composed eager:";
/// A lazy module whose top-level locals hold state of one call (a cache of
/// what the call read): in a function library its table is made unbuilt
/// again at every call's entry (see [`compose_function`]).
const PER_CALL_MARK: &str = "-- composed per call:";
/// A memo of a module: a top-level local its functions fill once and never
/// change after (derived from constants only), so it may outlive a call.
#[cfg(test)]
const MEMO_MARK: &str = "-- composed memo:";
/// The lines of an inline module that read the call's own arguments
/// (`local QUEUE = ARGV[1]`), from this line to [`PER_CALL_END`]: in a
/// function library they run at every call's entry.
const PER_CALL_BEGIN: &str = "-- per call: begin";
const PER_CALL_END: &str = "-- per call: end";

/// Whether lazy module text `module_text` keeps state of one call.
fn per_call(module_text: &str) -> bool {
    module_text
        .lines()
        .any(|line| line.starts_with(PER_CALL_MARK))
}

/// The locals module text `module_text` declares as memos
/// (`-- composed memo: name <why>`).
#[cfg(test)]
pub(crate) fn memos(module_text: &str) -> Vec<&str> {
    module_text
        .lines()
        .filter_map(|line| line.strip_prefix(MEMO_MARK))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect()
}

/// The names the per-call blocks of module text `module_text` declare.
pub(crate) fn per_call_names(module_text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in module_text.lines() {
        if line.starts_with(PER_CALL_BEGIN) {
            inside = true;
        } else if line.starts_with(PER_CALL_END) {
            inside = false;
        } else if inside {
            names.extend(defined(line));
        }
    }
    names
}

fn composition(module_text: &str) -> Composition {
    let says = |mark: &str| module_text.lines().any(|line| line.starts_with(mark));
    if says(INLINE_MARK) {
        Composition::Inline
    } else if says(EAGER_MARK) {
        Composition::Eager
    } else {
        Composition::Lazy
    }
}

/// Whether module text `module_text` runs inside a function of its own.
#[cfg(test)]
pub(crate) fn wrapped(module_text: &str) -> bool {
    !matches!(composition(module_text), Composition::Inline)
}

/// The modules `source` needs, each once, every module after those it
/// includes (panics on an include cycle).
pub fn needed_modules(source: &str) -> Vec<&'static str> {
    fn visit(name: &'static str, open: &mut Vec<&'static str>, done: &mut Vec<&'static str>) {
        if done.contains(&name) {
            return;
        }
        assert!(
            !open.contains(&name),
            "include cycle: {} -> {name}",
            open.join(" -> ")
        );
        open.push(name);
        for dep in includes(module(name)) {
            visit(static_name(dep), open, done);
        }
        open.pop();
        done.push(name);
    }
    let mut done = Vec::new();
    for name in includes(source) {
        visit(static_name(name), &mut Vec::new(), &mut done);
    }
    done
}

/// The catalogue's own spelling of a module name.
fn static_name(name: &str) -> &'static str {
    MODULES
        .iter()
        .map(|(n, _)| *n)
        .find(|n| *n == name)
        .unwrap_or_else(|| panic!("no module lua/lib/{name}.lua"))
}

/// Compose script `name` (the file `lua/<name>.lua`) from its `source`.
pub fn compose(name: &str, source: &str) -> Composed {
    compose_with(name, source, &mut |text| text.to_owned())
}

/// Compose `variant` of script `name` (its `source` declares it on a line
/// `-- variant <variant>: <keys>`): the same text, taking only those queue
/// keys, each other key it names read as `false` (`queue_keys::bind`).
/// Panics when the source declares no such variant, or names a key its
/// composition never uses.
pub fn compose_variant(name: &str, variant: &str, source: &str) -> Composed {
    compose_as(
        name,
        source,
        &mut |text| text.to_owned(),
        Form::Script,
        Some(variant),
    )
}

/// [`compose_variant`] as a function library ([`compose_function`]).
pub fn compose_variant_function(
    name: &str,
    variant: &str,
    source: &str,
    function_name: &str,
) -> Composed {
    compose_as(
        name,
        source,
        &mut |text| text.to_owned(),
        Form::Function(function_name),
        Some(variant),
    )
}

/// The variants a script's `source` declares, each with its queue keys:
/// one header line each, `-- variant <variant>: <key> <key> ...`.
pub fn variants(source: &str) -> Vec<(&str, Vec<&str>)> {
    source
        .lines()
        .take_while(|line| line.starts_with("--") || line.starts_with("#!"))
        .filter_map(|line| line.strip_prefix("-- variant "))
        .filter_map(|rest| rest.split_once(':'))
        .map(|(variant, keys)| (variant.trim(), keys.split_whitespace().collect()))
        .collect()
}

/// [`compose`] with each module's text passed through `module_text` first
/// (before any name is rewritten): how the tests build deliberately broken
/// variants of a module's code.
pub fn compose_with(
    name: &str,
    source: &str,
    module_text: &mut dyn FnMut(&str) -> String,
) -> Composed {
    compose_as(name, source, module_text, Form::Script, None)
}

/// Script `name` composed as a Redis Function library of one function,
/// `function_name` (also the library's name), for `FCALL`: the same text
/// as [`compose`]'s, so the same behaviour, arranged so that what a call
/// builds stays built.
///
/// The modules (the count line, the lazy tables, every module, the lazy
/// builder) become the body of `build__`, run once, at the first call
/// (Redis refuses `setmetatable` while a library loads); the script's own
/// text becomes the function `build__` returns, run at every call. `KEYS`
/// and `ARGV` are locals of the library, set by every call before anything
/// reads them, so the bound `KEYS[i]` and every read of `ARGV` see the
/// call's own. What a module keeps of one call is started again at the
/// call's entry: an inline module's per-call block (`-- per call: begin`,
/// its locals declared in `build__`, assigned there), and a lazy module
/// marked `-- composed per call:` made unbuilt (its table given back its
/// metatable), so its first use in the call builds it afresh, exactly as in
/// a script. Every other module's state is constant or a declared memo (a
/// unit test checks that no function assigns a module's top-level local
/// otherwise).
pub fn compose_function(name: &str, source: &str, function_name: &str) -> Composed {
    compose_as(
        name,
        source,
        &mut |text| text.to_owned(),
        Form::Function(function_name),
        None,
    )
}

/// What the composition is for.
#[derive(Clone, Copy)]
enum Form<'a> {
    /// A script, for `EVALSHA`.
    Script,
    /// A function library whose one function has this name, for `FCALL`.
    Function(&'a str),
}

/// Whether a script whose text (its source, or its composition: both start
/// with its shebang line) is `text` may write: its shebang does not declare
/// `no-writes`.
pub fn shebang_writes(text: &str) -> bool {
    let shebang = text.lines().next().unwrap_or_default();
    !shebang_flags(shebang).contains(&"no-writes")
}

/// The flags of a script's shebang line (`#!lua flags=no-writes,allow-oom`).
fn shebang_flags(shebang: &str) -> Vec<&str> {
    shebang
        .split_whitespace()
        .find_map(|word| word.strip_prefix("flags="))
        .map(|flags| flags.split(',').filter(|f| !f.is_empty()).collect())
        .unwrap_or_default()
}

fn compose_as(
    name: &str,
    source: &str,
    module_text: &mut dyn FnMut(&str) -> String,
    form: Form,
    variant: Option<&str>,
) -> Composed {
    let only = variant.map(|variant| {
        variants(source)
            .into_iter()
            .find(|(declared, _)| *declared == variant)
            .map(|(_, keys)| keys)
            .unwrap_or_else(|| panic!("lua/{name}.lua declares no variant {variant}"))
    });
    let (shebang, body) = source
        .split_once('\n')
        .expect("every script starts with a shebang line");
    let mut composed = Composed {
        text: String::with_capacity(source.len() + 16 * 1024),
        pieces: Vec::new(),
        queue_keys: None,
    };
    let script_file = format!("lua/{name}.lua");
    match form {
        Form::Script => composed.push(&script_file, 1, shebang),
        Form::Function(function_name) => {
            assert!(
                function_name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                "a function name is letters, digits and underscores: {function_name}"
            );
            composed.push_generated(&format!("#!lua name={function_name}"));
            composed.push_generated("local KEYS, ARGV");
            composed.push_generated("local run__");
            composed.push_generated("local function build__()");
        }
    }
    // In a function library: the per-call blocks of the inline modules, run
    // at every call's entry, and the per-call lazy modules' tables.
    let mut entry_blocks: Vec<(String, usize, String)> = Vec::new();
    let mut per_call_tables: Vec<String> = Vec::new();
    let modules: Vec<(&str, String)> = needed_modules(source)
        .into_iter()
        .map(|m| (m, module_text(module(m))))
        .collect();
    let takes_queue_keys = modules.iter().any(|(m, _)| *m == "keys");
    // Its queue key count and names, written once the keys are bound.
    const COUNT_PLACEHOLDER: &str = "-- (the queue key count)";
    if takes_queue_keys {
        composed.push_generated(COUNT_PLACEHOLDER);
    }
    let lazy_names: Vec<&str> = modules
        .iter()
        .filter(|(_, text)| matches!(composition(text), Composition::Lazy))
        .map(|(m, _)| *m)
        .collect();
    // Every lazy module's table, declared before any module that may use it.
    if !lazy_names.is_empty() {
        composed.push_generated(&format!("local {LAZY_METATABLE} = {{}}"));
        for module_name in &lazy_names {
            let table = lazy_table(module_name);
            composed.push_generated(&format!(
                "local {table} = setmetatable({{}}, {LAZY_METATABLE})"
            ));
        }
    }
    // The lazy modules' locals composed so far, each with its table.
    let mut renames: Vec<(String, String)> = Vec::new();
    // The lazy modules' renamed texts, composed after every other module.
    let mut lazy: Vec<LazyModule> = Vec::new();
    // The top-level locals of the eager and inline modules.
    let mut outer: Vec<&str> = Vec::new();
    for (module_name, text) in &modules {
        let file = format!("lua/lib/{module_name}.lua");
        let renamed = rename(text, &renames);
        let names = defined(text);
        let lazy_include = includes(text).into_iter().find(|m| lazy_names.contains(m));
        assert!(
            matches!(composition(text), Composition::Lazy) || lazy_include.is_none(),
            "{file} runs at once (composed eager or inline) but includes \
             lua/lib/{}.lua, which is lazy and built only after every module that runs at once",
            lazy_include.unwrap_or_default()
        );
        let blocks = per_call_names(text);
        assert!(
            blocks.is_empty() || matches!(composition(text), Composition::Inline),
            "{file} has a per-call block but is not composed inline: its locals would be \
             copies the call's entry cannot assign"
        );
        let rebuilt_each_call = matches!(composition(text), Composition::Lazy) && per_call(text);
        if matches!(form, Form::Function(_)) && !rebuilt_each_call {
            check_build_reads_no_call(&file, &renamed);
        }
        match composition(text) {
            Composition::Inline if blocks.is_empty() || matches!(form, Form::Script) => {
                composed.push(&file, 1, &renamed)
            }
            Composition::Inline => {
                composed.push_moving_per_call_blocks(&file, &renamed, &mut entry_blocks)
            }
            Composition::Eager => {
                let names = names.join(", ");
                composed.push_generated(&format!("local {names} = (function()"));
                composed.push(&file, 1, &renamed);
                composed.push_generated(&format!("return {names} end)()"));
            }
            Composition::Lazy => {
                let table = lazy_table(module_name);
                if per_call(text) {
                    per_call_tables.push(table.clone());
                }
                renames.extend(names.iter().map(|n| (n.to_string(), table.clone())));
                lazy.push(LazyModule {
                    table,
                    file,
                    text: renamed,
                    names,
                });
                continue;
            }
        }
        outer.extend(names);
    }
    if takes_queue_keys {
        outer.push("QUEUE_KEY_COUNT"); // the count line queue_keys.rs writes
    }
    if matches!(form, Form::Function(_)) {
        outer.extend(["KEYS", "ARGV"]); // the library's locals
    }
    if !lazy.is_empty() {
        check_lazy_limits(&script_file, &lazy, &outer);
        composed.push_lazy_modules(&lazy);
    }
    let body = rename(body, &renames);
    match form {
        Form::Script => composed.push(&script_file, 2, &body),
        Form::Function(function_name) => {
            composed.push_generated("return function()");
            for table in &per_call_tables {
                composed.push_generated(&format!(
                    "if getmetatable({table}) == nil then {table} = setmetatable({{}}, {LAZY_METATABLE}) end"
                ));
            }
            for (file, line, text) in &entry_blocks {
                composed.push(file, *line, text);
            }
            composed.push(&script_file, 2, &body);
            composed.push_generated("end end");
            let flags: Vec<String> = shebang_flags(shebang)
                .iter()
                .map(|flag| format!("'{flag}'"))
                .collect();
            composed.push_generated(&format!(
                "redis.register_function{{function_name = '{function_name}', callback = \
                 function(keys, args) KEYS, ARGV = keys, args if not run__ then run__ = build__() end \
                 return run__() end, flags = {{ {} }}}}",
                flags.join(", ")
            ));
        }
    }
    if takes_queue_keys {
        composed.bind_queue_keys(COUNT_PLACEHOLDER, only.as_deref());
    }
    if let Some(only) = &only {
        let bound = composed.queue_keys().unwrap_or_default();
        let unused: Vec<&&str> = only.iter().filter(|k| !bound.contains(k)).collect();
        assert!(
            unused.is_empty(),
            "lua/{name}.lua: its variant {} names keys its composition never uses: {unused:?}",
            variant.unwrap_or_default()
        );
    }
    composed
}

/// Panics when module text `text` (of `file`) reads the call's keys or
/// arguments at its top level outside a per-call block: in a function
/// library that code runs once, so it would keep the first call's.
fn check_build_reads_no_call(file: &str, text: &str) {
    let mut inside = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with(PER_CALL_BEGIN) {
            inside = true;
        } else if line.starts_with(PER_CALL_END) {
            inside = false;
        }
        let code = line.split("--").next().unwrap_or("");
        // A one-line function at the top level reads them when called.
        let top_level = !code.starts_with([' ', '\t'])
            && !code.starts_with("local function ")
            && !code.starts_with("function ");
        let reads_call = code_words(code)
            .into_iter()
            .any(|(start, end)| matches!(&code[start..end], "ARGV" | "KEYS" | "K"));
        assert!(
            inside || !top_level || !reads_call,
            "{file}:{}: reads the call's keys or arguments at its top level: put it in a \
             per-call block (`{PER_CALL_BEGIN}` ... `{PER_CALL_END}`)",
            i + 1
        );
    }
}

/// The table a lazy module's locals are read from: `flow__.hold`.
fn lazy_table(module_name: &str) -> String {
    format!("{module_name}__")
}

/// The metatable every lazy module's table shares, its `__index` the one
/// function that builds them all.
const LAZY_METATABLE: &str = "lazy__";

/// Lua 5.1's limit on a function's upvalues (LUAI_MAXUPVALUES).
const MAX_UPVALUES: usize = 60;

/// Lua 5.1's limit on a function's active locals (LUAI_MAXVARS).
const MAX_LOCALS: usize = 200;

/// A lazy module as composed: its table, its file, its text (with the names
/// of the lazy modules before it rewritten) and the locals it defines.
struct LazyModule<'a> {
    table: String,
    file: String,
    text: String,
    names: Vec<&'a str>,
}

/// Panics, naming the script, when its lazy modules' builder would need more
/// upvalues than Lua 5.1 allows (every lazy table, and each top-level local
/// of the eager and inline modules a lazy module uses), or its top level
/// more locals: Redis would refuse the script at load, naming no file.
fn check_lazy_limits(script_file: &str, lazy: &[LazyModule], outer: &[&str]) {
    let mut upvalues: Vec<&str> = lazy.iter().map(|m| m.table.as_str()).collect();
    for module in lazy {
        let bytes = module.text.as_bytes();
        for (start, end) in code_words(&module.text) {
            let word = &module.text[start..end];
            if outer.contains(&word) && !is_field(bytes, start) && !upvalues.contains(&word) {
                upvalues.push(word);
            }
        }
    }
    assert!(
        upvalues.len() <= MAX_UPVALUES,
        "{script_file}: its lazy modules' builder would capture {} names ({}), more than the \
         {MAX_UPVALUES} upvalues a Lua 5.1 function may have: compose fewer lazy modules or \
         make one eager",
        upvalues.len(),
        upvalues.join(" ")
    );
    // The other modules' top-level locals (QUEUE_KEY_COUNT among them), the
    // lazy tables and their metatable; the script's own come on top, so
    // leave it room.
    let top_level = outer.len() + lazy.len() + 1;
    assert!(
        top_level <= MAX_LOCALS / 2,
        "{script_file}: its modules declare {top_level} top-level locals, leaving the script \
         too few of the {MAX_LOCALS} a Lua 5.1 function may have"
    );
}

impl Composed {
    /// Each `K.<name>` rewritten to its `KEYS[i]` (`queue_keys.rs`), and the
    /// generated line `placeholder` replaced by the key count and names
    /// (panics on a use of K it cannot bind, naming the file and line: a unit
    /// test composes every script).
    fn bind_queue_keys(&mut self, placeholder: &str, only: Option<&[&str]>) {
        let bound = match queue_keys::bind(&self.text, only) {
            Ok(bound) => bound,
            Err(misuse) => {
                let line = self.text[..misuse.at].matches('\n').count() + 1;
                let (file, at) = self.locate(line).unwrap_or(("the composed script", line));
                panic!("{file}:{at}: {}", misuse.what);
            }
        };
        self.text = bound
            .text
            .replacen(placeholder, &queue_keys::count_line(&bound.keys), 1);
        self.queue_keys = Some(bound.keys);
    }

    /// The queue keys the script takes, in its KEYS order (`None`: it takes
    /// none); the caller sends these, then any keys of its own.
    pub fn queue_keys(&self) -> Option<&[&'static str]> {
        self.queue_keys.as_deref()
    }

    /// Whether the script may write: its shebang does not declare
    /// `no-writes` (Redis holds such a call during `CLIENT PAUSE WRITE` and
    /// refuses it on a read-only replica).
    pub fn writes(&self) -> bool {
        shebang_writes(&self.text)
    }

    /// `line` of this composed script as its file has it: without the lazy
    /// tables in front of the names it uses, its keys named as `K.<name>`.
    #[cfg(test)]
    pub(crate) fn as_written(&self, line: &str) -> String {
        let mut line = line.to_owned();
        for (module_name, _) in MODULES {
            line = line.replace(&format!("{}.", lazy_table(module_name)), "");
        }
        queue_keys::unbound(&line, self.queue_keys().unwrap_or_default())
    }

    /// Append `text` (whole lines of `file` from line `file_first`).
    fn push(&mut self, file: &str, file_first: usize, text: &str) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let first = self.pieces.last().map_or(1, |p| p.first + p.lines);
        self.pieces.push(Piece {
            first,
            lines: text.lines().count().max(1),
            file: file.to_owned(),
            file_first,
        });
        self.text.push_str(text);
        self.text.push('\n');
    }

    /// Every lazy module, in order, as a branch of the one `__index` of
    /// their shared metatable: the first use of a lazy table runs its
    /// module's text, puts its locals in a table of their own (built whole,
    /// no rehashing) that replaces it, and reads the name from that. One
    /// closure for all of them, defined after every other module so that it
    /// captures their locals once each.
    fn push_lazy_modules(&mut self, lazy: &[LazyModule]) {
        self.push_generated(&format!(
            "{LAZY_METATABLE}.__index = function(lazy__module, lazy__name)"
        ));
        for (i, module) in lazy.iter().enumerate() {
            let table = &module.table;
            let keyword = if i == 0 { "if" } else { "elseif" };
            self.push_generated(&format!("{keyword} lazy__module == {table} then"));
            self.push(&module.file, 1, &module.text);
            let fields: Vec<String> = module.names.iter().map(|n| format!("{n} = {n}")).collect();
            self.push_generated(&format!(
                "{table} = {{ {} }} return {table}[lazy__name]",
                fields.join(", ")
            ));
        }
        self.push_generated("end end");
    }

    /// Append inline module `text` (of `file`) with each per-call block
    /// replaced by one line declaring its locals; the block's lines go to
    /// `entry` (each `local ` dropped: they assign those locals), to run at
    /// every call's entry.
    fn push_moving_per_call_blocks(
        &mut self,
        file: &str,
        text: &str,
        entry: &mut Vec<(String, usize, String)>,
    ) {
        let lines: Vec<&str> = text.lines().collect();
        // The run of lines pushed as they are, from file line `run_start`.
        let mut run_start = 1;
        let mut run = String::new();
        let mut at = 0;
        while at < lines.len() {
            let line = lines[at];
            run.push_str(line);
            run.push('\n');
            at += 1;
            if !line.starts_with(PER_CALL_BEGIN) {
                continue;
            }
            self.push(file, run_start, &run);
            run.clear();
            let end = lines[at..]
                .iter()
                .position(|l| l.starts_with(PER_CALL_END))
                .map(|n| at + n)
                .unwrap_or_else(|| panic!("{file}: a per-call block without its end line"));
            let block = &lines[at..end];
            let names: Vec<&str> = block.iter().flat_map(|l| defined(l)).collect();
            self.push_generated(&format!("local {}", names.join(", ")));
            for (i, line) in block.iter().enumerate() {
                let assigned = line.strip_prefix("local ").unwrap_or(line);
                entry.push((file.to_owned(), at + i + 1, assigned.to_owned()));
            }
            at = end;
            run_start = end + 1;
        }
        if !run.is_empty() {
            self.push(file, run_start, &run);
        }
    }

    /// A line the composer wrote itself (a module's opening or closing).
    fn push_generated(&mut self, line: &str) {
        self.push("", 1, line);
    }

    /// The file and line that composed line `line` (from 1) came from
    /// (`None` for a line the composer wrote).
    pub fn locate(&self, line: usize) -> Option<(&str, usize)> {
        self.pieces
            .iter()
            .find(|p| (p.first..p.first + p.lines).contains(&line))
            .filter(|p| !p.file.is_empty())
            .map(|p| (p.file.as_str(), p.file_first + (line - p.first)))
    }

    /// `message` (a Redis error about this script) with every
    /// `user_script:N` rewritten to the file and line it names.
    pub fn explain(&self, message: &str) -> String {
        let mut out = String::with_capacity(message.len() + 32);
        let mut rest = message;
        // A script's lines are `user_script:N`, a function library's
        // `user_function:N` (one text is only ever either).
        let mark = if message.contains("user_function:") {
            "user_function:"
        } else {
            "user_script:"
        };
        while let Some(at) = rest.find(mark) {
            out.push_str(&rest[..at]);
            let after = &rest[at + mark.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            match after[..digits].parse().ok().and_then(|n| self.locate(n)) {
                Some((file, line)) => out.push_str(&format!("{file}:{line}")),
                None => out.push_str(&rest[at..at + mark.len() + digits]),
            }
            rest = &after[digits..];
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripts::catalogue::SCRIPTS;

    /// The words of `text` outside comments (the scripts put no `--` in strings).
    fn words(text: &str) -> std::collections::HashSet<&str> {
        text.lines()
            .map(|line| line.split("--").next().unwrap_or(""))
            .flat_map(|code| code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
            .filter(|w| !w.is_empty())
            .collect()
    }

    /// Every script and module: its file, its own text, the modules it may use.
    fn units() -> Vec<(String, &'static str, Vec<&'static str>)> {
        let scripts = SCRIPTS
            .iter()
            .map(|(name, text)| (format!("lua/{name}.lua"), *text, needed_modules(text)));
        let modules = MODULES.iter().map(|(name, text)| {
            let mut may_use = needed_modules(text);
            may_use.push(name);
            (format!("lua/lib/{name}.lua"), *text, may_use)
        });
        scripts.chain(modules).collect()
    }

    #[test]
    fn every_script_and_module_includes_what_it_uses_and_nothing_more() {
        for (file, text, may_use) in units() {
            let used = words(text);
            for (module_name, module_text) in MODULES {
                let mut names = defined(module_text);
                if *module_name == "keys" {
                    // Not locals: names the composer binds (queue_keys.rs).
                    names.extend(["K", "QUEUE_KEY_COUNT"]);
                }
                assert!(
                    !names.is_empty(),
                    "lua/lib/{module_name}.lua defines nothing"
                );
                if !may_use.contains(module_name) {
                    let stray: Vec<_> = names.iter().filter(|n| used.contains(*n)).collect();
                    assert!(
                        stray.is_empty(),
                        "{file} uses {stray:?} of lua/lib/{module_name}.lua without including it"
                    );
                }
            }
            for direct in includes(text) {
                let bound_names = if direct == "keys" {
                    &["K", "QUEUE_KEY_COUNT"][..]
                } else {
                    &[]
                };
                assert!(
                    defined(module(direct))
                        .iter()
                        .chain(bound_names)
                        .any(|n| used.contains(n)),
                    "{file} includes lua/lib/{direct}.lua and uses nothing of it"
                );
            }
        }
    }

    /// The numbers `n` of every `KEYS[n]` in `text` written with a literal index.
    fn literal_key_indexes(text: &str) -> Vec<usize> {
        text.split("KEYS[")
            .skip(1)
            .filter_map(|rest| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .collect()
    }

    /// A header that numbers the queue key list goes stale the day the list
    /// grows (three schedule headers once said `KEYS[1..19]` of a list of
    /// 27), so a script that takes the list names it, and its own keys after
    /// it, by `QUEUE_KEY_COUNT`; a script with keys of its own numbers them
    /// 1, 2, ... and uses no index it does not declare.
    #[test]
    fn every_script_header_declares_its_keys_in_a_form_that_cannot_go_stale() {
        for (name, text) in SCRIPTS {
            let header: String = text
                .lines()
                .skip_while(|line| line.starts_with("#!"))
                .take_while(|line| line.starts_with("--"))
                .map(|line| format!("{line}\n"))
                .collect();
            let body = &text[header.len().min(text.len())..];
            assert!(
                header.contains("-- KEYS"),
                "lua/{name}.lua: its header declares no KEYS"
            );
            if needed_modules(text).contains(&"keys") {
                assert!(
                    header.contains("lua/lib/keys.lua"),
                    "lua/{name}.lua takes the queue key list but its header does not say so"
                );
                assert_eq!(
                    literal_key_indexes(&header),
                    Vec::<usize>::new(),
                    "lua/{name}.lua numbers the queue key list in its header: name its own keys \
                     by KEYS[QUEUE_KEY_COUNT + n]"
                );
            } else {
                let declared = literal_key_indexes(&header);
                let numbered: Vec<usize> = (1..=declared.len()).collect();
                assert_eq!(
                    declared, numbered,
                    "lua/{name}.lua: KEYS lines out of order"
                );
                for used in literal_key_indexes(body) {
                    assert!(
                        used <= declared.len(),
                        "lua/{name}.lua uses KEYS[{used}], which its header does not declare"
                    );
                }
            }
        }
    }

    #[test]
    fn every_lua_file_is_listed_once() {
        let listed = |dir: &str| -> Vec<String> {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            let mut names: Vec<String> = std::fs::read_dir(path)
                .unwrap()
                .filter_map(|entry| {
                    let name = entry.unwrap().file_name().into_string().unwrap();
                    name.strip_suffix(".lua").map(str::to_owned)
                })
                .collect();
            names.sort();
            names
        };
        let mut scripts: Vec<String> = SCRIPTS.iter().map(|(n, _)| n.to_string()).collect();
        scripts.sort();
        assert_eq!(
            listed("lua"),
            scripts,
            "lua/*.lua and catalogue::SCRIPTS differ"
        );
        let mut modules: Vec<String> = MODULES.iter().map(|(n, _)| n.to_string()).collect();
        modules.sort();
        assert_eq!(
            listed("lua/lib"),
            modules,
            "lua/lib/*.lua and catalogue::MODULES differ"
        );
    }

    /// Whether `code` (one line, comments cut) assigns to the plain name
    /// `name`: `name =`, `x, name =`, not `t.name =`, `name ==`, `local name =`.
    fn assigns(code: &str, name: &str) -> bool {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        code.match_indices(name).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + name.len()..].trim_start();
            let declared =
                code[..at].trim_end().ends_with("local") || code.trim_start().starts_with("local ");
            !before.is_some_and(|c| word(c) || c == '.')
                && !code[at + name.len()..].starts_with(word)
                && after.starts_with('=')
                && !after.starts_with("==")
                && !declared
        })
    }

    /// A module runs inside its own function (see the module docs), so the
    /// script sees copies of its locals: a script or another module that
    /// assigned one would change its copy, not the module's. Such a module
    /// must say `-- composed inline:`.
    #[test]
    fn no_file_assigns_a_local_of_a_wrapped_module() {
        for (module_name, module_text) in MODULES.iter().filter(|(_, t)| wrapped(t)) {
            for name in defined(module_text) {
                for (file, text, _) in units() {
                    if file == format!("lua/lib/{module_name}.lua") {
                        continue;
                    }
                    for line in text.lines() {
                        let code = line.split("--").next().unwrap_or("");
                        let assigns = assigns(code, name);
                        assert!(
                            !assigns,
                            "{file} assigns {name} of lua/lib/{module_name}.lua, which runs in \
                             its own function: mark the module `-- composed inline:`"
                        );
                    }
                }
            }
        }
    }

    /// Whether `code` (one line, comments cut) assigns to `name` or into
    /// it: `name =`, `name[k] =`, `name.f =`, `a, name =`, not `name ==`,
    /// `t.name =` or a `local` declaring it.
    fn writes(code: &str, name: &str) -> bool {
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let bytes = code.as_bytes();
        if declared_on(code).contains(&name) {
            return false;
        }
        code.match_indices(name).any(|(at, _)| {
            if at > 0 && (word(bytes[at - 1]) || bytes[at - 1] == b'.') {
                return false;
            }
            // Inside an index (`m[M.gate] = x` writes m, not M).
            let opened = code[..at].matches('[').count();
            if opened > code[..at].matches(']').count() {
                return false;
            }
            let mut i = at + name.len();
            if i < bytes.len() && word(bytes[i]) {
                return false;
            }
            // Its indexing: `[...]` and `.field`, any number of them.
            loop {
                match bytes.get(i) {
                    Some(b'[') => match code[i..].find(']') {
                        Some(close) => i += close + 1,
                        None => return false,
                    },
                    Some(b'.') if bytes.get(i + 1).is_some_and(|c| word(*c)) => {
                        i += 1;
                        while i < bytes.len() && word(bytes[i]) {
                            i += 1;
                        }
                    }
                    _ => break,
                }
            }
            // Then further targets (`, b.c`), each after a comma, and one `=`.
            let mut rest = code[i..].trim_start();
            while let Some(after) = rest.strip_prefix(',') {
                let after = after.trim_start();
                let target = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "_.[]".contains(c)))
                    .unwrap_or(after.len());
                rest = after[target..].trim_start();
            }
            rest.starts_with('=') && !rest.starts_with("==")
        })
    }

    /// In a function library a module's top level runs once, so a module
    /// local a function writes would carry one call's state into the next.
    /// Each such local is per call (its lazy module says
    /// `-- composed per call:`, or it is in an inline module's per-call
    /// block) or a memo (`-- composed memo: name`, filled once from
    /// constants). The check reads each indented line (the scripts' style:
    /// a function's body is indented, the top level is not).
    #[test]
    fn no_function_writes_module_state_a_library_would_keep() {
        for (module_name, module_text) in MODULES {
            if per_call(module_text) {
                continue;
            }
            let kept: Vec<&str> = defined(module_text)
                .into_iter()
                .filter(|n| !memos(module_text).contains(n))
                .filter(|n| !per_call_names(module_text).contains(n))
                .collect();
            for (file, text, may_use) in units() {
                if !may_use.contains(module_name) {
                    continue;
                }
                for (i, line) in text.lines().enumerate() {
                    let code = line.split("--").next().unwrap_or("");
                    if !code.starts_with([' ', '\t']) {
                        continue;
                    }
                    for name in &kept {
                        assert!(
                            !writes(code, name),
                            "{file}:{}: a function writes {name} of lua/lib/{module_name}.lua, \
                             which a function library keeps between calls: mark the module \
                             `-- composed per call:` or the name `-- composed memo:`",
                            i + 1
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_write_check_sees_assignments_into_a_name_and_nothing_else() {
        assert!(writes("  cache[id] = x", "cache"));
        assert!(writes("  wf.cache, wf.changed = {}, {}", "wf"));
        assert!(writes("  a, cache = 1, 2", "cache"));
        assert!(writes("  cache = nil", "cache"));
        assert!(!writes("  if cache == nil then", "cache"));
        assert!(!writes("  local cache = {}", "cache"));
        assert!(!writes("  x.cache = 1", "cache"));
        assert!(!writes("  local v = cache[id]", "cache"));
        assert!(!writes("  caches = 1", "cache"));
        assert!(!writes("  m[M.gate] = gate", "M"));
    }

    /// Every script composes as a function library: its text starts with
    /// the library's shebang, registers one function of its name with the
    /// script's flags, and every line the composer took from a file traces
    /// back to that file's line (the per-call lines without their `local`).
    #[test]
    fn every_script_composes_as_a_function_library_tracing_to_its_files() {
        for (name, source) in SCRIPTS {
            let function_name = format!("redq_{name}_test");
            let library = compose_function(name, source, &function_name);
            let script = compose(name, source);
            assert_eq!(
                library.text.lines().next(),
                Some(format!("#!lua name={function_name}").as_str())
            );
            let shebang = source.lines().next().unwrap();
            let register = library.text.lines().last().unwrap();
            assert!(
                register.starts_with(&format!(
                    "redis.register_function{{function_name = '{function_name}'"
                )),
                "{register}"
            );
            for flag in shebang_flags(shebang) {
                assert!(
                    register.contains(&format!("'{flag}'")),
                    "{name}: {register}"
                );
            }
            assert_eq!(library.queue_keys(), script.queue_keys(), "{name}");
            for (i, line) in library.text.lines().enumerate() {
                let Some((file, at)) = library.locate(i + 1) else {
                    continue;
                };
                let Some((_, written)) = script
                    .text
                    .lines()
                    .enumerate()
                    .find(|(j, _)| script.locate(j + 1) == Some((file, at)))
                else {
                    panic!(
                        "{name}: library line {} ({file}:{at}) is in no script line",
                        i + 1
                    );
                };
                let written = written.strip_prefix("local ").unwrap_or(written);
                let line = line.strip_prefix("local ").unwrap_or(line);
                assert_eq!(line, written, "{name}: library line {}", i + 1);
            }
        }
    }

    #[test]
    fn a_function_error_line_is_traced_like_a_script_line() {
        let source = SCRIPTS.iter().find(|(n, _)| *n == "claim").unwrap().1;
        let library = compose_function("claim", source, "redq_claim_x");
        let at = library
            .text
            .lines()
            .position(|l| l.contains("reclaim_lapsed(now, RECLAIM"))
            .unwrap()
            + 1;
        let file_line = source
            .lines()
            .position(|l| l.contains("reclaim_lapsed(now, RECLAIM"))
            .unwrap()
            + 1;
        assert_eq!(
            library.explain(&format!(
                "ERR user_function:{at}: boom script: redq_claim_x, on @user_function:{at}."
            )),
            format!(
                "ERR lua/claim.lua:{file_line}: boom script: redq_claim_x, on @lua/claim.lua:{file_line}."
            )
        );
    }

    /// The names a line declares: after `local` (to `=`), after `for` (to
    /// `=` or `in`), and a function's parameters.
    fn declared_on(code: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        for (at, _) in code.match_indices("local ") {
            let rest = &code[at + 6..];
            let rest = rest.strip_prefix("function ").unwrap_or(rest);
            spans.push(rest.split(['=', '(']).next().unwrap_or(""));
        }
        for (at, _) in code.match_indices("for ") {
            spans.push(
                code[at + 4..]
                    .split(['='])
                    .next()
                    .unwrap_or("")
                    .split(" in ")
                    .next()
                    .unwrap_or(""),
            );
        }
        for (at, _) in code.match_indices("function") {
            if let Some(open) = code[at..].find('(') {
                let params = &code[at + open + 1..];
                spans.push(params.split(')').next().unwrap_or(""));
            }
        }
        spans
            .into_iter()
            .flat_map(|span| span.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
            .filter(|w| !w.is_empty())
            .collect()
    }

    /// A lazy module's names are rewritten wherever they are used after it
    /// (`flow__.hold`), so a file that declared a local of the same name
    /// would see the module's instead of its own in places.
    #[test]
    fn no_file_declares_a_local_named_as_a_lazy_modules() {
        for (module_name, module_text) in MODULES
            .iter()
            .filter(|(_, t)| matches!(composition(t), Composition::Lazy))
        {
            let names = defined(module_text);
            for (file, text, may_use) in units() {
                if file == format!("lua/lib/{module_name}.lua") || !may_use.contains(module_name) {
                    continue;
                }
                for line in text.lines() {
                    let code = line.split("--").next().unwrap_or("");
                    for word in declared_on(code) {
                        assert!(
                            !names.contains(&word),
                            "{file} declares {word}, a local of lua/lib/{module_name}.lua: rename it"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_wrapped_module_keeps_its_line_numbers_and_its_wrapper_traces_to_no_file() {
        let composed = compose(
            "enqueue",
            SCRIPTS.iter().find(|(n, _)| *n == "enqueue").unwrap().1,
        );
        let clock = module("clock");
        assert!(wrapped(clock));
        let defines = "local function now_ms()";
        let line = composed
            .text
            .lines()
            .position(|l| l.starts_with(defines))
            .unwrap()
            + 1;
        let file_line = clock.lines().position(|l| l.starts_with(defines)).unwrap() + 1;
        assert_eq!(
            composed.locate(line),
            Some(("lua/lib/clock.lua", file_line))
        );
        let opening = composed
            .text
            .lines()
            .position(|l| l.starts_with("local now_ms = (function()"))
            .unwrap();
        assert_eq!(composed.locate(opening + 1), None);
    }

    /// A script gets the keys its composed text names, its lazy modules'
    /// included, in the order of lua/lib/keys.lua, and builds no table of
    /// them; the one generated line that counts them traces to no file.
    #[test]
    fn a_script_takes_the_queue_keys_its_composition_names_and_no_others() {
        let source = "#!lua\n-- include: keys parked\nreturn { K.jobs, QUEUE, parked_read() }\n";
        let composed = compose("test_script", source);
        // lib/parked.lua reads K.parked.
        let expected = vec!["jobs", "parked"];
        assert_eq!(composed.queue_keys(), Some(&expected[..]));
        // No K is left in its code (comments keep theirs).
        assert_eq!(
            queue_keys::bind(&composed.text, None).unwrap().keys,
            Vec::<&str>::new()
        );
        assert!(composed.text.contains("return { KEYS[1], QUEUE,"));
        assert_eq!(
            composed.text.lines().nth(1),
            Some(queue_keys::count_line(&expected).as_str())
        );
        assert_eq!(composed.locate(2), None);
        assert_eq!(queue_keys::declared(&composed.text), Some(expected));
        let no_keys = compose("test_script", "#!lua\n-- include: check\nreturn 1\n");
        assert_eq!(no_keys.queue_keys(), None);
        assert_eq!(queue_keys::declared(&no_keys.text), None);
    }

    #[test]
    #[should_panic(
        expected = "lua/test_script.lua:4: K.wating is not a queue key of lua/lib/keys.lua"
    )]
    fn a_misspelt_key_in_a_script_fails_its_composition_naming_its_line() {
        compose(
            "test_script",
            "#!lua\n-- include: keys\nlocal a = K.jobs\nreturn K.wating\n",
        );
    }

    /// A variant takes only the keys its header line names, reads the
    /// script's others as false, and traces its lines like the script.
    #[test]
    fn a_variant_takes_the_keys_its_header_names_and_reads_the_others_as_false() {
        let source = "#!lua\n-- include: keys parked\n-- variant lean: jobs\n\
                      if not K.parked then return K.jobs end\nreturn parked_read()\n";
        let composed = compose_variant("test_script", "lean", source);
        assert_eq!(composed.queue_keys(), Some(&["jobs"][..]));
        assert!(composed
            .text
            .contains("if not false then return KEYS[1] end"));
        assert_eq!(
            compose("test_script", source).queue_keys(),
            Some(&["jobs", "parked"][..])
        );
        let line = composed
            .text
            .lines()
            .position(|l| l.contains("if not false"))
            .unwrap();
        assert_eq!(composed.locate(line + 1), Some(("lua/test_script.lua", 4)));
        let library = compose_variant_function("test_script", "lean", source, "f");
        assert!(library
            .text
            .contains("if not false then return KEYS[1] end"));
    }

    #[test]
    #[should_panic(
        expected = "lua/test_script.lua: its variant lean names keys its composition never uses: [\"dead\"]"
    )]
    fn a_variant_naming_a_key_its_script_never_uses_fails_its_composition() {
        let source = "#!lua\n-- include: keys\n-- variant lean: jobs dead\nreturn K.jobs\n";
        compose_variant("test_script", "lean", source);
    }

    /// Every variant of the catalogue is declared by its script's header,
    /// and every header's variant is in the catalogue.
    #[test]
    fn the_catalogue_lists_every_variant_the_scripts_declare() {
        use crate::scripts::catalogue::VARIANTS;
        let mut declared: Vec<(&str, &str)> = SCRIPTS
            .iter()
            .flat_map(|(name, source)| variants(source).into_iter().map(|(v, _)| (*name, v)))
            .collect();
        let mut listed: Vec<(&str, &str)> =
            VARIANTS.iter().map(|v| (v.script, v.variant)).collect();
        declared.sort();
        listed.sort();
        assert_eq!(declared, listed);
        for variant in VARIANTS {
            let full = compose(variant.script, variant.source);
            let lean = compose_variant(variant.script, variant.variant, variant.source);
            let (full, lean) = (full.queue_keys().unwrap(), lean.queue_keys().unwrap());
            assert!(
                lean.len() < full.len(),
                "{}: {lean:?} of {full:?}",
                variant.name
            );
        }
    }

    /// For scripts/profile-calls.py: every script as composed, written to
    /// the directory $REDQ_COMPOSED_OUT (`cargo test -p redq --lib
    /// write_composed_scripts -- --ignored`).
    #[test]
    #[ignore = "writes files; run by scripts/profile-calls.py"]
    fn write_composed_scripts() {
        let dir = std::env::var("REDQ_COMPOSED_OUT").expect("REDQ_COMPOSED_OUT names a directory");
        for (name, text) in SCRIPTS {
            std::fs::write(format!("{dir}/{name}.lua"), compose(name, text).text).unwrap();
            // And as a function library named `<name>` (for a profile by FCALL).
            std::fs::write(
                format!("{dir}/{name}.function.lua"),
                compose_function(name, text, name).text,
            )
            .unwrap();
        }
        for variant in crate::scripts::catalogue::VARIANTS {
            let (name, script, source) = (variant.name, variant.script, variant.source);
            std::fs::write(
                format!("{dir}/{name}.lua"),
                compose_variant(script, variant.variant, source).text,
            )
            .unwrap();
            std::fs::write(
                format!("{dir}/{name}.function.lua"),
                compose_variant_function(script, variant.variant, source, name).text,
            )
            .unwrap();
        }
    }

    /// A lazy module's body traces to its file although it is composed after
    /// the eager and inline modules; the lines around it trace to no file.
    #[test]
    fn a_lazy_module_keeps_its_line_numbers_inside_the_shared_builder() {
        let composed = compose(
            "enqueue",
            SCRIPTS.iter().find(|(n, _)| *n == "enqueue").unwrap().1,
        );
        let job_record = module("job_record");
        assert!(matches!(composition(job_record), Composition::Lazy));
        let lines: Vec<&str> = composed.text.lines().collect();
        let branch = lines
            .iter()
            .position(|l| *l == "if lazy__module == job_record__ then")
            .unwrap();
        assert_eq!(composed.locate(branch + 1), None);
        assert_eq!(
            composed.locate(branch + 2),
            Some(("lua/lib/job_record.lua", 1))
        );
        let declared = lines
            .iter()
            .position(|l| *l == "local job_record__ = setmetatable({}, lazy__)")
            .unwrap();
        let events = lines
            .iter()
            .position(|l| l.starts_with("-- lib/events.lua"))
            .unwrap();
        assert!(declared < events && events < branch);
    }

    fn lazy_modules(count: usize) -> Vec<LazyModule<'static>> {
        (0..count)
            .map(|i| LazyModule {
                table: format!("m{i}__"),
                file: format!("lua/lib/m{i}.lua"),
                text: format!("local x{i} = fail(QUEUE)\n"),
                names: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn the_lazy_builder_may_take_sixty_upvalues() {
        // 58 tables, fail and QUEUE (not the unused now_ms).
        check_lazy_limits("lua/x.lua", &lazy_modules(58), &["fail", "QUEUE", "now_ms"]);
    }

    #[test]
    #[should_panic(expected = "lua/x.lua: its lazy modules' builder would capture 61 names")]
    fn a_lazy_builder_over_sixty_upvalues_fails_the_composition() {
        check_lazy_limits("lua/x.lua", &lazy_modules(59), &["fail", "QUEUE", "now_ms"]);
    }

    #[test]
    fn modules_come_after_what_they_include_and_once() {
        let order = needed_modules("-- include: handoff retry");
        let position = |name: &str| order.iter().position(|n| *n == name).unwrap();
        assert!(position("keys") < position("parked"));
        assert!(position("parked") < position("handoff"));
        assert!(position("ordering") < position("retry"));
        let mut unique = order.clone();
        unique.dedup();
        assert_eq!(unique.len(), order.len());
    }
}
