package io.quarkiverse.mysqllock.deployment.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;

/**
 * What the engines do depends on the server's version: old servers lose a session's first named lock at its second
 * GET_LOCK, MySQL 5.7 has no NOWAIT, only MariaDB bounds a row-lock wait per statement. MySQL cannot be installed on the
 * build machines, so its versions are checked here by what {@code VERSION()} returns there.
 */
class ServerVersionTest {

    static ServerVersion version(String text) {
        return ServerVersion.parse(text, ServerVersion.Flavor.AUTO, 50);
    }

    @Test
    void serversWhereASecondGetLockReleasesTheFirstAreRefusedNamedLocks() {
        assertThat(version("5.7.4-m14-log").namedLockProblem()).get().asString().contains("MySQL 5.7.5")
                .contains("silently releases the first");
        assertThat(version("5.6.51").namedLockProblem()).isPresent();
        assertThat(version("10.0.1-MariaDB").namedLockProblem()).get().asString().contains("MariaDB 10.0.2");
        assertThat(version("5.5.68-MariaDB").namedLockProblem()).isPresent();
        for (String fine : new String[] { "5.7.5", "5.7.44-log", "8.0.36", "9.1.0", "10.0.2-MariaDB",
                "10.11.6-MariaDB-0+deb12u1", "11.4.5-MariaDB", "5.5.5-10.11.6-MariaDB" }) {
            assertThat(version(fine).namedLockProblem()).as(fine).isEmpty();
        }
    }

    @Test
    void nowaitOnlyWhereTheServerHasIt() {
        assertThat(version("5.7.44-log").nowait()).isFalse();
        assertThat(version("8.0.0-dmr").nowait()).isFalse();
        assertThat(version("8.0.1").nowait()).isTrue();
        assertThat(version("10.2.44-MariaDB").nowait()).isFalse();
        assertThat(version("10.3.0-MariaDB").nowait()).isTrue();
    }

    @Test
    void theFlavorAndItsSyntax() {
        ServerVersion mariaDb = version("5.5.5-10.11.6-MariaDB");
        assertThat(mariaDb.mariaDb()).isTrue();
        assertThat(mariaDb.describe()).isEqualTo("MariaDB 10.11.6");
        assertThat(mariaDb.fractionalWaits()).isTrue();
        assertThat(mariaDb.setStatement()).isTrue();
        ServerVersion mySql = version("8.4.3");
        assertThat(mySql.mariaDb()).isFalse();
        assertThat(mySql.fractionalWaits()).isFalse();
        assertThat(mySql.setStatement()).isFalse();
        // a proxy that hides the version: the configured flavor decides, current versions are assumed
        ServerVersion hidden = ServerVersion.parse("proxy", ServerVersion.Flavor.MYSQL, 50);
        assertThat(hidden.mariaDb()).isFalse();
        assertThat(hidden.namedLockProblem()).isEmpty();
        assertThat(ServerVersion.parse("11.4.5-MariaDB", ServerVersion.Flavor.MYSQL, 50).fractionalWaits()).isFalse();
    }
}
