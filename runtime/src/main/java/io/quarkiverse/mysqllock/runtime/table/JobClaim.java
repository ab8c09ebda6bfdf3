package io.quarkiverse.mysqllock.runtime.table;

/**
 * What the claim of one tick of a scheduled job found ({@link JobTable#claim}): whether this instance claimed it, the
 * job's state then, and the latest tick claimed before it.
 *
 * @param kind what this instance does with the tick
 * @param previousLatest for a claimed tick, the latest tick claimed before it (0 for none): the ticks between it and
 *        this one were claimed nowhere
 */
public record JobClaim(Kind kind, long previousLatest) {

    /** A tick claimed before, or settled: nothing to do. */
    public static final JobClaim TAKEN = new JobClaim(Kind.TAKEN, 0);

    /** A tick this instance claimed, of a job whose state has this code (1 active, 2 paused, 3 disabled). */
    public static JobClaim claimed(int stateCode, long previousLatest) {
        return new JobClaim(switch (stateCode) {
            case 1 -> Kind.RUN;
            case 2 -> Kind.PAUSED;
            default -> Kind.DISABLED;
        }, previousLatest);
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
