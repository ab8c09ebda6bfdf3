package io.quarkiverse.mysqllock.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.engine.LockName;

/**
 * The exact names locks get on the server, which every instance of a fleet, of every version, must agree on; the edges
 * of what is sent as it is; the namespace's and the names' checks. The general rules are {@code LockNamesTest}'s
 * (deployment module).
 */
class LockNamesTest {

    private final LockNames plain = LockNames.withNamespace(null);

    /** The first 16 hex digits of the SHA-256 of the UTF-8 bytes. */
    private static String hash(String value) throws Exception {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(digest).substring(0, 16);
    }

    @Test
    void aHashedNameIsItsReadablePrefixAndTheHashOfTheExactNamespacedName() throws Exception {
        // pinned: a change here makes two versions of one application lock different names
        assertThat(plain.serverName("Order:1001")).isEqualTo("order:1001~4861b149a56b58b3");
        assertThat(LockNames.withNamespace("billing").serverName("Order:1001"))
                .isEqualTo("billing:order:1001~cd275b06a2f7688a");

        String unicode = "commande:\u00e9t\u00e9-42";
        assertThat(plain.serverName(unicode)).isEqualTo("commande:_t_-42~" + hash(unicode));
        String longName = "report:" + "x".repeat(80);
        assertThat(plain.serverName(longName)).isEqualTo(longName.substring(0, 47) + "~" + hash(longName))
                .hasSize(LockNames.MAX_SERVER_NAME);
    }

    @Test
    void printableAsciiWithoutUpperCaseOrTheHashMarkIsSentAsItIs() {
        for (char c = 0x21; c <= 0x7d; c++) {
            String name = "x" + c + " y";
            boolean asItIs = !(c >= 'A' && c <= 'Z');
            assertThat(LockNames.isSentAsIs(name)).as("'%s'", name).isEqualTo(asItIs);
            if (asItIs) {
                assertThat(plain.serverName(name)).isEqualTo(name);
            }
        }
        for (String hashed : List.of("x~y", "x\u007fy", "x\u001fy", "x\u00a0y", " x", "x ")) {
            assertThat(LockNames.isSentAsIs(hashed)).as("'%s'", hashed).isFalse();
            assertThat(plain.serverName(hashed)).as("'%s'", hashed).contains("~").isNotEqualTo(hashed);
        }
    }

    @Test
    void theReadablePrefixIsLowerCaseWithUnderscoresForWhatTheServerCouldNotCompare() {
        assertThat(plain.serverName("A~B")).startsWith("a_b~");
        assertThat(plain.serverName("del\u007f")).startsWith("del_~");
        assertThat(plain.serverName("tab\there")).startsWith("tab_here~");
        assertThat(plain.serverName("\uD83D\uDE00 smile")).as("a surrogate pair is two characters")
                .startsWith("__ smile~");
        assertThat(plain.serverName(" Padded ")).startsWith(" padded ~");
    }

    @Test
    void sixtyFourCharactersWithTheNamespaceAreTheLimitOfANameSentAsItIs() {
        LockNames ns = LockNames.withNamespace("ns");
        assertThat(ns.serverName("x".repeat(61))).isEqualTo("ns:" + "x".repeat(61));
        assertThat(ns.serverName("x".repeat(62))).startsWith("ns:xxx").contains("~").hasSize(64);
    }

    @Test
    void theNamespaceIsOneToThirtyTwoLettersDigitsOrUnderscoreDashDotColon() {
        String longest = "n".repeat(32);
        assertThat(LockNames.withNamespace(longest).serverName("x")).isEqualTo(longest + ":x");
        assertThat(LockNames.withNamespace("team_1.prod:eu-west").serverName("x")).isEqualTo("team_1.prod:eu-west:x");
        for (String bad : List.of("", "a/b", "a~b", "a b", "caf\u00e9", "n".repeat(33))) {
            assertThatThrownBy(() -> LockNames.withNamespace(bad)).as("'%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("quarkus.mysql-lock.namespace='" + bad
                            + "' is not valid: use 1 to 32 letters, digits or _ - . : characters");
        }
    }

    @Test
    void aValidNameIsReturnedAsItIsAndABadOneIsNamedInTheMessage() {
        assertThat(LockNames.requireValid(" padded ")).isEqualTo(" padded ");
        assertThatThrownBy(() -> LockNames.requireValid(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Lock name must not be null");
        assertThatThrownBy(() -> LockNames.requireValid("\t \n")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Lock name must not be blank, got '\t \n'");
        assertThatThrownBy(() -> plain.recordRow("permits", " ")).as("a record of a bad name")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aResolvedNameHasBothFormsAndSaysSoWhenTheyDiffer() {
        assertThat(plain.resolve("order:1")).isEqualTo(new LockName("order:1", "order:1")).hasToString("order:1");
        LockName hashed = plain.resolve("Order:1");
        assertThat(hashed.name()).isEqualTo("Order:1");
        assertThat(hashed.serverName()).isEqualTo(plain.serverName("Order:1"));
        assertThat(hashed).hasToString("Order:1 (" + hashed.serverName() + " on the server)");
        assertThat(LockNames.withNamespace("billing").resolve("order:1"))
                .hasToString("order:1 (billing:order:1 on the server)");
    }

    @Test
    void aRecordRowTooLongForTheTableIsCutAndHashed() throws Exception {
        // "~permits:" is 9 characters: a server name of 55 fits as it is
        assertThat(plain.recordRow("permits", "y".repeat(55))).isEqualTo("~permits:" + "y".repeat(55));
        String longest = "x".repeat(64); // sent as it is
        assertThat(plain.recordRow("permits", longest)).isEqualTo("~permits:" + "x".repeat(38) + "~" + hash(longest))
                .hasSize(LockNames.MAX_SERVER_NAME);
        String hashedName = plain.serverName("Order:1001");
        assertThat(plain.recordRow("permits", "Order:1001")).as("the row of a hashed name keeps it if it fits")
                .isEqualTo("~permits:" + hashedName);
    }

    @Test
    void namesOfOtherNamespacesAndRecordRowsDoNotReadBack() {
        LockNames billing = LockNames.withNamespace("billing");
        assertThat(billing.fromServer("billingx:order")).isEmpty();
        assertThat(billing.fromServer("billing")).isEmpty();
        assertThat(billing.fromServer(billing.recordRow("permits", "order"))).isEmpty();
        assertThat(billing.fromServer("billing:" + "x".repeat(40) + "~0123456789abcdef")).as("hashed: as it is")
                .contains("billing:" + "x".repeat(40) + "~0123456789abcdef");
    }

    @Test
    void aNamespaceWithUpperCaseLettersReadsItsOwnLocksBack() {
        // every name of such a namespace is hashed, and a hashed name's readable prefix is lower case
        LockNames billing = LockNames.withNamespace("Billing");
        String order = billing.serverName("order");
        assertThat(order).startsWith("billing:order~");
        assertThat(billing.fromServer(order)).as("a hash cannot be undone: as it is").contains(order);
        assertThat(billing.fromServer(billing.serverName("Order:1001"))).isPresent();
        assertThat(billing.fromServer("billingx:order~0123456789abcdef")).isEmpty();
        assertThat(billing.fromServer("other:order")).isEmpty();
    }
}
