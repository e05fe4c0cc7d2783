//! Which agent a run drives and what it may do without asking: the words the command line, the
//! configuration and the adapters share (each adapter maps them to its agent's own flags).

use clap::ValueEnum;

/// The agents runbook knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AgentKind {
    /// OpenCode (`opencode run --format json`).
    Opencode,
    /// Claude Code (`claude -p --output-format stream-json`).
    Claude,
    /// Codex (`codex exec --json`).
    Codex,
}

/// What the agent may do without asking, in runbook's words; each adapter maps it to its agent's
/// own flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Permissions {
    /// Whatever the agent's own configuration says (nothing is passed).
    #[default]
    Agent,
    /// Look, don't touch: no edits, no commands that change anything.
    ReadOnly,
    /// Edit files and run commands inside the work dir.
    Workspace,
    /// Everything, without asking. Only for a throwaway machine or container.
    Bypass,
}

impl AgentKind {
    /// The agent's own command that shows whether it has a model and a key to use: what to run
    /// when it prints nothing at all.
    pub(crate) fn setup_check(self) -> &'static str {
        match self {
            AgentKind::Opencode => "opencode models",
            AgentKind::Claude => "claude auth status",
            AgentKind::Codex => "codex login status",
        }
    }
}
