//! The values `runbook fleet` cannot know and will not make up: the bucket every target
//! uploads to, and the image a Kubernetes pod runs. A made-up bucket would let every task run
//! its agent (and spend) before failing to upload; a made-up image passes `kubectl apply`
//! (image names are not validated there) and fails only as each pod's `InvalidImageName`. So
//! each is refused when missing, naming the flag to pass, and an image given is checked to be
//! one a container runtime can pull.

use crate::cli::{FleetArgs, FleetEngine};
use crate::exit::Error;

/// The bucket URL, and the image for Kubernetes; a usage error naming the flag otherwise.
pub(super) fn given(args: &FleetArgs) -> Result<(), Error> {
    if args.upload.is_none() {
        return Err(Error::Usage(
            "give --upload URL, the object storage each task uploads its run to and `runbook stats` reads (s3://bucket/prefix, gs://…, az://…)".to_owned(),
        ));
    }
    if args.engine != FleetEngine::K8s {
        return Ok(());
    }
    let Some(image) = &args.image else {
        return Err(Error::Usage(
            "give --image IMAGE, the container image each pod runs (runbook, the agent and the repository at /work), e.g. ghcr.io/acme/runbook-agent:1".to_owned(),
        ));
    };
    if !reference(image) {
        return Err(Error::Usage(format!(
            "--image {}: not an image reference (lowercase [registry/]path[:tag][@sha256:…]), e.g. ghcr.io/acme/runbook-agent:1",
            crate::trust::escape(image)
        )));
    }
    Ok(())
}

/// Whether `text` is an image reference as the distribution spec's grammar has it: an optional
/// registry (a host with a `.` or `:`, or `localhost`, and a port), a path of lowercase
/// components, then a tag, a digest or both.
pub(super) fn reference(text: &str) -> bool {
    let (rest, digest) = match text.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (text, None),
    };
    if !digest.is_none_or(digest_ok) {
        return false;
    }
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[slash..].split_once(':') {
        Some((_, tag)) => (&rest[..rest.len() - tag.len() - 1], Some(tag)),
        None => (rest, None),
    };
    if !tag.is_none_or(tag_ok) || name.len() > 255 {
        return false;
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let registry = parts.len() > 1
        && (parts[0].contains(['.', ':']) || parts[0] == "localhost")
        && host_ok(parts[0]);
    if registry {
        parts.remove(0);
    }
    !parts.is_empty() && parts.iter().all(|p| component_ok(p))
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
fn component_ok(part: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes: Vec<char> = part.chars().collect();
    if bytes.first().is_none_or(|c| !alnum(*c)) || bytes.last().is_none_or(|c| !alnum(*c)) {
        return false;
    }
    let mut separator = String::new();
    for c in bytes {
        if alnum(c) {
            if !matches!(separator.as_str(), "" | "." | "_" | "__")
                && !separator.chars().all(|s| s == '-')
            {
                return false;
            }
            separator.clear();
        } else if matches!(c, '.' | '_' | '-') {
            separator.push(c);
        } else {
            return false;
        }
    }
    true
}

/// A host name (labels of letters, digits and inner `-`) and an optional port.
fn host_ok(host: &str) -> bool {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let label = |l: &str| {
        !l.is_empty()
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    name.split('.').all(label)
        && port
            .is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()))
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn tag_ok(tag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128
        && tag.chars().next().is_some_and(word)
        && tag.chars().all(|c| word(c) || c == '.' || c == '-')
}

/// `algorithm:hex`, the algorithm lowercase letters and digits, the hex at least 32 digits.
fn digest_ok(digest: &str) -> bool {
    digest.split_once(':').is_some_and(|(algorithm, hex)| {
        !algorithm.is_empty()
            && algorithm.chars().all(|c| {
                c.is_ascii_lowercase()
                    || c.is_ascii_digit()
                    || c == '+'
                    || c == '.'
                    || c == '_'
                    || c == '-'
            })
            && hex.len() >= 32
            && hex.chars().all(|c| c.is_ascii_hexdigit())
    })
}

#[cfg(test)]
mod tests {
    use super::reference;

    #[test]
    fn image_references_are_told_from_placeholders_and_typos() {
        for good in [
            "ubuntu",
            "ghcr.io/acme/runbook-agent:1",
            "localhost:5000/a/b_c__d.e-f---g:v1.2-rc_3",
            "registry.example.com/team/img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "docker.io/library/alpine:3.20@sha256:0123456789abcdef0123456789abcdef",
        ] {
            assert!(reference(good), "{good}");
        }
        for bad in [
            "ghcr.io/OWNER/runbook-agent:latest",
            "",
            "a//b",
            "a/b:",
            "a/-b",
            "a/b:-x",
            "a/b@sha256:xyz",
            "a b",
            "a/b:c:d",
            "REGISTRY/x",
        ] {
            assert!(!reference(bad), "{bad}");
        }
    }
}
