package io.quarkiverse.mysqllock.runtime.table;

import java.time.Duration;

/**
 * The rule of a scheduled job's tick row (row {@code tick@<lock>}: {@link LockTable#claimTick}), which the in-memory
 * engine keeps too: which ticks may still run.
 */
public final class LateTicks {

    private LateTicks() {
    }

    /**
     * Whether a tick may still be claimed: a tick newer than the latest claimed, or one between the settled mark and
     * the latest, at most {@link #WINDOW} older than it. Quarkus checks each trigger once a second at its own phase,
     * so an instance whose check falls just
     * before a second boundary fires tick N as another, checking just after it, fires N + 1: N may then arrive after
     * N + 1 was claimed, and it never ran. The settled mark is the tick claimed before the latest (or the last such
     * late tick claimed): every tick up to it counts as run, or as too old to run. So a tick fired a moment late runs
     * once, and a tick older than one that ran before the latest does not run.
     *
     * @param latest the latest tick claimed (0 for none)
     * @param settled the settled mark, at most {@code latest}
     */
    public static boolean claimable(long tick, long latest, long settled) {
        return tick > latest || (tick < latest && tick > settled && latest - tick <= WINDOW.toMillis());
    }

    /**
     * How much older than the latest tick claimed a tick may be and still run late ({@link #claimable}): twice the
     * scheduler's check period, which is how late a trigger fires on a machine that keeps up. A tick that late runs after
     * the newer one: its run sees the scheduled fire times out of order.
     */
    public static final Duration WINDOW = Duration.ofSeconds(2);
}
