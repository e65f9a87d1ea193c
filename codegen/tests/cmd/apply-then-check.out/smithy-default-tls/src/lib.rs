//! Stands in for the runtime crate the policy points at (`[runtime] path`).
