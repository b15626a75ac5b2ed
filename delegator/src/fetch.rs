//! The url-part fetch policy (A2A §14.1.1, against server-side request forgery): a `url` part is
//! fetched only when its scheme is `http` or `https`, it carries no userinfo, and, when the
//! driver gave `init.fetch_origins`, its origin is one of them. The check runs before any
//! connection is made; redirects are followed (at most [`MAX_REDIRECTS`]) only to urls that pass
//! the same check, by the fetch client's own redirect policy. A url that fails it is not fetched:
//! [`UrlFetcher::get`] returns the reason and the reassembler fails the delegation with it.

use crate::bugs::{Bug, Bugs};
use reqwest::Url;
use std::sync::Arc;
use std::time::Duration;

/// The most redirects followed for one url part.
pub const MAX_REDIRECTS: usize = 5;

/// Why a url part is not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefused {
    /// Not a url.
    #[error("not a url: {0}")]
    Parse(String),
    /// A scheme other than `http` or `https`.
    #[error("scheme {0:?} is not fetched (only http and https)")]
    Scheme(String),
    /// The url carries a user name or password.
    #[error("a url with userinfo is not fetched")]
    Userinfo,
    /// The origin is not among the allowed fetch origins.
    #[error("origin {0} is not an allowed fetch origin")]
    Origin(String),
}

/// The allowed origins and the checks every url (and every redirect target) must pass.
#[derive(Debug, Clone, Default)]
pub struct UrlPolicy {
    /// `None`: no list given (any http(s) origin); `Some`: only these (ASCII serialisation,
    /// `http://127.0.0.1:4100`; a default port is omitted, as the URL standard writes it).
    origins: Option<Vec<String>>,
    /// Planted bugs: `fetch-any-url` lets every url through.
    bugs: Bugs,
}

impl UrlPolicy {
    /// A policy over these origins (`scheme://host:port`); an empty list means no list. An
    /// entry that is not an origin is an error naming it.
    ///
    /// ```
    /// use a2a_delegator::fetch::UrlPolicy;
    /// let p = UrlPolicy::new(&["http://127.0.0.1:4100".into()]).unwrap();
    /// assert!(p.check("http://127.0.0.1:4100/blobs/a").is_ok());
    /// assert!(p.check("http://127.0.0.9:4100/blobs/a").is_err());
    /// assert!(p.check("http://u:p@127.0.0.1:4100/blobs/a").is_err());
    /// assert!(p.check("file:///etc/passwd").is_err());
    /// ```
    pub fn new(origins: &[String]) -> Result<Self, String> {
        if origins.is_empty() {
            return Ok(UrlPolicy::default());
        }
        let mut out = Vec::new();
        for o in origins {
            let u = Url::parse(o).map_err(|e| format!("fetch_origins: {o:?}: {e}"))?;
            if !matches!(u.scheme(), "http" | "https") || u.host().is_none() {
                return Err(format!(
                    "fetch_origins: {o:?} is not an http(s) origin (scheme://host:port)"
                ));
            }
            out.push(u.origin().ascii_serialization());
        }
        Ok(UrlPolicy {
            origins: Some(out),
            bugs: Bugs::none(),
        })
    }

    /// With planted bugs: `fetch-any-url` turns every check off.
    pub fn with_bugs(mut self, bugs: Bugs) -> Self {
        self.bugs = bugs;
        self
    }

    /// Check a url before anything connects to it.
    pub fn check(&self, url: &str) -> Result<Url, UrlRefused> {
        let u = Url::parse(url).map_err(|e| UrlRefused::Parse(format!("{url:?}: {e}")))?;
        self.check_url(&u)?;
        Ok(u)
    }

    fn check_url(&self, u: &Url) -> Result<(), UrlRefused> {
        match self.refusal(u) {
            // The planted bug `fetch-any-url` is asked only about a url the checks refuse.
            Err(_) if self.bugs.has(Bug::FetchAnyUrl) => Ok(()),
            checked => checked,
        }
    }

    fn refusal(&self, u: &Url) -> Result<(), UrlRefused> {
        if !matches!(u.scheme(), "http" | "https") {
            return Err(UrlRefused::Scheme(u.scheme().to_string()));
        }
        if !u.username().is_empty() || u.password().is_some() {
            return Err(UrlRefused::Userinfo);
        }
        if let Some(allowed) = &self.origins {
            let o = u.origin().ascii_serialization();
            if !allowed.contains(&o) {
                return Err(UrlRefused::Origin(o));
            }
        }
        Ok(())
    }
}

/// The client that fetches url parts under a [`UrlPolicy`]: its redirect policy applies the
/// same check to every hop. Cheap to clone.
#[derive(Debug, Clone)]
pub struct UrlFetcher {
    policy: Arc<UrlPolicy>,
    client: reqwest::Client,
}

impl UrlFetcher {
    /// A fetcher for this policy (its own client: no proxy, a connect timeout, the policy's
    /// redirects), trusting exactly `trust`'s roots for `https://` url parts when given (the
    /// agents' own blob origins are served over TLS when their A2A interfaces are).
    pub fn new(policy: UrlPolicy, trust: Option<&crate::tls::Trust>) -> Result<Self, String> {
        let policy = Arc::new(policy);
        let p = policy.clone();
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
            }
            match p.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(e) => attempt.error(format!("redirect refused: {e}")),
            }
        });
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .redirect(redirects);
        if let Some(t) = trust {
            builder = builder.tls_backend_preconfigured(
                t.client_config(&[b"http/1.1"]).map_err(|e| e.to_string())?,
            );
        }
        let client = builder.build().map_err(|e| e.to_string())?;
        Ok(UrlFetcher { policy, client })
    }

    /// Check `url`, then GET it (no credentials ever go to an artifact host).
    pub async fn get(&self, url: &str) -> Result<reqwest::Response, String> {
        let u = self.policy.check(url).map_err(|e| e.to_string())?;
        self.client.get(u).send().await.map_err(|e| {
            // The redirect policy's refusal is the cause worth naming.
            let mut msg = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                msg = format!("{msg}: {s}");
                src = s.source();
            }
            msg
        })
    }
}

/// The most bytes the planted bug `fetch-any-url` takes from a `file:` url.
const NAIVE_FILE_CAP: u64 = 64 * 1024;

/// Planted bug `fetch-any-url`: open a url of another scheme the way a general-purpose url
/// opener (Python's `urllib.request.urlopen`, for one) would: `data:` decoded, `file:` read from
/// the disk, `ftp:` a connection to its host. `Ok(None)` when the bug is off or the scheme is
/// http(s) (the normal fetch handles it). Only `127.0.0.0/8` hosts are ever connected to: the
/// catalog's `ftp:` urls name the trap on `127.0.0.9`.
pub(crate) async fn open_other_scheme(bugs: Bugs, url: &str) -> Result<Option<Vec<u8>>, String> {
    let Ok(u) = Url::parse(url) else {
        return Ok(None);
    };
    // The bug is asked only about a url of another scheme.
    if matches!(u.scheme(), "http" | "https") || !bugs.has(Bug::FetchAnyUrl) {
        return Ok(None);
    }
    match u.scheme() {
        "data" => {
            use base64::Engine;
            let (head, payload) = u
                .path()
                .split_once(',')
                .ok_or("data: url without a comma")?;
            if head.ends_with(";base64") {
                base64::engine::general_purpose::STANDARD
                    .decode(payload)
                    .map(Some)
                    .map_err(|e| format!("data: url: {e}"))
            } else {
                Ok(Some(payload.as_bytes().to_vec()))
            }
        }
        "file" => {
            use tokio::io::AsyncReadExt;
            let path = u
                .to_file_path()
                .map_err(|()| format!("file: url without a path: {url}"))?;
            let f = tokio::fs::File::open(&path)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let mut bytes = Vec::new();
            f.take(NAIVE_FILE_CAP)
                .read_to_end(&mut bytes)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Some(bytes))
        }
        "ftp" => {
            let host = u.host_str().unwrap_or_default();
            let ip: std::net::IpAddr = host
                .parse()
                .map_err(|_| format!("ftp: host {host:?} is not an address"))?;
            if !ip.is_loopback() {
                return Err(format!(
                    "ftp: {host} is not loopback (never connected to here)"
                ));
            }
            let addr = std::net::SocketAddr::new(ip, u.port().unwrap_or(21));
            let conn =
                tokio::time::timeout(Duration::from_secs(5), tokio::net::TcpStream::connect(addr))
                    .await;
            match conn {
                Ok(Ok(_)) => Err(format!("ftp: connected to {addr}, no FTP client here")),
                Ok(Err(e)) => Err(format!("ftp: {addr}: {e}")),
                Err(_) => Err(format!("ftp: {addr}: connect timed out")),
            }
        }
        _ => Ok(None),
    }
}

impl Default for UrlFetcher {
    /// No origin list: http(s) only, no userinfo. Falls back to a plain client if the
    /// builder fails (it does not with these settings).
    fn default() -> Self {
        UrlFetcher::new(UrlPolicy::default(), None).unwrap_or_else(|_| UrlFetcher {
            policy: Arc::new(UrlPolicy::default()),
            client: reqwest::Client::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> UrlPolicy {
        UrlPolicy::new(&[
            "http://127.0.0.1:4100".into(),
            "https://localhost:4443".into(),
        ])
        .unwrap()
    }

    #[test]
    fn only_allowed_http_origins_without_userinfo_pass() {
        let p = policy();
        assert!(p.check("http://127.0.0.1:4100/blobs/x?y=1").is_ok());
        assert!(p.check("https://localhost:4443/b").is_ok());
        assert_eq!(
            p.check("http://127.0.0.1:4101/b").unwrap_err(),
            UrlRefused::Origin("http://127.0.0.1:4101".into())
        );
        assert!(matches!(
            p.check("https://127.0.0.1:4100/b"),
            Err(UrlRefused::Origin(_))
        ));
        assert_eq!(
            p.check("http://a2a:trap@127.0.0.1:4100/b").unwrap_err(),
            UrlRefused::Userinfo
        );
        assert_eq!(
            p.check("http://a2a@127.0.0.1:4100/b").unwrap_err(),
            UrlRefused::Userinfo
        );
        for (u, s) in [
            ("file:///etc/passwd", "file"),
            ("ftp://127.0.0.9:21/x", "ftp"),
            ("data:text/plain;base64,eA==", "data"),
        ] {
            assert_eq!(p.check(u).unwrap_err(), UrlRefused::Scheme(s.into()));
        }
        assert!(matches!(p.check("not a url"), Err(UrlRefused::Parse(_))));
    }

    #[test]
    fn no_list_means_any_http_origin_but_never_another_scheme_or_userinfo() {
        let p = UrlPolicy::new(&[]).unwrap();
        assert!(p.check("http://127.0.0.9:1/x").is_ok());
        assert!(p.check("file:///etc/passwd").is_err());
        assert!(p.check("http://u:p@127.0.0.1:1/x").is_err());
    }

    #[test]
    fn a_bad_origin_entry_is_named() {
        let e = UrlPolicy::new(&["ftp://127.0.0.1:21".into()]).unwrap_err();
        assert!(e.contains("ftp://127.0.0.1:21"), "{e}");
        assert!(UrlPolicy::new(&["nope".into()]).is_err());
    }

    #[test]
    fn the_planted_bug_turns_the_checks_off() {
        let p = policy().with_bugs(Bugs::none().with(Bug::FetchAnyUrl));
        assert_eq!(
            p.check("http://127.0.0.9:1/x").is_ok(),
            cfg!(feature = "planted-bugs")
        );
    }

    #[tokio::test]
    async fn the_planted_bug_opens_data_and_file_urls_and_connects_for_ftp() {
        let data = "data:application/octet-stream;base64,YTJh";
        assert_eq!(open_other_scheme(Bugs::none(), data).await, Ok(None));
        let bug = Bugs::none().with(Bug::FetchAnyUrl);
        if !cfg!(feature = "planted-bugs") {
            assert_eq!(open_other_scheme(bug, data).await, Ok(None));
            return;
        }
        assert_eq!(
            open_other_scheme(bug, data).await,
            Ok(Some(b"a2a".to_vec()))
        );
        assert_eq!(
            open_other_scheme(bug, "data:text/plain,hi").await,
            Ok(Some(b"hi".to_vec()))
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.txt");
        std::fs::write(&f, b"local").unwrap();
        let file_url = Url::from_file_path(&f).unwrap().to_string();
        assert_eq!(
            open_other_scheme(bug, &file_url).await,
            Ok(Some(b"local".to_vec()))
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let e = open_other_scheme(bug, &format!("ftp://127.0.0.1:{port}/x"))
            .await
            .unwrap_err();
        assert!(e.contains("connected"), "{e}");
        assert!(listener.accept().await.is_ok());
        assert_eq!(
            open_other_scheme(bug, "http://127.0.0.1:1/x").await,
            Ok(None)
        );
    }

    #[tokio::test]
    async fn a_redirect_to_a_forbidden_origin_is_not_followed() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // An allowed origin that redirects to 127.0.0.9 (where nothing may be reached).
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            if let Ok((mut s, _)) = l.accept().await {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await;
                let _ = s
                    .write_all(
                        b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.9:9/x\r\nContent-Length: 0\r\n\r\n",
                    )
                    .await;
            }
        });
        let f =
            UrlFetcher::new(UrlPolicy::new(&[format!("http://{addr}")]).unwrap(), None).unwrap();
        let e = f.get(&format!("http://{addr}/b")).await.unwrap_err();
        assert!(e.contains("redirect refused"), "{e}");
        assert!(e.contains("127.0.0.9"), "{e}");
    }
}
