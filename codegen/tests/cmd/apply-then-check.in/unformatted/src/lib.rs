pub mod config; pub mod client;
