package io.quarkiverse.mysqllock;

/**
 * This instance no longer leads {@code role}: a CDI event, fired once for each term that ended, after
 * {@link LeaderElection#isLeader()} turned false. Observers as for {@link LeadershipGranted}.
 *
 * @param role the role
 * @param term the term that ended
 * @param reason why
 * @param loss LOST: how the lock was lost; null otherwise
 */
public record LeadershipRevoked(String role, long term, Reason reason, LockLostException loss) {

    /** Why a term ended. */
    public enum Reason {
        /**
         * The role's lock was lost (session ended, lease taken over or expired, database unreachable): also when the
         * loss is found by the release of a step-down or of leaving, since the term had ended before.
         */
        LOST,
        /** {@link LeaderElection#stepDown()}. */
        STEPPED_DOWN,
        /** {@link LeaderElection#close()}, or the application stopped. */
        LEFT
    }
}
