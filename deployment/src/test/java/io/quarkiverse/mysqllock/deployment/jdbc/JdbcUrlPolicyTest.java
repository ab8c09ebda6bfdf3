package io.quarkiverse.mysqllock.deployment.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.jdbc.JdbcUrlPolicy;

class JdbcUrlPolicyTest {

    @Test
    void singleHostUrlsAreAccepted() {
        for (String url : new String[] { "jdbc:mysql://db:3306/app", "jdbc:mysql://127.0.0.1/app?useSSL=false",
                "jdbc:mariadb://db/app", "jdbc:mysql://db/app?autoReconnect=false",
                "jdbc:mysql://address=(host=db)(port=3306)/app", "jdbc:mysql://(host=db,port=3306)/app" }) {
            assertThat(JdbcUrlPolicy.namedLockProblem(url, new Properties(), "<default>")).as(url).isEmpty();
        }
    }

    @Test
    void reconnectingAndMultiHostUrlsAreRefusedWithAReason() {
        assertThat(JdbcUrlPolicy.namedLockProblem("jdbc:mysql://db/app?useSSL=false&autoReconnect=true", null, "<default>"))
                .get().asString().contains("autoReconnect=true").contains("new server session");
        assertThat(JdbcUrlPolicy.namedLockProblem("jdbc:mysql://db/app?autoReconnectForPools=true", null, "<default>"))
                .isPresent();
        for (String url : new String[] { "jdbc:mysql://db1,db2/app", "jdbc:mysql:replication://db1,db2/app",
                "jdbc:mysql:loadbalance://db1,db2/app", "jdbc:mysql+srv://_mysql._tcp.example.com/app",
                "jdbc:mariadb:replication://db1,db2/app", "jdbc:mariadb:sequential://db1,db2/app",
                "jdbc:mysql://address=(host=db1),address=(host=db2)/app",
                "jdbc:mysql://(host=db1,port=3306),(host=db2,port=3306)/app" }) {
            assertThat(JdbcUrlPolicy.namedLockProblem(url, null, "<default>")).as(url).get().asString()
                    .contains("not replicated");
        }
        Properties properties = new Properties();
        properties.setProperty("autoReconnect", "true");
        assertThat(JdbcUrlPolicy.namedLockProblem("jdbc:mysql://db/app", properties, "<default>")).get().asString()
                .contains("quarkus.datasource.jdbc.additional-jdbc-properties");
        assertThat(JdbcUrlPolicy.namedLockProblem("jdbc:mysql://db/app", properties, "orders")).get().asString()
                .contains("quarkus.datasource.\"orders\".jdbc.additional-jdbc-properties");
    }

    @Test
    void autoReconnectInAHostsOwnPropertiesIsRefusedToo() {
        for (String url : new String[] { "jdbc:mysql://address=(host=db)(port=3306)(autoReconnect=true)/app",
                "jdbc:mysql://(host=db,port=3306,autoReconnect=true)/app",
                "jdbc:mysql://(host=db,autoReconnectForPools=yes)/app",
                "jdbc:mysql://address=(autoReconnect=TRUE)(host=db)/app" }) {
            assertThat(JdbcUrlPolicy.namedLockProblem(url, null, "<default>")).as(url).get().asString()
                    .contains("autoReconnect").contains("new server session");
        }
        assertThat(JdbcUrlPolicy.namedLockProblem("jdbc:mysql://address=(host=db)(autoReconnect=false)/app", null,
                "<default>")).isEmpty();
    }
}
