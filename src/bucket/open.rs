//! A bucket URL opened: its scheme's store, built from the provider's usual variables and files,
//! and the URL as it may be shown, with anything that could be a credential masked.

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::list::PaginatedListStore;
use object_store::local::LocalFileSystem;
use object_store::{BackoffConfig, ObjectStore, ObjectStoreScheme, RetryConfig};
use url::Url;

use super::Bucket;
use super::credentials::masking;
use crate::exit::Error;
use crate::redact::{MASK, Redactor};

/// The schemes that name object storage rather than a local path.
const SCHEMES: &[&str] = &[
    "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "adl", "file", "http", "https",
];

/// What to write instead of a URL that could not be read.
const UNREADABLE: &str = "the URL given";

/// Whether `text` is a URL of object storage (`s3://…`, `gs://…`, `az://…`, `file:///…`), not
/// a local path or a run id.
pub(crate) fn is_url(text: &str) -> bool {
    text.split_once("://")
        .is_some_and(|(scheme, _)| SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
}

/// Has every writer of this process mask what could be a credential in the URL `text` (its
/// user information, query and fragment).
pub(crate) fn hide_credentials(text: &str) {
    if let Ok(url) = Url::parse(text) {
        masked(&url);
    }
}

/// Opens the bucket `text` names. Credentials come from the provider's usual environment
/// variables and files (`AWS_*`, `GOOGLE_*`, `AZURE_*`), or from its endpoints (a container's,
/// an instance's, a web identity's), never from runbook's own settings; each is masked as it is
/// obtained.
pub(crate) fn open(text: &str) -> Result<Bucket, Error> {
    let Ok(url) = Url::parse(text) else {
        return Err(Error::Usage(format!(
            "{UNREADABLE} is not a URL: give one such as s3://bucket/prefix, gs://bucket/prefix, az://container/prefix or file:///path"
        )));
    };
    let shown = masked(&url);
    let unusable = |why: String| Error::Usage(format!("cannot use {shown}: {why}"));
    let (scheme, root) = ObjectStoreScheme::parse(&url).map_err(|e| unusable(e.to_string()))?;
    let bare = bare(&url);
    let (store, pages) = match scheme {
        ObjectStoreScheme::Local => (Arc::new(LocalFileSystem::new()) as _, None),
        ObjectStoreScheme::AmazonS3
        | ObjectStoreScheme::GoogleCloudStorage
        | ObjectStoreScheme::MicrosoftAzure => {
            let (store, pages) = cloud(&scheme, bare).map_err(|e| unusable(super::said(e)))?;
            (store, Some(pages))
        }
        _ => {
            return Err(unusable(
                "not a kind of object storage runbook reads: use s3://, gs://, az:// or file://"
                    .to_owned(),
            ));
        }
    };
    Ok(Bucket {
        store,
        pages,
        root,
        shown,
    })
}

/// The store of a cloud's `scheme` for the URL `bare`, configured from the provider's usual
/// variables and files, its credentials masked as it obtains them. Each is built once to find
/// the provider's own chain of credentials, then again with that chain wrapped. The store, and
/// the same store as it lists a page at a time.
fn cloud(scheme: &ObjectStoreScheme, bare: String) -> object_store::Result<Stores> {
    fn both<S: ObjectStore + PaginatedListStore>(store: S) -> Stores {
        let store = Arc::new(store);
        (Arc::clone(&store) as _, store as _)
    }
    Ok(match scheme {
        ObjectStoreScheme::GoogleCloudStorage => {
            let builder = GoogleCloudStorageBuilder::from_env()
                .with_url(bare)
                .with_retry(retry());
            let chain = Arc::clone(builder.clone().build()?.credentials());
            both(builder.with_credentials(masking(chain)).build()?)
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let builder = MicrosoftAzureBuilder::from_env()
                .with_url(bare)
                .with_retry(retry());
            let chain = Arc::clone(builder.clone().build()?.credentials());
            both(builder.with_credentials(masking(chain)).build()?)
        }
        _ => {
            let builder = AmazonS3Builder::from_env()
                .with_url(bare)
                .with_retry(retry());
            let chain = Arc::clone(builder.clone().build()?.credentials());
            both(builder.with_credentials(masking(chain)).build()?)
        }
    })
}

/// A store, and the same store as it lists a page at a time.
type Stores = (Arc<dyn ObjectStore>, Arc<dyn PaginatedListStore>);

/// Each request that fails for a reason worth another try (a 5xx, a throttle, a dropped
/// connection) is tried again up to 4 times, waiting 0.2 s, then twice as long each time (at
/// most 5 s), all within a minute.
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 4,
        retry_timeout: Duration::from_secs(60),
    }
}

/// The URL without user information, query or fragment: what the stores are given.
fn bare(url: &Url) -> String {
    let mut bare = url.clone();
    let _ = bare.set_username("");
    let _ = bare.set_password(None);
    bare.set_query(None);
    bare.set_fragment(None);
    bare.to_string()
}

/// The URL as it may be shown: user information, query and fragment masked, and remembered as
/// secrets so that no message quoting them shows them either.
fn masked(url: &Url) -> String {
    let mut secrets: Vec<String> = Vec::new();
    let mut shown = url.clone();
    if !url.username().is_empty() {
        secrets.push(url.username().to_owned());
        let _ = shown.set_username(MASK);
    }
    if let Some(password) = url.password() {
        secrets.push(password.to_owned());
        let _ = shown.set_password(Some(MASK));
    }
    if let Some(query) = url.query() {
        secrets.push(query.to_owned());
        secrets.extend(url.query_pairs().map(|(_, v)| v.into_owned()));
        shown.set_query(Some(MASK));
    }
    if let Some(fragment) = url.fragment() {
        secrets.push(fragment.to_owned());
        shown.set_fragment(Some(MASK));
    }
    if !secrets.is_empty() {
        crate::redact::remember(&Redactor::for_agent(secrets.iter().map(String::as_str)));
    }
    // `[` and `]` are written percent-encoded in a URL; shown as they read.
    shown.to_string().replace("%5B", "[").replace("%5D", "]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_storage_schemes_are_urls() {
        assert!(is_url("s3://bucket/prefix"));
        assert!(is_url("GS://bucket"));
        assert!(is_url("file:///tmp/bucket"));
        assert!(!is_url("20261122-043355-7k3mq"));
        assert!(!is_url("./runs"));
        assert!(!is_url("ftp://host/x"));
    }

    #[test]
    fn credentials_in_a_url_are_never_shown() {
        let url =
            Url::parse("s3://AKIAEXAMPLEKEY:wJalrXUtnFEMIsecret@bucket/p?sig=abcdef123456#frag")
                .unwrap();
        let shown = masked(&url);
        for secret in [
            "AKIAEXAMPLEKEY",
            "wJalrXUtnFEMIsecret",
            "abcdef123456",
            "frag",
        ] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(
            shown.starts_with("s3://") && shown.contains("@bucket/p"),
            "{shown}"
        );
        let masker = crate::redact::current();
        let told = masker.str("error at sig=abcdef123456, by wJalrXUtnFEMIsecret");
        assert!(
            !told.contains("abcdef123456") && !told.contains("wJalrXUtnFEMIsecret"),
            "{told}"
        );
        assert_eq!(bare(&url), "s3://bucket/p");
    }
}
