//! When and how long to wait before trying a failed provider call again (DESIGN §4 rule 8):
//! exponential backoff with jitter, unless the server said how long.

use std::time::Duration;

use crate::provider::ProviderError;

/// Longest wait taco accepts from a server's `Retry-After`; beyond it the call fails instead
/// of appearing to hang.
const MAX_SERVER_WAIT: Duration = Duration::from_secs(300);

/// Retry settings of one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included (1: never retry).
    pub max_attempts: u32,
    /// Wait after the first failure; doubles each time.
    pub base_delay: Duration,
    /// Cap on the computed wait.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// How long to wait after failed attempt `attempt` (1-based), or `None` when the error
    /// must not be retried or the attempts are used up.
    pub fn wait(&self, attempt: u32, error: &ProviderError) -> Option<Duration> {
        if !error.is_retryable() || attempt >= self.max_attempts.max(1) {
            return None;
        }
        if let ProviderError::Http {
            retry_after: Some(after),
            ..
        } = error
        {
            return (*after <= MAX_SERVER_WAIT).then_some(*after);
        }
        let doubled = self.base_delay.saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX),
        );
        let capped = doubled.min(self.max_delay);
        // "Equal jitter": half fixed, half random, so clients that failed together spread out.
        let half = capped / 2;
        Some(half + half.mul_f64(fastrand::f64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, retryable: bool, retry_after: Option<Duration>) -> ProviderError {
        ProviderError::Http {
            status,
            message: "x".into(),
            retryable,
            retry_after,
        }
    }

    #[test]
    fn backs_off_exponentially_with_jitter_and_a_cap() {
        let policy = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(8),
        };
        let error = http(503, true, None);
        for (attempt, full) in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 8), (9, 8)] {
            for _ in 0..50 {
                let wait = policy.wait(attempt, &error).unwrap();
                let full = Duration::from_secs(full);
                assert!(
                    wait >= full / 2 && wait <= full,
                    "attempt {attempt}: {wait:?}"
                );
            }
        }
    }

    #[test]
    fn honours_the_server_and_gives_up_when_told() {
        let policy = RetryPolicy::default();
        let after = Duration::from_millis(1500);
        assert_eq!(policy.wait(1, &http(429, true, Some(after))), Some(after));
        assert_eq!(
            policy.wait(1, &http(429, true, Some(Duration::from_secs(3600)))),
            None,
            "too long to wait"
        );
        assert_eq!(policy.wait(1, &http(400, false, None)), None);
        assert_eq!(
            policy.wait(4, &http(503, true, None)),
            None,
            "attempts used up"
        );
        assert!(
            policy
                .wait(
                    3,
                    &ProviderError::Truncated {
                        terminator: "[DONE]"
                    }
                )
                .is_some()
        );
        let never = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        assert_eq!(never.wait(1, &http(503, true, None)), None);
    }
}
