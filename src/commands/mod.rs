//! One module per subcommand, each a free function returning an exit status.

pub(crate) mod run;
