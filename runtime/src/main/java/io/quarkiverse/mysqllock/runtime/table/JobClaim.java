package io.quarkiverse.mysqllock.runtime.table;

/**
 * What the claim of one tick of a scheduled job found ({@link JobTable#claim}): whether this instance claimed it, the
 * job's state then, the latest tick claimed before it, and the job's missed ticks.
 *
 * @param kind what this instance does with the tick
 * @param previousLatest for a claimed tick, the latest tick claimed before it (0 for none): the ticks between it and
 *        this one were claimed nowhere
 * @param gap whether the claim found ticks no instance claimed ({@link #isGap}), and recorded them to catch up: none
 *        of the ticks before it may be claimed late any more
 * @param catchUpPending whether the job, active, has missed ticks to catch up (found now or before)
 * @param replacedPending whether the missed ticks this claim recorded replaced others still waiting for their catch-up
 *        (a third range apart from the two kept per job, with ticks that ran between them), which then go without it
 */
public record JobClaim(Kind kind, long previousLatest, boolean gap, boolean catchUpPending, boolean replacedPending) {

    /** A tick claimed before, or settled: nothing to do. */
    public static final JobClaim TAKEN = new JobClaim(Kind.TAKEN, 0, false, false, false);

    /** A tick this instance claimed, of a job whose state has this code (1 active, 2 paused, 3 disabled). */
    public static JobClaim claimed(int stateCode, long previousLatest, boolean gap, boolean catchUpPending,
            boolean replacedPending) {
        return new JobClaim(switch (stateCode) {
            case 1 -> Kind.RUN;
            case 2 -> Kind.PAUSED;
            default -> Kind.DISABLED;
        }, previousLatest, gap, catchUpPending, replacedPending);
    }

    /**
     * Whether the claim of {@code tick} finds ticks no instance claimed, to catch up: the latest tick claimed before it
     * ({@code latest}, 0 for none) and the latest one fired ({@code fired}: claimed, and given back because the lock was
     * busy) are older than {@code missedBefore}, the job's latest scheduled tick that can no longer be claimed late (more
     * than {@link TickRows#WINDOW} before {@code tick}; 0 for a job that does not catch up).
     */
    public static boolean isGap(long tick, long latest, long fired, long missedBefore) {
        return latest > 0 && tick > latest && missedBefore > Math.max(latest, fired);
    }

    public enum Kind {
        /** This instance claimed the tick of an active job: it runs it. */
        RUN,
        /** This instance claimed the tick of a paused job: it skips it, and is the one that says so. */
        PAUSED,
        /** This instance claimed the tick of a disabled job: it skips it. */
        DISABLED,
        /** Another instance claimed it, or it is settled. */
        TAKEN
    }
}
