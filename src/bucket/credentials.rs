//! Credentials a store obtains while runbook runs (a container's or an instance's role, a web
//! identity's, a cloud's access token), masked the moment they are obtained: each store's own
//! chain of providers is wrapped, and every credential it hands out joins what every writer of
//! this process masks, as written and as a URL spells it, before a request is signed with it. The
//! token files those providers present are masked too.

use std::fmt::Debug;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use object_store::CredentialProvider;
use object_store::aws::AwsCredential;
use object_store::azure::AzureCredential;
use object_store::gcp::GcpCredential;

use crate::files::{self, Links};

/// The variables naming files whose content a provider presents to obtain a credential.
const TOKEN_FILES: &[&str] = &[
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AZURE_FEDERATED_TOKEN_FILE",
];

/// The most read of a token file (a web identity's is a few KiB).
const TOKEN_LIMIT: u64 = 64 * 1024;

/// What in a credential is secret.
pub(super) trait Secrets {
    fn secrets(&self) -> Vec<&str>;
}

impl Secrets for AwsCredential {
    fn secrets(&self) -> Vec<&str> {
        let mut out = vec![self.key_id.as_str(), self.secret_key.as_str()];
        out.extend(self.token.as_deref());
        out
    }
}

impl Secrets for GcpCredential {
    fn secrets(&self) -> Vec<&str> {
        vec![self.bearer.as_str()]
    }
}

impl Secrets for AzureCredential {
    fn secrets(&self) -> Vec<&str> {
        match self {
            AzureCredential::SASToken(pairs) => pairs.iter().map(|(_, v)| v.as_str()).collect(),
            AzureCredential::BearerToken(token) => vec![token.as_str()],
            // Only ever read from AZURE_STORAGE_ACCOUNT_KEY and the like, masked by their names.
            AzureCredential::AccessKey(_) => Vec::new(),
        }
    }
}

/// A provider whose every credential is masked before it is used.
#[derive(Debug)]
pub(super) struct Masking<C> {
    inner: Arc<dyn CredentialProvider<Credential = C>>,
    /// The credential masked last: a provider hands out the same one until it expires.
    last: Mutex<Option<Arc<C>>>,
}

/// `inner`, its credentials masked as it hands them out.
pub(super) fn masking<C: Secrets + Debug + Send + Sync + 'static>(
    inner: Arc<dyn CredentialProvider<Credential = C>>,
) -> Arc<dyn CredentialProvider<Credential = C>> {
    remember_token_files();
    Arc::new(Masking {
        inner,
        last: Mutex::new(None),
    })
}

impl<C: Secrets + Debug + Send + Sync + 'static> Masking<C> {
    async fn get(&self) -> object_store::Result<Arc<C>> {
        let credential = self.inner.get_credential().await?;
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if !last.as_ref().is_some_and(|l| Arc::ptr_eq(l, &credential)) {
            remember(&credential.secrets());
            // A new credential may have come with a new token (a projected token is rotated).
            remember_token_files();
            *last = Some(Arc::clone(&credential));
        }
        Ok(credential)
    }
}

/// The trait is declared with `async_trait`; this is what that makes of `async fn`.
impl<C: Secrets + Debug + Send + Sync + 'static> CredentialProvider for Masking<C> {
    type Credential = C;

    fn get_credential<'a, 'f>(
        &'a self,
    ) -> Pin<Box<dyn Future<Output = object_store::Result<Arc<C>>> + Send + 'f>>
    where
        'a: 'f,
        Self: 'f,
    {
        Box::pin(self.get())
    }
}

/// Masks `secrets` from now on, as written and percent-encoded (as a URL's query writes them).
fn remember(secrets: &[&str]) {
    let spelled: Vec<String> = secrets
        .iter()
        .flat_map(|s| [percent_encoded(s, false), percent_encoded(s, true)])
        .collect();
    crate::redact::remember_secrets(
        secrets
            .iter()
            .copied()
            .chain(spelled.iter().map(String::as_str)),
    );
}

/// Masks the content of each token file a provider may present.
fn remember_token_files() {
    let mut tokens: Vec<String> = Vec::new();
    for var in TOKEN_FILES {
        let Some(path) = std::env::var_os(var) else {
            continue;
        };
        if let Ok(bytes) = files::read(Path::new(&path), TOKEN_LIMIT, Links::Follow) {
            let text = String::from_utf8_lossy(&bytes);
            tokens.push(text.trim().to_owned());
            tokens.push(text.into_owned());
        }
    }
    let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
    remember(&tokens);
}

/// `text` with every byte but the unreserved ones (letters, digits, `-._~`) written `%XX`.
fn percent_encoded(text: &str, lower: bool) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else if lower {
            out.push_str(&format!("%{b:02x}"));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Handing(Arc<AwsCredential>);

    impl CredentialProvider for Handing {
        type Credential = AwsCredential;

        fn get_credential<'a, 'f>(
            &'a self,
        ) -> Pin<Box<dyn Future<Output = object_store::Result<Arc<AwsCredential>>> + Send + 'f>>
        where
            'a: 'f,
            Self: 'f,
        {
            Box::pin(async { Ok(Arc::clone(&self.0)) })
        }
    }

    #[test]
    fn a_credential_handed_out_is_masked_as_written_and_as_a_url_spells_it() {
        let credential = Arc::new(AwsCredential {
            key_id: "ASIAHANDED0001".to_owned(),
            secret_key: "handed-secret-Pq1".to_owned(),
            token: Some("handed/token+Zz==".to_owned()),
        });
        let provider = masking(Arc::new(Handing(Arc::clone(&credential))));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got = runtime.block_on(provider.get_credential()).unwrap();
        assert!(Arc::ptr_eq(&got, &credential));
        let told = crate::redact::current()
            .str("ASIAHANDED0001 handed-secret-Pq1 handed/token+Zz== handed%2Ftoken%2BZz%3D%3D handed%2ftoken%2bZz%3d%3d")
            .into_owned();
        assert_eq!(told, ["[REDACTED]"; 5].join(" "));
    }
}
