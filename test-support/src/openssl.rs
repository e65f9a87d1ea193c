//! A real outside TLS peer: `openssl s_server` on 127.0.0.1, with certificates made by the
//! `openssl` command line. It serves what our own rustls test server cannot: SHA-1 signatures,
//! RSA-1024 keys, old protocol versions, odd cipher suites.
//!
//! Needs the `openssl` binary (`scripts/test`, which `.ci/run` runs, installs it when missing);
//! without it these helpers panic with a message saying so, so a test can never pass with
//! nothing checked. A server is killed when its handle drops (a test process killed outright
//! leaves it listening on loopback until it is killed too).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

fn openssl(args: &[&str], dir: &Path) {
    // The test peers never follow a policy a test sets for its client (OPENSSL_CONF).
    let output =
        Command::new("openssl").args(args).current_dir(dir).env_remove("OPENSSL_CONF").output().unwrap_or_else(|e| {
            panic!("could not run `openssl` ({e}): install it (Debian: apt-get install openssl); scripts/test does")
        });
    assert!(output.status.success(), "openssl {} failed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
}

/// The key of a certificate made by [`OpensslCa`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySpec {
    /// RSA with a modulus of this many bits.
    Rsa(u32),
    /// ECDSA on P-256.
    EcP256,
    /// ECDSA on P-384.
    EcP384,
    /// ECDSA on P-521.
    EcP521,
    /// RSA restricted to PSS signatures (`id-RSASSA-PSS`), with a modulus of this many bits.
    RsaPss(u32),
}

impl KeySpec {
    fn newkey(self) -> String {
        match self {
            KeySpec::Rsa(bits) => format!("rsa:{bits}"),
            KeySpec::EcP256 => "ec:prime256v1.params".to_owned(),
            KeySpec::EcP384 => "ec:secp384r1.params".to_owned(),
            KeySpec::EcP521 => "ec:secp521r1.params".to_owned(),
            KeySpec::RsaPss(bits) => format!("rsa-pss:{bits}"),
        }
    }
}

/// A certificate authority (RSA-2048, SHA-256) in a fresh temporary directory, removed on drop.
pub struct OpensslCa {
    dir: PathBuf,
    /// The CA certificate, PEM.
    pub pem: String,
}

/// Files of a server certificate made by [`OpensslCa::leaf`].
pub struct OpensslLeaf {
    /// The certificate, PEM file.
    pub cert: PathBuf,
    /// Its private key, PEM file.
    pub key: PathBuf,
    /// The intermediate CA certificate that signed it (PEM file), when there is one.
    pub intermediate: Option<PathBuf>,
}

impl OpensslLeaf {
    /// The certificate, then its intermediate when there is one: the chain a client presents.
    pub fn chain_pem(&self) -> String {
        let mut chain = std::fs::read_to_string(&self.cert).expect("leaf PEM");
        if let Some(intermediate) = &self.intermediate {
            chain.push_str(&std::fs::read_to_string(intermediate).expect("intermediate PEM"));
        }
        chain
    }

    /// The private key's PEM text.
    pub fn key_pem(&self) -> String {
        std::fs::read_to_string(&self.key).expect("key PEM")
    }
}

impl Drop for OpensslCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl OpensslCa {
    /// Makes the CA (needs the `openssl` binary).
    #[allow(clippy::new_without_default)] // runs a program: not a default value
    pub fn new() -> OpensslCa {
        let dir = std::env::temp_dir().join(format!(
            "smithy-tls-openssl-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        for curve in ["prime256v1", "secp384r1", "secp521r1"] {
            openssl(&["ecparam", "-name", curve, "-out", &format!("{curve}.params")], &dir);
        }
        openssl(
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-sha256",
                "-days",
                "2",
                "-subj",
                "/CN=openssl test CA",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
            ],
            &dir,
        );
        let pem = std::fs::read_to_string(dir.join("ca.pem")).expect("CA PEM");
        OpensslCa { dir, pem }
    }

    /// A leaf for `localhost` and 127.0.0.1 with the given key, signed by this CA with `digest`
    /// (`sha1`, `sha256`, …).
    pub fn leaf(&self, name: &str, key: KeySpec, digest: &str) -> OpensslLeaf {
        self.sign_leaf(name, key, digest, "ca")
    }

    /// An RSA-2048 leaf signed (SHA-256) by an intermediate CA (RSA-2048) that this CA signed.
    /// Serve it with [`OpensslServer::start`] (leaf only: the chain misses its intermediate) or
    /// [`OpensslServer::start_with_chain`].
    pub fn leaf_via_intermediate(&self, name: &str) -> OpensslLeaf {
        let inter = format!("{name}-intermediate");
        let ca_extensions = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n";
        self.issue(&inter, "/CN=openssl test intermediate", KeySpec::Rsa(2048), "sha256", "ca", ca_extensions);
        let mut leaf = self.sign_leaf(name, KeySpec::Rsa(2048), "sha256", &inter);
        leaf.intermediate = Some(self.dir.join(format!("{inter}.pem")));
        leaf
    }

    /// A client certificate (extended key usage `clientAuth`) with `key`, signed (SHA-256) by
    /// this CA, or with `via_intermediate` by an intermediate CA this CA signed. Its chain as
    /// a client presents it: [`OpensslLeaf::chain_pem`].
    pub fn client_leaf(&self, name: &str, key: KeySpec, via_intermediate: bool) -> OpensslLeaf {
        let extensions = "extendedKeyUsage=clientAuth\n";
        let subject = format!("/CN={name}");
        if !via_intermediate {
            self.issue(name, &subject, key, "sha256", "ca", extensions);
            return OpensslLeaf {
                cert: self.dir.join(format!("{name}.pem")),
                key: self.dir.join(format!("{name}.key")),
                intermediate: None,
            };
        }
        let inter = format!("{name}-intermediate");
        let ca_extensions = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n";
        self.issue(&inter, "/CN=openssl test intermediate", KeySpec::Rsa(2048), "sha256", "ca", ca_extensions);
        self.issue(name, &subject, key, "sha256", &inter, extensions);
        OpensslLeaf {
            cert: self.dir.join(format!("{name}.pem")),
            key: self.dir.join(format!("{name}.key")),
            intermediate: Some(self.dir.join(format!("{inter}.pem"))),
        }
    }

    /// The CA certificate's PEM file (for a server's `-CAfile`).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn sign_leaf(&self, name: &str, key: KeySpec, digest: &str, issuer: &str) -> OpensslLeaf {
        let extensions = "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
        self.issue(name, "/CN=localhost", key, digest, issuer, extensions);
        OpensslLeaf {
            cert: self.dir.join(format!("{name}.pem")),
            key: self.dir.join(format!("{name}.key")),
            intermediate: None,
        }
    }

    /// Makes `<name>.key` and `<name>.pem` in the CA's directory: a certificate for `subject`
    /// with `key`, signed with `digest` by `<issuer>.pem`/`<issuer>.key`, with `extensions`.
    fn issue(&self, name: &str, subject: &str, key: KeySpec, digest: &str, issuer: &str, extensions: &str) {
        let (key_file, csr, ext, cert) =
            (format!("{name}.key"), format!("{name}.csr"), format!("{name}.ext"), format!("{name}.pem"));
        let newkey = key.newkey();
        let request =
            ["req", "-new", "-newkey", &newkey, "-nodes", "-subj", subject, "-keyout", &key_file, "-out", &csr];
        openssl(&request, &self.dir);
        std::fs::write(self.dir.join(&ext), extensions).expect("extensions file");
        let (issuer_cert, issuer_key, digest) =
            (format!("{issuer}.pem"), format!("{issuer}.key"), format!("-{digest}"));
        let sign = [
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &issuer_cert,
            "-CAkey",
            &issuer_key,
            "-CAcreateserial",
            "-days",
            "2",
            &digest,
            "-extfile",
            &ext,
            "-out",
            &cert,
        ];
        openssl(&sign, &self.dir);
    }
}

/// `openssl s_server -www` on 127.0.0.1 (a status page for any GET), killed on drop.
pub struct OpensslServer {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl Drop for OpensslServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OpensslServer {
    /// Starts a server for `leaf`, with security level 0 (so that it agrees to serve weak
    /// certificates) and `extra` arguments (`-tls1_2`, `-cipher …`).
    pub fn start(leaf: &OpensslLeaf, extra: &[&str]) -> OpensslServer {
        Self::spawn(leaf, extra, false)
    }

    /// Like [`start`](Self::start), also sending the leaf's intermediate certificate.
    pub fn start_with_chain(leaf: &OpensslLeaf, extra: &[&str]) -> OpensslServer {
        Self::spawn(leaf, extra, true)
    }

    fn spawn(leaf: &OpensslLeaf, extra: &[&str], with_chain: bool) -> OpensslServer {
        let chain: Vec<&std::ffi::OsStr> = match (&leaf.intermediate, with_chain) {
            (Some(intermediate), true) => vec!["-cert_chain".as_ref(), intermediate.as_os_str()],
            (None, true) => panic!("the leaf has no intermediate to send"),
            (_, false) => Vec::new(),
        };
        let mut child = Command::new("openssl")
            .env_remove("OPENSSL_CONF")
            .args(["s_server", "-accept", "127.0.0.1:0", "-www", "-cipher", "ALL:@SECLEVEL=0"])
            .arg("-cert")
            .arg(&leaf.cert)
            .arg("-key")
            .arg(&leaf.key)
            .args(chain)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("could not run `openssl s_server` ({e}): install openssl (Debian: apt-get install openssl)")
            });
        // Read its output on threads, so a silent or stuck server cannot block the test and
        // neither pipe ever fills: the port arrives on a channel, stderr is kept for errors.
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // `ACCEPT 127.0.0.1:<port>` once it listens.
                if let Some(port) = line.strip_prefix("ACCEPT 127.0.0.1:").and_then(|p| p.trim().parse::<u16>().ok()) {
                    let _ = port_tx.send(port);
                }
            }
        });
        let stderr_text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = std::sync::Arc::clone(&stderr_text);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut text = sink.lock().unwrap_or_else(|p| p.into_inner());
                text.push_str(&line);
                text.push('\n');
            }
        });
        match port_rx.recv_timeout(std::time::Duration::from_secs(10)) {
            Ok(port) => OpensslServer { child, port },
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                std::thread::sleep(std::time::Duration::from_millis(50)); // let stderr drain
                let said = stderr_text.lock().unwrap_or_else(|p| p.into_inner()).clone();
                panic!("openssl s_server did not start listening within 10 s (arguments: {extra:?}); it said:\n{said}");
            }
        }
    }

    /// `https://localhost:<port>/`.
    pub fn url(&self) -> String {
        format!("https://localhost:{}/", self.port)
    }
}
