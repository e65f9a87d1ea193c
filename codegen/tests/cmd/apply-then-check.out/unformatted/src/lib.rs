pub mod config; pub mod client;
// smithy-tls: default HTTP client chosen by the smithy-tls policy
pub mod default_http_client;
