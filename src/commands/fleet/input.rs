//! What `runbook fleet` writes into a script, a workflow or a manifest from its command line (the
//! task file's path, the bucket's URL, the image), checked before anything is written: one line
//! of plain text, no GitHub Actions expression, and no credential in the URL. A newline in a path
//! would end the comment it is told in and run as the script's next line; `${{ … }}` is
//! evaluated by GitHub Actions before the shell sees it; a secret in the URL would be committed
//! with the workflow.

use std::path::Path;

use crate::exit::Error;

/// Checks what the generators embed.
/// A missing `--upload` is left to [`super::needs`], which names the flag once the task file
/// was read.
pub(super) fn check(file: &Path, upload: Option<&str>, image: &str) -> Result<(), Error> {
    let Some(upload) = upload else {
        return plain_path(file).and_then(|()| plain("--image", image));
    };
    crate::bucket::hide_credentials(upload);
    plain_path(file)?;
    plain("--upload", upload)?;
    plain("--image", image)?;
    if !crate::bucket::is_url(upload) {
        return Err(Error::Usage(format!(
            "--upload {}: give the URL of object storage each task uploads to (s3://bucket/prefix, gs://…, az://…)",
            crate::trust::escape(upload)
        )));
    }
    let credentials = url::Url::parse(upload).is_ok_and(|u| {
        !u.username().is_empty()
            || u.password().is_some()
            || u.query().is_some()
            || u.fragment().is_some()
    });
    if credentials {
        return Err(Error::Usage(
            "--upload holds credentials (user:password@, ?query or #fragment), which would be written into the file: give the URL alone (s3://bucket/prefix); each task takes its credentials from the provider's variables (AWS_ACCESS_KEY_ID, …), set as the file's comments say"
                .to_owned(),
        ));
    }
    Ok(())
}

/// The task file's path, refused unless it is UTF-8 and plain.
fn plain_path(file: &Path) -> Result<(), Error> {
    let Some(path) = file.to_str() else {
        return Err(Error::Usage(format!(
            "the task file's path {} is not UTF-8: rename it to write it into a script",
            crate::trust::escape(&file.display().to_string())
        )));
    };
    plain("the task file's path", path)
}

/// Refuses `text` unless it is one line of printable text without a GitHub Actions expression.
fn plain(what: &str, text: &str) -> Result<(), Error> {
    let control = text.chars().any(|c| c.is_control() || bidi(c));
    if control {
        return Err(Error::Usage(format!(
            "{what} {} holds a newline or another control character, which would break out of the line it is written on: rename it",
            crate::trust::escape(text)
        )));
    }
    if text.contains("${{") {
        return Err(Error::Usage(format!(
            "{what} {} holds `${{{{`, which GitHub Actions would evaluate as an expression: rename it",
            crate::trust::escape(text)
        )));
    }
    Ok(())
}

/// The Unicode controls that reorder what a person reads (a comment that reads as another).
fn bidi(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
