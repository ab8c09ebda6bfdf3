package io.quarkiverse.mysqllock.runtime.jdbc;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The lock server, as {@code VERSION()} describes it (or {@code quarkus.mysql-lock.server-flavor} overrides it, for
 * proxies that hide it), and what its SQL offers. Unknown version numbers are taken as current ones.
 *
 * @param mariaDb MariaDB's semantics and syntax rather than MySQL's
 * @param lockWaitSeconds the server's default {@code innodb_lock_wait_timeout}: the longest a statement waits for a row
 *        lock unless told otherwise
 * @param galera the server is a Galera cluster node ({@code wsrep_on}): it applies other nodes' commits a moment after
 *        they were acknowledged, so a read that must see them asks for it ({@code wsrep_sync_wait})
 */
public record ServerVersion(boolean mariaDb, int major, int minor, int patch, String text, long lockWaitSeconds,
        boolean galera) {

    /** Whose semantics apply: read from {@code VERSION()} (AUTO), or set for proxies that hide it. */
    public enum Flavor {
        AUTO,
        MYSQL,
        MARIADB
    }

    private static final Pattern NUMBERS = Pattern.compile("^(?:5\\.5\\.5-)?(\\d+)\\.(\\d+)\\.(\\d+)");

    /**
     * @param version what {@code SELECT VERSION()} returned
     * @param configured {@code quarkus.mysql-lock.server-flavor}: AUTO reads the flavor from the version
     */
    public static ServerVersion parse(String version, Flavor configured, long lockWaitSeconds) {
        String text = version == null ? "" : version.strip();
        boolean mariaDb = configured == Flavor.AUTO ? text.toLowerCase(Locale.ROOT).contains("mariadb")
                : configured == Flavor.MARIADB;
        Matcher numbers = NUMBERS.matcher(text);
        if (numbers.find()) {
            return new ServerVersion(mariaDb, Integer.parseInt(numbers.group(1)), Integer.parseInt(numbers.group(2)),
                    Integer.parseInt(numbers.group(3)), text, lockWaitSeconds, false);
        }
        return mariaDb ? new ServerVersion(true, 11, 4, 0, text, lockWaitSeconds, false)
                : new ServerVersion(false, 8, 4, 0, text, lockWaitSeconds, false);
    }

    /** The same server, known to be a Galera cluster node (or not). */
    public ServerVersion onGalera(boolean node) {
        return new ServerVersion(mariaDb, major, minor, patch, text, lockWaitSeconds, node);
    }

    public boolean atLeast(int wantedMajor, int wantedMinor, int wantedPatch) {
        if (major != wantedMajor) {
            return major > wantedMajor;
        }
        if (minor != wantedMinor) {
            return minor > wantedMinor;
        }
        return patch >= wantedPatch;
    }

    /** {@code GET_LOCK} honours fractions of a second (MariaDB); MySQL truncates them to whole seconds. */
    public boolean fractionalWaits() {
        return mariaDb;
    }

    /** {@code SELECT ... FOR UPDATE NOWAIT}: MySQL 8.0.1+, MariaDB 10.3+. */
    public boolean nowait() {
        return mariaDb ? atLeast(10, 3, 0) : atLeast(8, 0, 1);
    }

    /** {@code SELECT ... FOR UPDATE SKIP LOCKED}: MySQL 8.0.1+, MariaDB 10.6+. */
    public boolean skipLocked() {
        return mariaDb ? atLeast(10, 6, 0) : atLeast(8, 0, 1);
    }

    /** {@code SET STATEMENT var = value FOR statement} (MariaDB 10.1.2+): a row-lock wait bounded for one statement. */
    public boolean setStatement() {
        return mariaDb && atLeast(10, 1, 2);
    }

    /**
     * Why named locks cannot be held on this server, if they cannot: before MySQL 5.7.5 and MariaDB 10.0.2 a session
     * holds one named lock at most, and a second {@code GET_LOCK} silently releases the first.
     */
    public Optional<String> namedLockProblem() {
        boolean several = mariaDb ? atLeast(10, 0, 2) : atLeast(5, 7, 5);
        return several ? Optional.empty()
                : Optional.of("the server (" + text + ") is older than " + (mariaDb ? "MariaDB 10.0.2" : "MySQL 5.7.5")
                        + ", where a second GET_LOCK on a session silently releases the first");
    }

    /** For messages. */
    public String describe() {
        return (mariaDb ? "MariaDB " : "MySQL ") + major + "." + minor + "." + patch;
    }
}
