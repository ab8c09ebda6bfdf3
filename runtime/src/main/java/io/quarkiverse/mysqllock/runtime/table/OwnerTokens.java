package io.quarkiverse.mysqllock.runtime.table;

import java.util.concurrent.ThreadLocalRandom;

/**
 * A lease row's {@code owner}: {@code <identity>#<13 hex digits>/<lease length in microseconds>}. The hex digits make
 * it unique to one acquisition; the length is that of the row's current lease (the ttl of a renewed lease, the cap or
 * the last extension of a capped one), so that an instance watching the row knows how long its holder may count on
 * it, whatever the servers' clocks say. Rows written by versions before the length was recorded have no
 * {@code /<length>}: those are taken over the old way, once they expired by the server's clock.
 */
public final class OwnerTokens {

    private static final char LENGTH = '/';
    private static final int RANDOM_DIGITS = 13;

    private OwnerTokens() {
    }

    /** The longest owner token an instance of this identity writes: {@code #}, the random part, {@code /}, a long. */
    public static int longest(String identity) {
        return identity.length() + 1 + RANDOM_DIGITS + 1 + String.valueOf(Long.MAX_VALUE).length();
    }

    /** A token never used before, of this holder identity, recording this lease length. */
    public static String fresh(String identity, long lengthMicros) {
        return withLength(identity + "#" + random(), lengthMicros);
    }

    /**
     * A token never used before, of the same holder, recording another lease length: an extension of a capped lease.
     * Never the token the row has, even with the same length: on a server whose clock stands still, an extension
     * writes the same end, and the row's version must still change (a watcher that saw it would take a lease its holder
     * just extended).
     */
    public static String next(String token, long lengthMicros) {
        return fresh(token.substring(0, token.lastIndexOf('#')), lengthMicros);
    }

    /** The token of an acquisition ({@code <identity>#<random>}) with the length of its lease. */
    public static String withLength(String acquisition, long lengthMicros) {
        return acquisition + LENGTH + lengthMicros;
    }

    /**
     * 52 random bits in 13 hex digits: with the instance's identity, unique to this acquisition (a batched give-up and a
     * renewal match a row on its name and its token). Not a UUID: its SecureRandom reads the kernel's entropy device
     * under a lock, a system call every other acquisition.
     */
    private static String random() {
        return Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xF_FFFF_FFFF_FFFFL | 0x10_0000_0000_0000L)
                .substring(1);
    }

    /** The token without its length. */
    public static String acquisition(String token) {
        int end = lengthStart(token);
        return end < 0 ? token : token.substring(0, end);
    }

    /**
     * The lease length an owner token records, in microseconds; -1 if it records none (a row of an older version, or
     * an owner written by something else).
     */
    public static long lengthMicros(String owner) {
        int start = owner == null ? -1 : lengthStart(owner);
        if (start < 0) {
            return -1;
        }
        try {
            long micros = Long.parseLong(owner, start + 1, owner.length(), 10);
            return micros > 0 ? micros : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Where {@code /<length>} begins, after {@code #<13 hex digits>}; -1 if the token has none. */
    private static int lengthStart(String token) {
        int hash = token.lastIndexOf('#');
        int slash = hash + 1 + RANDOM_DIGITS;
        if (hash < 0 || slash >= token.length() - 1 || token.charAt(slash) != LENGTH) {
            return -1;
        }
        for (int i = hash + 1; i < slash; i++) {
            if (Character.digit(token.charAt(i), 16) < 0) {
                return -1;
            }
        }
        for (int i = slash + 1; i < token.length(); i++) {
            if (token.charAt(i) < '0' || token.charAt(i) > '9') {
                return -1;
            }
        }
        return slash;
    }
}
