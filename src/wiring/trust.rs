//! `taco trust`: trusts the workspace's `.taco/config.toml` as it is now, so its hooks run.

use super::Start;
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE};
use crate::hooks::trust::PROJECT_FILE;

/// Runs `taco trust`; the exit code.
pub fn trust(start: &Start) -> i32 {
    let workdir = match crate::config::workdir(&start.overrides) {
        Ok(dir) => dir,
        Err(e) => {
            crate::say!("taco: {e}");
            return EXIT_USAGE;
        }
    };
    match crate::hooks::trust_project(&workdir) {
        Ok(said) => {
            println!("{said}");
            EXIT_OK
        }
        Err(e) => {
            crate::say!("taco: {PROJECT_FILE}: {e}");
            EXIT_RUN_ERROR
        }
    }
}
