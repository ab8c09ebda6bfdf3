package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.LockNames;

/** Name normalisation, without a server. */
class LockNamesTest {

    private final LockNames names = LockNames.withNamespace(null);

    @Test
    void plainNamesPassAsTheyAre() {
        assertThat(names.serverName("order:1001")).isEqualTo("order:1001");
        assertThat(names.serverName("x".repeat(64))).isEqualTo("x".repeat(64));
    }

    @Test
    void longUnicodeAndUpperCaseNamesBecomeAReadablePrefixAndAHash() {
        for (String name : List.of("x".repeat(65), "commande:été-42", "Order:1001", " padded", "padded ", "a~b",
                "tab\tname", "com.acme.NightlyReport#run")) {
            String server = names.serverName(name);
            assertThat(server).as(name).hasSizeLessThanOrEqualTo(64).matches("[\\x20-\\x7e]+~[0-9a-f]{16}")
                    .doesNotMatch(".*[A-Z].*");
            assertThat(names.serverName(name)).as("stable").isEqualTo(server);
        }
        assertThat(names.serverName("com.acme.NightlyReport#run")).startsWith("com.acme.nightlyreport#run~");
        assertThat(names.serverName("x".repeat(100))).startsWith("x".repeat(47) + "~");
    }

    /** Records kept about a lock (a semaphore's number of permits) have rows no lock's server name can be. */
    @Test
    void recordRowsAreReservedAndFitTheTable() {
        for (String name : List.of("exports", "x".repeat(64), "~permits:exports", "Order:1001", "commande:été-42")) {
            String row = names.recordRow("permits", name);
            assertThat(row).startsWith("~permits:").hasSizeLessThanOrEqualTo(LockNames.MAX_SERVER_NAME);
            assertThat(names.serverName(row)).as("a lock named as the row").isNotEqualTo(row);
            assertThat(names.serverName(name)).doesNotStartWith("~");
        }
        assertThat(names.recordRow("permits", "exports")).isEqualTo("~permits:exports");
        assertThat(names.recordRow("permits", "x".repeat(64))).isNotEqualTo(names.recordRow("permits", "x".repeat(63) + "y"));
        assertThat(LockNames.withNamespace("billing").recordRow("readers", "catalog")).isEqualTo("~readers:billing:catalog");
    }

    @Test
    void serverNamesReadBackWithoutTheNamespaceAndOnlyInIt() {
        LockNames spaced = LockNames.withNamespace("billing");
        assertThat(spaced.fromServer(spaced.serverName("order:1"))).contains("order:1");
        assertThat(spaced.fromServer("other:order:1")).isEmpty();
        String hashed = spaced.serverName("Order:1");
        assertThat(spaced.fromServer(hashed)).as("a hash cannot be undone").contains(hashed);
        assertThat(names.fromServer("anything")).contains("anything");
    }

    @Test
    void namesThatDifferOnlyInCaseOrPaddingStayDistinct() {
        Set<String> server = new HashSet<>();
        for (String name : List.of("order", "Order", "ORDER", "order ", " order", "x".repeat(65), "x".repeat(66))) {
            assertThat(server.add(names.serverName(name))).as(name).isTrue();
        }
    }

    @Test
    void aNamespacePrefixesEveryName() {
        LockNames billing = LockNames.withNamespace("billing");
        assertThat(billing.serverName("order:1")).isEqualTo("billing:order:1");
        assertThat(billing.serverName("x".repeat(64))).startsWith("billing:xxx").contains("~");
        assertThat(billing.serverName("Order")).isNotEqualTo(names.serverName("Order"));
    }

    @Test
    void badNamesAndNamespacesAreRefused() {
        assertThatThrownBy(() -> names.serverName(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> names.serverName("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> names.serverName(" \t")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockNames.withNamespace("has space")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("quarkus.mysql-lock.namespace");
        assertThatThrownBy(() -> LockNames.withNamespace("n".repeat(33))).isInstanceOf(IllegalArgumentException.class);
    }
}
