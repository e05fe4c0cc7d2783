//! Every command the docs give for installing runbook is one the release pipeline produces: a
//! registry's package by the name the pipeline publishes, from a job `release.yml` runs; a clone
//! of the repository `Cargo.toml` names, and `cargo install --path .` only inside it. And the
//! README first gives the way that works before any release: a checkout.

use std::path::Path;

/// What the release pipeline makes, read from its own files.
struct Pipeline {
    /// `Cargo.toml`'s package name and repository.
    package: String,
    repository: String,
    /// `npm/build.py`'s main package, when `release.yml` runs a job that publishes it.
    npm: Option<String>,
    /// `release.yml` runs a job that does `cargo publish`.
    crates_io: bool,
    /// `cargo binstall` finds the release archives (`[package.metadata.binstall]`).
    binstall: bool,
    /// dist makes a shell installer.
    shell_installer: bool,
}

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

impl Pipeline {
    fn of_this_project() -> Pipeline {
        let cargo: toml::Table = toml::from_str(&read("Cargo.toml")).expect("Cargo.toml");
        let package = &cargo["package"];
        let dist: toml::Table = toml::from_str(&read("dist-workspace.toml")).expect("dist");
        let dist = &dist["dist"];
        let release = read(".github/workflows/release.yml");
        let runs = |job: &str| release.contains(&format!("uses: ./.github/workflows/{job}.yml"));
        let main = read("npm/build.py").lines().find_map(|l| {
            l.strip_prefix("MAIN = \"")?
                .strip_suffix('"')
                .map(str::to_owned)
        });
        let publishes_npm = runs("publish-npm")
            && read(".github/workflows/publish-npm.yml").contains("npm publish");
        let crates_io = runs("publish-crates")
            && read(".github/workflows/publish-crates.yml").contains("cargo publish")
            && package.get("publish").and_then(toml::Value::as_bool) != Some(false);
        let installers = dist["installers"].as_array().expect("installers");
        Pipeline {
            package: package["name"].as_str().expect("name").to_owned(),
            repository: package["repository"]
                .as_str()
                .expect("repository")
                .to_owned(),
            npm: main.filter(|_| publishes_npm),
            crates_io,
            binstall: package
                .get("metadata")
                .is_some_and(|m| m.get("binstall").is_some()),
            shell_installer: installers.iter().any(|i| i.as_str() == Some("shell")),
        }
    }

    /// Why the pipeline does not give what `command` installs; `None` when it does, or when
    /// the command installs something other than runbook (an agent, a test tool).
    fn refuses(&self, command: &[String], before: &[Vec<String>]) -> Option<String> {
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        let runbook = |name: &str| name.contains("runbook");
        match words.as_slice() {
            ["npm", "install" | "i", rest @ ..] | ["pnpm" | "yarn", "add", rest @ ..] => {
                let names = packages(rest);
                let ours = names.into_iter().filter(|n| runbook(n));
                ours.filter(|n| self.npm.as_deref() != Some(*n))
                    .map(|n| format!("no job of release.yml publishes `{n}` on npm"))
                    .next()
            }
            ["cargo", "binstall", rest @ ..] => packages(rest)
                .into_iter()
                .find(|n| runbook(n) && !(self.binstall && *n == self.package))
                .map(|n| format!("`cargo binstall {n}` finds no release archive of that name")),
            ["cargo", "install", rest @ ..] => self.cargo_install(rest, before),
            ["git", "clone", rest @ ..] => packages(rest)
                .into_iter()
                .find(|url| runbook(url) && url.trim_end_matches(".git") != self.repository)
                .map(|url| format!("`{url}` is not the repository ({})", self.repository)),
            [manager, ..]
                if OTHER_MANAGERS.contains(manager) && words.iter().any(|w| runbook(w)) =>
            {
                Some(format!(
                    "the release pipeline publishes nothing for {manager}"
                ))
            }
            _ if words.iter().any(|w| w.ends_with("installer.sh")) => {
                let name = format!("{}-installer.sh", self.package);
                let named = words.iter().any(|w| w.ends_with(&name));
                (!(self.shell_installer && named))
                    .then(|| "dist makes no such installer".to_owned())
            }
            _ => None,
        }
    }

    fn cargo_install(&self, rest: &[&str], before: &[Vec<String>]) -> Option<String> {
        if let Some(at) = rest.iter().position(|w| *w == "--path") {
            let path = rest.get(at + 1).copied().unwrap_or_default();
            return (path == "." && !self.in_checkout(before)).then(|| {
                "`cargo install --path .` without a `git clone` of the repository and a `cd` into it first"
                    .to_owned()
            });
        }
        if let Some(at) = rest.iter().position(|w| *w == "--git") {
            let url = rest.get(at + 1).copied().unwrap_or_default();
            return (url.trim_end_matches(".git") != self.repository)
                .then(|| format!("`--git {url}` is not the repository"));
        }
        packages(rest)
            .into_iter()
            .find(|n| n.contains("runbook") && !(self.crates_io && *n == self.package))
            .map(|n| format!("no job of release.yml publishes `{n}` on crates.io"))
    }

    /// The commands before are a clone of the repository and a `cd` into it.
    fn in_checkout(&self, before: &[Vec<String>]) -> bool {
        let dir = self.repository.rsplit('/').next().unwrap_or_default();
        let cloned = before.iter().any(|c| {
            c.len() >= 3
                && c[0] == "git"
                && c[1] == "clone"
                && c[2].trim_end_matches(".git") == self.repository
        });
        let entered = before
            .iter()
            .any(|c| c.len() == 2 && c[0] == "cd" && c[1] == dir);
        cloned && entered
    }
}

/// Package managers the pipeline publishes nothing for.
const OTHER_MANAGERS: [&str; 8] = [
    "brew", "pip", "pipx", "apt", "apt-get", "snap", "nix-env", "go",
];

/// The operands of an install command: its words that are not options.
fn packages<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    rest.iter()
        .copied()
        .filter(|w| !w.starts_with('-'))
        .collect()
}

/// The shell commands of a Markdown text, each with the commands before it in the same code
/// block or code span (`a && cd b && c`): lines of fenced blocks and inline code, split at
/// `&&`, `||`, `;` and `|`.
fn commands(markdown: &str) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let mut snippets = Vec::new();
    let mut block: Option<Vec<String>> = None;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            match block.take() {
                Some(lines) => snippets.push(lines),
                None => block = Some(Vec::new()),
            }
            continue;
        }
        match &mut block {
            Some(lines) => lines.push(line.to_owned()),
            None => snippets.extend(
                line.split('`')
                    .skip(1)
                    .step_by(2)
                    .map(|s| vec![s.to_owned()]),
            ),
        }
    }
    let mut out = Vec::new();
    for snippet in snippets {
        let mut before: Vec<Vec<String>> = Vec::new();
        for line in snippet {
            let code = line
                .split(" #")
                .next()
                .unwrap_or_default()
                .trim_start_matches("$ ");
            for part in code
                .split(['&', '|', ';'])
                .map(str::trim)
                .filter(|p| !p.is_empty())
            {
                let Ok(words) = shell_words::split(part) else {
                    continue;
                };
                if !words.is_empty() {
                    out.push((words.clone(), before.clone()));
                    before.push(words);
                }
            }
        }
    }
    out
}

/// What is wrong with the install commands of `markdown`.
fn wrong_installs(pipeline: &Pipeline, markdown: &str) -> Vec<String> {
    commands(markdown)
        .into_iter()
        .filter_map(|(command, before)| {
            let why = pipeline.refuses(&command, &before)?;
            Some(format!("`{}`: {why}", command.join(" ")))
        })
        .collect()
}

/// The first command of a Markdown text that installs runbook (or clones it to build it).
fn first_install(markdown: &str) -> Option<String> {
    commands(markdown).into_iter().find_map(|(command, _)| {
        let installs = matches!(
            command.first().map(String::as_str),
            Some("npm" | "cargo" | "git")
        ) && command
            .iter()
            .skip(1)
            .any(|w| w == "install" || w == "binstall" || w == "clone")
            && command.iter().any(|w| w.contains("runbook") || w == ".");
        installs.then(|| command.join(" "))
    })
}

#[test]
fn every_install_command_in_the_docs_is_one_the_release_pipeline_produces() {
    let pipeline = Pipeline::of_this_project();
    let mut docs = vec!["README.md".to_owned(), "npm/README.md".to_owned()];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            docs.push(format!("docs/{name}"));
        }
    }
    let wrong: Vec<String> = docs
        .iter()
        .flat_map(|doc| {
            wrong_installs(&pipeline, &read(doc))
                .into_iter()
                .map(move |w| format!("{doc}: {w}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "install commands nothing produces:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_readme_first_installs_from_a_checkout_which_works_before_any_release() {
    let pipeline = Pipeline::of_this_project();
    let first = first_install(&read("README.md"));
    let clone = format!("git clone {}", pipeline.repository);
    assert_eq!(
        first.as_deref(),
        Some(clone.as_str()),
        "the README's first install command"
    );
}

#[test]
fn an_install_command_the_pipeline_does_not_produce_is_told() {
    let pipeline = Pipeline {
        package: "runbook-cli".to_owned(),
        repository: "https://github.com/runbook-cli/runbook".to_owned(),
        npm: None,
        crates_io: false,
        binstall: true,
        shell_installer: true,
    };
    let doc = "```sh\nnpm install -g runbook-cli\ncargo install --locked --path .\n```\n\
        Or `cargo install --locked runbook-cli`, `cargo binstall runbook`, `brew install runbook`,\n\
        `git clone https://github.com/someone/runbook`.\n\
        Fine: `npm install -g opencode-ai`, `cargo binstall runbook-cli`, `cargo install cargo-deny`,\n\
        ```sh\ngit clone https://github.com/runbook-cli/runbook && cd runbook && cargo install --path .\n```\n";
    let wrong = wrong_installs(&pipeline, doc);
    let told: Vec<&str> = wrong
        .iter()
        .map(|w| w.split('`').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(
        told,
        [
            "npm install -g runbook-cli",
            "cargo install --locked --path .",
            "cargo install --locked runbook-cli",
            "cargo binstall runbook",
            "brew install runbook",
            "git clone https://github.com/someone/runbook",
        ],
        "{wrong:#?}"
    );
    assert_eq!(
        first_install(doc).as_deref(),
        Some("npm install -g runbook-cli")
    );
}
