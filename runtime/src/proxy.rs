//! Proxies: which requests go through one (hyper-util's matcher: `HTTP_PROXY`, `HTTPS_PROXY`,
//! `ALL_PROXY`, `NO_PROXY` in either case, or explicit), and the HTTP `CONNECT` tunnel that
//! carries `https://` requests to their origin with TLS end to end.

use std::fmt;
use std::sync::Arc;

use http::header::{HeaderValue, PROXY_AUTHORIZATION};
use http::Uri;
use hyper_util::client::proxy::matcher::Matcher;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{Error, ProxyError, ProxyFailure, ProxyResponseError, ProxyUrlError};

/// Where requests go: straight to their origin, or through an HTTP proxy.
///
/// `https://` requests go through an HTTP `CONNECT` tunnel, so TLS runs end to end to the origin
/// and the proxy sees no plaintext; `http://` requests are forwarded (absolute-form request
/// line). Credentials come from the proxy URL's userinfo (`http://user:pass@proxy:3128`) or
/// [`ProxyBuilder::basic_auth`], and are sent as `Proxy-Authorization: Basic ...`.
///
/// ```
/// use smithy_default_tls::ProxyConfig;
///
/// // The environment, as curl and the AWS CLI read it.
/// let from_env = ProxyConfig::from_env();
/// // One proxy for everything, but not for the metadata service or the local network.
/// let explicit = ProxyConfig::builder()
///     .all("http://proxy.internal:3128")
///     .no_proxy("169.254.169.254,localhost,10.0.0.0/8")
///     .build()
///     .unwrap();
/// assert!(explicit.is_enabled());
/// assert!(!ProxyConfig::disabled().is_enabled());
/// # let _ = from_env;
/// ```
#[derive(Clone, Default)]
pub struct ProxyConfig {
    inner: Option<Arc<Proxies>>,
}

struct Proxies {
    matcher: Matcher,
    /// Credentials set with [`ProxyBuilder::basic_auth`]; they win over the URL's userinfo.
    auth: Option<HeaderValue>,
    /// What the configuration says, without credentials (for `Debug` and errors).
    description: String,
    /// The URLs as given, credentials included: equal settings are equal in full (a changed
    /// password is a different configuration). Never shown.
    raw: Vec<String>,
}

impl fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            None => f.write_str("ProxyConfig(disabled)"),
            Some(proxies) => write!(f, "ProxyConfig({})", proxies.description),
        }
    }
}

impl PartialEq for ProxyConfig {
    /// Same settings (compared by their credential-free description and credentials).
    fn eq(&self, other: &Self) -> bool {
        match (&self.inner, &other.inner) {
            (None, None) => true,
            (Some(a), Some(b)) => a.description == b.description && a.auth == b.auth && a.raw == b.raw,
            _ => false,
        }
    }
}

impl Eq for ProxyConfig {}

impl std::hash::Hash for ProxyConfig {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if let Some(proxies) = &self.inner {
            proxies.description.hash(state);
            proxies.auth.as_ref().map(HeaderValue::as_bytes).hash(state);
            proxies.raw.hash(state);
        }
    }
}

/// The proxy a request goes through.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// The proxy's `host:port`, for connecting and for errors.
    pub(crate) authority: String,
    /// The proxy as a `http://host:port` URI (what the TCP connector dials).
    pub(crate) uri: Uri,
    /// `Proxy-Authorization`, if credentials are configured.
    pub(crate) auth: Option<HeaderValue>,
    /// For an `https://` proxy, the name its certificate is checked against: TLS to the proxy
    /// first, then the tunnel (and TLS to the origin) inside it.
    pub(crate) tls_name: Option<String>,
}

impl ProxyConfig {
    /// No proxy: every request connects to its origin.
    pub fn disabled() -> Self {
        ProxyConfig { inner: None }
    }

    /// The proxies the environment names: `HTTP_PROXY` (for `http://` requests), `HTTPS_PROXY`
    /// (for `https://`), `ALL_PROXY` (for both, when the specific one is unset) and `NO_PROXY`
    /// (comma-separated hosts, domain suffixes, IP addresses and CIDR ranges that go direct, or
    /// `*`), upper or lower case. Disabled when none is set. Values that are not usable proxy
    /// URLs are ignored with a warning event.
    pub fn from_env() -> Self {
        let var = |upper: &str| {
            std::env::var(upper).ok().or_else(|| std::env::var(upper.to_lowercase()).ok()).filter(|v| !v.is_empty())
        };
        // Under CGI, `HTTP_PROXY` is whatever a client sent as its `Proxy:` request header
        // ("httpoxy"): not a setting. curl, Go and hyper-util ignore it there too.
        let cgi = std::env::var_os("REQUEST_METHOD").is_some();
        let mut builder = ProxyBuilder::default();
        for (name, slot) in
            [("ALL_PROXY", &mut builder.all), ("HTTP_PROXY", &mut builder.http), ("HTTPS_PROXY", &mut builder.https)]
        {
            if name == "HTTP_PROXY" && cgi {
                if var(name).is_some() {
                    tracing::warn!(
                        "ignoring HTTP_PROXY: REQUEST_METHOD is set (CGI), where it comes from a request header"
                    );
                }
                continue;
            }
            if let Some(value) = var(name) {
                // `proxy.corp:3128` means http://, as curl reads it.
                let value = if value.contains("://") { value } else { format!("http://{value}") };
                match parse_proxy_url(&value) {
                    Ok(_) => *slot = Some(value),
                    Err(why) => tracing::warn!(variable = name, "ignoring the proxy variable: {why}"),
                }
            }
        }
        builder.no = var("NO_PROXY");
        builder.build().unwrap_or_else(|_| ProxyConfig::disabled())
    }

    /// A builder for explicit settings.
    pub fn builder() -> ProxyBuilder {
        ProxyBuilder::default()
    }

    /// Whether any request can go through a proxy.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The proxy for `uri`, if it goes through one.
    pub(crate) fn route(&self, uri: &Uri) -> Option<Route> {
        let proxies = self.inner.as_ref()?;
        let intercept = proxies.matcher.intercept(uri)?;
        let proxy = intercept.uri();
        let host = proxy.host()?;
        let tls = proxy.scheme_str() == Some("https");
        let port = proxy.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let authority = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let uri = format!("http://{authority}/").parse().ok()?;
        let auth = proxies.auth.clone().or_else(|| intercept.basic_auth().cloned());
        let tls_name = tls.then(|| host.trim_start_matches('[').trim_end_matches(']').to_owned());
        Some(Route { authority, uri, auth, tls_name })
    }
}

/// Builds an explicit [`ProxyConfig`].
#[derive(Default, Clone)]
pub struct ProxyBuilder {
    all: Option<String>,
    http: Option<String>,
    https: Option<String>,
    no: Option<String>,
    basic_auth: Option<(String, String)>,
}

impl fmt::Debug for ProxyBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |url: &Option<String>| url.as_deref().map(redact);
        f.debug_struct("ProxyBuilder")
            .field("all", &shown(&self.all))
            .field("http", &shown(&self.http))
            .field("https", &shown(&self.https))
            .field("no", &self.no)
            .field("basic_auth", &self.basic_auth.as_ref().map(|_| "***"))
            .finish()
    }
}

impl ProxyBuilder {
    /// The proxy for every request (`http://host:port`, credentials allowed in the userinfo).
    pub fn all(mut self, url: impl Into<String>) -> Self {
        self.all = Some(url.into());
        self
    }

    /// The proxy for `http://` requests (wins over [`all`](Self::all) for them).
    pub fn http(mut self, url: impl Into<String>) -> Self {
        self.http = Some(url.into());
        self
    }

    /// The proxy for `https://` requests (wins over [`all`](Self::all) for them).
    pub fn https(mut self, url: impl Into<String>) -> Self {
        self.https = Some(url.into());
        self
    }

    /// Hosts that go direct, in `NO_PROXY` syntax: comma-separated host names (a leading `.`
    /// or none: the domain and its subdomains), IP addresses, CIDR ranges, or `*` for all.
    pub fn no_proxy(mut self, list: impl Into<String>) -> Self {
        self.no = Some(list.into());
        self
    }

    /// Credentials for the proxy (`Proxy-Authorization: Basic`), instead of the URL's userinfo.
    pub fn basic_auth(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.basic_auth = Some((user.into(), password.into()));
        self
    }

    /// Checks the URLs and builds the configuration; disabled when no proxy URL was given.
    ///
    /// # Errors
    /// [`Error::InvalidProxy`] for a URL that is not `http://host[:port]` or `https://host[:port]`
    /// (SOCKS is not supported).
    pub fn build(self) -> Result<ProxyConfig, Error> {
        let mut description = Vec::new();
        for (name, url) in [("all", &self.all), ("http", &self.http), ("https", &self.https)] {
            if let Some(url) = url {
                let shown = parse_proxy_url(url).map_err(|reason| Error::InvalidProxy { url: redact(url), reason })?;
                description.push(format!("{name}={shown}"));
            }
        }
        if description.is_empty() {
            return Ok(ProxyConfig::disabled());
        }
        if let Some(no) = &self.no {
            description.push(format!("no_proxy={no}"));
        }
        let auth = match &self.basic_auth {
            None => None,
            Some((user, password)) => Some(
                basic_auth(user, password)
                    .map_err(|reason| Error::InvalidProxy { url: description.join(" "), reason })?,
            ),
        };
        // A `*` entry sends every host direct (the proxy URLs were still checked above).
        // hyper-util's matcher applies `*` to host names only, so an IP-literal origin would
        // still be proxied.
        if self.no.as_deref().is_some_and(|no| no.split(',').any(|entry| entry.trim() == "*")) {
            return Ok(ProxyConfig::disabled());
        }
        let raw: Vec<String> = [&self.all, &self.http, &self.https].iter().filter_map(|u| (*u).clone()).collect();
        let mut matcher = Matcher::builder();
        if let Some(all) = self.all {
            matcher = matcher.all(all);
        }
        if let Some(http) = self.http {
            matcher = matcher.http(http);
        }
        if let Some(https) = self.https {
            matcher = matcher.https(https);
        }
        if let Some(no) = self.no {
            matcher = matcher.no(no);
        }
        Ok(ProxyConfig {
            inner: Some(Arc::new(Proxies { matcher: matcher.build(), auth, description: description.join(" "), raw })),
        })
    }
}

/// `Basic base64(user:password)`.
fn basic_auth(user: &str, password: &str) -> Result<HeaderValue, ProxyUrlError> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
        .map_err(|e| ProxyUrlError::InvalidCredentials(Arc::new(e)))?;
    value.set_sensitive(true);
    Ok(value)
}

/// Checks a proxy URL; returns it without credentials.
fn parse_proxy_url(url: &str) -> Result<String, ProxyUrlError> {
    let uri: Uri = url.parse().map_err(|e: http::uri::InvalidUri| ProxyUrlError::NotAUrl(Arc::new(e)))?;
    let default_port = match uri.scheme_str() {
        Some("http") => 80,
        // TLS to the proxy, checked with the client's roots; the tunnel runs inside it.
        Some("https") => 443,
        Some(other) => return Err(ProxyUrlError::UnsupportedScheme(other.to_owned())),
        None => return Err(ProxyUrlError::NoScheme),
    };
    let host = uri.host().filter(|h| !h.is_empty()).ok_or(ProxyUrlError::NoHost)?;
    Ok(format!("{}://{host}:{}", uri.scheme_str().unwrap_or("http"), uri.port_u16().unwrap_or(default_port)))
}

/// The URL without its userinfo, for messages (with or without a scheme).
fn redact(url: &str) -> String {
    let start = url.find("://").map_or(0, |scheme| scheme + 3);
    let end = url[start..].find('/').map_or(url.len(), |slash| start + slash);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..start], &url[start + at + 1..]),
        None => url.to_owned(),
    }
}

/// The longest CONNECT response head read before giving up.
const MAX_RESPONSE_HEAD: usize = 16 * 1024;

/// Opens a `CONNECT` tunnel to `origin` (`host:port`) through the proxy `stream` is connected
/// to. On success the stream carries bytes to and from the origin (the proxy's response head has
/// been consumed, nothing more).
pub(crate) async fn tunnel<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    route: &Route,
    origin: &str,
) -> Result<(), ProxyError> {
    let failed = |failure| ProxyError { proxy: route.authority.clone(), origin: origin.to_owned(), failure };
    let mut request = format!("CONNECT {origin} HTTP/1.1\r\nHost: {origin}\r\n");
    if let Some(auth) = &route.auth {
        request.push_str(PROXY_AUTHORIZATION.as_str());
        request.push_str(": ");
        request.push_str(auth.to_str().unwrap_or_default());
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.map_err(|e| failed(ProxyFailure::Io(e)))?;

    // Read the response head byte by byte: the tunnel's first bytes (the origin's) must stay in
    // the socket for the TLS handshake.
    let mut head = Vec::with_capacity(256);
    let mut byte = [0u8; 1];
    // A blank line ends the head (bare-LF line endings accepted, as HTTP parsers do).
    while !(head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n")) {
        if head.len() >= MAX_RESPONSE_HEAD {
            return Err(failed(ProxyFailure::BadResponse(ProxyResponseError::HeadTooLong {
                limit: MAX_RESPONSE_HEAD,
            })));
        }
        match stream.read(&mut byte).await {
            Ok(0) => return Err(failed(ProxyFailure::Closed)),
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(failed(ProxyFailure::Io(e))),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let received = || String::from_utf8_lossy(&head).trim().to_owned();
    let bad = |e| failed(ProxyFailure::BadResponse(e));
    match response.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        // The head ends in a blank line, so the parser has all of it: `Partial` means no status.
        Ok(httparse::Status::Partial) => return Err(bad(ProxyResponseError::NoStatus { received: received() })),
        Err(e) => return Err(bad(ProxyResponseError::Malformed { received: received(), source: Arc::new(e) })),
    }
    match response.code {
        Some(code) if (200..300).contains(&code) => Ok(()),
        Some(status) => {
            Err(failed(ProxyFailure::Refused { status, phrase: response.reason.unwrap_or_default().to_owned() }))
        }
        None => Err(bad(ProxyResponseError::NoStatus { received: received() })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpStream;

    #[test]
    fn routes_follow_the_scheme_and_no_proxy() {
        let config = ProxyConfig::builder()
            .http("http://plain-proxy:3128")
            .https("http://user:secret@tls-proxy:8080")
            .no_proxy("internal.example,10.0.0.0/8")
            .build()
            .unwrap();
        let route = config.route(&"https://s3.amazonaws.com/b".parse().unwrap()).unwrap();
        assert_eq!(route.authority, "tls-proxy:8080");
        assert_eq!(route.auth.as_ref().map(HeaderValue::as_bytes), Some(&b"Basic dXNlcjpzZWNyZXQ="[..]));
        let route = config.route(&"http://example.com/".parse().unwrap()).unwrap();
        assert_eq!(route.authority, "plain-proxy:3128");
        assert!(route.auth.is_none());
        assert!(config.route(&"https://api.internal.example/".parse().unwrap()).is_none());
        assert!(config.route(&"http://10.1.2.3/".parse().unwrap()).is_none());
        assert!(ProxyConfig::disabled().route(&"https://example.com/".parse().unwrap()).is_none());
    }

    #[test]
    fn a_star_in_no_proxy_sends_every_host_direct_ip_literals_too() {
        for no in ["*", "internal.example, * ,10.0.0.0/8"] {
            let config = ProxyConfig::builder().all("http://proxy:3128").no_proxy(no).build().unwrap();
            for uri in ["https://example.com/", "http://127.0.0.1:8080/", "https://[::1]:443/"] {
                assert!(config.route(&uri.parse().unwrap()).is_none(), "{no}: {uri}");
            }
        }
        // Not a `*` entry: only what it names goes direct.
        let config = ProxyConfig::builder().all("http://proxy:3128").no_proxy("*.example").build().unwrap();
        assert!(config.route(&"http://127.0.0.1:8080/".parse().unwrap()).is_some());
    }

    #[test]
    fn a_changed_password_is_a_different_configuration() {
        let a = ProxyConfig::builder().all("http://u:one@proxy:3128").build().unwrap();
        let b = ProxyConfig::builder().all("http://u:two@proxy:3128").build().unwrap();
        assert_ne!(a, b);
        assert_eq!(a, ProxyConfig::builder().all("http://u:one@proxy:3128").build().unwrap());
    }

    /// A `CONNECT` to example.com:443 through a proxy on 127.0.0.1 that reads the request and
    /// answers `answer`: the tunnel's outcome, and the stream for what follows the answer.
    async fn tunnel_answered(answer: &'static [u8]) -> (Result<(), ProxyError>, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let proxy = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = vec![0u8; 256];
            let _ = stream.read(&mut request).await.unwrap();
            stream.write_all(answer).await.unwrap();
        });
        let route = ProxyConfig::builder()
            .all(format!("http://{addr}"))
            .build()
            .unwrap()
            .route(&"https://example.com/".parse().unwrap())
            .unwrap();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let outcome = tunnel(&mut stream, &route, "example.com:443").await;
        proxy.await.unwrap();
        (outcome, stream)
    }

    #[tokio::test]
    async fn a_connect_answer_with_bare_line_feeds_opens_the_tunnel() {
        let (outcome, mut stream) = tunnel_answered(b"HTTP/1.1 200 OK\n\nORIGIN").await;
        outcome.expect("tunnel");
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"ORIGIN", "the origin's bytes are left for TLS");
    }

    /// What the proxy answers when it is not HTTP: a typed failure with the parser's error as its
    /// source, and what was received in the message.
    #[tokio::test]
    async fn a_connect_answer_that_is_not_http_says_what_came_back() {
        let (outcome, _) = tunnel_answered(b"SSH-2.0-OpenSSH_9.6\r\n\r\n").await;
        let err = outcome.expect_err("not HTTP");
        assert!(matches!(&err.failure, ProxyFailure::BadResponse(ProxyResponseError::Malformed { .. })), "{err:?}");
        assert!(err.to_string().contains("SSH-2.0-OpenSSH_9.6"), "{err}");
        let parser = std::error::Error::source(&err).and_then(std::error::Error::source);
        assert!(parser.is_some_and(|e| e.is::<httparse::Error>()), "{err:?}");
    }

    #[test]
    fn an_https_proxy_is_reached_over_tls_checked_against_its_name() {
        let config = ProxyConfig::builder().https("https://secure-proxy.example").build().unwrap();
        let route = config.route(&"https://s3.amazonaws.com/".parse().unwrap()).unwrap();
        assert_eq!(route.authority, "secure-proxy.example:443");
        assert_eq!(route.tls_name.as_deref(), Some("secure-proxy.example"));
        let plain = ProxyConfig::builder().https("http://proxy.example").build().unwrap();
        let route = plain.route(&"https://s3.amazonaws.com/".parse().unwrap()).unwrap();
        assert_eq!((route.authority.as_str(), route.tls_name), ("proxy.example:80", None));
        assert!(format!("{config:?}").contains("https://secure-proxy.example:443"), "{config:?}");
    }

    #[test]
    fn explicit_credentials_win_and_are_not_shown() {
        let config = ProxyConfig::builder().all("http://u:p@proxy:3128").basic_auth("a", "b").build().unwrap();
        let route = config.route(&"https://example.com/".parse().unwrap()).unwrap();
        assert_eq!(route.auth.as_ref().map(HeaderValue::as_bytes), Some(&b"Basic YTpi"[..]));
        let shown = format!("{config:?}");
        assert!(shown.contains("http://proxy:3128") && !shown.contains("u:p") && !shown.contains("YTpi"), "{shown}");
    }

    #[test]
    fn unusable_proxy_urls_are_errors_that_hide_credentials() {
        for (url, says) in [
            ("socks5://proxy:1080", "unsupported proxy scheme `socks5`"),
            ("proxy:3128", "no scheme"),
            ("http://", "not a URL"),
        ] {
            let err = ProxyConfig::builder().all(url).build().unwrap_err();
            assert!(err.to_string().contains(says), "{url}: {err}");
        }
        let err = ProxyConfig::builder().all("socks5://proxy:1080").build().unwrap_err();
        assert!(
            matches!(&err, Error::InvalidProxy { reason: ProxyUrlError::UnsupportedScheme(s), .. } if s == "socks5"),
            "{err:?}"
        );
        let err = ProxyConfig::builder().all("socks5://me:hunter2@proxy").build().unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
        let err = ProxyConfig::builder().all("me:hunter2@proxy:3128").build().unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
        let builder = ProxyConfig::builder().all("http://me:hunter2@proxy:3128").basic_auth("me", "s3cret");
        let shown = format!("{builder:?}");
        assert!(!shown.contains("hunter2") && !shown.contains("s3cret") && shown.contains("proxy:3128"), "{shown}");
        assert_eq!(ProxyConfig::builder().build().unwrap(), ProxyConfig::disabled());
    }
}
