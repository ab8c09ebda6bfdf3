package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.test.TestDatabase;

/** The engines' statement cache: one parse per connection and SQL, forgotten with the connection. */
class StatementsTest {

    @Test
    void reusesPerConnectionAndForgetsClosedConnections() throws Exception {
        Statements statements = new Statements();
        TestDatabase db = TestDatabase.shared();
        try (Connection first = db.connect(); Connection second = db.connect()) {
            PreparedStatement a = statements.prepare(first, "SELECT ? + 1");
            a.setInt(1, 41);
            try (ResultSet rs = a.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
            PreparedStatement again = statements.prepare(first, "SELECT ? + 1");
            assertThat(again).as("the same statement, parameters cleared").isSameAs(a);
            again.setInt(1, 1);
            try (ResultSet rs = again.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(2);
            }
            assertThat(statements.prepare(first, "SELECT ? + 1", true)).isNotSameAs(a);
            assertThat(statements.prepare(second, "SELECT ? + 1")).isNotSameAs(a);
            assertThat(statements.connections()).isEqualTo(2);

            first.close();
            try (Connection third = db.connect()) {
                statements.prepare(third, "SELECT 1");
                assertThat(statements.connections()).as("the closed connection is dropped").isEqualTo(2);
                statements.forget(third);
                assertThat(statements.connections()).isEqualTo(1);
            }
        }
    }
}
