package io.quarkiverse.mysqllock;

/** What a {@link Locked} method does when its lock is held by someone else after its wait. */
public enum OnBusy {
    /** Throw {@link LockNotAcquiredException}. */
    FAIL,
    /**
     * Do not run; return {@code null}, {@code Optional.empty()}, or an empty asynchronous result. A scheduled method
     * with a {@code ScheduledExecution} parameter also skips a tick that already ran on some instance.
     */
    SKIP
}
