package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How to take a lock, beyond its name: how long to wait for it, and how long the hold lasts at least and at most. What
 * {@code @Locked(waitFor, atLeastFor, atMostFor)} says on a method, for a programmatic caller:
 *
 * <pre>
 * try (LockHandle lock = locks.acquire("report", LockOptions.waitingUpTo(Duration.ofSeconds(5))
 *         .holdingAtLeast(Duration.ofMinutes(1)))) {
 *     ...
 * }
 * </pre>
 *
 * Immutable: each method returns a new instance. Invalid values are refused at once with
 * {@link IllegalArgumentException}, before anything reaches the database.
 */
public final class LockOptions {

    /** The shortest {@linkplain #holdingAtMost(Duration) cap}: a lease must outlive the round trips that take it. */
    public static final Duration MIN_AT_MOST_FOR = Duration.ofMillis(500);
    private static final String MIN_AT_MOST_FOR_TEXT = "500ms";
    /**
     * The longest {@linkplain #holdingAtMost(Duration) cap}, a century: "for ever" for any job, and within what a lease
     * row's end and a monotonic clock can count.
     */
    public static final Duration MAX_AT_MOST_FOR = Duration.ofDays(36_500);

    private static final LockOptions DEFAULTS = new LockOptions(null, Duration.ZERO, Duration.ZERO, true);

    private final Duration wait;
    private final Duration atLeastFor;
    private final Duration atMostFor;
    private final boolean nesting;

    private LockOptions(Duration wait, Duration atLeastFor, Duration atMostFor, boolean nesting) {
        this.wait = wait;
        this.atLeastFor = atLeastFor;
        this.atMostFor = atMostFor;
        this.nesting = nesting;
    }

    /** Waits up to {@code quarkus.mysql-lock.default-wait}, holds until released. */
    public static LockOptions defaults() {
        return DEFAULTS;
    }

    /** {@link #defaults()}, waiting up to {@code wait} ({@link Duration#ZERO}: one attempt). */
    public static LockOptions waitingUpTo(Duration wait) {
        return DEFAULTS.waitUpTo(wait);
    }

    /** Waits up to {@code wait} for the lock; {@link Duration#ZERO} makes one attempt. */
    public LockOptions waitUpTo(Duration wait) {
        return new LockOptions(notNegative("wait", wait), atLeastFor, atMostFor, nesting);
    }

    /**
     * Keeps the lock until {@code atLeastFor} after it was granted, even if it is released earlier: {@code release()}
     * returns at once and the lock is given back later, without holding any thread (ShedLock's {@code lockAtLeastFor}:
     * a job that finished quickly is not run again by an instance whose clock or trigger is a little late). The lock
     * kept no longer belongs to the caller: the same thread acquiring the name meanwhile contends for it. Zero: none.
     *
     * @throws IllegalArgumentException if negative, null, longer than {@link #MAX_AT_MOST_FOR} (a century), or longer
     *         than a cap set with {@link #holdingAtMost}
     */
    public LockOptions holdingAtLeast(Duration atLeastFor) {
        notNegative("atLeastFor", atLeastFor);
        atMostACentury("Lock option atLeastFor", atLeastFor);
        checkOrder(atLeastFor, atMostFor);
        return new LockOptions(wait, atLeastFor, atMostFor, nesting);
    }

    /**
     * The hold belongs to no thread: the thread that took it, asking for the name again while it is held, contends for
     * it like any other caller (and so does not get it) instead of nesting onto it. For callers whose locks are not
     * re-entrant by contract, such as ShedLock's providers; asynchronous acquisitions always work so.
     */
    public LockOptions withoutNesting() {
        return new LockOptions(wait, atLeastFor, atMostFor, false);
    }

    /**
     * LEASE engine: the lease lasts {@code atMostFor} and is not renewed: the lock ends then even if its holder still
     * runs, or hangs (the holder is told through {@code onLost}, reason {@code LEASE_EXPIRED}). The NAMED engine has no
     * leases (a dead holder's lock ends with its connection) and ignores it. Zero: none (the default ttl, renewed).
     *
     * @throws IllegalArgumentException if negative, null, shorter than {@value #MIN_AT_MOST_FOR_TEXT}, longer than
     *         {@link #MAX_AT_MOST_FOR} (a century), or shorter than {@link #holdingAtLeast}
     */
    public LockOptions holdingAtMost(Duration atMostFor) {
        notNegative("atMostFor", atMostFor);
        if (!atMostFor.isZero()) {
            leaseLength("Lock option atMostFor", atMostFor, " (or zero for none)");
        }
        checkOrder(atLeastFor, atMostFor);
        return new LockOptions(wait, atLeastFor, atMostFor, nesting);
    }

    /**
     * The length of a lease as {@link #holdingAtMost} and {@link LockHandle#extend(Duration)} accept it: between
     * {@link #MIN_AT_MOST_FOR} and {@link #MAX_AT_MOST_FOR}.
     *
     * @param what the subject of the error message, such as {@code "Lock 'report': the new length of its lease"}
     * @throws IllegalArgumentException if {@code length} is null or outside those bounds
     */
    public static Duration leaseLength(String what, Duration length) {
        return leaseLength(what, length, "");
    }

    private static Duration leaseLength(String what, Duration length, String orZero) {
        if (length == null || length.compareTo(MIN_AT_MOST_FOR) < 0) {
            throw new IllegalArgumentException(what + " must be at least " + MIN_AT_MOST_FOR_TEXT + orZero + ", not "
                    + length);
        }
        return atMostACentury(what, length);
    }

    private static Duration atMostACentury(String what, Duration length) {
        if (length.compareTo(MAX_AT_MOST_FOR) > 0) {
            throw new IllegalArgumentException(what + " must be at most " + MAX_AT_MOST_FOR.toDays() + " days ("
                    + MAX_AT_MOST_FOR + "), not " + length);
        }
        return length;
    }

    /** The wait, or empty for {@code quarkus.mysql-lock.default-wait}. */
    public Optional<Duration> waitTime() {
        return Optional.ofNullable(wait);
    }

    /** How long the lock is kept at least after it was granted; zero for no minimum. */
    public Duration atLeastFor() {
        return atLeastFor;
    }

    /** How long a lease lasts at most, unrenewed; zero for none. */
    public Duration atMostFor() {
        return atMostFor;
    }

    /** Whether the calling thread, asking again for a name it holds, nests onto its hold (the default). */
    public boolean nesting() {
        return nesting;
    }

    private static Duration notNegative(String what, Duration value) {
        if (value == null || value.isNegative()) {
            throw new IllegalArgumentException("Lock option " + what + " must be zero or positive, not " + value);
        }
        return value;
    }

    private static void checkOrder(Duration atLeastFor, Duration atMostFor) {
        if (!atMostFor.isZero() && atLeastFor.compareTo(atMostFor) > 0) {
            throw new IllegalArgumentException("Lock option atLeastFor (" + atLeastFor + ") must not be longer than"
                    + " atMostFor (" + atMostFor + "): the lease would end before the lock may be given back");
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LockOptions that && Objects.equals(wait, that.wait) && atLeastFor.equals(that.atLeastFor)
                && atMostFor.equals(that.atMostFor) && nesting == that.nesting;
    }

    @Override
    public int hashCode() {
        return Objects.hash(wait, atLeastFor, atMostFor, nesting);
    }

    @Override
    public String toString() {
        return "LockOptions[wait=" + (wait == null ? "default" : wait) + ", atLeastFor=" + atLeastFor + ", atMostFor="
                + atMostFor + (nesting ? "" : ", without nesting") + "]";
    }
}
