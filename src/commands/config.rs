//! `runbook config`: the configuration `runbook run` would use here and where each value comes
//! from; `--keys` lists the keys; `--init` writes a commented `runbook.toml` starter.

use std::io;
use std::path::Path;

use anyhow::Context as _;

use super::run::resolve_cwd;
use crate::agent_env;
use crate::cli::ConfigArgs;
use crate::config::{self, Flags, REPO_FILE};
use crate::exit::{Error, ExitStatus};
use crate::redact::MaskedWriter;
use crate::render::{Styles, settings};
use crate::term::TermEnv;
use crate::term::out;
use crate::trust;

pub(crate) fn config(
    args: &ConfigArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    if args.keys {
        // Reads no file: it answers even when one names a key that does not exist.
        out::print(&config::listing())?;
        return Ok(ExitStatus::Completed);
    }
    let dir = resolve_cwd(args.workspace.cwd.as_deref())?;
    if args.init {
        return init(&dir);
    }
    let config = config::load(
        &dir,
        global
            .values()
            .iter()
            .chain(args.options.values())
            .chain(args.runs_dir.values()),
    )?;
    let env = agent_env::load(&config, &args.workspace.env_files)?;
    if let Some(url) = config.get(&config::keys::UPLOAD) {
        // Credentials written into the URL are shown masked, as everywhere else.
        crate::bucket::hide_credentials(&url);
    }
    let trust = trust_rows(&config, &env);
    if args.json {
        out::print_json(&settings::Report::new(&config, env.records(), trust), true)?;
    } else {
        let color = config.value(&config::keys::COLOR);
        let styles = Styles::new(TermEnv::detect().color_stdout(color));
        let width = crate::term::table_width(args.wide);
        out::print(&settings::human(
            &config,
            &env.records(),
            &trust,
            &styles,
            width,
        ))?;
    }
    Ok(ExitStatus::Completed)
}

/// Each repository file that was read and how it stands in trust; a trust record that cannot
/// be read leaves the status unknown, with why.
fn trust_rows(config: &config::Config, env: &agent_env::AgentEnv) -> Vec<settings::TrustRow> {
    let given = trust::Given::from_env(false);
    let files = match trust::examine(config, env, &given) {
        Ok(files) => files,
        Err(e) => {
            let why = e.to_string();
            return trust::repository_files(config, env)
                .into_iter()
                .map(|f| settings::TrustRow {
                    path: trust::escape(&f.path.display().to_string()),
                    status: "unknown",
                    trusted: f.needs.is_empty(),
                    needs: f.needs.into_iter().map(|n| n.key).collect(),
                    describe: format!("unknown: {}", trust::escape(&why)),
                })
                .collect();
        }
    };
    files
        .into_iter()
        .map(|(f, status)| settings::TrustRow {
            path: trust::escape(&f.path.display().to_string()),
            status: status.name(),
            trusted: status.allows(),
            needs: f.needs.into_iter().map(|n| n.key).collect(),
            describe: status.describe().to_owned(),
        })
        .collect()
}

/// Writes the starter `runbook.toml` in the repository root, never over an existing file.
fn init(dir: &Path) -> anyhow::Result<ExitStatus> {
    let path = config::repository_root(dir).join(REPO_FILE);
    let mut file = match MaskedWriter::create_shared(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::Usage(format!(
                "{} already exists; `runbook config` shows what it sets",
                path.display()
            ))
            .into());
        }
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
    };
    file.write_all(&crate::redact::current().mask(config::starter().as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))?;
    crate::term::print::note(format_args!(
        "wrote {}; personal settings go in runbook.local.toml and secrets in .env.local (keep both out of git)",
        path.display()
    ));
    Ok(ExitStatus::Completed)
}
