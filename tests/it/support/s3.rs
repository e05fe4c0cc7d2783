//! A real S3-compatible server on 127.0.0.1 for the tests: `s3s-fs` (objects as files under a
//! temporary directory) behind `s3s`, which checks each request's SigV4 signature against one
//! access key. In front of it, a counter of the requests and a switch that answers chosen
//! requests with a 500, as a failing store would. Stopped when dropped.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hyper::service::service_fn;
use s3s::dto::{
    AbortMultipartUploadInput, AbortMultipartUploadOutput, CompleteMultipartUploadInput,
    CompleteMultipartUploadOutput, CreateMultipartUploadInput, CreateMultipartUploadOutput,
    GetObjectInput, GetObjectOutput, HeadObjectInput, HeadObjectOutput, ListObjectsV2Input,
    ListObjectsV2Output, PutObjectInput, PutObjectOutput, UploadPartInput, UploadPartOutput,
};
use s3s::{S3, S3Request, S3Response, S3Result};

pub const ACCESS_KEY: &str = "AKIARUNBOOKTEST0001";
pub const SECRET_KEY: &str = "runbook-test-secret-Xk29fLq0vW";
pub const BUCKET: &str = "team-runs";

/// Which requests fail: method and path (`/bucket/key`) in, `true` for a 500.
type Failing = Box<dyn Fn(&str, &str) -> bool + Send + Sync>;

pub struct S3Server {
    pub port: u16,
    /// Where the objects are: `<root>/<bucket>/<key>`.
    pub root: PathBuf,
    requests: Arc<Mutex<Vec<(String, String)>>>,
    failing: Arc<Mutex<Option<Failing>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl S3Server {
    /// Starts the server on a free port, with one empty bucket, [`BUCKET`].
    pub fn start(root: &Path) -> S3Server {
        std::fs::create_dir_all(root.join(BUCKET)).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let failing: Arc<Mutex<Option<Failing>>> = Arc::new(Mutex::new(None));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let service = {
            let fs = s3s_fs::FileSystem::new(root).unwrap();
            let mut b = s3s::service::S3ServiceBuilder::new(Paged(fs));
            b.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
            b.build()
        };
        let (seen, fails) = (Arc::clone(&requests), Arc::clone(&failing));
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(serve(listener, service, seen, fails, stopped));
        });
        S3Server {
            port,
            root: root.to_owned(),
            requests,
            failing,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The endpoint and credentials, as the AWS variables runbook reads.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ENDPOINT", format!("http://127.0.0.1:{}", self.port)),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Answers the requests `failing` picks with a 500 from now on.
    pub fn fail_when(&self, failing: impl Fn(&str, &str) -> bool + Send + Sync + 'static) {
        *self.failing.lock().unwrap() = Some(Box::new(failing));
    }

    /// Every request so far: method and path.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.requests.lock().unwrap().clone()
    }

    /// The object at `key` of [`BUCKET`], as the server stored it.
    pub fn object(&self, key: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(BUCKET).join(key)).ok()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    service: s3s::service::S3Service,
    seen: Arc<Mutex<Vec<(String, String)>>>,
    failing: Arc<Mutex<Option<Failing>>>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    loop {
        let socket = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                Err(_) => continue,
            },
            _ = &mut stopped => return,
        };
        let (service, seen, failing) = (service.clone(), Arc::clone(&seen), Arc::clone(&failing));
        tokio::spawn(async move {
            let handler = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let (service, seen, failing) =
                    (service.clone(), Arc::clone(&seen), Arc::clone(&failing));
                async move {
                    let (method, path) = (req.method().to_string(), req.uri().path().to_owned());
                    seen.lock().unwrap().push((method.clone(), path.clone()));
                    let fail = failing
                        .lock()
                        .unwrap()
                        .as_ref()
                        .is_some_and(|f| f(&method, &path));
                    if fail {
                        let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>InternalError</Code><Message>injected</Message></Error>";
                        return Ok(hyper::Response::builder()
                            .status(500)
                            .body(s3s::Body::from(body.to_owned()))
                            .unwrap());
                    }
                    hyper::service::Service::call(&service, req).await
                }
            });
            let io = hyper_util::rt::TokioIo::new(socket);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, handler)
                .await;
        });
    }
}

/// `s3s-fs` with the listing's continuation token honoured, as S3 pages a listing: it answers a
/// truncated page without a token, so the next page starts after the last key.
struct Paged(s3s_fs::FileSystem);

#[async_trait::async_trait]
impl S3 for Paged {
    async fn list_objects_v2(
        &self,
        mut req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        if let Some(token) = req.input.continuation_token.take() {
            req.input.start_after = Some(token.clone());
        }
        let mut resp = self.0.list_objects_v2(req).await?;
        if resp.output.is_truncated == Some(true) {
            resp.output.next_continuation_token = resp
                .output
                .contents
                .as_ref()
                .and_then(|c| c.last())
                .and_then(|o| o.key.clone());
        }
        Ok(resp)
    }

    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        self.0.put_object(req).await
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        self.0.get_object(req).await
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        self.0.head_object(req).await
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        self.0.create_multipart_upload(req).await
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        self.0.upload_part(req).await
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        self.0.complete_multipart_upload(req).await
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        self.0.abort_multipart_upload(req).await
    }
}
