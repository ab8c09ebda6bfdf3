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

    private static final LockOptions DEFAULTS = new LockOptions(null, Duration.ZERO, Duration.ZERO, true, false);

    private final Duration wait;
    private final Duration atLeastFor;
    private final Duration atMostFor;
    private final boolean nesting;
    private final boolean interruptOnLoss;

    private LockOptions(Duration wait, Duration atLeastFor, Duration atMostFor, boolean nesting,
            boolean interruptOnLoss) {
        this.wait = wait;
        this.atLeastFor = atLeastFor;
        this.atMostFor = atMostFor;
        this.nesting = nesting;
        this.interruptOnLoss = interruptOnLoss;
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
        return new LockOptions(notNegative("wait", wait), atLeastFor, atMostFor, nesting, interruptOnLoss);
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
        return new LockOptions(wait, atLeastFor, atMostFor, nesting, interruptOnLoss);
    }

    /**
     * The hold belongs to no thread: the thread that took it, asking for the name again while it is held, contends for
     * it like any other caller (and so does not get it) instead of nesting onto it. For callers whose locks are not
     * re-entrant by contract, such as ShedLock's providers; asynchronous acquisitions always work so.
     */
    public LockOptions withoutNesting() {
        return new LockOptions(wait, atLeastFor, atMostFor, false, interruptOnLoss);
    }

    /**
     * The hold ends {@code atMostFor} after it was granted even if its holder still runs, or hangs: the holder is told
     * through {@code onLost}, reason {@code LEASE_EXPIRED}, and a method or action that outlives it gets a
     * {@link LockLostException}. On LEASE the lease lasts this long and is not renewed, so a dead holder's lock ends
     * then too; on NAMED the holder's process releases the lock at the cap (a dead holder's lock ends at once, with its
     * connection). A nested hold keeps the cap, or the lack of one, of the hold it nests onto. Zero: none.
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
        return new LockOptions(wait, atLeastFor, atMostFor, nesting, interruptOnLoss);
    }

    /**
     * If the lock is lost while held (its cap reached, its connection or lease lost), the thread that acquired it is
     * interrupted, so that work blocked in I/O or a wait stops instead of running on unprotected; the interrupt is
     * only sent until the handle is released, and a release on that thread clears the interrupt it caused. For the
     * blocking {@code acquire} and {@code tryAcquire} ({@code acquireAsync} has no thread to interrupt and refuses it).
     * Work that never checks for interrupts is not stopped: it learns of the loss from {@code isValid()} or
     * {@code onLost}.
     */
    public LockOptions interruptingOnLoss() {
        return new LockOptions(wait, atLeastFor, atMostFor, nesting, true);
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

    /** How long the hold lasts at most ({@link #holdingAtMost}); zero for no cap. */
    public Duration atMostFor() {
        return atMostFor;
    }

    /** Whether the calling thread, asking again for a name it holds, nests onto its hold (the default). */
    public boolean nesting() {
        return nesting;
    }

    /** Whether a loss interrupts the thread that acquired the lock ({@link #interruptingOnLoss()}). */
    public boolean interruptsOnLoss() {
        return interruptOnLoss;
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
                && atMostFor.equals(that.atMostFor) && nesting == that.nesting
                && interruptOnLoss == that.interruptOnLoss;
    }

    @Override
    public int hashCode() {
        return Objects.hash(wait, atLeastFor, atMostFor, nesting, interruptOnLoss);
    }

    @Override
    public String toString() {
        return "LockOptions[wait=" + (wait == null ? "default" : wait) + ", atLeastFor=" + atLeastFor + ", atMostFor="
                + atMostFor + (nesting ? "" : ", without nesting") + (interruptOnLoss ? ", interrupting on loss" : "")
                + "]";
    }
}
