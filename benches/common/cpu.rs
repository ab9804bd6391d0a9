//! CPU time from `/proc` (Linux; `None` elsewhere), for the benches that tell the sandbox's CPU
//! from their own clients' by thread name.

use std::time::Duration;

/// A `stat` line's name and CPU time (user and system: its fields 14 and 15, in ticks of 1/100 s).
fn stat_cpu(stat: &str) -> Option<(&str, Duration)> {
    let (head, tail) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1;
    let fields: Vec<&str> = tail.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((name, Duration::from_millis(ticks * 10)))
}

/// CPU time of the whole process, threads that ended included.
pub fn process_cpu() -> Option<Duration> {
    let (_, cpu) = stat_cpu(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    Some(cpu)
}

/// CPU time of the live threads whose name starts with `prefix`.
pub fn threads_cpu(prefix: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
        match stat_cpu(&stat) {
            Some((name, cpu)) if name.starts_with(prefix) => total += cpu,
            _ => {}
        }
    }
    Some(total)
}
