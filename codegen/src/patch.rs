//! Source patches (in progress).
