//! The `smithy-tls` binary: everything lives in the library's `cli` module.

fn main() -> std::process::ExitCode {
    smithy_tls_codegen::cli::main()
}
